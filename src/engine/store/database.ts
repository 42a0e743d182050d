/**
 * Opens the Vox SQLite database safely: refuses files that are not SQLite, databases written by
 * a newer Vox (schema version ahead of this build) and corrupt files, each with a typed
 * `StoreError` and without writing a byte to them. Applies pending migrations in one exclusive
 * transaction (several processes may open a new file at once). A directory in the database's
 * place, a read-only file or folder and a lock held by another writer are typed errors that name
 * the file and say what to do (`storeErrorOf` maps SQLite's own failures for the store's writes
 * too). A read-only open of a database in a folder it cannot write (SQLite's write-ahead log
 * needs one) reads a private copy instead.
 */
import { sqliteDriver, type DriverLoader, type SqlDatabase } from './driver';
import { betterSqlite3Driver } from './drivers/better-sqlite3';
import { photostructureDriver } from './drivers/photostructure';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreError } from './errors';
import { DiskFullError, diskFullOf } from '../platform/disk-full';
import type { Migration } from './migrations';

/** The 16-byte header every SQLite 3 database file starts with. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** How long a writer waits for another process's lock before failing (ms). */
export const BUSY_TIMEOUT_MS = 5_000;
/**
 * How long opening keeps retrying when SQLite answers "busy" at once (ms). SQLite skips its busy
 * handler where waiting could deadlock (a connection that must upgrade a lock while another
 * process switches the file to WAL or migrates it), so several processes opening a new database
 * at the same instant can see SQLITE_BUSY immediately; opening is idempotent, so it retries.
 */
const OPEN_RETRY_MS = 10_000;
/** The longest pause between two open attempts (ms); the first ones are shorter, with jitter. */
const OPEN_RETRY_MAX_PAUSE_MS = 250;

export interface OpenOptions {
  /** Open without creating or migrating (inspection, and a database that cannot be written). */
  readonly?: boolean;
}

/** Folder name prefix (in the temp dir) of a read-only copy; `removeReadOnlyCopy` deletes it when the store closes. */
const READ_ONLY_COPY_PREFIX = 'vox-readonly-';

/** Deletes the private copy a read-only open made (no-op for a database read in place). */
export function removeReadOnlyCopy(dbFile: string): void {
  const dir = path.dirname(dbFile);
  if (path.dirname(dir) === os.tmpdir() && path.basename(dir).startsWith(READ_ONLY_COPY_PREFIX)) fs.rmSync(dir, { recursive: true, force: true });
}

/** The database files SQLite keeps beside the main one in WAL mode. */
const WAL_SUFFIXES = ['-wal', '-shm'];

/** What to do about a database Vox cannot write, said once for every path to it. */
const READ_ONLY_ADVICE = 'Vox can list and show threads but not change them. Make the file and its folder writable, or point VOX_HOME (the vox CLI) at a writable folder.';

/** The refusal of a write to `file`, a read-only database (a read-only file or folder, or opened read-only). */
export function readOnlyError(file: string, cause?: unknown): StoreError {
  return new StoreError('readOnly', `${file} cannot be written (a read-only file or folder). ${READ_ONLY_ADVICE}`, cause);
}

function writable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A directory or a special file where the database should be: refused before SQLite sees it. */
function checkIsFile(file: string): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return;
  }
  if (st.isDirectory()) throw new StoreError('notAFile', `${file} is a directory; Vox keeps its database in a file of that name. Move the directory away, or point VOX_HOME at another folder.`);
  if (!st.isFile()) throw new StoreError('notAFile', `${file} is not a regular file (a socket, pipe or device); Vox will not open it as its database.`);
}

function checkHeader(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new StoreError('io', `Cannot open database ${file}: ${(e as Error).message}`, e);
  }
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (n === 0) return; // an empty file is a fresh database to SQLite
    if (n < head.length || !head.equals(SQLITE_MAGIC)) {
      throw new StoreError(
        'notSqlite',
        `${file} is not a SQLite database (its first bytes are not the SQLite header). Vox will not touch it; move it away or point Vox at another path.`,
      );
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** SQLite's (or the file system's) failure on `file` as a typed StoreError naming the file and what to do. */
export function storeErrorOf(file: string, e: unknown): StoreError | DiskFullError {
  if (e instanceof StoreError || e instanceof DiskFullError) return e;
  const err = e as { code?: string; message?: string };
  const code = err.code ?? '';
  if (code === 'SQLITE_NOTADB') return new StoreError('notSqlite', `${file} is not a SQLite database.`, e);
  if (code.startsWith('SQLITE_CORRUPT')) return new StoreError('corrupt', `${file} is corrupt: ${err.message}. Vox left it untouched.`, e);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StoreError('locked', `${file} is locked by another process (another VS Code window or vox command has held a write for more than ${BUSY_TIMEOUT_MS / 1000} s); try again, or close it.`, e);
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return readOnlyError(file, e);
  }
  const full = diskFullOf(e, file); // nothing was written (the transaction rolled back)
  if (full) return full;
  return new StoreError('io', `Cannot use database ${file}: ${err.message ?? String(e)}`, e);
}

/**
 * A private copy of a WAL-mode database (and its log) to read when its folder cannot be written:
 * SQLite must create the shared-memory file beside the database even to read it.
 */
function readOnlyCopy(file: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), READ_ONLY_COPY_PREFIX));
  const copy = path.join(dir, path.basename(file));
  fs.copyFileSync(file, copy);
  if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
  return copy;
}

/** Loads a driver by name (see ./driver.ts for the choice between them). */
export const loadDriver: DriverLoader = (name) => (name === 'better-sqlite3' ? betterSqlite3Driver() : photostructureDriver());

/**
 * Applies the pending migrations under one EXCLUSIVE transaction, reading the version again
 * inside it: when several processes open a new database at once (VS Code windows and `vox`
 * commands share one file), one migrates and the others, once they get the lock, find nothing
 * left to do. A version newer than this build found there is refused like at open.
 */
function migrate(db: SqlDatabase, file: string, migrations: readonly Migration[]): void {
  const LATEST_SCHEMA_VERSION = latestOf(migrations);
  db.transaction(() => {
    const current = db.pragma('user_version') as number;
    if (current > LATEST_SCHEMA_VERSION) {
      throw new StoreError('newerVersion', `${file} was just upgraded by a newer Vox (schema ${current}); this one understands ${LATEST_SCHEMA_VERSION}. Update Vox.`);
    }
    for (const m of migrations) {
      if (m.version <= current) continue;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }
  }, 'exclusive');
}

/** The schema version the migrations end at. */
function latestOf(migrations: readonly Migration[]): number {
  return migrations[migrations.length - 1]?.version ?? 0;
}

/** Blocks the thread for `ms` (opening is synchronous; there is no event loop turn to yield to). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Opens (creating if needed) and migrates the database at `file`. A `locked` failure that came
 * at once (another process opening or migrating the same file, see OPEN_RETRY_MS) is retried; one
 * that waited out BUSY_TIMEOUT_MS means a process really holds the file, and is reported.
 */
export function openDatabase(file: string, opts: OpenOptions, migrations: readonly Migration[]): SqlDatabase {
  const deadline = Date.now() + OPEN_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    try {
      return openOnce(file, opts, migrations);
    } catch (e) {
      const waitedOut = Date.now() - started >= BUSY_TIMEOUT_MS / 2;
      if (!(e instanceof StoreError) || e.code !== 'locked' || waitedOut || Date.now() >= deadline) throw e;
      pause(Math.min(OPEN_RETRY_MAX_PAUSE_MS, 10 * 2 ** attempt) * (0.5 + Math.random() / 2));
    }
  }
}

function openOnce(file: string, opts: OpenOptions, migrations: readonly Migration[]): SqlDatabase {
  const LATEST_SCHEMA_VERSION = latestOf(migrations);
  checkIsFile(file);
  const exists = fs.existsSync(file);
  const dir = path.dirname(file);
  if (exists) checkHeader(file);
  else if (opts.readonly) throw new StoreError('notFound', `No database at ${file}.`);
  else {
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw storeErrorOf(dir, e);
    }
  }
  if (!opts.readonly && (!writable(dir) || (exists && !writable(file)) || WAL_SUFFIXES.some((x) => fs.existsSync(file + x) && !writable(file + x)))) {
    throw readOnlyError(file);
  }
  // A WAL database in a folder that cannot be written cannot be read in place (SQLite creates its
  // shared-memory file there): read a private copy.
  const source = opts.readonly && !writable(dir) ? readOnlyCopy(file) : file;

  const driver = sqliteDriver(loadDriver);
  let db: SqlDatabase;
  try {
    db = driver.open(source, { readonly: !!opts.readonly, fileMustExist: !!opts.readonly, timeoutMs: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw storeErrorOf(file, e);
  }
  try {
    // Read the version before any write so a newer database is never modified.
    const version = db.pragma('user_version') as number;
    if (version > LATEST_SCHEMA_VERSION) {
      throw new StoreError(
        'newerVersion',
        `${file} has schema version ${version}, newer than this Vox understands (${LATEST_SCHEMA_VERSION}). Update Vox; the database was not changed.`,
      );
    }
    const check = db.pragma('quick_check') as string;
    if (check !== 'ok') throw new StoreError('corrupt', `${file} failed its integrity check (${check}). Vox left it untouched.`);
    if (opts.readonly) return db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    if (version < LATEST_SCHEMA_VERSION) migrate(db, file, migrations);
    return db;
  } catch (e) {
    db.close();
    throw storeErrorOf(file, e);
  }
}
