/**
 * Real git repositories in temporary directories for the managed-worktree tests. Commits carry a
 * fixed identity passed through the environment (CI may have no global git identity) and never
 * sign. `userState` snapshots everything a worktree operation must leave alone in the user's
 * repository: HEAD, the current branch, the index bytes, the stash and the status.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTmpDir, removeTmpDir } from './tmp';

/** Identity and settings for every fixture git call; GIT_OPTIONAL_LOCKS keeps status read-only. */
const FIXTURE_GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Vox Test',
  GIT_AUTHOR_EMAIL: 'vox-test@example.invalid',
  GIT_COMMITTER_NAME: 'Vox Test',
  GIT_COMMITTER_EMAIL: 'vox-test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_TERMINAL_PROMPT: '0',
};

/** Environment variables that would point a fixture git call at the wrong repository. */
const REDIRECTING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY'];

export function gitSync(cwd: string, args: string[]): string {
  const env: NodeJS.ProcessEnv = { ...process.env, ...FIXTURE_GIT_ENV };
  for (const k of REDIRECTING_ENV) delete env[k];
  return execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

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
  gitSync(root, ['init', '-q', '-b', 'main']);
  if (opts.commit !== false) {
    writeFile(root, 'README.md', `# ${name}\n`);
    for (const [rel, content] of Object.entries(opts.files ?? {})) writeFile(root, rel, content);
    gitSync(root, ['add', '-A']);
    gitSync(root, ['commit', '-q', '-m', 'initial']);
  }
  return root;
}

export function commitAll(root: string, message: string): string {
  gitSync(root, ['add', '-A']);
  gitSync(root, ['commit', '-q', '-m', message]);
  return gitSync(root, ['rev-parse', 'HEAD']).trim();
}

export interface UserState {
  head: string;
  branch: string;
  indexSha256: string;
  stash: string;
  status: string;
  branches: string;
}

/** Snapshot of what no worktree operation may change in the user's repository at `root`. */
export function userState(root: string): UserState {
  const index = path.join(root, '.git', 'index');
  return {
    head: gitSync(root, ['rev-parse', 'HEAD']).trim(),
    branch: gitSync(root, ['symbolic-ref', '-q', 'HEAD']).trim(),
    indexSha256: fs.existsSync(index) ? createHash('sha256').update(fs.readFileSync(index)).digest('hex') : '',
    stash: gitSync(root, ['stash', 'list', '--format=%H %gs']),
    status: gitSync(root, ['status', '--porcelain=v1', '--untracked-files=all']),
    branches: gitSync(root, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads']),
  };
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

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
