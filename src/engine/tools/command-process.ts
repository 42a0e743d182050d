/**
 * One shell command as a process: spawned in its own process group (`/bin/sh -c`, or
 * `cmd.exe /d /s /c` on Windows) with the user's environment minus provider keys, its output
 * decoded as UTF-8 and handed to a sink and a live listener, stopped (timeout, cancel, kill) by
 * SIGTERM to the whole group and SIGKILL after a grace period. `done` says how it ended.
 * run_command (./run-command.ts) runs one in the foreground, or in the background as a job of
 * the run (../runs/background.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { childEnv } from '../platform/secrets';

/** Time between SIGTERM and SIGKILL when the process group is stopped. */
export const RUN_COMMAND_KILL_GRACE_MS = 2_000;
/** After the shell exits, how long to wait for background processes still holding its output. */
export const RUN_COMMAND_DRAIN_MS = 300;

const isWindows = process.platform === 'win32';

/** Where the output goes as it arrives (a bounded tail, or the terminal normaliser). */
export interface CommandOutputSink {
  push(text: string): void;
}

export type StopReason = 'timeout' | 'abort' | 'kill';

export interface CommandEnd {
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stopReason: StopReason | undefined;
  /** The shell exited but processes it started still held its output. */
  backgroundHeld: boolean;
  spawnError: Error | undefined;
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

export class CommandProcess {
  readonly done: Promise<CommandEnd>;
  private stopReason: StopReason | undefined;
  private finished = false;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly child: ChildProcess;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(command: string, cwd: string, opts: { timeoutMs: number; sink: CommandOutputSink; onOutput?: (text: string) => void }) {
    const child = spawnShell(command, cwd);
    this.child = child;
    let onOutput = opts.onOutput;
    const forward = (text: string): void => {
      if (this.finished || text === '') return;
      opts.sink.push(text);
      try {
        onOutput?.(text);
      } catch {
        onOutput = undefined; // a broken listener must not kill the command
      }
    };
    const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')] as const;
    child.stdout?.on('data', (b: Buffer) => forward(decoders[0].write(b)));
    child.stderr?.on('data', (b: Buffer) => forward(decoders[1].write(b)));

    this.done = new Promise<CommandEnd>((resolve) => {
      let exit: CommandEnd['exit'];
      let spawnError: Error | undefined;
      let backgroundHeld = false;
      const finish = (): void => {
        if (this.finished) return;
        forward(decoders[0].end() + decoders[1].end());
        this.finished = true;
        this.timers.forEach(clearTimeout);
        // After a stop, members ignoring SIGTERM may outlive the shell: the SIGKILL still follows.
        this.killTimer?.unref();
        // Background processes may still write; keep draining (and dropping) without holding Node open.
        child.unref();
        (child.stdout as Socket | null)?.unref?.();
        (child.stderr as Socket | null)?.unref?.();
        resolve({ exit, stopReason: this.stopReason, backgroundHeld, spawnError });
      };
      child.on('error', (err) => {
        spawnError = err;
        finish();
      });
      child.on('exit', (code, signal) => {
        exit = { code, signal };
        if (!this.stopReason) {
          // Normal exit: anything still holding the pipes is a background process the command started.
          this.timers.push(setTimeout(() => {
            backgroundHeld = true;
            finish();
          }, RUN_COMMAND_DRAIN_MS));
        }
      });
      child.on('close', finish);
      this.timers.push(setTimeout(() => this.stop('timeout'), opts.timeoutMs));
      this.finishLater = () => {
        if (!this.finished) this.timers.push(setTimeout(finish, RUN_COMMAND_DRAIN_MS)); // backstop if pipes stay open
      };
    });
  }

  private finishLater: () => void = () => undefined;

  get running(): boolean {
    return !this.finished;
  }

  /** Stops the whole process group: SIGTERM now, SIGKILL after the grace period. */
  stop(reason: StopReason): void {
    if (this.stopReason || this.finished) return;
    this.stopReason = reason;
    killGroup(this.child, 'SIGTERM');
    this.killTimer = setTimeout(() => {
      killGroup(this.child, 'SIGKILL');
      this.finishLater();
    }, RUN_COMMAND_KILL_GRACE_MS);
  }
}

/** The status line run_command ends its result with. */
export function describeEnd(end: CommandEnd, timeoutMs: number): string[] {
  const status = end.exit?.signal ? `terminated by ${end.exit.signal}` : `exit code ${end.exit?.code ?? 'unknown'}`;
  const lines: string[] = [];
  if (end.backgroundHeld) lines.push('[run_command: background processes are still running; their later output is not captured]');
  if (end.stopReason === 'timeout') lines.push(`[run_command: timed out after ${timeoutMs} ms; the process group was killed (${status})]`);
  else if (end.stopReason === 'kill') lines.push(`[run_command: stopped by command_kill; the process group was killed (${status})]`);
  else lines.push(`[${status}]`);
  return lines;
}

export function statusOf(end: CommandEnd): string {
  return end.exit?.signal ? `terminated by ${end.exit.signal}` : `exit code ${end.exit?.code ?? 'unknown'}`;
}
