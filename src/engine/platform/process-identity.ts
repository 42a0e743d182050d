/**
 * Which process owns a run, by more than its pid: pids are reused, so a run recorded as owned by
 * pid 4242 must not look alive because some other program got 4242 after Vox died. A process is
 * identified by its pid and its start time; `isOwnerAlive` says true only when a process with
 * that pid exists and started at that time. Start times come from /proc on Linux (exact: boot
 * time + the start in clock ticks) and from `ps -o lstart=` elsewhere (to the second); where
 * neither answers, the pid alone decides, as before.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/** Difference of start times still taken as the same process (ps prints whole seconds). */
export const START_TIME_TOLERANCE_MS = 2_000;
/** Clock ticks per second of /proc/<pid>/stat's start time (USER_HZ, 100 on every Linux Vox runs on). */
const LINUX_CLOCK_TICKS_PER_SECOND = 100;
/** How long `ps` may take to answer. */
const PS_TIMEOUT_MS = 2_000;

let bootTimeMs: number | null | undefined;

function linuxBootTimeMs(): number | null {
  if (bootTimeMs !== undefined) return bootTimeMs;
  try {
    const m = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'));
    bootTimeMs = m ? Number(m[1]) * 1000 : null;
  } catch {
    bootTimeMs = null;
  }
  return bootTimeMs;
}

function linuxStartMs(pid: number): number | null | 'gone' {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]); // field 22 overall
  const boot = linuxBootTimeMs();
  return boot !== null && Number.isFinite(ticks) ? boot + (ticks * 1000) / LINUX_CLOCK_TICKS_PER_SECOND : null;
}

function psStartMs(pid: number): number | null | 'gone' {
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', timeout: PS_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (!out) return 'gone';
    const t = Date.parse(out);
    return Number.isFinite(t) ? t : null;
  } catch (e) {
    return (e as { status?: number }).status === 1 ? 'gone' : null;
  }
}

/** When process `pid` started (ms since the epoch); 'gone' when there is no such process; null when this system cannot tell. */
export function processStartMs(pid: number): number | null | 'gone' {
  if (process.platform === 'linux') return linuxStartMs(pid);
  if (process.platform === 'darwin' || process.platform === 'freebsd' || process.platform === 'openbsd') return psStartMs(pid);
  return null;
}

let selfStart: number | null | undefined;

/** This process's start time, as `processStartMs` reads it for others (so the two compare exactly). */
export function selfStartMs(): number | null {
  if (selfStart === undefined) {
    const s = processStartMs(process.pid);
    selfStart = typeof s === 'number' ? s : null;
  }
  return selfStart;
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the process `pid` that started at `startedAtMs` still runs (`startedAtMs` null: the pid alone decides). */
export function isOwnerAlive(pid: number, startedAtMs: number | null): boolean {
  if (!pidExists(pid)) return false;
  if (startedAtMs === null) return true;
  const now = processStartMs(pid);
  if (now === 'gone') return false;
  if (now === null) return true;
  return Math.abs(now - startedAtMs) <= START_TIME_TOLERANCE_MS;
}
