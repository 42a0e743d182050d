/**
 * Opens the Vox SQLite database safely: refuses files that are not SQLite, databases written by
 * a newer Vox (schema version ahead of this build) and corrupt files, each with a typed
 * `StoreError` and without writing a byte to them. Applies pending migrations in transactions.
 */
import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from './errors';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations';

/** The 16-byte header every SQLite 3 database file starts with. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** How long a writer waits for another process's lock before failing (ms). */
export const BUSY_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  /** Open without creating or migrating (for inspection tools). */
  readonly?: boolean;
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

function wrapSqliteError(file: string, e: unknown): StoreError {
  const err = e as { code?: string; message?: string };
  const code = err.code ?? '';
  if (code === 'SQLITE_NOTADB') return new StoreError('notSqlite', `${file} is not a SQLite database.`, e);
  if (code === 'SQLITE_CORRUPT') return new StoreError('corrupt', `${file} is corrupt: ${err.message}. Vox left it untouched.`, e);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return new StoreError('locked', `${file} is locked by another process.`, e);
  return new StoreError('io', `Cannot use database ${file}: ${err.message ?? String(e)}`, e);
}

type SqliteCtor = typeof Database;
let sqlite: SqliteCtor | undefined;

/**
 * Loads the native better-sqlite3 module on first use (not at import time), so a build for the
 * wrong ABI — e.g. a Node build inside desktop VS Code's Electron — is reported as a typed
 * `nativeModule` error with the runtime's versions instead of crashing extension activation.
 */
export function loadSqlite(): SqliteCtor {
  // A literal require so bundlers and the VSIX packer see the external dependency.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy native load, see above
  sqlite ??= requireSqlite(() => require('better-sqlite3'));
  return sqlite;
}

/** `loadSqlite` without the cache, with the loader injectable (tests simulate a foreign ABI). */
export function requireSqlite(load: () => unknown): SqliteCtor {
  try {
    return load() as SqliteCtor;
  } catch (e) {
    const runtime = process.versions.electron ? `Electron ${process.versions.electron}` : `Node ${process.versions.node}`;
    throw new StoreError(
      'nativeModule',
      `Vox could not load its SQLite module (better-sqlite3) in this runtime (${runtime}, module ABI ${process.versions.modules}): ${(e as Error).message}. ` +
        'This build of Vox was compiled for a different runtime; install the VSIX built for your VS Code, or use Vox in code-server / the vox CLI.',
      e,
    );
  }
}

/** Opens (creating if needed) and migrates the database at `file`. */
export function openDatabase(file: string, opts: OpenOptions = {}): Database.Database {
  const exists = fs.existsSync(file);
  if (exists) checkHeader(file);
  else if (opts.readonly) throw new StoreError('notFound', `No database at ${file}.`);
  else fs.mkdirSync(path.dirname(file), { recursive: true });

  const Sqlite = loadSqlite();
  let db: Database.Database;
  try {
    db = new Sqlite(file, { readonly: !!opts.readonly, fileMustExist: !!opts.readonly, timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw wrapSqliteError(file, e);
  }
  try {
    // Read the version before any write so a newer database is never modified.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > LATEST_SCHEMA_VERSION) {
      throw new StoreError(
        'newerVersion',
        `${file} has schema version ${version}, newer than this Vox understands (${LATEST_SCHEMA_VERSION}). Update Vox; the database was not changed.`,
      );
    }
    const check = db.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw new StoreError('corrupt', `${file} failed its integrity check (${check}). Vox left it untouched.`);
    if (opts.readonly) return db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue;
      db.transaction(() => {
        m.up(db);
        db.pragma(`user_version = ${m.version}`);
      })();
    }
    return db;
  } catch (e) {
    db.close();
    throw e instanceof StoreError ? e : wrapSqliteError(file, e);
  }
}
