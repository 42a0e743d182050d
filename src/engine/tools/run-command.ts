/**
 * `run_command`: runs a shell command (./command-process.ts) with its cwd inside the workspace,
 * in its own process group so that a timeout or cancel kills everything it started. Output is
 * streamed live to `ctx.onOutput` and returned to the model as a bounded tail, cut on a line
 * boundary when possible and never inside a surrogate pair or an ANSI escape sequence. With
 * `background: true` it returns at once with a handle (a job of the run, ../runs/background.ts):
 * the command keeps running, `command_status` shows its output, `command_kill` stops it.
 */
import { promises as fs } from 'node:fs';
import { CommandProcess, describeEnd, statusOf, type CommandOutputSink } from './command-process';
import { TerminalNormalizer } from '../terminal/normalize';
import type { ToolDefinition } from './schema';
import { TOOL_OUTPUT_BUDGET_CHARS } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

export { RUN_COMMAND_DRAIN_MS, RUN_COMMAND_KILL_GRACE_MS } from './command-process';

/** Timeout when the model does not give one (builds and test suites fit in two minutes). */
export const RUN_COMMAND_DEFAULT_TIMEOUT_MS = 120_000;
/** Longest timeout the model may ask for. */
export const RUN_COMMAND_MAX_TIMEOUT_MS = 600_000;
/** Characters of output returned to the model; the tail is kept, earlier output is dropped. */
export const RUN_COMMAND_OUTPUT_TAIL_CHARS = TOOL_OUTPUT_BUDGET_CHARS;
/** Default timeout of a background command (a dev server, a watcher, a long build). */
export const RUN_COMMAND_BACKGROUND_DEFAULT_TIMEOUT_MS = 30 * 60_000;
/** Longest timeout a background command may ask for. */
export const RUN_COMMAND_BACKGROUND_MAX_TIMEOUT_MS = 4 * 3_600_000;
/** A cut point moves forward to the next line start if one lies within this many characters. */
const TAIL_LINE_ALIGN_CHARS = 1_024;
/** Longest ANSI escape sequence a cut point is checked against. */
const ANSI_SEQUENCE_MAX_CHARS = 64;

export interface RunCommandArgs {
  command: string;
  cwd?: string;
  timeoutMs?: number;
  /** Return at once with a handle; the command runs on. */
  background?: boolean;
  /** Background only: the turn waits for it before it ends (default false: it may outlive the turn). */
  awaited?: boolean;
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
class OutputTail implements CommandOutputSink {
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

async function runCommand(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
  const resolved = await resolveInWorkspace(ctx.workspaceRoot, args.cwd ?? '.');
  const stat = await fs.stat(resolved.real).catch(() => undefined);
  if (stat === undefined) throw new ToolError('notFound', `Working directory not found: ${resolved.relative}`);
  if (!stat.isDirectory()) throw new ToolError('invalidArguments', `cwd ${resolved.relative} is not a directory.`);
  if (ctx.signal.aborted) throw new ToolError('cancelled', 'run_command was cancelled before it started.');
  if (args.background) return startInBackground(args, resolved.real, ctx);
  if (args.awaited !== undefined) throw new ToolError('invalidArguments', 'run_command: awaited applies to background commands only (background: true).');
  const timeoutMs = args.timeoutMs ?? RUN_COMMAND_DEFAULT_TIMEOUT_MS;
  if (timeoutMs > RUN_COMMAND_MAX_TIMEOUT_MS) throw new ToolError('invalidArguments', `run_command: timeoutMs is at most ${RUN_COMMAND_MAX_TIMEOUT_MS} (or run it in the background).`);

  // In a turn the output streams live into the chat as a terminal shows it, and the model gets
  // that normalised text (progress bars collapsed); elsewhere a bounded raw tail.
  const term = ctx.terminal?.();
  const tail = new OutputTail();
  const sink: CommandOutputSink = term ? { push: (t) => term.write(t) } : tail;
  const proc = new CommandProcess(args.command, resolved.real, { timeoutMs, sink, ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}) });
  const onAbort = (): void => proc.stop('abort');
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const end = await proc.done.finally(() => ctx.signal.removeEventListener('abort', onAbort));
  const output = term ? term.end(end.exit?.code ?? null) : tail.result();
  if (end.spawnError) throw new ToolError('io', `Could not start the shell: ${end.spawnError.message}`);
  if (end.stopReason === 'abort') throw new ToolError('cancelled', `run_command was cancelled; its process group was killed (${statusOf(end)}).`);
  const lines = [output.replace(/\r?\n$/, '') || '(no output)', ...describeEnd(end, timeoutMs)];
  return { content: lines.join('\n'), isError: end.stopReason === 'timeout' || end.exit?.code !== 0 };
}

/** `background: true`: the command becomes a job of the run; the call returns its handle. */
function startInBackground(args: RunCommandArgs, cwd: string, ctx: ToolContext): ToolResult {
  if (!ctx.background) throw new ToolError('notAvailable', 'run_command: background commands are not available here; run it in the foreground.');
  const timeoutMs = args.timeoutMs ?? RUN_COMMAND_BACKGROUND_DEFAULT_TIMEOUT_MS;
  if (timeoutMs > RUN_COMMAND_BACKGROUND_MAX_TIMEOUT_MS) throw new ToolError('invalidArguments', `run_command: a background timeoutMs is at most ${RUN_COMMAND_BACKGROUND_MAX_TIMEOUT_MS}.`);
  // Normalised like a terminal, so command_status shows a progress bar's last state, not every frame.
  const screen = new TerminalNormalizer();
  const proc = new CommandProcess(args.command, cwd, { timeoutMs, sink: { push: (t) => screen.write(t) } });
  const awaited = args.awaited ?? false;
  const handle = ctx.background.track({
    kind: 'command', title: args.command, awaited,
    done: proc.done.then((end) => {
      if (end.spawnError) return { status: 'failed' as const, result: `Could not start the shell: ${end.spawnError.message}` };
      screen.end();
      const result = [screen.text('strip') || '(no output)', ...describeEnd(end, timeoutMs)].join('\n');
      const status = end.stopReason === 'kill' || end.stopReason === 'abort' ? 'cancelled' as const : end.stopReason === 'timeout' || end.exit?.code !== 0 ? 'failed' as const : 'completed' as const;
      return { status, result };
    }),
    peek: () => screen.text('strip'),
    kill: () => proc.stop('kill'),
  });
  return {
    content: `Started in the background as ${handle}${awaited ? ' (awaited: this turn waits for it before it ends)' : ' (it may keep running after this turn)'}. ` +
      `Use command_status with this handle to see its output, command_kill to stop it.`,
  };
}

export const runCommandTool: ToolDefinition<RunCommandArgs> = {
  spec: {
    name: 'run_command',
    description:
      `Run a shell command (${isWindows ? 'cmd.exe' : '/bin/sh'}) in the workspace and return its combined ` +
      `stdout/stderr (last ${RUN_COMMAND_OUTPUT_TAIL_CHARS} characters) and exit code. No stdin; ` +
      `default timeout ${RUN_COMMAND_DEFAULT_TIMEOUT_MS} ms, at most ${RUN_COMMAND_MAX_TIMEOUT_MS} ms. ` +
      'With background true it returns a handle at once and the command keeps running.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line to run.', minLength: 1 },
        cwd: { type: 'string', description: 'Working directory relative to the workspace root (default ".").', minLength: 1 },
        timeoutMs: {
          type: 'integer',
          description: `Timeout in milliseconds (default ${RUN_COMMAND_DEFAULT_TIMEOUT_MS}; in the background ${RUN_COMMAND_BACKGROUND_DEFAULT_TIMEOUT_MS}, at most ${RUN_COMMAND_BACKGROUND_MAX_TIMEOUT_MS}).`,
          minimum: 1,
          maximum: RUN_COMMAND_BACKGROUND_MAX_TIMEOUT_MS,
        },
        background: { type: 'boolean', description: 'Start it and return at once with a handle (servers, watchers, long builds); see command_status and command_kill.' },
        awaited: { type: 'boolean', description: 'With background: this turn waits for it before it ends (default false).' },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  toolClass: 'execute',
  mutating: true,
  run: runCommand,
};
