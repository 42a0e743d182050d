/**
 * Opening the one shared database (`$VOX_HOME/vox.db`, platform/vox-home.ts) and the one-time
 * move into it of a database an older Vox kept elsewhere (VS Code's globalStorage). Every opener
 * — each VS Code window, each `vox` command — holds a lock file beside the database while it
 * moves and opens, so two windows starting at once do the move once and a half-moved file is
 * never opened. The move is crash-safe: the old database is checkpointed (its write-ahead log
 * folded into the main file, with either SQLite driver), copied under a temporary name, synced
 * and renamed into place; only then is the old file renamed aside (`vox.db.moved-to-vox-home`,
 * kept, never deleted). A crash at any step leaves a state the next opener finishes.
 *
 * When both databases exist the rule is: nothing is clobbered. If every thread of the old one is
 * already in the shared one (a move interrupted after the copy), the old file is set aside; if the
 * shared one has no threads and no process has it open, it is renamed aside
 * (`vox.db.empty-before-move-<time>`) and the old one moved in; otherwise both are kept, the
 * shared one is used, and the outcome names the old file and how to read it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireFileLockSync } from '../platform/file-lock';
import { sqliteDriver } from './driver';
import { BUSY_TIMEOUT_MS, loadDriver } from './database';

/** Longest wait for another process's move-and-open before giving up (a migration of a big database can take a while). */
export const HOME_LOCK_TIMEOUT_MS = 60_000;
/** The name the old database is renamed to once its content is in the shared one. */
export const MOVED_SUFFIX = '.moved-to-vox-home';
/** Prefix (after the database's name) of the copy being written; a leftover one is a crashed move's and is deleted. */
const COPY_SUFFIX = '.moving-';
const WAL_FILES = ['-wal', '-shm'];

export type MoveOutcome = 'moved' | 'replacedEmpty' | 'leftoverSetAside' | 'keptBoth' | 'inUse' | 'failed';

export interface DatabaseMove {
  outcome: MoveOutcome;
  from: string;
  /** One line for the log: what happened, and for `keptBoth`/`inUse`/`failed` what the user can do. */
  message: string;
}

export interface HomeDatabaseOptions {
  /** The shared database (`voxDatabasePath()`). */
  dbPath: string;
  /** Databases an older Vox kept elsewhere, moved in once. */
  legacyFiles?: readonly string[];
  lockTimeoutMs?: number;
}

/**
 * Moves any legacy database in (see the header), then runs `open(dbPath)` — all under the lock —
 * and returns what it opened with the moves made. Where the lock cannot be created (a read-only
 * home folder) nothing is moved and `open` runs without it.
 */
export function withHomeDatabase<T>(opts: HomeDatabaseOptions, open: (dbPath: string) => T): { value: T; moves: DatabaseMove[] } {
  const { dbPath } = opts;
  let release: (() => void) | undefined;
  try {
    release = acquireFileLockSync(`${dbPath}.lock`, { timeoutMs: opts.lockTimeoutMs ?? HOME_LOCK_TIMEOUT_MS });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw e;
  }
  try {
    const moves: DatabaseMove[] = [];
    if (release) {
      removeCrashedCopies(dbPath);
      for (const from of opts.legacyFiles ?? []) {
        if (path.resolve(from) === path.resolve(dbPath) || !fs.existsSync(from)) continue;
        moves.push(moveIn(from, dbPath));
      }
    }
    return { value: open(dbPath), moves };
  } finally {
    release?.();
  }
}

function removeCrashedCopies(dbPath: string): void {
  const dir = path.dirname(dbPath);
  const prefix = path.basename(dbPath) + COPY_SUFFIX;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n.startsWith(prefix)) fs.rmSync(path.join(dir, n), { force: true });
}

function moveIn(from: string, to: string): DatabaseMove {
  try {
    if (!fs.existsSync(to)) return copyIn(from, to, 'moved');
    // Another process has the shared database open while its log files exist (the last connection's close removes them).
    const toOpenElsewhere = WAL_FILES.some((x) => fs.existsSync(to + x));
    const fromIds = threadIds(from);
    const toIds = threadIds(to);
    if ([...fromIds].every((id) => toIds.has(id))) {
      setAside(from);
      return { outcome: 'leftoverSetAside', from, message: `every thread of ${from} is already in ${to}; the old file was renamed to ${path.basename(from)}${MOVED_SUFFIX}` };
    }
    if (toIds.size === 0 && !toOpenElsewhere) {
      const aside = `${to}.empty-before-move-${Date.now()}`;
      fs.renameSync(to, aside);
      const m = copyIn(from, to, 'replacedEmpty');
      return m.outcome === 'replacedEmpty' ? { ...m, message: `${m.message} (the empty ${to} was kept as ${path.basename(aside)})` } : m;
    }
    const missing = [...fromIds].filter((id) => !toIds.has(id)).length;
    return {
      outcome: 'keptBoth', from,
      message: `${from} holds ${missing} thread(s) that are not in ${to}; Vox uses ${to} and left the old file untouched. ` +
        `To see them: VOX_HOME="${path.dirname(from)}" vox threads; to bring them over: VOX_HOME="${path.dirname(from)}" vox session export-bundle FILE, then vox session import-bundle FILE.`,
    };
  } catch (e) {
    return { outcome: 'failed', from, message: `could not move ${from} to ${to} (${(e as Error).message.split('\n', 1)[0]}); the old file was left as it was` };
  }
}

function inUse(from: string): DatabaseMove {
  return { outcome: 'inUse', from, message: `${from} is in use by another process (an older Vox?); it was not moved. Close it and reload the window to move it.` };
}

/** Folds the old database's write-ahead log into its main file, copies that under a temporary name, syncs it and renames it into place. */
function copyIn(from: string, to: string, outcome: 'moved' | 'replacedEmpty'): DatabaseMove {
  if (checkpoint(from) === 'busy') return inUse(from);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const copy = `${to}${COPY_SUFFIX}${process.pid}`;
  fs.copyFileSync(from, copy);
  const fd = fs.openSync(copy, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(copy, to);
  syncDir(path.dirname(to));
  setAside(from);
  return { outcome, from, message: `moved ${from} to ${to} (the old file is kept as ${path.basename(from)}${MOVED_SUFFIX})` };
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // not every platform can sync a directory (Windows); the rename is still atomic
  }
}

function setAside(from: string): void {
  let aside = from + MOVED_SUFFIX;
  if (fs.existsSync(aside)) aside = `${aside}-${Date.now()}`;
  fs.renameSync(from, aside);
  for (const x of WAL_FILES) fs.rmSync(from + x, { force: true }); // empty after the checkpoint
}

function openRaw(file: string, readonly = false) {
  return sqliteDriver(loadDriver).open(file, { readonly, fileMustExist: true, timeoutMs: BUSY_TIMEOUT_MS });
}

/** Checkpoints `file` fully; 'busy' when another connection kept part of its log. */
function checkpoint(file: string): 'done' | 'busy' {
  const db = openRaw(file);
  try {
    const busy = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined;
    return busy && busy.busy !== 0 ? 'busy' : 'done';
  } finally {
    db.close();
  }
}

/** The ids of the threads in `file` (none when it has no threads table yet); read-only, so a database that is kept stays byte-for-byte as it was. */
function threadIds(file: string): Set<string> {
  const db = openRaw(file, true);
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'threads'").get();
    if (!table) return new Set();
    return new Set((db.prepare('SELECT id FROM threads').all() as { id: string }[]).map((r) => r.id));
  } finally {
    db.close();
  }
}
