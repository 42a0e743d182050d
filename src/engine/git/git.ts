/**
 * Runs git plumbing through `execFile` (no shell), with typed failures. Every call gets a
 * scrubbed environment (no inherited GIT_DIR / GIT_INDEX_FILE / GIT_WORK_TREE from a parent
 * process unless the caller sets them, no provider keys), `core.quotepath=off`, no user hooks
 * (below), and never opens a pager or editor.
 * Output is returned as a Buffer or string; use `-z` forms and `splitNul` for path lists, so
 * names with spaces, newlines or non-UTF-8 bytes survive.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { QUOTED_STDERR_CHARS, quote } from '../../protocol/wire/quote';
import { execFile, type ExecFileException } from 'node:child_process';
import { helperEnabled, spawnViaHelper } from '../platform/process-spawner';
import { childEnv } from '../platform/secrets';

/**
 * Vox's git plumbing runs none of the user's hooks: checkpoints, restores and worktree
 * bookkeeping are Vox's own and must not surprise anyone (a `post-index-change` or
 * `reference-transaction` hook firing on every checkpoint, a `post-checkout` on every variant).
 * Hooks are looked up under a path that can hold no file.
 */
const NO_HOOKS_PATH = process.platform === 'win32' ? 'NUL' : '/dev/null';

/** Largest stdout accepted from one git call (bytes): big diffs and ls-files on huge repos fit. */
export const GIT_MAX_BUFFER_BYTES = 512 * 1024 * 1024;
/** Default time limit for one git call (ms); capture passes its own budget. */
export const GIT_DEFAULT_TIMEOUT_MS = 120_000;

/** Environment variables that would redirect git away from the repository we name explicitly. */
const SCRUBBED_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_NAMESPACE'];

export type GitErrorCode = ErrorCode<'git'>;

export class GitError extends VoxError<'git'> {
  override readonly name = 'GitError';
  readonly domain = 'git' as const;
  constructor(
    code: GitErrorCode,
    message: string,
    readonly details: { args: string[]; exitCode?: number | null; stderr?: string } ,
  ) {
    super(code, message);
  }
}

export interface GitOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /**
   * Standard input. A promise lets the process start (and read its repository) while the caller
   * is still computing what to feed it; if the promise rejects, the process is killed.
   */
  input?: string | Buffer | Promise<string | Buffer>;
  /** Input for a pending (promised) one if this process exits before providing it. */
  abortInput?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Exit codes other than 0 that are not failures (e.g. 1 for `diff --quiet`). */
  okExitCodes?: number[];
}

export interface GitResult { stdout: Buffer; stderr: string; exitCode: number }

function gitEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = childEnv(process.env);
  for (const k of SCRUBBED_ENV) delete env[k];
  Object.assign(env, { GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', GIT_EDITOR: 'true', LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Runs `git <args>` and returns raw output; throws GitError on failure. */
export function gitRaw(args: string[], opts: GitOptions): Promise<GitResult> {
  const fullArgs = ['-c', 'core.quotepath=off', '-c', 'advice.addEmbeddedRepo=false', '-c', `core.hooksPath=${NO_HOOKS_PATH}`, ...args];
  const timeout = opts.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const finish = (err: { code?: unknown; killed?: boolean; signal?: string | null; name?: string } | null, stdout: Buffer, stderrBuf: Buffer): void => {
      const stderr = stderrBuf.toString('utf8');
      const exitCode = typeof err?.code === 'number' ? err.code : err ? -1 : 0;
      if (!err || (opts.okExitCodes ?? []).includes(exitCode)) return resolve({ stdout, stderr, exitCode });
      const base = { args, exitCode: typeof err.code === 'number' ? err.code : null, stderr };
      if (err.name === 'AbortError' || opts.signal?.aborted) return reject(new GitError('cancelled', `git ${args[0]} was cancelled`, base));
      if (err.killed || err.signal === 'SIGKILL') return reject(new GitError('timeout', `git ${args[0]} took longer than ${timeout} ms`, base));
      if (err.code === 'ENOENT') return reject(new GitError('notFound', 'git is not installed or not on PATH', base));
      if (err.code === 'EHELPER') return reject(new GitError('failed', `git ${args[0]} could not run: ${(err as { message?: string }).message ?? ''}`, base));
      if (/not a git repository/i.test(stderr)) return reject(new GitError('notARepository', `${opts.cwd} is not inside a git repository`, base));
      reject(new GitError('failed', `git ${args.join(' ')} failed (exit ${exitCode}): ${quote(stderr.trim(), QUOTED_STDERR_CHARS)}`, base));
    };
    if (opts.signal?.aborted) return finish({ name: 'AbortError' }, Buffer.alloc(0), Buffer.alloc(0));
    if (helperEnabled()) {
      const later = opts.input instanceof Promise;
      const direct = !later && opts.input !== undefined ? Buffer.from(opts.input as string | Buffer) : undefined;
      // No input: stdin is closed at once (nothing here reads a terminal).
      const handle = spawnViaHelper('git', fullArgs, { cwd: opts.cwd, env: gitEnv(opts.env), maxBuffer: GIT_MAX_BUFFER_BYTES, timeout }, later ? 'later' : (direct ?? Buffer.alloc(0)), finish, opts.abortInput === undefined ? undefined : Buffer.from(opts.abortInput));
      if (later) {
        (opts.input as Promise<string | Buffer>).then(
          (data) => handle.writeInput(Buffer.from(data)),
          () => handle.kill(),
        );
      }
      opts.signal?.addEventListener('abort', () => handle.kill(), { once: true });
      return;
    }
    const child = execFile('git', fullArgs, { cwd: opts.cwd, env: gitEnv(opts.env), encoding: 'buffer', maxBuffer: GIT_MAX_BUFFER_BYTES, timeout, signal: opts.signal, killSignal: 'SIGKILL' }, (err: ExecFileException | null, stdout: Buffer, stderrBuf: Buffer) =>
      finish(err as Parameters<typeof finish>[0], stdout, stderrBuf),
    );
    // A process that exits before reading all its input must not crash us with EPIPE.
    child.stdin?.on('error', () => undefined);
    if (opts.input instanceof Promise) {
      opts.input.then(
        (data) => child.stdin?.end(data),
        () => child.kill('SIGKILL'),
      );
    } else if (opts.input !== undefined) {
      child.stdin?.end(opts.input);
    }
  });
}

/** Runs git and returns stdout as UTF-8 text with the trailing newline removed. */
export async function git(args: string[], opts: GitOptions): Promise<string> {
  const r = await gitRaw(args, opts);
  return r.stdout.toString('utf8').replace(/\n$/, '');
}

/** Splits NUL-terminated git output (`-z`) into raw Buffers (paths may not be valid UTF-8). */
export function splitNul(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      out.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < buf.length) out.push(buf.subarray(start));
  return out;
}
