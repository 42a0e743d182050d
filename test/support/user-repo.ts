/**
 * The one "the user's repository is unchanged" invariant of the tests: what Vox's checkpoints,
 * restores, undos, worktrees and variants must never change in the repository the user works in.
 * That is HEAD (the commit and the branch it is on), the real index (its bytes, and the staged
 * entries as `git ls-files -s` shows them), the stash, and the branches and tags. Vox keeps its
 * own state under refs/vox/ and in its own files under .git/, which are not part of it.
 *
 * Two readings of the same invariant:
 *  - `userRepoState(dir)`: through git, readable in a failing assertion (compare two with
 *    `assert.deepEqual`, or with `assertRepoUnchanged`, which names every field that changed);
 *    `{ status: true }` adds `git status` for checks where the working tree must not change either;
 *  - `userRepoFingerprint(gitDir)`: a hash of the files behind the same things (HEAD, index,
 *    packed-refs, refs/heads, refs/tags, the stash ref and its reflog), no git process: for tests
 *    that check it after every one of many steps.
 *
 * Everything runs through test/support/git.ts (GIT_OPTIONAL_LOCKS=0: reading the state never
 * rewrites the index).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitOut } from './git';

export interface UserRepoState {
  /** The commit HEAD points at; null in a repository with no commits. */
  head: string | null;
  /** The branch HEAD is on (`refs/heads/…`); null when HEAD is detached. */
  branch: string | null;
  /** The staged entries (`git ls-files -s`: mode, blob, stage, path). */
  index: string;
  /** SHA-256 of the real index file's bytes (stat data included); null when there is none. */
  indexSha256: string | null;
  /** `git stash list` as `<commit> <subject>` lines. */
  stash: string;
  /** `<refname> <commit>` of every branch. */
  branches: string;
  /** `<refname> <object>` of every tag. */
  tags: string;
  /** `git status --porcelain=v1 --untracked-files=all`, with `{ status: true }` only. */
  status?: string;
}

export type UserRepoField = keyof UserRepoState;

function tryGit(dir: string, args: string[]): string | null {
  try {
    return git(dir, args);
  } catch {
    return null;
  }
}

/** The user's repository at `dir` (a main worktree, a linked one, or a nested repository). */
export function userRepoState(dir: string, opts: { status?: boolean } = {}): UserRepoState {
  const indexPath = path.resolve(dir, gitOut(dir, ['rev-parse', '--git-path', 'index']));
  const refs = (tryGit(dir, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags']) ?? '').split('\n').filter(Boolean);
  const lines = (prefix: string): string => refs.filter((l) => l.startsWith(prefix)).map((l) => `${l}\n`).join('');
  const state: UserRepoState = {
    head: tryGit(dir, ['rev-parse', '-q', '--verify', 'HEAD'])?.trim() ?? null,
    branch: tryGit(dir, ['symbolic-ref', '-q', 'HEAD'])?.trim() ?? null,
    index: git(dir, ['ls-files', '-s']),
    indexSha256: fs.existsSync(indexPath) ? createHash('sha256').update(fs.readFileSync(indexPath)).digest('hex') : null,
    stash: tryGit(dir, ['stash', 'list', '--format=%H %gs']) ?? '',
    branches: lines('refs/heads/'),
    tags: lines('refs/tags/'),
  };
  if (opts.status) state.status = git(dir, ['status', '--porcelain=v1', '--untracked-files=all']);
  return state;
}

/** The fields that differ between two states (all of them unless in `except`), as readable lines. */
export function userRepoChanges(before: UserRepoState, now: UserRepoState, except: readonly UserRepoField[] = []): string[] {
  const fields = Object.keys({ ...before, ...now }) as UserRepoField[];
  return fields
    .filter((k) => !except.includes(k) && before[k] !== now[k])
    .map((k) => `${k}: ${JSON.stringify(before[k] ?? null)} -> ${JSON.stringify(now[k] ?? null)}`);
}

/** Throws naming every field of the user's repository that changed (see userRepoChanges). */
export function assertRepoUnchanged(before: UserRepoState, now: UserRepoState, opts: { except?: readonly UserRepoField[]; what?: string } = {}): void {
  const changes = userRepoChanges(before, now, opts.except);
  if (changes.length) throw new Error(`${opts.what ?? "the user's repository"} changed:\n  ${changes.join('\n  ')}`);
}

/**
 * The same invariant as a cheap, filesystem-only fingerprint: the bytes of HEAD, the real index,
 * packed-refs, every file under refs/heads and refs/tags, refs/stash and the stash reflog. Any
 * change to HEAD, a branch, a tag, the index or the stash changes it. `gitDir` is the
 * repository's (per-worktree) git dir.
 */
export function userRepoFingerprint(gitDir: string): string {
  const h = createHash('sha256');
  const add = (rel: string): void => {
    const p = path.join(gitDir, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      h.update(`${rel}:absent\n`);
      return;
    }
    if (st.isDirectory()) {
      for (const n of fs.readdirSync(p).sort()) add(path.join(rel, n));
    } else {
      h.update(`${rel}:`).update(fs.readFileSync(p)).update('\n');
    }
  };
  for (const rel of ['HEAD', 'index', 'packed-refs', 'refs/heads', 'refs/tags', 'refs/stash', 'logs/refs/stash']) add(rel);
  return h.digest('hex');
}
