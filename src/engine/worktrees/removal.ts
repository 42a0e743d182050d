/**
 * Link-safe removal of a managed worktree (SPEC §4.1), under the lease of its path: the path is
 * validated; the admin linkage is verified in both directions (the worktree's `.git` file,
 * `rev-parse --absolute-git-dir` and `--git-common-dir` all name `<common>/worktrees/<id>` of THIS
 * repository, and that admin entry's `gitdir` names this very path — so a plain directory, a
 * separate clone, a copy, or another repository's worktree moved here is refused `notLinked` and
 * left intact); a lock (`<git-dir>/locked`) refuses with its reason even with `force`; a dirty tree
 * (tracked changes, or untracked files that are not ignored; a provisioned `.env*` file still
 * byte-identical to the repository's copy does not count) refuses with the files unless `force`; then the tree is deleted without following
 * any symlink (./safe-remove), its `.git` file last, and git drops the admin entry.
 *
 * Deliberate deviation from the spec's `git worktree prune`: prune also drops the admin entries of
 * the user's OTHER worktrees whose directories are momentarily missing (an unmounted drive, a
 * network share). After our own deletion we run `git worktree remove <path>` instead, which on a
 * missing directory deletes exactly that one admin entry (`<common>/worktrees/<id>`) and nothing
 * else — the same end state prune gives for our worktree, without the collateral.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitRaw, splitNul, GitError } from '../git/git';
import { workspaceLeases, canonicalPath } from '../platform/workspace-lease';
import { removeTreeNoFollow } from '../platform/safe-remove';
import { isEnvFileName, MAX_ENV_FILE_BYTES } from './env-files';
import { WorktreeError, validateManagedWorktreePath } from './paths';
import { gitFailure, listIn, withWorktreeAdmin, lstatOrUndefined, resolveRepository, type RepositoryInfo } from './repo';

/** Most dirty files listed in a `dirty` refusal (the count is always exact). */
export const MAX_REPORTED_DIRTY_FILES = 50;
/** Largest `.git` / `gitdir` link file read (bytes); real ones hold one path. */
const MAX_LINK_FILE_BYTES = 16 * 1024;

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

/**
 * True when the untracked `rel` in `wt` is a `.env*` file byte-identical to the repository's own
 * copy — i.e. one we provisioned at creation and nobody changed since; it is not a change.
 */
function isUnchangedProvisionedEnv(repoRoot: string, wt: string, rel: string): boolean {
  if (!isEnvFileName(path.posix.basename(rel))) return false;
  const a = path.join(wt, ...rel.split('/'));
  const b = path.join(repoRoot, ...rel.split('/'));
  const sa = lstatOrUndefined(a);
  const sb = lstatOrUndefined(b);
  if (!sa?.isFile() || !sb?.isFile() || sa.size !== sb.size || sa.size > MAX_ENV_FILE_BYTES) return false;
  return fs.readFileSync(a).equals(fs.readFileSync(b));
}

/**
 * Paths with tracked changes or untracked, non-ignored files in the worktree at `wt` (ignored
 * files never count; provisioned `.env*` files still equal to the repository's do not either).
 */
async function dirtyFiles(repoRoot: string, wt: string): Promise<string[]> {
  const r = await gitRaw(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: wt });
  const fields = splitNul(r.stdout).map((b) => b.toString('utf8'));
  const files: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    const rel = f.slice(3);
    if (f[0] === 'R' || f[0] === 'C') i++; // the rename/copy source follows as its own field
    if (f.startsWith('??') && isUnchangedProvisionedEnv(repoRoot, wt, rel)) continue;
    files.push(rel);
  }
  return files;
}

/** Steps after validation and lease: linkage, lock, dirty check, deletion, admin cleanup. */
export async function removeLinked(repo: RepositoryInfo, wt: string, force: boolean): Promise<RemovedWorktree> {
  const adminDir = await verifyLinkage(repo, wt);
  const reason = lockReasonOf(adminDir);
  if (reason !== null) {
    throw new WorktreeError('locked', `${wt} is locked${reason ? ` (${reason})` : ''}; run git worktree unlock first`, { path: wt, lockReason: reason });
  }
  if (!force) {
    let files: string[];
    try {
      files = await dirtyFiles(repo.root, wt);
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
  removeEmptyGroupDir(wt);
  return { path: wt, treeDeleted: true, linksUnlinked: res.linksUnlinked };
}

/** Removes the worktree's group directory when it is now empty (never recursively). */
function removeEmptyGroupDir(wt: string): void {
  try {
    fs.rmdirSync(path.dirname(wt));
  } catch {
    // ENOTEMPTY (a sibling worktree) or already gone: either way nothing to do.
  }
}

/** Drops git's admin entry for the (now missing) worktree at `wt` — that one entry only. */
async function dropAdminEntry(repo: RepositoryInfo, wt: string): Promise<void> {
  if (lstatOrUndefined(wt)) throw new WorktreeError('alreadyExists', `${wt} reappeared during removal; left it alone`, { path: wt });
  try {
    await withWorktreeAdmin(repo, () => gitRaw(['worktree', 'remove', '--', wt], { cwd: repo.root }));
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
      removeEmptyGroupDir(v.path);
      return { path: v.path, treeDeleted: false, linksUnlinked: 0 };
    }
    return removeLinked(repo, v.path, opts.force === true);
  });
}
