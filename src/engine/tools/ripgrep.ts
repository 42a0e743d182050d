/**
 * ripgrep for the search and listing tools: where a binary is (VS Code's bundled one under the
 * app root the extension passes in — the engine never imports `vscode` —, or `rg` on PATH for
 * the CLI and the tests), and running one bounded. `runRipgrep` starts rg without a shell and off
 * this thread (the process helper), with no user config file (`--no-config`) and the environment
 * of every child (no provider keys), caps its output and its time, and kills it on abort.
 * ripgrep's regex engine is linear-time, it skips what .gitignore ignores, and it never
 * follows symlinks; Vox opens every file rg names itself (./confined-fs.ts), so rg never reads a
 * file's contents from disk.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { helperEnabled, spawnViaHelper, type RunHandle, type RunOptions, type SpawnedError } from '../platform/process-spawner';
import { childEnv } from '../platform/secrets';
import { ToolError } from './types';

/** A ripgrep run longer than this is killed (listing a huge tree, or a search fed for too long). */
export const RIPGREP_TIMEOUT_MS = 60_000;
/** Bytes of rg's stderr kept for an error message. */
const RIPGREP_STDERR_MAX_CHARS = 2_000;
/** execFile's error code when stdout passed maxBuffer. */
const MAX_BUFFER_CODE = 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER';
/** Where VS Code keeps its ripgrep, relative to `vscode.env.appRoot` (newer builds, then asar-era ones). */
const APP_ROOT_RIPGREP_DIRS = ['node_modules/@vscode/ripgrep/bin', 'node_modules.asar.unpacked/@vscode/ripgrep/bin'];
/** Flags of every run: no RIPGREP_CONFIG_PATH file, plain output, `/` in paths on every platform. */
const COMMON_ARGS = ['--no-config', '--color', 'never', '--path-separator', '/'];

function binaryName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'rg.exe' : 'rg';
}

function isExecutableFile(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** VS Code's bundled rg under `appRoot` (`vscode.env.appRoot`), or undefined. */
export function ripgrepInAppRoot(appRoot: string, platform: NodeJS.Platform = process.platform): string | undefined {
  for (const dir of APP_ROOT_RIPGREP_DIRS) {
    const candidate = path.join(appRoot, dir, binaryName(platform));
    if (isExecutableFile(candidate, platform)) return candidate;
  }
  return undefined;
}

/** The first executable `rg` (`rg.exe` on Windows) in `env.PATH`, or undefined. */
export function ripgrepOnPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  const pathVar = env.PATH ?? env.Path ?? '';
  const delimiter = platform === 'win32' ? ';' : ':';
  for (const dir of pathVar.split(delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue; // a relative PATH entry would depend on the cwd
    const candidate = path.join(dir, binaryName(platform));
    if (isExecutableFile(candidate, platform)) return candidate;
  }
  return undefined;
}

/** VS Code's rg when an app root is given and has one, else rg on PATH, else undefined. */
export function findRipgrep(opts: { appRoot?: string; env?: NodeJS.ProcessEnv } = {}): string | undefined {
  return (opts.appRoot !== undefined ? ripgrepInAppRoot(opts.appRoot) : undefined) ?? ripgrepOnPath(opts.env);
}

/** rg could not be started (`unavailable`: missing, not executable) or ended with an error (`failed`). */
export class RipgrepError extends Error {
  override readonly name = 'RipgrepError';
  constructor(
    readonly kind: 'unavailable' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export interface RipgrepOptions {
  cwd: string;
  signal: AbortSignal;
  /** Bytes on stdin (then the args end with `-`); none: stdin is empty. */
  input?: Buffer;
  /** Most stdout bytes kept; beyond, rg is killed and `overflow` set. */
  maxBuffer: number;
  timeoutMs?: number;
}

export interface RipgrepResult {
  /** rg's exit code: 0 found, 1 nothing found, 2 an error (it may still have found things). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout passed `maxBuffer`: rg was killed and `stdout` is cut short. */
  overflow: boolean;
  /** rg ran past its time limit and was killed. */
  timedOut: boolean;
}

type Done = (err: SpawnedError | null, stdout: Buffer, stderr: Buffer) => void;

function runDirect(rgPath: string, args: string[], options: RunOptions, input: Buffer, done: Done): RunHandle {
  const child = execFile(rgPath, args, { ...options, encoding: 'buffer', killSignal: 'SIGKILL', windowsHide: true }, (err, stdout, stderr) => {
    const e = err as (Error & { code?: number | string; killed?: boolean; signal?: string }) | null;
    done(e ? { code: e.code ?? null, killed: !!e.killed, signal: e.signal ?? null, message: e.message } : null, stdout, stderr);
  });
  child.stdin?.on('error', () => undefined); // EPIPE when rg exits before reading everything
  child.stdin?.end(input);
  return { writeInput: () => undefined, kill: () => child.kill('SIGKILL') };
}

/**
 * Runs rg once with `args` (after the common flags) and collects its output. It is started from
 * the process helper (platform/process-spawner.ts: no fork on this thread) unless VOX_SPAWN_DIRECT=1.
 * Abort kills it and rejects with ToolError('cancelled'); a binary that cannot start rejects with
 * RipgrepError('unavailable').
 */
export function runRipgrep(rgPath: string, args: readonly string[], opts: RipgrepOptions): Promise<RipgrepResult> {
  if (opts.signal.aborted) return Promise.reject(new ToolError('cancelled', 'The search was cancelled.'));
  const options: RunOptions = { cwd: opts.cwd, env: childEnv(), maxBuffer: opts.maxBuffer, timeout: opts.timeoutMs ?? RIPGREP_TIMEOUT_MS };
  const input = opts.input ?? Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const done: Done = (err, stdout, stderr) => {
      opts.signal.removeEventListener('abort', onAbort);
      if (opts.signal.aborted) return reject(new ToolError('cancelled', 'The search was cancelled.'));
      if (err && typeof err.code === 'string' && err.code !== MAX_BUFFER_CODE) {
        return reject(new RipgrepError('unavailable', `${rgPath}: ${err.message}`));
      }
      const overflow = err?.code === MAX_BUFFER_CODE;
      resolve({
        code: typeof err?.code === 'number' ? err.code : err ? null : 0,
        stdout: stdout.toString('utf8'),
        stderr: stderr.subarray(0, RIPGREP_STDERR_MAX_CHARS).toString('utf8'),
        overflow,
        timedOut: !!err?.killed && !overflow,
      });
    };
    const allArgs = [...COMMON_ARGS, ...args];
    const handle = helperEnabled() ? spawnViaHelper(rgPath, allArgs, options, input, done) : runDirect(rgPath, allArgs, options, input, done);
    const onAbort = (): void => handle.kill();
    opts.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The line of rg's stderr that says what is wrong (rg quotes a bad pattern first), for a message. */
export function ripgrepComplaint(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const error = lines.find((l) => l.startsWith('error:'));
  return error !== undefined ? error.slice('error:'.length).trim() : (lines[0] ?? '(no message)');
}
