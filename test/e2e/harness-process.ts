/**
 * e2e harness, processes and teardown: the project root, the log, temporary directories, the
 * cleanup registry (`cleanupAll`, newest first), the process groups of the code-servers still
 * running (killed synchronously when this process exits), the exit hooks (exit, SIGINT/SIGTERM/
 * SIGHUP, uncaught errors) and the leak check (`processesMentioning`).
 *
 * Part of test/e2e/harness.ts (import that, not this module).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withTimeout } from '../support/wait';

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

export function log(msg: string): void {
  process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// Cleanup registry

type Cleanup = () => void | Promise<void>;
const cleanups: Cleanup[] = [];
/** Process groups of code-server instances still alive; killed synchronously on exit. */
const liveGroups = new Set<number>();

/** Runs `c` in cleanupAll() (newest first). */
export function registerCleanup(c: Cleanup): void {
  cleanups.push(c);
}

/** Remembers a process group to kill on exit (until `untrackGroup`). */
export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs every registered cleanup (newest first). Safe to call more than once. */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length) {
    const c = cleanups.pop()!;
    try {
      await withTimeout('cleanup', 15_000, Promise.resolve().then(c));
    } catch (e) {
      log(`cleanup failed: ${String(e)}`);
    }
  }
  for (const g of liveGroups) killGroup(g, 'SIGKILL');
  liveGroups.clear();
}

let exitHooksInstalled = false;
/** Last-resort teardown: kill every code-server group when this process goes away. */
export function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => {
    for (const g of liveGroups) killGroup(g, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      log(`${sig}: cleaning up`);
      void cleanupAll().finally(() => process.exit(130));
    });
  }
  process.on('uncaughtException', (e) => {
    log(`uncaught: ${e.stack ?? String(e)}`);
    void cleanupAll().finally(() => process.exit(1));
  });
}

/** A fresh directory under os.tmpdir(), removed by cleanupAll(). */
export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vox-e2e-${prefix}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

/** Lists this machine's processes whose command line mentions `needle` (leak checks). */
export function processesMentioning(needle: string): string[] {
  const r = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'))
    .map((l) => l.trim());
}
