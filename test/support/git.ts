/**
 * The one git runner of the tests (unit, integration, e2e; never the code under test, which has
 * its own). Every call gets the same isolation: a fixed identity through the environment (CI
 * machines may have no global one), no system config, no hooks, no signing, no prompts,
 * `GIT_OPTIONAL_LOCKS=0` (a test's `git status` must not rewrite the index it is checking) and
 * none of the variables that would point git at another repository. A failure throws an Error
 * naming the command, the directory, the exit code and git's stderr.
 *
 * `git` returns stdout as text, `gitOut` the same without its final newline, `gitBuf` the bytes.
 * The third argument is the input (a string or Buffer) or options ({ input, env, timeoutMs }).
 */
import { execFileSync } from 'node:child_process';

/** Identity and isolation for every test git call. */
export const FIXTURE_GIT_ENV: Readonly<Record<string, string>> = {
  GIT_AUTHOR_NAME: 'Vox Test',
  GIT_AUTHOR_EMAIL: 'vox-test@example.invalid',
  GIT_COMMITTER_NAME: 'Vox Test',
  GIT_COMMITTER_EMAIL: 'vox-test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_TERMINAL_PROMPT: '0',
};

/** Environment variables that would point a test git call at the wrong repository or index. */
const REDIRECTING_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY'];

/** Settings given on every command line (they win over any repository's config). */
const FIXTURE_CONFIG = ['-c', 'advice.addEmbeddedRepo=false', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false', '-c', 'core.hooksPath=/dev/null'];

/** A test git call's stdout may be large (cat-file --batch of a whole tree). */
const MAX_BUFFER_BYTES = 256 * 1024 * 1024;
/** A git call that takes longer than this is hung: fail the test instead of blocking it. */
const DEFAULT_TIMEOUT_MS = 60_000;

export interface GitOptions {
  /** Bytes on stdin. */
  input?: Buffer | string;
  /** Extra environment, applied after the isolation (e.g. GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

type InputOrOptions = Buffer | string | GitOptions;

function options(x: InputOrOptions | undefined): GitOptions {
  if (x === undefined) return {};
  return typeof x === 'string' || Buffer.isBuffer(x) ? { input: x } : x;
}

/** Runs git in `cwd`; returns stdout as bytes. */
export function gitBuf(cwd: string, args: string[], inputOrOptions?: InputOrOptions): Buffer {
  const o = options(inputOrOptions);
  const env: NodeJS.ProcessEnv = { ...process.env, ...FIXTURE_GIT_ENV };
  for (const k of REDIRECTING_ENV) delete env[k];
  Object.assign(env, o.env);
  try {
    return execFileSync('git', [...FIXTURE_CONFIG, ...args], {
      cwd,
      env,
      input: o.input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: MAX_BUFFER_BYTES,
      timeout: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
  } catch (e) {
    const err = e as { status?: number | null; signal?: string | null; stderr?: Buffer; message?: string };
    const how = err.status != null ? `exited ${err.status}` : err.signal ? `was killed (${err.signal})` : 'failed';
    const stderr = err.stderr?.toString('utf8').trim() || err.message || '';
    throw new Error(`git ${args.join(' ')} (in ${cwd}) ${how}: ${stderr}`, { cause: e });
  }
}

/** Runs git in `cwd`; returns stdout as text, exactly as printed. */
export function git(cwd: string, args: string[], inputOrOptions?: InputOrOptions): string {
  return gitBuf(cwd, args, inputOrOptions).toString('utf8');
}

/** Runs git in `cwd`; returns stdout as text without its final newline. */
export function gitOut(cwd: string, args: string[], inputOrOptions?: InputOrOptions): string {
  return git(cwd, args, inputOrOptions).replace(/\n$/, '');
}
