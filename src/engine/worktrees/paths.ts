/**
 * Layout and validation of Vox-managed worktree paths (SPEC §4.1, §4.3).
 *
 * Two root families live under `<repo>/.vox/worktrees/`:
 *   - `repo`: `<repo>/.vox/worktrees/<group>/<slug>`, where `<group>` is normally the repository's
 *     name (`repoGroupName`) — the plain managed worktrees;
 *   - `pool`: `<repo>/.vox/worktrees/muse/<group>/<slug>` — worktrees that a caller creates as a
 *     set and owns (the variants of one prompt use it; the folder name `muse` is SPEC 4.3's).
 * Every managed worktree is therefore exactly two segments under its family root, and the pool
 * root's name is a reserved group name of the `repo` family so the two can never be confused.
 *
 * `validateManagedWorktreePath` is the single gate every create/remove passes: it canonicalises
 * (realpath of the deepest existing ancestor), refuses symlinks anywhere from the repository root
 * down (a symlinked `.vox` pointing elsewhere is refused, even a dangling one), refuses filesystem
 * roots, the repository itself and anything outside the managed root, and validates each segment
 * against a small safe charset. Failures are typed `WorktreeError`s.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalPath } from '../platform/workspace-lease';

/** Directory (relative to the repository root) that holds everything Vox writes into a repo. */
export const VOX_DIR_NAME = '.vox';
/** Directory under `.vox/` that holds the managed worktree families. */
export const WORKTREES_DIR_NAME = 'worktrees';
/** Folder (under `.vox/worktrees/`) of the `pool` family; SPEC 4.3 names it for the variant pool. */
export const POOL_ROOT_NAME = 'muse';
/** Longest accepted path segment (group or slug); keeps paths well under Windows' MAX_PATH. */
export const MAX_SEGMENT_LENGTH = 64;
/** Segment charset: starts with an alphanumeric (so never `.`/`..`/hidden/an option), then `[A-Za-z0-9._-]`. */
const SEGMENT_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Names Windows cannot create as files or directories, whatever the extension. */
const WINDOWS_RESERVED_RE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
/** Segment suffix git refuses in ref names (a worktree's admin id is derived from its basename). */
const LOCK_SUFFIX = '.lock';

export type WorktreeErrorCode = ErrorCode<'worktree'>;

export class WorktreeError extends VoxError<'worktree'> {
  override readonly name = 'WorktreeError';
  readonly domain = 'worktree' as const;
  constructor(
    code: WorktreeErrorCode,
    message: string,
    readonly details: {
      path?: string;
      /** The reason given to `git worktree lock --reason`, for `locked`. */
      lockReason?: string;
      /** Files with uncommitted changes, for `dirty` (capped). */
      dirtyFiles?: string[];
      /** Entries left in place, for `unsafeTree`. */
      leftBehind?: string[];
      cause?: unknown;
    } = {},
  ) {
    super(code, message, { cause: details.cause });
  }
}

export type ManagedFamily = 'repo' | 'pool';

export interface ManagedWorktreeLocation {
  family: ManagedFamily;
  /** `repo` family: the repository group (normally `repoGroupName`); `pool`: the set's owner. */
  group: string;
  /** The worktree's own segment. */
  slug: string;
}

export interface ValidatedWorktreePath extends ManagedWorktreeLocation {
  /** Canonical absolute path of the worktree (may not exist yet). */
  path: string;
  /** Canonical repository root the path was validated against. */
  repoRoot: string;
  /** `<repoRoot>/.vox/worktrees`. */
  managedRoot: string;
}

/** Why `segmentProblem` rejects a segment, or undefined when it is acceptable. */
export function segmentProblem(segment: string): string | undefined {
  if (segment.length === 0) return 'is empty';
  if (segment.includes('\0')) return 'contains NUL';
  if (segment.includes('/') || segment.includes('\\')) return 'contains a path separator';
  if (segment === '.' || segment === '..') return 'is a relative path step';
  if (segment.length > MAX_SEGMENT_LENGTH) return `is longer than ${MAX_SEGMENT_LENGTH} characters`;
  if (!SEGMENT_RE.test(segment)) return 'must start with a letter or digit and use only letters, digits, ".", "_" and "-"';
  if (segment.endsWith('.') || segment.endsWith(LOCK_SUFFIX)) return `must not end with "." or "${LOCK_SUFFIX}"`;
  if (WINDOWS_RESERVED_RE.test(segment)) return 'is a reserved device name on Windows';
  return undefined;
}

/** Throws `invalidSlug` unless `segment` is a safe single path segment. */
export function assertSegment(segment: string, what: string): void {
  const problem = segmentProblem(segment);
  if (problem) throw new WorktreeError('invalidSlug', `${what} ${JSON.stringify(segment)} ${problem}`);
}

/**
 * Makes a safe segment out of arbitrary text (a thread id, a repository name, a title): unsafe
 * characters become `-`, runs collapse, the result is trimmed to MAX_SEGMENT_LENGTH. Returns
 * `fallback` when nothing usable remains.
 */
export function slugify(text: string, fallback = 'worktree'): string {
  let s = text
    .normalize('NFKD')
    .replace(/\.{2,}/g, '-') // no `..` inside a segment either
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/[-.]*-[-.]*/g, '-') // a run of `-` and `.` holding a `-` becomes one `-`
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, MAX_SEGMENT_LENGTH)
    .replace(/[.-]+$/, '');
  if (s.endsWith(LOCK_SUFFIX)) s = s.slice(0, -LOCK_SUFFIX.length).replace(/[.-]+$/, '');
  if (WINDOWS_RESERVED_RE.test(s)) s = `${s}-`.slice(0, MAX_SEGMENT_LENGTH).replace(/-$/, '_');
  return segmentProblem(s) === undefined ? s : fallback;
}

/** The `repo`-family group for a repository: its directory name, made safe, never the pool root's name. */
export function repoGroupName(repoRoot: string): string {
  const name = slugify(path.basename(canonicalPath(repoRoot)), 'repo');
  return name.toLowerCase() === POOL_ROOT_NAME ? `${name}-repo` : name;
}

/** `<repoRoot>/.vox/worktrees` for an already canonical repository root. */
export function managedRootOf(canonicalRepoRoot: string): string {
  return path.join(canonicalRepoRoot, VOX_DIR_NAME, WORKTREES_DIR_NAME);
}

/** The canonical path of a location; validates the segments (not the filesystem). */
export function managedWorktreePath(repoRoot: string, loc: ManagedWorktreeLocation): string {
  assertSegment(loc.group, 'group');
  assertSegment(loc.slug, 'slug');
  if (loc.family === 'repo' && loc.group.toLowerCase() === POOL_ROOT_NAME) {
    throw new WorktreeError('invalidSlug', `group "${loc.group}" is reserved for worktree pools (variants)`);
  }
  const root = managedRootOf(canonicalPath(repoRoot));
  return loc.family === 'pool' ? path.join(root, POOL_ROOT_NAME, loc.group, loc.slug) : path.join(root, loc.group, loc.slug);
}

function isFilesystemRoot(p: string): boolean {
  return path.parse(p).root === p;
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/**
 * Validates that `candidate` names a managed worktree of `repoRoot` and returns its canonical form.
 * See the file header for the rules. Purely filesystem-based (no git): callers that need the
 * repository's top level resolve it first.
 */
export function validateManagedWorktreePath(repoRoot: string, candidate: string): ValidatedWorktreePath {
  const refuse = (why: string): never => {
    throw new WorktreeError('outsideManagedRoot', `${JSON.stringify(candidate)} is not a managed worktree path: ${why}`, { path: candidate });
  };
  if (typeof candidate !== 'string' || candidate.length === 0) refuse('the path is empty');
  if (candidate.includes('\0') || repoRoot.includes('\0')) throw new WorktreeError('invalidSlug', 'path contains NUL', { path: candidate });
  if (candidate.split(/[\\/]+/).includes('..')) throw new WorktreeError('invalidSlug', `${JSON.stringify(candidate)} contains a ".." segment`, { path: candidate });

  const repo = canonicalPath(repoRoot);
  const abs = path.resolve(repo, candidate);
  const canon = canonicalPath(abs);
  if (isFilesystemRoot(canon)) refuse('it is a filesystem root');
  if (canon === repo) refuse('it is the repository itself');
  const root = managedRootOf(repo);
  const rel = path.relative(root, canon);
  if (rel === '' || path.isAbsolute(rel) || rel === '..' || rel.startsWith(`..${path.sep}`)) refuse(`it is not inside ${root}`);

  const segs = rel.split(path.sep);
  const family: ManagedFamily = segs[0]!.toLowerCase() === POOL_ROOT_NAME ? 'pool' : 'repo';
  const inFamily = family === 'pool' ? segs.slice(1) : segs;
  if (inFamily.length !== 2) {
    const familyRoot = family === 'pool' ? path.join(root, POOL_ROOT_NAME) : root;
    refuse(`it must be exactly two segments under ${familyRoot} (found ${inFamily.length})`);
  }
  if (family === 'pool' && segs[0] !== POOL_ROOT_NAME) refuse(`the pool root must be spelled "${POOL_ROOT_NAME}"`);
  for (const seg of inFamily) assertSegment(seg, 'path segment');

  // Realpath resolved every existing component of `canon`, but a dangling symlink (or one created
  // after realpath ran) is invisible to it: lstat each component from the repo root down. The
  // path as written is walked too, so a symlinked group directory that happens to point at
  // another managed directory is refused rather than silently redirected.
  const walkFrom = (base: string, target: string): void => {
    let cur = base;
    for (const seg of path.relative(base, target).split(path.sep)) {
      cur = path.join(cur, seg);
      const st = lstatOrUndefined(cur);
      if (!st) return;
      if (st.isSymbolicLink()) refuse(`${cur} is a symbolic link`);
      if (!st.isDirectory()) refuse(`${cur} is not a directory`);
    }
  };
  walkFrom(repo, path.join(root, ...segs));
  for (const base of new Set([repo, path.resolve(repoRoot)])) {
    const lexRel = path.relative(base, abs);
    if (lexRel && lexRel !== '..' && !lexRel.startsWith(`..${path.sep}`) && !path.isAbsolute(lexRel)) walkFrom(base, abs);
  }
  return { family, group: inFamily[0]!, slug: inFamily[1]!, path: canon, repoRoot: repo, managedRoot: root };
}
