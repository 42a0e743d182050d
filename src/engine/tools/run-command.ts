/**
 * `run_command`: runs a shell command (`/bin/sh -c`, or `cmd.exe /d /s /c` on Windows) with its cwd
 * inside the workspace, in its own process group so that a timeout or cancel kills everything it
 * started (SIGTERM, then SIGKILL after a grace period). Output is streamed live to `ctx.onOutput`
 * and returned to the model as a bounded tail, cut on a line boundary when possible and never
 * inside a surrogate pair or an ANSI escape sequence.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { childEnv } from '../platform/secrets';
import { promises as fs } from 'node:fs';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { ToolDefinition } from './schema';
import { TOOL_OUTPUT_BUDGET_CHARS } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

/** Timeout when the model does not give one (builds and test suites fit in two minutes). */
export const RUN_COMMAND_DEFAULT_TIMEOUT_MS = 120_000;
/** Longest timeout the model may ask for. */
export const RUN_COMMAND_MAX_TIMEOUT_MS = 600_000;
/** Characters of output returned to the model; the tail is kept, earlier output is dropped. */
export const RUN_COMMAND_OUTPUT_TAIL_CHARS = TOOL_OUTPUT_BUDGET_CHARS;
/** Time between SIGTERM and SIGKILL when the process group is stopped. */
export const RUN_COMMAND_KILL_GRACE_MS = 2_000;
/** After the shell exits, how long to wait for background processes still holding its output. */
export const RUN_COMMAND_DRAIN_MS = 300;
/** A cut point moves forward to the next line start if one lies within this many characters. */
const TAIL_LINE_ALIGN_CHARS = 1_024;
/** Longest ANSI escape sequence a cut point is checked against. */
const ANSI_SEQUENCE_MAX_CHARS = 64;

export interface RunCommandArgs {
  command: string;
  cwd?: string;
  timeoutMs?: number;
}

const isWindows = process.platform === 'win32';

/** End offset of the escape sequence starting at `esc` (an ESC), or undefined if unterminated. */
function escapeSequenceEnd(text: string, esc: number): number | undefined {
  const kind = text[esc + 1];
  if (kind === undefined) return undefined;
  if (kind === '[') {
    for (let i = esc + 2; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x40 && c <= 0x7e) return i + 1; // final byte
      if (c < 0x20 || c > 0x3f) return i; // malformed: stop here
    }
    return undefined;
  }
  if (kind === ']') {
    for (let i = esc + 2; i < text.length; i++) {
      if (text[i] === '\x07') return i + 1;
      if (text[i] === '\x1b' && text[i + 1] === '\\') return i + 2;
    }
    return undefined;
  }
  return esc + 2;
}

/**
 * Moves a cut `start` in `text` forward so the kept tail begins cleanly: at a line start if one is
 * near, otherwise never on the low half of a surrogate pair nor inside an ANSI escape sequence.
 */
export function safeTailStart(text: string, start: number): number {
  if (start <= 0) return 0;
  if (text[start - 1] === '\n') return start;
  const nl = text.indexOf('\n', start);
  if (nl !== -1 && nl - start < TAIL_LINE_ALIGN_CHARS) return nl + 1;
  let s = start;
  const esc = text.lastIndexOf('\x1b', s - 1);
  if (esc !== -1 && s - esc <= ANSI_SEQUENCE_MAX_CHARS) {
    const end = escapeSequenceEnd(text, esc);
    if (end === undefined) s = text.length;
    else if (end > s) s = end;
  }
  const c = text.charCodeAt(s);
  if (s < text.length && c >= 0xdc00 && c <= 0xdfff) s++;
  return Math.min(s, text.length);
}

/** Keeps the last RUN_COMMAND_OUTPUT_TAIL_CHARS characters of a growing output, counting the rest. */
class OutputTail {
  private text = '';
  dropped = 0;

  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > 2 * RUN_COMMAND_OUTPUT_TAIL_CHARS) this.trim();
  }

  private trim(): void {
    const start = safeTailStart(this.text, this.text.length - RUN_COMMAND_OUTPUT_TAIL_CHARS);
    this.dropped += start;
    this.text = this.text.slice(start);
  }

  result(): string {
    if (this.text.length > RUN_COMMAND_OUTPUT_TAIL_CHARS) this.trim();
    const notice = this.dropped > 0 ? `[run_command: ${this.dropped} earlier characters of output omitted]\n` : '';
    return notice + this.text;
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (isWindows) {
    // No process groups on Windows: taskkill walks the tree. It is always forceful.
    spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' }).on('error', () => undefined);
    return;
  }
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the whole group has already exited.
  }
}

function spawnShell(command: string, cwd: string): ChildProcess {
  if (isWindows) {
    return spawn(process.env['ComSpec'] ?? 'cmd.exe', ['/d', '/s', '/c', `"${command}"`], {
      cwd,
      env: childEnv(),
      windowsVerbatimArguments: true,
      windowsHide: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  // detached: setsid(), so the shell leads a new process group (and has no controlling terminal).
  // The user's environment without the provider keys Vox holds (platform/secrets.ts).
  return spawn('/bin/sh', ['-c', command], { cwd, env: childEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function runCommand(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
  const resolved = await resolveInWorkspace(ctx.workspaceRoot, args.cwd ?? '.');
  const stat = await fs.stat(resolved.real).catch(() => undefined);
  if (stat === undefined) throw new ToolError('notFound', `Working directory not found: ${resolved.relative}`);
  if (!stat.isDirectory()) throw new ToolError('invalidArguments', `cwd ${resolved.relative} is not a directory.`);
  if (ctx.signal.aborted) throw new ToolError('cancelled', 'run_command was cancelled before it started.');
  const timeoutMs = args.timeoutMs ?? RUN_COMMAND_DEFAULT_TIMEOUT_MS;

  const child = spawnShell(args.command, resolved.real);
  const tail = new OutputTail();
  let onOutput = ctx.onOutput;
  let finished = false;
  const forward = (text: string): void => {
    if (finished || text === '') return;
    tail.push(text);
    try {
      onOutput?.(text);
    } catch {
      onOutput = undefined; // a broken listener must not kill the command
    }
  };
  const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')] as const;
  child.stdout?.on('data', (b: Buffer) => forward(decoders[0].write(b)));
  child.stderr?.on('data', (b: Buffer) => forward(decoders[1].write(b)));

  return new Promise<ToolResult>((resolve, reject) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: Error | undefined;
    let stopReason: 'timeout' | 'abort' | undefined;
    let backgroundHeld = false;
    const timers: NodeJS.Timeout[] = [];
    let killTimer: NodeJS.Timeout | undefined;

    const finish = (): void => {
      if (finished) return;
      forward(decoders[0].end() + decoders[1].end());
      finished = true;
      timers.forEach(clearTimeout);
      // After a stop, members ignoring SIGTERM may outlive the shell: the SIGKILL still follows.
      killTimer?.unref();
      ctx.signal.removeEventListener('abort', onAbort);
      // Background processes may still write; keep draining (and dropping) without holding Node open.
      child.unref();
      (child.stdout as Socket | null)?.unref?.();
      (child.stderr as Socket | null)?.unref?.();
      if (spawnError) return reject(new ToolError('io', `Could not start the shell: ${spawnError.message}`));
      const status = exit?.signal ? `terminated by ${exit.signal}` : `exit code ${exit?.code ?? 'unknown'}`;
      if (stopReason === 'abort') {
        return reject(new ToolError('cancelled', `run_command was cancelled; its process group was killed (${status}).`));
      }
      const lines = [tail.result().replace(/\r?\n$/, '') || '(no output)'];
      if (backgroundHeld) lines.push('[run_command: background processes are still running; their later output is not captured]');
      if (stopReason === 'timeout') {
        lines.push(`[run_command: timed out after ${timeoutMs} ms; the process group was killed (${status})]`);
      } else {
        lines.push(`[${status}]`);
      }
      resolve({ content: lines.join('\n'), isError: stopReason === 'timeout' || exit?.code !== 0 });
    };

    const stop = (reason: 'timeout' | 'abort'): void => {
      if (stopReason || finished) return;
      stopReason = reason;
      killGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => {
        killGroup(child, 'SIGKILL');
        if (!finished) timers.push(setTimeout(finish, RUN_COMMAND_DRAIN_MS)); // backstop if pipes stay open
      }, RUN_COMMAND_KILL_GRACE_MS);
    };
    const onAbort = (): void => stop('abort');

    child.on('error', (err) => {
      spawnError = err;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (!stopReason) {
        // Normal exit: anything still holding the pipes is a background process the command started.
        timers.push(
          setTimeout(() => {
            backgroundHeld = true;
            finish();
          }, RUN_COMMAND_DRAIN_MS),
        );
      }
    });
    child.on('close', finish);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    timers.push(setTimeout(() => stop('timeout'), timeoutMs));
  });
}

export const runCommandTool: ToolDefinition<RunCommandArgs> = {
  spec: {
    name: 'run_command',
    description:
      `Run a shell command (${isWindows ? 'cmd.exe' : '/bin/sh'}) in the workspace and return its combined ` +
      `stdout/stderr (last ${RUN_COMMAND_OUTPUT_TAIL_CHARS} characters) and exit code. No stdin; ` +
      `default timeout ${RUN_COMMAND_DEFAULT_TIMEOUT_MS} ms, at most ${RUN_COMMAND_MAX_TIMEOUT_MS} ms.`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line to run.', minLength: 1 },
        cwd: { type: 'string', description: 'Working directory relative to the workspace root (default ".").', minLength: 1 },
        timeoutMs: {
          type: 'integer',
          description: `Timeout in milliseconds (default ${RUN_COMMAND_DEFAULT_TIMEOUT_MS}).`,
          minimum: 1,
          maximum: RUN_COMMAND_MAX_TIMEOUT_MS,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  toolClass: 'execute',
  mutating: true,
  run: runCommand,
};
