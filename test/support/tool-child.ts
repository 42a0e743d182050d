/**
 * Runs one built-in tool call in a child process, so that a test can bound a call that would
 * block the event loop (a catastrophic regular expression) and still fail cleanly instead of
 * freezing the test runner. `runToolInChild` (parent side) spawns this file under tsx with a JSON
 * spec; the child prints `started`, then one JSON line: the result or the ToolError, the call's
 * duration and the longest event-loop stall seen meanwhile. SIGINT in the child aborts the call,
 * as the CLI's Ctrl-C does. The parent kills the child (by its pid) when it does not answer in time.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

export interface ChildToolSpec {
  root: string;
  name: string;
  args: unknown;
  ripgrepPath?: string;
  /** Abort the call's signal after this many milliseconds. */
  abortAfterMs?: number;
}

export interface ChildToolOutcome {
  content?: string;
  isError?: boolean;
  error?: { name: string; code?: string; message: string };
  elapsedMs: number;
  /** Longest gap between two ticks of a 10 ms interval timer while the call ran. */
  maxLagMs: number;
}

/** Interval of the event-loop lag probe. */
const LAG_PROBE_MS = 10;

async function childMain(spec: ChildToolSpec): Promise<void> {
  const { builtinToolRegistry } = await import('../../src/engine/tools/builtins');
  const tool = builtinToolRegistry().lookup(spec.name);
  const ac = new AbortController();
  process.on('SIGINT', () => ac.abort());
  if (spec.abortAfterMs !== undefined) setTimeout(() => ac.abort(), spec.abortAfterMs);
  let last = Date.now();
  let maxLagMs = 0;
  const probe = setInterval(() => {
    const now = Date.now();
    maxLagMs = Math.max(maxLagMs, now - last - LAG_PROBE_MS);
    last = now;
  }, LAG_PROBE_MS);
  const started = Date.now();
  process.stdout.write('started\n');
  let out: ChildToolOutcome;
  try {
    const r = await tool.run(tool.parseArgs(JSON.stringify(spec.args)), {
      workspaceRoot: spec.root,
      signal: ac.signal,
      ...(spec.ripgrepPath ? { ripgrepPath: spec.ripgrepPath } : {}),
    });
    out = { content: r.content, isError: r.isError ?? false, elapsedMs: 0, maxLagMs: 0 };
  } catch (e) {
    const err = e as { name?: string; code?: string; message?: string };
    out = { error: { name: String(err.name), code: err.code, message: String(err.message) }, elapsedMs: 0, maxLagMs: 0 };
  }
  clearInterval(probe);
  out.elapsedMs = Date.now() - started;
  out.maxLagMs = maxLagMs;
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

/**
 * Runs the call in a child and resolves with its outcome; rejects when the child gives none within
 * `timeoutMs` (the child is SIGKILLed). `onStarted` runs once the call has begun, with the child's pid.
 */
export function runToolInChild(spec: ChildToolSpec, timeoutMs: number, onStarted?: (pid: number) => void): Promise<ChildToolOutcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, JSON.stringify(spec)], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let started = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.name} did not return within ${timeoutMs} ms (the child was killed); output: ${stdout}${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (!started && stdout.includes('started\n')) {
        started = true;
        if (child.pid !== undefined) onStarted?.(child.pid);
      }
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined && stdout.endsWith('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as ChildToolOutcome);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!stdout.split('\n').some((l) => l.startsWith('{'))) reject(new Error(`child exited (${code}) without an outcome: ${stdout}${stderr}`));
    });
  });
}

if (require.main === module) void childMain(JSON.parse(process.argv[2] ?? '{}') as ChildToolSpec);
