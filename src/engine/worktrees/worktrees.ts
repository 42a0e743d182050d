/**
 * Managed git worktrees (SPEC §4.1, §4.3): create, list and remove the worktrees Vox owns under
 * `<repo>/.vox/worktrees/` — `<repoName>/<slug>` and, for pools (variants), `muse/<group>/<slug>`
 * (layout and path validation in ./paths, removal in ./removal). This module is
 * the entry point: it re-exports the whole API.
 *
 * Create runs under the lease of the new path: `.vox/` is appended once to
 * `<common git dir>/info/exclude`, `git worktree add` checks out `baseRef` (default HEAD) detached
 * by default or on a new branch (`-b`), then the repository's untracked `.env*` files are copied
 * in (./env-files; `.env.production*` only when opted in). A repository without commits gets a
 * typed `noCommits` error (git needs a commit to check out); a bad base ref `invalidRef`. If the
 * `.env` copy itself is refused the fresh worktree is rolled back. `git worktree add` runs the
 * repository's `post-checkout` hook, as any `git worktree add` would.
 *
 * Nothing here touches the user's HEAD, branch, index or stash: `worktree add` writes only the new
 * worktree's own HEAD and index (and the new branch when one is asked for), and every status
 * query runs with GIT_OPTIONAL_LOCKS=0.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitRaw } from '../git/git';
import { workspaceLeases } from '../platform/workspace-lease';
import { copyUntrackedEnvFiles, type EnvCopyOptions, type EnvCopyReport } from './env-files';
import { WorktreeError, managedWorktreePath, repoGroupName, validateManagedWorktreePath, type ManagedFamily } from './paths';
import { ensureVoxExcluded, migrateVoxExcludeIn } from './exclude';
import { withWorktreeAdmin, gitFailure, listIn, lstatOrUndefined, resolveRepository, type ManagedWorktree } from './repo';
import { removeLinked } from './removal';

export * from './paths';
export { ensureVoxExcluded, VOX_EXCLUDE_LINE, VOX_EXCLUDE_MARKER } from './exclude';
export { resolveRepository, listManagedWorktrees, type RepositoryInfo, type ManagedWorktree } from './repo';
export { removeManagedWorktree, MAX_REPORTED_DIRTY_FILES, type RemoveManagedWorktreeOptions, type RemovedWorktree } from './removal';
export { copyUntrackedEnvFiles, listUntrackedEnvFiles, MAX_ENV_FILE_BYTES, type EnvCopyOptions, type EnvCopyReport, type EnvSkipReason } from './env-files';
export { removeTreeNoFollow, type SafeRemoveResult } from '../platform/safe-remove';

export interface CreateManagedWorktreeOptions {
  repoRoot: string;
  /** Root family: `repo` (default) or `pool` (a set of worktrees one caller owns, e.g. variants). */
  family?: ManagedFamily;
  /** Group segment; defaults to `repoGroupName(repoRoot)` for the `repo` family (required for `pool`). */
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

/** Creates a managed worktree; see the file header. */
export async function createManagedWorktree(opts: CreateManagedWorktreeOptions): Promise<CreatedWorktree> {
  const repo = await resolveRepository(opts.repoRoot);
  const family = opts.family ?? 'repo';
  if (family === 'pool' && opts.group === undefined) throw new WorktreeError('invalidSlug', 'a pool worktree needs a group (its owner)');
  const group = opts.group ?? repoGroupName(repo.root);
  const target = managedWorktreePath(repo.root, { family, group, slug: opts.slug });
  if (validateManagedWorktreePath(repo.root, target).path !== target) {
    throw new WorktreeError('outsideManagedRoot', `${target} resolves elsewhere through a symbolic link`, { path: target });
  }

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
    if (baseRef === 'HEAD') {
      throw new WorktreeError('noCommits', `${repo.root} has no commits yet: a worktree needs a commit to check out (make a first commit)`, { path: repo.root });
    }
    throw new WorktreeError('invalidRef', `${JSON.stringify(baseRef)} does not name a commit in ${repo.root}`);
  }
  if (!detach && opts.branch === undefined && !(await refExists(repo.root, `refs/heads/${baseRef}`))) {
    throw new WorktreeError('invalidRef', `detach: false without a new branch needs baseRef to be a local branch; ${JSON.stringify(baseRef)} is not`);
  }

  return workspaceLeases.withWorkspaceLease(target, async () => {
    const v = validateManagedWorktreePath(repo.root, target);
    if (lstatOrUndefined(v.path)) throw new WorktreeError('alreadyExists', `${v.path} already exists`, { path: v.path });
    await ensureVoxExcluded(repo);
    fs.mkdirSync(path.dirname(v.path), { recursive: true });
    validateManagedWorktreePath(repo.root, v.path); // nothing was planted on the way meanwhile

    const mode = opts.branch !== undefined ? ['-b', opts.branch] : detach ? ['--detach'] : [];
    const commitish = opts.branch !== undefined || detach ? commit : baseRef;
    try {
      await withWorktreeAdmin(repo, () => gitRaw(['worktree', 'add', ...mode, '--', v.path, commitish], { cwd: repo.root }));
    } catch (e) {
      try {
        fs.rmdirSync(path.dirname(v.path)); // the group directory we made, if it stayed empty
      } catch {
        // not empty (sibling worktrees) or already gone
      }
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

/**
 * Migrates the earlier Vox's `.vox/` line in the exclude file of the repository holding
 * `repoRoot` (./exclude.ts says how it tells the line is Vox's). False when nothing changed or
 * `repoRoot` is not in a git work tree (nothing to migrate there).
 */
export async function migrateVoxExclude(repoRoot: string): Promise<boolean> {
  let repo;
  try {
    repo = await resolveRepository(repoRoot);
  } catch (e) {
    if (e instanceof WorktreeError && e.code === 'notARepository') return false;
    throw e;
  }
  return migrateVoxExcludeIn(repo);
}
