/**
 * Repository plumbing shared by the managed-worktree operations (SPEC §4.1): resolving a
 * repository's top level and common git dir (`./exclude.ts` keeps Vox's line in `<common>/info/exclude`) and
 * reading `git worktree list --porcelain -z` down to the managed worktrees.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitRaw, splitNul, GitError } from '../git/git';
import { workspaceLeases, canonicalPath } from '../platform/workspace-lease';
import { WorktreeError, validateManagedWorktreePath, type ManagedFamily, type ValidatedWorktreePath } from './paths';

export interface RepositoryInfo {
  /** Canonical top level of the work tree `repoRoot` belongs to. */
  root: string;
  /** Canonical common git directory (`.git` of the main worktree). */
  commonDir: string;
}

export interface ManagedWorktree {
  path: string;
  family: ManagedFamily;
  group: string;
  slug: string;
  /** Commit checked out, or null (unborn, or git could not tell). */
  head: string | null;
  /** Full ref name (`refs/heads/x`) or null when detached. */
  branch: string | null;
  detached: boolean;
  locked: boolean;
  lockReason: string | null;
  prunable: boolean;
  prunableReason: string | null;
}

/** The lock file (in the common git dir) that serialises `git worktree` commands across processes. */
const WORKTREE_ADMIN_LOCK = 'vox-worktree-admin.lock';

/**
 * Runs one `git worktree …` command of `repo` at a time (in this process and across processes). git writes a new
 * worktree's admin entry (`<common>/worktrees/<name>/`) in several steps, and a concurrent
 * `worktree add`, `list` or `remove` that reads the half-written entry fails ("failed to read
 * …/commondir"); creating the variants' worktrees in parallel hit that. Keyed on the admin
 * directory, which is never a worktree path, so it cannot deadlock with a worktree's own lease.
 */
export function withWorktreeAdmin<T>(repo: RepositoryInfo, fn: () => Promise<T>): Promise<T> {
  return workspaceLeases.withWorkspaceLease(path.join(repo.commonDir, 'worktrees'), fn, { lockFile: path.join(repo.commonDir, WORKTREE_ADMIN_LOCK) });
}

/** Wraps a git failure (or passes a WorktreeError through) as a typed `gitFailed`. */
export function gitFailure(e: unknown, what: string, p?: string): WorktreeError {
  if (e instanceof WorktreeError) return e;
  const msg = e instanceof GitError ? (e.details.stderr?.trim() || e.message) : (e as Error).message;
  return new WorktreeError('gitFailed', `${what}: ${msg}`, { ...(p ? { path: p } : {}), cause: e });
}

/** Resolves the top level and common git dir of the repository containing `repoRoot`. */
export async function resolveRepository(repoRoot: string): Promise<RepositoryInfo> {
  if (repoRoot.includes('\0') || !fs.existsSync(repoRoot)) throw new WorktreeError('notARepository', `${repoRoot} does not exist`, { path: repoRoot });
  let out: string;
  try {
    out = await git(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], { cwd: repoRoot });
  } catch (e) {
    const stderr = e instanceof GitError ? e.details.stderr?.trim() : undefined;
    throw new WorktreeError('notARepository', `${repoRoot} is not inside a git work tree${stderr ? `: ${stderr}` : ''}`, { path: repoRoot, cause: e });
  }
  const [top, common] = out.split('\n');
  if (!top || !common) throw new WorktreeError('notARepository', `${repoRoot} is not inside a git work tree`, { path: repoRoot });
  return { root: canonicalPath(top), commonDir: canonicalPath(common) };
}

/** Parses `git worktree list --porcelain -z`. */
function parseWorktreeList(buf: Buffer): Array<Omit<ManagedWorktree, 'family' | 'group' | 'slug'>> {
  const out: Array<Omit<ManagedWorktree, 'family' | 'group' | 'slug'>> = [];
  let cur: Omit<ManagedWorktree, 'family' | 'group' | 'slug'> | null = null;
  for (const field of splitNul(buf).map((b) => b.toString('utf8'))) {
    if (field === '') {
      if (cur) out.push(cur);
      cur = null;
      continue;
    }
    const sp = field.indexOf(' ');
    const key = sp < 0 ? field : field.slice(0, sp);
    const value = sp < 0 ? null : field.slice(sp + 1);
    if (key === 'worktree') {
      if (cur) out.push(cur);
      cur = { path: value ?? '', head: null, branch: null, detached: false, locked: false, lockReason: null, prunable: false, prunableReason: null };
    } else if (cur) {
      if (key === 'HEAD') cur.head = value && !/^0+$/.test(value) ? value : null;
      else if (key === 'branch') cur.branch = value;
      else if (key === 'detached') cur.detached = true;
      else if (key === 'locked') {
        cur.locked = true;
        cur.lockReason = value;
      } else if (key === 'prunable') {
        cur.prunable = true;
        cur.prunableReason = value;
      }
    }
  }
  if (cur) out.push(cur);
  return out;
}

function tryValidate(root: string, p: string): ValidatedWorktreePath | null {
  try {
    return validateManagedWorktreePath(root, p);
  } catch {
    return null;
  }
}

export async function listIn(repo: RepositoryInfo): Promise<ManagedWorktree[]> {
  let r;
  try {
    r = await withWorktreeAdmin(repo, () => gitRaw(['worktree', 'list', '--porcelain', '-z'], { cwd: repo.root }));
  } catch (e) {
    throw gitFailure(e, 'git worktree list failed');
  }
  const out: ManagedWorktree[] = [];
  for (const wt of parseWorktreeList(r.stdout)) {
    const v = tryValidate(repo.root, wt.path);
    if (v) out.push({ ...wt, path: v.path, family: v.family, group: v.group, slug: v.slug });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The managed worktrees of the repository containing `repoRoot`, sorted by path. */
export async function listManagedWorktrees(repoRoot: string): Promise<ManagedWorktree[]> {
  return listIn(await resolveRepository(repoRoot));
}

export function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
