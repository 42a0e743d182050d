/**
 * Managed git worktrees (SPEC §4.1, §4.3): create, list and remove the worktrees Vox owns under
 * `<repo>/.vox/worktrees/` (layout and path validation in ./worktree-paths).
 *
 * - Create runs `git worktree add` (detached by default, or `-b <branch>`) under the lease of the
 *   new path, after appending `.vox/` once to `<common git dir>/info/exclude`, then provisions the
 *   repository's untracked `.env*` files (./env-files). A repository without commits gets a typed
 *   `noCommits` error: git needs a commit to check out.
 * - List reads `git worktree list --porcelain -z` and keeps the entries under the managed root.
 * - Remove is link-safe, under the lease: the path is validated, the admin linkage verified in
 *   both directions (the worktree's `.git` file, `rev-parse --absolute-git-dir` and
 *   `--git-common-dir` all name `<common>/worktrees/<id>` of THIS repository, and that admin entry's
 *   `gitdir` names this very path), a lock (`<git-dir>/locked`) refuses with its reason, a dirty
 *   tree (tracked changes or untracked, non-ignored files) refuses with the files unless `force`,
 *   then the tree is deleted without following any symlink (./safe-remove), the `.git` file last,
 *   and finally git drops the admin entry.
 *
 * Deliberate deviation from the spec's `git worktree prune`: prune also drops the admin entries of
 * the user's OTHER worktrees whose directories are momentarily missing (an unmounted drive, a
 * network share). After our own deletion we run `git worktree remove <path>` instead, which on a
 * missing directory deletes exactly that one admin entry (`<common>/worktrees/<id>`) and nothing
 * else — the same end state prune gives for our worktree, without the collateral.
 *
 * Nothing here touches the user's HEAD, branch, index or stash: `worktree add` writes only the new
 * worktree's own HEAD and index, and every status query runs with GIT_OPTIONAL_LOCKS=0.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitRaw, splitNul, GitError } from './git';
import { workspaceLeases, canonicalPath } from './workspace-lease';
import { copyUntrackedEnvFiles, type EnvCopyOptions, type EnvCopyReport } from './env-files';
import { removeTreeNoFollow } from './safe-remove';
import {
  WorktreeError,
  VOX_DIR_NAME,
  managedWorktreePath,
  repoGroupName,
  validateManagedWorktreePath,
  type ManagedFamily,
  type ValidatedWorktreePath,
} from './worktree-paths';

export * from './worktree-paths';
export type { EnvCopyOptions, EnvCopyReport, EnvSkipReason } from './env-files';

/** The line Vox adds to `info/exclude` so its directory never shows up as untracked. */
export const VOX_EXCLUDE_LINE = `${VOX_DIR_NAME}/`;
/** Lines in `info/exclude` that already ignore `.vox/` (any of these counts as present). */
const VOX_EXCLUDE_EQUIVALENTS = new Set([VOX_DIR_NAME, `/${VOX_DIR_NAME}`, `${VOX_DIR_NAME}/`, `/${VOX_DIR_NAME}/`]);
/** Most dirty files listed in a `dirty` refusal (the count is always exact). */
export const MAX_REPORTED_DIRTY_FILES = 50;
/** Largest `.git` / `gitdir` link file read (bytes); real ones hold one path. */
const MAX_LINK_FILE_BYTES = 16 * 1024;

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

export interface CreateManagedWorktreeOptions {
  repoRoot: string;
  /** Root family: `repo` (default) or `muse` (variants). */
  family?: ManagedFamily;
  /** Group segment; defaults to `repoGroupName(repoRoot)` for the `repo` family (required for `muse`). */
  group?: string;
  slug: string;
  /** Commit-ish to check out; default `HEAD`. */
  baseRef?: string;
  /** Create this new branch at `baseRef` and check it out (`git worktree add -b`). */
  branch?: string;
  /** Detached HEAD (default true). `false` without `branch` checks out `baseRef` as a local branch. */
  detach?: boolean;
  /** `.env*` provisioning; default copies (no `.env.production*`); `false` skips it. */
  copyEnv?: EnvCopyOptions | false;
}

export interface CreatedWorktree extends ManagedWorktree {
  /** What was copied/skipped from the repository's untracked `.env*` files, or null when disabled. */
  env: EnvCopyReport | null;
}

export interface RemoveManagedWorktreeOptions {
  repoRoot: string;
  path: string;
  /** Remove even with uncommitted changes (a lock still refuses: unlock it first). */
  force?: boolean;
}

export interface RemovedWorktree {
  path: string;
  /** False when the directory was already gone and only git's admin entry was dropped. */
  treeDeleted: boolean;
  /** Symbolic links removed as links (their targets untouched). */
  linksUnlinked: number;
}

function gitFailure(e: unknown, what: string, p?: string): WorktreeError {
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

/**
 * Appends `.vox/` to `<commonDir>/info/exclude` unless an equivalent line is there (creating the
 * file and `info/` if needed). Serialised per exclude file, so parallel creates add it once.
 * Returns true when the line was added.
 */
export async function ensureVoxExcluded(commonDir: string): Promise<boolean> {
  const file = path.join(commonDir, 'info', 'exclude');
  return workspaceLeases.withWorkspaceLease(file, () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (text.split(/\r?\n/).some((l) => VOX_EXCLUDE_EQUIVALENTS.has(l.trim()))) return false;
    const sep = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    fs.appendFileSync(file, `${sep}${VOX_EXCLUDE_LINE}\n`);
    return true;
  });
}

/** Validates a ref-ish argument enough that git can never read it as an option. */
function assertRefArgument(ref: string, what: string): void {
  if (ref.length === 0 || ref.startsWith('-') || ref.includes('\0') || /\s/.test(ref)) {
    throw new WorktreeError('invalidRef', `${what} ${JSON.stringify(ref)} is not a valid ref`);
  }
}

async function resolveCommit(root: string, ref: string): Promise<string | null> {
  const r = await gitRaw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: root, okExitCodes: [1, 128] });
  const sha = r.stdout.toString('utf8').trim();
  return r.exitCode === 0 && sha ? sha : null;
}

async function refExists(root: string, fullRef: string): Promise<boolean> {
  const r = await gitRaw(['show-ref', '--verify', '--quiet', fullRef], { cwd: root, okExitCodes: [1] });
  return r.exitCode === 0;
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
      else if (key === 'locked') (cur.locked = true), (cur.lockReason = value);
      else if (key === 'prunable') (cur.prunable = true), (cur.prunableReason = value);
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

async function listIn(repo: RepositoryInfo): Promise<ManagedWorktree[]> {
  let r;
  try {
    r = await gitRaw(['worktree', 'list', '--porcelain', '-z'], { cwd: repo.root });
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

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Reads a small link file (`.git`, `gitdir`) and resolves the path it holds against `baseDir`. */
function readLinkFile(file: string, baseDir: string, prefix: string): string | null {
  const st = lstatOrUndefined(file);
  if (!st || !st.isFile() || st.size > MAX_LINK_FILE_BYTES) return null;
  let text = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  if (prefix) {
    if (!text.startsWith(prefix)) return null;
    text = text.slice(prefix.length);
  }
  if (!text || text.includes('\n') || text.includes('\0')) return null;
  return canonicalPath(path.resolve(baseDir, text));
}

/**
 * Verifies that `wt` is a linked worktree of `repo` at exactly this path; returns its admin dir
 * (`<common>/worktrees/<id>`). Throws `notLinked` otherwise.
 */
async function verifyLinkage(repo: RepositoryInfo, wt: string): Promise<string> {
  const notLinked = (why: string): never => {
    throw new WorktreeError('notLinked', `${wt} is not a linked worktree of ${repo.root}: ${why}`, { path: wt });
  };
  const dotGit = path.join(wt, '.git');
  const st = lstatOrUndefined(dotGit);
  if (!st) notLinked('it has no .git file');
  if (st!.isSymbolicLink()) notLinked('its .git is a symbolic link');
  if (st!.isDirectory()) notLinked('its .git is a directory (a separate repository)');
  const adminFromFile = readLinkFile(dotGit, wt, 'gitdir: ') ?? notLinked('its .git file is not a "gitdir:" link');
  const adminParent = canonicalPath(path.join(repo.commonDir, 'worktrees'));
  if (path.dirname(adminFromFile) !== adminParent) notLinked(`its .git file points to ${adminFromFile}, outside ${adminParent}`);

  let out = '';
  try {
    out = await git(['rev-parse', '--path-format=absolute', '--absolute-git-dir', '--git-common-dir'], { cwd: wt });
  } catch (e) {
    notLinked(`git cannot open it (${e instanceof GitError ? e.details.stderr?.trim() || e.message : String(e)})`);
  }
  const [gitDir, common] = out.split('\n');
  if (!gitDir || canonicalPath(gitDir) !== adminFromFile) notLinked(`git resolves its git dir to ${gitDir}, not ${adminFromFile}`);
  if (!common || canonicalPath(common) !== repo.commonDir) notLinked(`its common git dir is ${common}, not ${repo.commonDir}`);

  // The back-link: the admin entry must record THIS path, so a copy or a moved tree is refused.
  const recorded = readLinkFile(path.join(adminFromFile, 'gitdir'), adminFromFile, '');
  if (recorded !== canonicalPath(dotGit)) notLinked(`git records that worktree at ${recorded ? path.dirname(recorded) : '(nothing)'}`);
  return adminFromFile;
}

function lockReasonOf(adminDir: string): string | null {
  try {
    return fs.readFileSync(path.join(adminDir, 'locked'), 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Paths with tracked changes or untracked, non-ignored files in the worktree at `wt`. */
async function dirtyFiles(wt: string): Promise<string[]> {
  const r = await gitRaw(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: wt });
  const fields = splitNul(r.stdout).map((b) => b.toString('utf8'));
  const files: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    files.push(f.slice(3));
    if (f[0] === 'R' || f[0] === 'C') i++; // the rename/copy source follows as its own field
  }
  return files;
}

/** Creates a managed worktree; see the file header. */
export async function createManagedWorktree(opts: CreateManagedWorktreeOptions): Promise<CreatedWorktree> {
  const repo = await resolveRepository(opts.repoRoot);
  const family = opts.family ?? 'repo';
  if (family === 'muse' && opts.group === undefined) throw new WorktreeError('invalidSlug', 'a variant worktree needs a group (the thread slug)');
  const group = opts.group ?? repoGroupName(repo.root);
  const target = managedWorktreePath(repo.root, { family, group, slug: opts.slug });
  validateManagedWorktreePath(repo.root, target);

  const baseRef = opts.baseRef ?? 'HEAD';
  assertRefArgument(baseRef, 'base ref');
  const detach = opts.branch === undefined && opts.detach !== false;
  if (opts.branch !== undefined) {
    assertRefArgument(opts.branch, 'branch');
    const ok = await gitRaw(['check-ref-format', '--branch', opts.branch], { cwd: repo.root, okExitCodes: [1, 128] });
    if (ok.exitCode !== 0) throw new WorktreeError('invalidRef', `${JSON.stringify(opts.branch)} is not a valid branch name`);
    if (await refExists(repo.root, `refs/heads/${opts.branch}`)) throw new WorktreeError('alreadyExists', `branch ${opts.branch} already exists`);
  }
  const commit = await resolveCommit(repo.root, baseRef);
  if (!commit) {
    if (baseRef === 'HEAD' || !(await resolveCommit(repo.root, 'HEAD'))) {
      if (!(await resolveCommit(repo.root, 'HEAD'))) {
        throw new WorktreeError('noCommits', `${repo.root} has no commits yet: a worktree needs a commit to check out (make a first commit)`, { path: repo.root });
      }
    }
    throw new WorktreeError('invalidRef', `${JSON.stringify(baseRef)} does not name a commit in ${repo.root}`);
  }
  if (!detach && opts.branch === undefined && !(await refExists(repo.root, `refs/heads/${baseRef}`))) {
    throw new WorktreeError('invalidRef', `detach: false without a new branch needs baseRef to be a local branch; ${JSON.stringify(baseRef)} is not`);
  }

  return workspaceLeases.withWorkspaceLease(target, async () => {
    const v = validateManagedWorktreePath(repo.root, target);
    if (lstatOrUndefined(v.path)) throw new WorktreeError('alreadyExists', `${v.path} already exists`, { path: v.path });
    await ensureVoxExcluded(repo.commonDir);
    fs.mkdirSync(path.dirname(v.path), { recursive: true });
    validateManagedWorktreePath(repo.root, v.path); // nothing was planted on the way meanwhile

    const mode = opts.branch !== undefined ? ['-b', opts.branch] : detach ? ['--detach'] : [];
    const commitish = opts.branch !== undefined || detach ? commit : baseRef;
    try {
      await gitRaw(['worktree', 'add', ...mode, '--', v.path, commitish], { cwd: repo.root });
    } catch (e) {
      throw gitFailure(e, `git worktree add ${v.path} failed`, v.path);
    }

    let env: EnvCopyReport | null = null;
    if (opts.copyEnv !== false) {
      try {
        env = await copyUntrackedEnvFiles(repo.root, v.path, opts.copyEnv ?? {});
      } catch (e) {
        // Roll back: the new tree holds nothing but the checkout and what we just copied.
        await removeLinked(repo, v.path, true).catch(() => undefined);
        throw e instanceof WorktreeError ? e : new WorktreeError('envCopyRefused', `copying .env files into ${v.path} failed: ${(e as Error).message}`, { path: v.path, cause: e });
      }
    }
    const listed = (await listIn(repo)).find((w) => w.path === v.path);
    const base: ManagedWorktree = listed ?? {
      path: v.path, family: v.family, group: v.group, slug: v.slug, head: commit, branch: opts.branch ? `refs/heads/${opts.branch}` : null,
      detached: detach, locked: false, lockReason: null, prunable: false, prunableReason: null,
    };
    return { ...base, env };
  });
}

/** Steps after validation and lease: linkage, lock, dirty check, deletion, admin cleanup. */
async function removeLinked(repo: RepositoryInfo, wt: string, force: boolean): Promise<RemovedWorktree> {
  const adminDir = await verifyLinkage(repo, wt);
  const reason = lockReasonOf(adminDir);
  if (reason !== null) {
    throw new WorktreeError('locked', `${wt} is locked${reason ? ` (${reason})` : ''}; run git worktree unlock first`, { path: wt, lockReason: reason });
  }
  if (!force) {
    let files: string[];
    try {
      files = await dirtyFiles(wt);
    } catch (e) {
      throw gitFailure(e, `git status in ${wt} failed (use force to remove anyway)`, wt);
    }
    if (files.length > 0) {
      throw new WorktreeError('dirty', `${wt} has ${files.length} file(s) with uncommitted changes; commit them or remove with force`, {
        path: wt,
        dirtyFiles: files.slice(0, MAX_REPORTED_DIRTY_FILES),
      });
    }
  }
  const res = await removeTreeNoFollow(wt, { deleteLast: ['.git'] });
  if (res.leftBehind.length > 0) {
    throw new WorktreeError('unsafeTree', `${wt} contains other filesystems (mount points) that were left in place; unmount them and retry`, {
      path: wt,
      leftBehind: res.leftBehind,
    });
  }
  await dropAdminEntry(repo, wt);
  return { path: wt, treeDeleted: true, linksUnlinked: res.linksUnlinked };
}

/** Drops git's admin entry for the (now missing) worktree at `wt` — that one entry only. */
async function dropAdminEntry(repo: RepositoryInfo, wt: string): Promise<void> {
  if (lstatOrUndefined(wt)) throw new WorktreeError('alreadyExists', `${wt} reappeared during removal; left it alone`, { path: wt });
  try {
    await gitRaw(['worktree', 'remove', '--', wt], { cwd: repo.root });
  } catch (e) {
    throw gitFailure(e, `the tree at ${wt} was deleted but git could not drop its admin entry`, wt);
  }
}

/** Removes a managed worktree link-safely; see the file header. */
export async function removeManagedWorktree(opts: RemoveManagedWorktreeOptions): Promise<RemovedWorktree> {
  const repo = await resolveRepository(opts.repoRoot);
  const first = validateManagedWorktreePath(repo.root, opts.path);
  return workspaceLeases.withWorkspaceLease(first.path, async () => {
    const v = validateManagedWorktreePath(repo.root, first.path);
    if (!lstatOrUndefined(v.path)) {
      // Already deleted (by hand, or a previous removal interrupted after the tree went).
      const entry = (await listIn(repo)).find((w) => w.path === v.path);
      if (!entry) throw new WorktreeError('notLinked', `there is no worktree at ${v.path}`, { path: v.path });
      if (entry.locked) throw new WorktreeError('locked', `${v.path} is locked${entry.lockReason ? ` (${entry.lockReason})` : ''}`, { path: v.path, lockReason: entry.lockReason ?? '' });
      await dropAdminEntry(repo, v.path);
      return { path: v.path, treeDeleted: false, linksUnlinked: 0 };
    }
    return removeLinked(repo, v.path, opts.force === true);
  });
}
