/**
 * Starting child processes from a small helper process instead of from this one.
 *
 * Node starts a child with fork + exec on the calling thread, and fork costs in proportion to the
 * caller's memory: measured here, 5 ms from a fresh Node, 11 ms with a 2-million-object heap,
 * ~20 ms from the test runner — during which nothing else runs (in VS Code, the extension host's
 * event loop, shared with every other extension). A checkpoint runs a handful of git processes,
 * so that blocking was most of its cost. The helper is a plain Node process (its source is the
 * string below, run with `-e`, so it works from the bundle, from sources under tsx, and as the
 * VS Code binary with ELECTRON_RUN_AS_NODE) that runs `execFile` on request over an IPC channel
 * with structured-clone serialization (Buffers travel as bytes). Its forks are cheap (small
 * heap) and happen off this thread.
 *
 * Semantics match `execFile` with `encoding: 'buffer'`: the callback gets the same error shape
 * (`code` = exit code or errno string, `killed`, `signal`), stdout and stderr. Input can arrive
 * later (`writeInput`), and `kill` stops a run. The channel is referenced only while runs are
 * pending, so an idle helper never keeps this process alive. When this process goes away (the
 * channel closes), the helper lets running processes finish — runs still waiting for input get
 * their `abortInput` — and then exits. If the helper cannot start or dies, runs in flight fail with an
 * error, and the next run starts a new helper; `VOX_SPAWN_DIRECT=1` bypasses it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { childEnv } from './secrets';

/** The helper's program (plain JavaScript, no dependencies). */
const HELPER_SOURCE = `
'use strict';
const { execFile } = require('child_process');
const running = new Map();
const bytes = (u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
let closing = false;
const exitWhenIdle = () => { if (closing && running.size === 0) process.exit(0); };
process.on('message', (m) => {
  if (m.type === 'run') {
    let child;
    try {
      child = execFile(m.file, m.args, m.options, (err, stdout, stderr) => {
        running.delete(m.id);
        const e = err ? { code: err.code, killed: !!err.killed, signal: err.signal || null, name: err.name, message: String(err.message) } : null;
        if (process.connected) process.send({ type: 'done', id: m.id, err: e, stdout, stderr });
        exitWhenIdle();
      });
    } catch (err) {
      process.send({ type: 'done', id: m.id, err: { code: err.code || 'ESPAWN', killed: false, signal: null, name: err.name, message: String(err.message) }, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
      return;
    }
    child.stdin.on('error', () => {});
    const run = { child, fed: m.input !== undefined, abortInput: m.abortInput };
    running.set(m.id, run);
    if (m.input !== undefined) child.stdin.end(bytes(m.input));
  } else if (m.type === 'input') {
    const r = running.get(m.id);
    if (r && !r.fed) { r.fed = true; r.child.stdin.end(bytes(m.input)); }
  } else if (m.type === 'kill') {
    const r = running.get(m.id);
    if (r) r.child.kill('SIGKILL');
  }
});
// The caller went away: runs still waiting for input get their "nothing to do" input, and
// every run finishes normally (a killed git can leave temporary files in a repository).
process.on('disconnect', () => {
  closing = true;
  for (const r of running.values()) if (!r.fed) { r.fed = true; r.child.stdin.end(r.abortInput ? bytes(r.abortInput) : Buffer.alloc(0)); }
  exitWhenIdle();
});
`;

export interface SpawnedError {
  code: number | string | null;
  killed: boolean;
  signal: string | null;
  name?: string;
  message: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  maxBuffer: number;
  timeout: number;
}

type Done = (err: SpawnedError | null, stdout: Buffer, stderr: Buffer) => void;

interface Pending {
  done: Done;
}

/** A handle on one run: feed input later, or kill it. */
export interface RunHandle {
  writeInput(data: Buffer): void;
  kill(): void;
}

function toBuffer(u: Uint8Array | Buffer | undefined): Buffer {
  if (!u) return Buffer.alloc(0);
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

class ProcessSpawner {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private ensure(): ChildProcess {
    if (this.child) return this.child;
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: childEnv(process.env, { ELECTRON_RUN_AS_NODE: '1', NODE_OPTIONS: '' }), // no provider keys in the helper either
      windowsHide: true,
    });
    child.on('message', (m: { type: string; id: number; err: SpawnedError | null; stdout: Uint8Array; stderr: Uint8Array }) => {
      if (m.type !== 'done') return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      this.updateRef();
      p.done(m.err, toBuffer(m.stdout), toBuffer(m.stderr));
    });
    const fail = (why: string): void => {
      if (this.child !== child) return;
      this.child = null;
      const all = [...this.pending.values()];
      this.pending.clear();
      for (const p of all) p.done({ code: 'EHELPER', killed: false, signal: null, message: `the process helper ${why}` }, Buffer.alloc(0), Buffer.alloc(0));
    };
    child.on('exit', (code, signal) => fail(`exited (${signal ?? code})`));
    child.on('error', (err) => fail(`failed: ${err.message}`));
    child.unref();
    this.child = child;
    this.updateRef();
    return child;
  }

  pid(): number | undefined {
    return this.child?.pid;
  }

  /** The channel keeps this process alive only while runs are pending. */
  private updateRef(): void {
    const channel = this.child?.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (!channel) return;
    if (this.pending.size) channel.ref?.();
    else channel.unref?.();
  }

  run(file: string, args: string[], options: RunOptions, input: Buffer | 'later' | undefined, done: Done, abortInput?: Buffer): RunHandle {
    const child = this.ensure();
    const id = this.nextId++;
    this.pending.set(id, { done });
    this.updateRef();
    const send = (msg: object): void => {
      if (this.child !== child || !child.connected) return;
      child.send(msg, (err) => {
        if (err && this.pending.has(id)) {
          this.pending.delete(id);
          this.updateRef();
          done({ code: 'EHELPER', killed: false, signal: null, message: `the process helper is unreachable: ${err.message}` }, Buffer.alloc(0), Buffer.alloc(0));
        }
      });
    };
    send({ type: 'run', id, file, args, options: { ...options, encoding: 'buffer', killSignal: 'SIGKILL' }, ...(Buffer.isBuffer(input) ? { input } : {}), ...(abortInput ? { abortInput } : {}) });
    return {
      writeInput: (data) => send({ type: 'input', id, input: data }),
      kill: () => send({ type: 'kill', id }),
    };
  }
}

let shared: ProcessSpawner | null = null;

/** Process id of the running helper, if any (tests). */
export function helperPid(): number | undefined {
  return shared?.pid();
}

/** Whether runs go through the helper (not when VOX_SPAWN_DIRECT=1). */
export function helperEnabled(): boolean {
  return process.env.VOX_SPAWN_DIRECT !== '1';
}

/**
 * Runs `file args` in the shared helper process. With `input` 'later', `abortInput` is what the
 * run gets if this process goes away before `writeInput` (e.g. `done\n` for fast-import, which
 * then exits having written nothing).
 */
export function spawnViaHelper(file: string, args: string[], options: RunOptions, input: Buffer | 'later' | undefined, done: Done, abortInput?: Buffer): RunHandle {
  shared ??= new ProcessSpawner();
  return shared.run(file, args, options, input, done, abortInput);
}
