/**
 * The better-sqlite3 driver: loads the native module on first use (a build for the wrong ABI —
 * a Node build inside Electron — then fails here, where the loader can fall back, instead of at
 * import time). Its errors already carry SQLite's code names.
 */
import type Database from 'better-sqlite3';
import { SIMULATE_ABI_MISMATCH_ENV, type OpenFlags, type SqlDatabase, type SqlDriver, type SqlStatement, type TransactionMode } from '../driver';

type Ctor = typeof Database;

function load(): Ctor {
  if (process.env[SIMULATE_ABI_MISMATCH_ENV]) {
    // What Electron says about a module built for Node's ABI (the e2e's fallback pass simulates it here).
    throw new Error(`The module 'better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION ${process.versions.modules}. This version of Node.js requires NODE_MODULE_VERSION 132. (simulated by ${SIMULATE_ABI_MISMATCH_ENV})`);
  }
  // A literal require so bundlers and the VSIX packer see the external dependency.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy native load, see the header
  const ctor = require('better-sqlite3') as Ctor;
  // Loading the JavaScript is not enough: the native part loads with the first database.
  new ctor(':memory:').close();
  return ctor;
}

class BetterDatabase implements SqlDatabase {
  readonly driver = 'better-sqlite3' as const;
  constructor(private readonly db: Database.Database) {}
  get name(): string {
    return this.db.name;
  }
  get open(): boolean {
    return this.db.open;
  }
  prepare(sql: string): SqlStatement {
    return this.db.prepare(sql) as unknown as SqlStatement;
  }
  exec(sql: string): void {
    this.db.exec(sql);
  }
  pragma(text: string): unknown {
    return this.db.pragma(text, { simple: true });
  }
  transaction<T>(fn: () => T, mode: TransactionMode = 'deferred'): T {
    const tx = this.db.transaction(fn);
    return mode === 'immediate' ? tx.immediate() : mode === 'exclusive' ? tx.exclusive() : tx();
  }
  close(): void {
    this.db.close();
  }
}

/** The driver; throws (from `load`) when the native module cannot load in this runtime. */
export function betterSqlite3Driver(): SqlDriver {
  const Sqlite = load();
  return {
    name: 'better-sqlite3',
    open: (file: string, flags: OpenFlags) => new BetterDatabase(new Sqlite(file, { readonly: flags.readonly, fileMustExist: flags.fileMustExist, timeout: flags.timeoutMs })),
  };
}
