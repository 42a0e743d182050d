/**
 * Repository plumbing shared by capture, restore, diff and prune (SPEC §4.2): resolving a
 * worktree to its git directories, temporary index files, commits with Vox's own identity, and
 * create-only ref updates.
 *
 * Every git call runs with the worktree's top level as cwd. Calls that use a temporary index pass
 * it as `GIT_INDEX_FILE` (an absolute path inside the worktree's git dir, so git's `<index>.lock`
 * rename stays on one filesystem) and force `core.splitIndex=false`, so a temporary index never
 * writes or expires `sharedindex.*` files that the user's real index depends on. Extra config is
 * passed through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (appended to any the
 * parent set), which keeps argv readable in error messages; every call gets `core.autocrlf=false`
 * (`STORE_CONFIG`: checkpoints hold raw bytes, see `conversion.ts`).
 */
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { gitRaw, git, GitError, type GitResult } from '../git/git';
import { canonicalPath } from '../platform/workspace-lease';
import { CHECKPOINT_IDENTITY, CheckpointError, toCheckpointError } from './types';
import { hasControlChar } from './refs';

/** Name prefix of temporary index files inside a git dir. */
export const TEMP_INDEX_PREFIX = 'vox-index-';
/** Temporary index files older than this (ms) are leftovers of a crashed process and are removed. */
export const STALE_TEMP_INDEX_MS = 60 * 60 * 1000;
/** Config forced on every git call that writes a temporary index. */
const TEMP_INDEX_CONFIG: Record<string, string> = { 'core.splitIndex': 'false' };
/**
 * Config forced on every git call of the store: git's view of a file is its raw bytes unless an
 * attribute says otherwise (`conversion.ts`), so the stat cache and every blob id stay exact.
 */
const STORE_CONFIG: Record<string, string> = { 'core.autocrlf': 'false' };

export interface RepoInfo {
  /** Canonical absolute top level of the worktree. */
  root: string;
  /** Absolute per-worktree git dir (`.git`, or `.git/worktrees/<name>` for a linked worktree). */
  gitDir: string;
  /** Absolute path of the real index (`git rev-parse --git-path index`). */
  indexPath: string;
}

export interface RunOptions {
  index?: string;
  input?: string | Buffer | Promise<string | Buffer>;
  okExitCodes?: number[];
  /** Extra config for this call; null drops one the store forces (see STORE_CONFIG). */
  config?: Record<string, string | null>;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  abortInput?: string;
}

function configEnv(config: Record<string, string>): Record<string, string> {
  const base = Number.parseInt(process.env.GIT_CONFIG_COUNT ?? '0', 10);
  let n = Number.isSafeInteger(base) && base > 0 ? base : 0;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    env[`GIT_CONFIG_KEY_${n}`] = k;
    env[`GIT_CONFIG_VALUE_${n}`] = v;
    n++;
  }
  env.GIT_CONFIG_COUNT = String(n);
  return env;
}

/** Runs git in `repo.root`, optionally on a temporary index. */
export function run(repo: RepoInfo, args: string[], opts: RunOptions = {}): Promise<GitResult> {
  const merged: Record<string, string | null> = { ...STORE_CONFIG, ...(opts.index ? TEMP_INDEX_CONFIG : {}), ...(opts.config ?? {}) };
  const config: Record<string, string> = {};
  for (const [k, v] of Object.entries(merged)) if (v !== null) config[k] = v;
  const env: Record<string, string | undefined> = { ...(Object.keys(config).length ? configEnv(config) : {}), ...(opts.env ?? {}) };
  if (opts.index) env.GIT_INDEX_FILE = opts.index;
  return gitRaw(args, { cwd: repo.root, env, input: opts.input, okExitCodes: opts.okExitCodes, timeoutMs: opts.timeoutMs, abortInput: opts.abortInput });
}

export async function runText(repo: RepoInfo, args: string[], opts: RunOptions = {}): Promise<string> {
  return (await run(repo, args, opts)).stdout.toString('utf8').replace(/\n$/, '');
}

/** Resolves any directory inside a worktree to its repository; throws `notARepository`. */
export async function resolveRepo(worktree: string): Promise<RepoInfo> {
  const dir = path.resolve(worktree);
  const st = await fsp.stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw new CheckpointError('notARepository', `${dir} is not a directory`);
  let out: string;
  try {
    out = await git(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index'], { cwd: dir });
  } catch (err) {
    if (err instanceof GitError && (err.code === 'notARepository' || /work tree/i.test(err.details.stderr ?? ''))) {
      throw new CheckpointError('notARepository', `${dir} is not inside a git work tree`, err);
    }
    throw toCheckpointError(err, `resolving ${dir}`);
  }
  const [top, gitDir, index] = out.split('\n');
  if (!top || !gitDir || !index) throw new CheckpointError('notARepository', `${dir} is not inside a git work tree`);
  // `--git-path` prints a path relative to the cwd unless it is absolute.
  return { root: canonicalPath(top), gitDir: path.resolve(gitDir), indexPath: path.resolve(dir, index) };
}

/** The commit HEAD points at, or null in a repository with no commits (or a detached bad HEAD). */
export async function headCommit(repo: RepoInfo): Promise<string | null> {
  const r = await run(repo, ['rev-parse', '-q', '--verify', 'HEAD^{commit}'], { okExitCodes: [1, 128] });
  const sha = r.stdout.toString('utf8').trim();
  return r.exitCode === 0 && sha ? sha : null;
}

/** Commit id of `rev` (ref or sha), or null when it does not name a commit. */
export async function resolveCommit(repo: RepoInfo, rev: string): Promise<string | null> {
  if (rev.startsWith('-') || /\s/.test(rev) || hasControlChar(rev)) return null;
  const r = await run(repo, ['rev-parse', '-q', '--verify', '--end-of-options', `${rev}^{commit}`], { okExitCodes: [1, 128] });
  const sha = r.stdout.toString('utf8').trim();
  return r.exitCode === 0 && sha ? sha : null;
}

/** A temporary index file; always `dispose()` it (in a finally). */
export interface TempIndex {
  file: string;
  dispose(): Promise<void>;
}

/** Creates a temporary index, seeded with a copy of `seedFrom` when that file exists (else empty). */
export async function createTempIndex(repo: RepoInfo, seedFrom: string | null): Promise<TempIndex> {
  const file = path.join(repo.gitDir, `${TEMP_INDEX_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  if (seedFrom) {
    try {
      // The copy keeps the source's mtime: git treats entries modified in the same second as the
      // index file as "racily clean" and compares their content. A copy with a fresh mtime would
      // make a same-size edit in that second look unchanged. (Stat before copy: if the source
      // changes in between, the copy only looks older, which makes git check more, not less.)
      const st = await fsp.stat(seedFrom);
      await fsp.copyFile(seedFrom, file);
      await fsp.utimes(file, st.atime, st.mtime);
    } catch (err) {
      // No index yet (a repository with no commits and nothing staged): start empty.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw toCheckpointError(err, `copying ${seedFrom}`);
    }
  }
  return { file, dispose: () => removeIndexFile(file) };
}

export async function removeIndexFile(file: string): Promise<void> {
  await fsp.rm(file, { force: true });
  await fsp.rm(`${file}.lock`, { force: true });
}

/** Removes temporary index files a crashed process left behind (older than STALE_TEMP_INDEX_MS). */
export async function removeStaleTempIndexes(repo: RepoInfo, nowMs: number): Promise<void> {
  const names = await fsp.readdir(repo.gitDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(TEMP_INDEX_PREFIX)) continue;
    const p = path.join(repo.gitDir, name);
    const st = await fsp.stat(p).catch(() => null);
    if (st && nowMs - st.mtimeMs > STALE_TEMP_INDEX_MS) await fsp.rm(p, { force: true });
  }
}

/** Creates a commit object with Vox's identity (no user identity or signing needed). */
export async function commitTree(repo: RepoInfo, tree: string, parents: string[], message: string, timeMs: number): Promise<string> {
  const date = `@${Math.floor(timeMs / 1000)} +0000`;
  const env = {
    GIT_AUTHOR_NAME: CHECKPOINT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: CHECKPOINT_IDENTITY.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: CHECKPOINT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: CHECKPOINT_IDENTITY.email,
    GIT_COMMITTER_DATE: date,
  };
  const args = ['commit-tree', '--no-gpg-sign', tree];
  for (const p of parents) args.push('-p', p);
  return runText(repo, args, { env, input: message });
}

/** Creates `ref` at `commit` only if it does not exist yet; false when it already exists. */
export async function createRef(repo: RepoInfo, ref: string, commit: string): Promise<boolean> {
  try {
    await run(repo, ['update-ref', ref, commit, '']);
    return true;
  } catch (err) {
    if (await resolveCommit(repo, ref)) return false;
    throw toCheckpointError(err, `creating ${ref}`);
  }
}

/** Points `ref` at `commit` unconditionally (used for refs Vox owns in nested repositories). */
export async function setRef(repo: RepoInfo, ref: string, commit: string): Promise<void> {
  await run(repo, ['update-ref', ref, commit]);
}

/** Deletes refs (each only if it still points where we saw it) in one git call. */
export async function deleteRefs(repo: RepoInfo, refs: Array<{ ref: string; commit: string }>): Promise<void> {
  if (!refs.length) return;
  const input = Buffer.concat(refs.map((r) => Buffer.from(`delete ${r.ref}\0${r.commit}\0`, 'utf8')));
  await run(repo, ['update-ref', '--stdin', '-z'], { input });
}

/** Lists refs under `prefix` (which ends in `/`) with the commits they point at. */
export async function listRefs(repo: RepoInfo, prefix: string): Promise<Array<{ ref: string; commit: string }>> {
  const out = await runText(repo, ['for-each-ref', '--format=%(refname) %(objectname)', prefix]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const i = l.lastIndexOf(' ');
      return { ref: l.slice(0, i), commit: l.slice(i + 1) };
    });
}

export interface CommitObject {
  tree: string;
  parents: string[];
  message: string;
}

export async function readCommit(repo: RepoInfo, commit: string): Promise<CommitObject> {
  return parseCommitObject((await run(repo, ['cat-file', 'commit', commit])).stdout.toString('utf8'));
}

/** The commit `rev` (ref or sha) names, read in one process; null when it names none. */
export async function readCommitAt(repo: RepoInfo, rev: string): Promise<(CommitObject & { commit: string }) | null> {
  if (rev.startsWith('-') || /\s/.test(rev) || hasControlChar(rev)) return null;
  const out = (await run(repo, ['cat-file', '--batch'], { input: `${rev}^{commit}\n` })).stdout;
  const nl = out.indexOf(0x0a);
  const [commit = '', type = ''] = out.subarray(0, nl).toString('latin1').split(' ');
  if (type !== 'commit' || !/^[0-9a-f]{40,64}$/.test(commit)) return null;
  return { commit, ...parseCommitObject(out.subarray(nl + 1, out.length - 1).toString('utf8')) };
}

function parseCommitObject(obj: string): CommitObject {
  const split = obj.indexOf('\n\n');
  const headers = (split < 0 ? obj : obj.slice(0, split)).split('\n');
  const tree = headers.find((h) => h.startsWith('tree '))?.slice(5) ?? '';
  const parents = headers.filter((h) => h.startsWith('parent ')).map((h) => h.slice(7));
  return { tree, parents, message: split < 0 ? '' : obj.slice(split + 2) };
}

/** Id of the empty tree in this repository's hash algorithm (computed, nothing written). */
export async function emptyTree(repo: RepoInfo): Promise<string> {
  return runText(repo, ['hash-object', '-t', 'tree', '--stdin'], { input: '' });
}
