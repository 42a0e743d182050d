/**
 * The `@photostructure/sqlite` driver: an N-API build of SQLite with node:sqlite's synchronous
 * API and prebuilt binaries for linux/darwin/win32 × x64/arm64, so it loads in desktop VS Code's
 * Electron as in Node. Adapted to the seam: rows as plain objects (node:sqlite returns
 * null-prototype ones), transactions with nesting as savepoints, `PRAGMA` values, a
 * must-exist open, and failures carrying SQLite's code names in `code` like better-sqlite3's.
 */
import * as fs from 'node:fs';
import type { OpenFlags, RunResult, SqlDatabase, SqlDriver, SqlStatement, TransactionMode } from '../driver';

interface PsStatement { run(...p: unknown[]): RunResult; get(...p: unknown[]): unknown; all(...p: unknown[]): unknown[]; iterate(...p: unknown[]): IterableIterator<unknown> }
interface PsDatabase { readonly isOpen: boolean; readonly isTransaction: boolean; prepare(sql: string): PsStatement; exec(sql: string): void; close(): void }
type PsCtor = new (location: string, options: { readOnly?: boolean; timeout?: number; enableForeignKeyConstraints?: boolean }) => PsDatabase;

/** SQLite's primary result codes by number (the low byte of an extended code). */
const PRIMARY: Record<number, string> = {
  1: 'SQLITE_ERROR', 2: 'SQLITE_INTERNAL', 3: 'SQLITE_PERM', 4: 'SQLITE_ABORT', 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY', 9: 'SQLITE_INTERRUPT', 10: 'SQLITE_IOERR', 11: 'SQLITE_CORRUPT', 13: 'SQLITE_FULL', 14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL', 17: 'SQLITE_SCHEMA', 18: 'SQLITE_TOOBIG', 19: 'SQLITE_CONSTRAINT', 20: 'SQLITE_MISMATCH', 21: 'SQLITE_MISUSE',
  23: 'SQLITE_AUTH', 25: 'SQLITE_RANGE', 26: 'SQLITE_NOTADB',
};
/** The extended codes the store tells apart (the rest are named by their primary code). */
const EXTENDED: Record<number, string> = {
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY', 2067: 'SQLITE_CONSTRAINT_UNIQUE', 787: 'SQLITE_CONSTRAINT_FOREIGNKEY', 1299: 'SQLITE_CONSTRAINT_NOTNULL',
  517: 'SQLITE_BUSY_SNAPSHOT', 261: 'SQLITE_BUSY_RECOVERY', 264: 'SQLITE_READONLY_RECOVERY', 520: 'SQLITE_READONLY_CANTLOCK', 776: 'SQLITE_READONLY_ROLLBACK',
  1032: 'SQLITE_READONLY_DBMOVED',
};

/** A failure of the binding with `code` set to SQLite's name, as better-sqlite3 reports it. */
function named(e: unknown): unknown {
  const err = e as Error & { errcode?: number; sqliteExtendedCode?: number; code?: string };
  const n = err?.sqliteExtendedCode ?? err?.errcode;
  if (typeof n !== 'number') return e;
  const name = EXTENDED[n] ?? PRIMARY[n & 0xff] ?? `SQLITE_${n}`;
  const out = new Error(err.message, { cause: e }) as Error & { code: string };
  out.name = 'SqliteError';
  out.code = name;
  return out;
}

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw named(e);
  }
}

/** node:sqlite rows have no prototype; the store (and its callers' deepEqual) expect plain objects. */
const plain = (row: unknown): unknown => (row && typeof row === 'object' ? { ...(row as object) } : row);

class PsStatementAdapter implements SqlStatement {
  constructor(private readonly s: PsStatement) {}
  run(...p: unknown[]): RunResult {
    return guard(() => this.s.run(...p));
  }
  get(...p: unknown[]): unknown {
    return guard(() => plain(this.s.get(...p)));
  }
  all(...p: unknown[]): unknown[] {
    return guard(() => this.s.all(...p).map(plain));
  }
  *iterate(...p: unknown[]): IterableIterator<unknown> {
    const it = guard(() => this.s.iterate(...p));
    for (;;) {
      const next = guard(() => it.next());
      if (next.done) return;
      yield plain(next.value);
    }
  }
}

class PsDatabaseAdapter implements SqlDatabase {
  readonly driver = 'photostructure' as const;
  private depth = 0;
  constructor(private readonly db: PsDatabase, readonly name: string) {}
  get open(): boolean {
    return this.db.isOpen;
  }
  prepare(sql: string): SqlStatement {
    return new PsStatementAdapter(guard(() => this.db.prepare(sql)));
  }
  exec(sql: string): void {
    guard(() => this.db.exec(sql));
  }
  pragma(text: string): unknown {
    const row = guard(() => this.db.prepare(`PRAGMA ${text}`).get()) as Record<string, unknown> | undefined;
    return row ? Object.values(row)[0] : undefined;
  }
  transaction<T>(fn: () => T, mode: TransactionMode = 'deferred'): T {
    const level = this.depth++;
    const savepoint = `vox_sp_${level}`;
    try {
      this.exec(level === 0 ? `BEGIN ${mode.toUpperCase()}` : `SAVEPOINT ${savepoint}`);
      let result: T;
      try {
        result = fn();
      } catch (e) {
        if (level === 0) {
          if (this.db.isTransaction) this.exec('ROLLBACK');
        } else {
          this.exec(`ROLLBACK TO ${savepoint}`);
          this.exec(`RELEASE ${savepoint}`);
        }
        throw e;
      }
      if (level > 0) this.exec(`RELEASE ${savepoint}`);
      else {
        try {
          this.exec('COMMIT');
        } catch (e) {
          if (this.db.isTransaction) this.exec('ROLLBACK'); // a COMMIT that failed (busy) leaves nothing half-done
          throw e;
        }
      }
      return result;
    } finally {
      this.depth--;
    }
  }
  close(): void {
    guard(() => this.db.close());
  }
}

function load(): PsCtor {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy native load (the driver is chosen at run time)
  return (require('@photostructure/sqlite') as { DatabaseSync: PsCtor }).DatabaseSync;
}

/** The driver; throws when no prebuild for this platform loads. */
export function photostructureDriver(): SqlDriver {
  const DatabaseSync = load();
  new DatabaseSync(':memory:', {}).close();
  return {
    name: 'photostructure',
    open(file: string, flags: OpenFlags) {
      if (flags.fileMustExist && !fs.existsSync(file)) throw Object.assign(new Error(`unable to open database file ${file}`), { name: 'SqliteError', code: 'SQLITE_CANTOPEN' });
      // Foreign keys are the store's choice (a pragma at open), as with better-sqlite3.
      const db = guard(() => new DatabaseSync(file, { readOnly: flags.readonly, timeout: flags.timeoutMs, enableForeignKeyConstraints: false }));
      return new PsDatabaseAdapter(db, file);
    },
  };
}
