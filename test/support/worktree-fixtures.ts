/**
 * Real git repositories in temporary directories for the managed-worktree and variant tests: a
 * sandbox directory (removable even when a test left read-only directories behind), repositories
 * with one initial commit, commits, file writes and byte snapshots of a directory. Git runs
 * through test/support/git.ts; what a worktree operation must leave alone in the user's
 * repository is test/support/user-repo.ts's invariant (`userState` below adds `git status`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git } from './git';
import { makeTmpDir, removeTmpDir } from './tmp';
import { userRepoState, type UserRepoState } from './user-repo';

export function writeFile(root: string, rel: string, content: string | Buffer): string {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

export interface Sandbox {
  /** Canonical temporary directory holding repositories and "outside" directories. */
  dir: string;
  cleanup(): void;
}

export function makeSandbox(): Sandbox {
  const dir = fs.realpathSync.native(makeTmpDir('vox-wt-'));
  return {
    dir,
    cleanup() {
      // Tests may leave read-only directories behind; make them writable before deleting.
      const walk = (p: string) => {
        let st: fs.Stats;
        try {
          st = fs.lstatSync(p);
        } catch {
          return;
        }
        if (st.isSymbolicLink() || !st.isDirectory()) return;
        fs.chmodSync(p, 0o755);
        for (const n of fs.readdirSync(p)) walk(path.join(p, n));
      };
      walk(dir);
      removeTmpDir(dir);
    },
  };
}

/** `git init -b main <sandbox>/<name>`; with `commit` (default) one commit holding README.md and `files`. */
export function makeRepo(sandbox: Sandbox, name: string, opts: { commit?: boolean; files?: Record<string, string> } = {}): string {
  const root = path.join(sandbox.dir, name);
  fs.mkdirSync(root, { recursive: true });
  git(root, ['init', '-q', '-b', 'main']);
  if (opts.commit !== false) {
    writeFile(root, 'README.md', `# ${name}\n`);
    for (const [rel, content] of Object.entries(opts.files ?? {})) writeFile(root, rel, content);
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'initial']);
  }
  return root;
}

export function commitAll(root: string, message: string): string {
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', message]);
  return git(root, ['rev-parse', 'HEAD']).trim();
}

/** The user's repository (test/support/user-repo.ts) plus its `git status`: what no worktree operation may change. */
export function userState(root: string): UserRepoState & { status: string } {
  return userRepoState(root, { status: true }) as UserRepoState & { status: string };
}

/** Every regular file under `dir` (no symlinks followed) with its bytes, keyed by relative path. */
export function snapshotFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) walk(path.join(p, n));
    else if (st.isFile()) out.set(path.relative(dir, p), fs.readFileSync(p));
  };
  walk(dir);
  return out;
}
