/**
 * A lock file held by one process at a time, for work that two processes must not interleave
 * (VS Code and the `vox` CLI restoring into one repository). Taking it creates the file with
 * O_EXCL and writes the owner (pid and process start time, platform/process-identity.ts);
 * releasing it deletes the file. A waiter polls; a lock whose owner is gone (crashed, killed, its
 * pid reused) is stale and is taken over: it is renamed aside first — only one waiter can win
 * that rename — and the renamed file's owner is checked again before it is deleted, so a lock
 * another waiter took meanwhile is never broken.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { VoxError } from '../../protocol/wire/vox-error';
import { isOwnerAlive, selfStartMs } from './process-identity';
import { diskFullOf } from './disk-full';

/** Pause between two attempts to take a lock another process holds. */
export const LOCK_POLL_MS = 25;
/** Longest wait for a lock a live process holds before giving up with `locked`. */
export const LOCK_WAIT_TIMEOUT_MS = 5 * 60_000;
/**
 * A lock file that does not (yet) name its owner is its creator's for this long: the creator
 * writes the owner right after creating the file, and a waiter reading in between must not take
 * the lock as stale. After that, such a file was left by a process that died in between.
 */
export const LOCK_WRITE_GRACE_MS = 10_000;

interface Owner { pid: number; startedAtMs: number | null; since: number }

/** The lock is held by another live process for longer than the wait allows. */
export class LockError extends VoxError<'platform'> {
  override readonly name = 'LockError';
  readonly domain = 'platform' as const;
  constructor(readonly lockFile: string, message: string) {
    super('locked', message);
  }
}

/** The lock's owner; 'none' when there is no lock; 'unnamed' when the file does not name one (yet). */
function readOwner(file: string): Owner | 'unnamed' | 'none' {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : 'unnamed';
  }
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    return typeof o.pid === 'number' ? { pid: o.pid, startedAtMs: typeof o.startedAtMs === 'number' ? o.startedAtMs : null, since: o.since ?? 0 } : 'unnamed';
  } catch {
    return 'unnamed';
  }
}

/** Whether the lock at `file` (whose owner reads as `o`) is held by a live process. */
function held(file: string, o: Owner | 'unnamed'): boolean {
  if (o !== 'unnamed') return isOwnerAlive(o.pid, o.startedAtMs);
  try {
    return Date.now() - fs.statSync(file).mtimeMs < LOCK_WRITE_GRACE_MS; // being written right now, most likely
  } catch {
    return false;
  }
}

function tryCreate(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    const owner: Owner = { pid: process.pid, startedAtMs: selfStartMs(), since: Date.now() };
    fs.writeSync(fd, JSON.stringify(owner));
  } catch (e) {
    // Not taken (a full disk creates the file but not its owner): an empty lock left behind would
    // hold every later taker for LOCK_WRITE_GRACE_MS.
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw diskFullOf(e, file) ?? e;
  }
  fs.closeSync(fd);
  return true;
}

/** Renames a stale lock aside and deletes it, unless it turned out to be live after all (then it is put back). */
function breakStale(file: string): void {
  const aside = `${file}.stale-${process.pid}-${Date.now()}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // someone else broke (or released) it first
  }
  const owner = readOwner(aside);
  if (owner !== 'none' && held(aside, owner)) {
    // A live lock was taken between our check and the rename: give it back unless a new one is there.
    try {
      fs.linkSync(aside, file);
    } catch {
      // a newer lock exists; the one we moved belongs to a process that will find its file gone on release
    }
  }
  fs.rmSync(aside, { force: true });
}

/** One attempt: the release when the lock was taken, 'retry' when it changed hands meanwhile, else the live owner. */
function attempt(file: string): (() => void) | 'retry' | Owner | 'unnamed' {
  if (tryCreate(file)) {
    return () => {
      const o = readOwner(file);
      if (o !== 'none' && o !== 'unnamed' && o.pid === process.pid) fs.rmSync(file, { force: true });
    };
  }
  const owner = readOwner(file);
  if (owner === 'none') return 'retry'; // released meanwhile
  if (!held(file, owner)) {
    breakStale(file);
    return 'retry';
  }
  return owner;
}

function heldTooLong(file: string, owner: Owner | 'unnamed', timeoutMs: number): LockError {
  const who = owner === 'unnamed' ? 'another Vox process' : `another Vox process (pid ${owner.pid})`;
  return new LockError(file, `${who} has held ${file} for more than ${Math.round(timeoutMs / 1000)} s; try again when it has finished`);
}

/** Takes the lock at `file` (waiting while another live process holds it) and returns its release. */
export async function acquireFileLock(file: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<() => void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const timeoutMs = opts.timeoutMs ?? LOCK_WAIT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = attempt(file);
    if (typeof r === 'function') return r;
    if (r === 'retry') continue;
    if (Date.now() > deadline) throw heldTooLong(file, r, timeoutMs);
    if (opts.signal?.aborted) throw new LockError(file, `waiting for ${file} was cancelled`);
    await new Promise((res) => setTimeout(res, LOCK_POLL_MS));
  }
}

/**
 * `acquireFileLock` for synchronous callers (opening the database is synchronous): the thread
 * sleeps between attempts. Only for locks held for a short time.
 */
export function acquireFileLockSync(file: string, opts: { timeoutMs?: number } = {}): () => void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const timeoutMs = opts.timeoutMs ?? LOCK_WAIT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = attempt(file);
    if (typeof r === 'function') return r;
    if (r === 'retry') continue;
    if (Date.now() > deadline) throw heldTooLong(file, r, timeoutMs);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOCK_POLL_MS);
  }
}

/** Where a lease on `dir` keeps its lock: the git directory of the repository `dir` is in (shared by every process working there), else the temp folder. */
export function lockDirFor(dir: string, fallback: string): string {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const dotGit = path.join(d, '.git');
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return dotGit;
    if (st?.isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
      if (m) return path.resolve(d, m[1]!.trim());
    }
    if (path.dirname(d) === d) return fallback;
  }
}

/** For tests and tools: the current holder of a lock file, if any. */
export async function lockHolder(file: string): Promise<number | null> {
  try {
    return (JSON.parse(await fsp.readFile(file, 'utf8')) as Owner).pid;
  } catch {
    return null;
  }
}
