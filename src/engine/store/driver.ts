/**
 * The SQLite driver seam: the little the store needs of a SQLite binding — statements (run, get,
 * all, iterate), exec, pragmas, transactions (nested ones become savepoints), close — and the
 * loader that picks a binding. Two implementations (./drivers/): better-sqlite3, kept where it
 * loads (Node's ABI: the CLI, code-server), and `@photostructure/sqlite`, an N-API build that
 * loads unchanged in desktop VS Code's Electron. Both read and write the same file format (WAL,
 * the same schema), so switching between them loses nothing.
 *
 * Choice: `VOX_SQLITE_DRIVER=better-sqlite3|photostructure` forces one; otherwise better-sqlite3
 * is tried and, when its native module does not load (an ABI mismatch, a missing build), the
 * N-API driver is used. The reason is kept (`driverChoice()`) for the log. Both drivers report
 * failures with SQLite's code names in `code` (SQLITE_BUSY, SQLITE_CONSTRAINT_PRIMARYKEY, …), so
 * database.ts maps them to typed StoreErrors the same way.
 */
import { StoreError } from './errors';

export type DriverName = 'better-sqlite3' | 'photostructure';
export const DRIVER_NAMES: readonly DriverName[] = ['better-sqlite3', 'photostructure'];
/** Environment variable that forces a driver. */
export const DRIVER_ENV = 'VOX_SQLITE_DRIVER';
/**
 * Environment variable that makes better-sqlite3 fail to load as it does in Electron (an ABI
 * mismatch), so the fallback can be exercised in a real VS Code here (the e2e's second pass).
 */
export const SIMULATE_ABI_MISMATCH_ENV = 'VOX_SQLITE_SIMULATE_ABI_MISMATCH';

export interface RunResult { changes: number; lastInsertRowid: number | bigint }

export interface SqlStatement {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

export type TransactionMode = 'deferred' | 'immediate' | 'exclusive';

export interface SqlDatabase {
  readonly driver: DriverName;
  /** The database file's path. */
  readonly name: string;
  readonly open: boolean;
  prepare(sql: string): SqlStatement;
  exec(sql: string): void;
  /** `PRAGMA <text>`; the first column of the first row (the value), or undefined. */
  pragma(text: string): unknown;
  /** Runs `fn` in a transaction (a savepoint when one is already open); rolls back if it throws. */
  transaction<T>(fn: () => T, mode?: TransactionMode): T;
  close(): void;
}

export interface OpenFlags { readonly: boolean; fileMustExist: boolean; timeoutMs: number }

export interface SqlDriver {
  readonly name: DriverName;
  open(file: string, flags: OpenFlags): SqlDatabase;
}

/** Loads one driver's module; throws when its native part cannot load. */
export type DriverLoader = (name: DriverName) => SqlDriver;

let chosen: { driver: SqlDriver; reason: string } | undefined;

/** An error's first line: Node's "Cannot find module" appends its require stack, which no log line needs. */
function firstLine(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.split('\n', 1)[0]!.trim();
}

function runtime(): string {
  const rt = process.versions.electron ? `Electron ${process.versions.electron}` : `Node ${process.versions.node}`;
  return `${rt}, module ABI ${process.versions.modules}`;
}

/**
 * Picks the driver (see the file header) with `load`; the error when none loads is a typed
 * `store/nativeModule` naming each failure.
 */
export function chooseDriver(load: DriverLoader, env: NodeJS.ProcessEnv = process.env): { driver: SqlDriver; reason: string } {
  const forced = env[DRIVER_ENV]?.trim();
  if (forced) {
    if (!(DRIVER_NAMES as readonly string[]).includes(forced)) {
      throw new StoreError('nativeModule', `${DRIVER_ENV}=${forced} is not a SQLite driver Vox has; use ${DRIVER_NAMES.join(' or ')}.`);
    }
    try {
      return { driver: load(forced as DriverName), reason: `${forced} (forced by ${DRIVER_ENV})` };
    } catch (e) {
      throw new StoreError('nativeModule', `${DRIVER_ENV}=${forced}, but it cannot load in this runtime (${runtime()}): ${firstLine(e)}`, e);
    }
  }
  const failures: string[] = [];
  for (const name of DRIVER_NAMES) {
    try {
      const driver = load(name);
      return { driver, reason: failures.length === 0 ? `${name}` : `${name} (${failures.join('; ')})` };
    } catch (e) {
      failures.push(`${name} does not load here: ${firstLine(e)}`);
    }
  }
  throw new StoreError(
    'nativeModule',
    `Vox could not load a SQLite module in this runtime (${runtime()}): ${failures.join('; ')}. Install the Vox package built for your platform.`,
  );
}

/** The process's driver, chosen once. */
export function sqliteDriver(load: DriverLoader): SqlDriver {
  chosen ??= chooseDriver(load);
  return chosen.driver;
}

/** Which driver this process uses and why (for "Vox: Show Logs"); undefined before the first open. */
export function driverChoice(): { name: DriverName; reason: string } | undefined {
  return chosen ? { name: chosen.driver.name, reason: chosen.reason } : undefined;
}

/** For tests: forget the choice, so the next open chooses again. */
export function resetDriverChoice(): void {
  chosen = undefined;
}
