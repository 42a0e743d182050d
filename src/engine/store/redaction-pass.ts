/**
 * The one-time redaction of a database written before the current secret rule set: every text
 * column that holds text from outside (the core's, CORE_REDACTABLE, and each module's
 * `redactable`) is read in batches (by rowid, or a table's key) and rewritten where `redactDeep` changes it — the
 * event log and its projections alike, so what a client reads, what search finds and what a
 * replay rebuilds all agree. Progress is kept per rule set and column, so
 * a pass interrupted by a closed window goes on where it stopped at the next start, a new rule
 * set runs the pass again, and two processes on one database share the work (each batch is one
 * short IMMEDIATE transaction: neither holds the writer lock for long). A batch never waits for
 * the writer lock (SQLite's busy timeout is 0 while it runs: the pass shares the process with the
 * chat, and a synchronous wait would stall it): when another process holds the lock, the batch
 * is tried again REDACTION_BUSY_RETRY_MS later. `redaction_progress` is made by the pass itself
 * (see the constructor).
 */
import type { SqlDatabase } from './driver';
import { storeErrorOf } from './database';
import { redactDeep } from '../platform/secrets';
import { secretRulesId } from '../platform/secret-scan';

/** Columns of a table that hold text from outside (prompts, answers, tool output): what the pass rewrites. */
export interface RedactableColumns {
  table: string;
  columns: readonly string[];
  /** The columns the table is ordered by when it has no rowid (WITHOUT ROWID tables); default `rowid`. */
  key?: readonly string[];
}

/** Rows read (and at most rewritten) per batch: one short write transaction each. */
export const REDACTION_BATCH_ROWS = 200;

/** The core tables' text columns (the events' payloads included: a replay must not bring a secret back). */
export const CORE_REDACTABLE: readonly RedactableColumns[] = [
  { table: 'events', columns: ['payload'] },
  { table: 'threads', columns: ['title'] },
  { table: 'messages', columns: ['content'] },
  { table: 'runs', columns: ['error'] },
  { table: 'turn_items', columns: ['arguments', 'content'] },
  { table: 'turn_chunks', columns: ['data'], key: ['turn_id', 'seq'] },
  { table: 'queue', columns: ['prompt'] },
  { table: 'rate_limit_waits', columns: ['message'] },
  { table: 'background_work', columns: ['title', 'result'] },
  { table: 'plans', columns: ['title', 'steps'] },
  { table: 'prompt_history', columns: ['prompt'] },
  { table: 'compactions', columns: ['summary'] },
];

const PROGRESS_TABLE = `
  CREATE TABLE IF NOT EXISTS redaction_progress (
    rules      TEXT    NOT NULL, -- the rule set (platform/secret-scan.ts secretRulesId)
    target     TEXT    NOT NULL, -- 'table.column'
    last_key   TEXT    NOT NULL, -- JSON: the key of the last row done
    done       INTEGER NOT NULL,
    PRIMARY KEY (rules, target)
  )`;

export interface RedactionStep {
  /** True when every column is done for this rule set. */
  done: boolean;
  /** Values rewritten by this step. */
  changed: number;
}

/** Runs the pass one batch at a time (`step`), so a caller can spread it over idle moments. */
/** Runs `fn` with SQLite's busy timeout at 0: a lock another process holds fails at once ("locked"). */
function withoutBusyWait<T>(db: SqlDatabase, fn: () => T): T {
  const busy = Number(db.pragma('busy_timeout'));
  db.pragma('busy_timeout = 0');
  try {
    return fn();
  } finally {
    db.pragma(`busy_timeout = ${busy}`);
  }
}

export class RedactionPass {
  private readonly rules = secretRulesId();
  private readonly targets: Array<{ table: string; column: string; key: readonly string[] }>;

  constructor(private readonly db: SqlDatabase, redactable: readonly RedactableColumns[]) {
    // Its own table, made here rather than by a migration: a core migration numbered after the
    // modules' would let a database made by the core alone skip theirs. Only a writable store runs the pass.
    withoutBusyWait(db, () => db.exec(PROGRESS_TABLE));
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    this.targets = redactable.filter((r) => tables.has(r.table)).flatMap((r) => r.columns.map((column) => ({ table: r.table, column, key: r.key ?? ['rowid'] })));
  }

  /** Whether the pass has anything left for this rule set (a read; no lock taken). */
  pending(): boolean {
    const done = this.db.prepare('SELECT target FROM redaction_progress WHERE rules = ? AND done = 1').all(this.rules) as Array<{ target: string }>;
    const set = new Set(done.map((d) => d.target));
    return this.targets.some((t) => !set.has(`${t.table}.${t.column}`));
  }

  /** One batch of the first column not yet done. */
  step(): RedactionStep {
    // Freed space is zeroed while the pass runs, so the old text does not stay in the file's free pages.
    const secure = this.db.pragma('secure_delete');
    this.db.pragma('secure_delete = ON');
    try {
      return withoutBusyWait(this.db, () => this.batch());
    } finally {
      this.db.pragma(`secure_delete = ${Number(secure) ? 'ON' : 'OFF'}`);
    }
  }

  private batch(): RedactionStep {
    return this.db.transaction(() => {
      for (const { table, column, key } of this.targets) {
        const target = `${table}.${column}`;
        const row = this.db.prepare('SELECT last_key AS last, done FROM redaction_progress WHERE rules = ? AND target = ?').get(this.rules, target) as { last: string; done: number } | undefined;
        if (row?.done === 1) continue;
        const last = row ? (JSON.parse(row.last) as unknown[]) : null;
        const keys = key.map((k, i) => `${k} AS k${i}`).join(', ');
        const tuple = `(${key.join(', ')})`;
        const after = last ? `WHERE ${tuple} > (${key.map(() => '?').join(', ')})` : '';
        const rows = this.db.prepare(`SELECT ${keys}, ${column} AS v FROM ${table} ${after} ORDER BY ${key.join(', ')} LIMIT ?`)
          .all(...(last ?? []), REDACTION_BATCH_ROWS) as Array<Record<string, unknown>>;
        let changed = 0;
        const update = this.db.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${tuple} = (${key.map(() => '?').join(', ')})`);
        for (const r of rows) {
          const v = r.v;
          if (typeof v !== 'string') continue;
          const w = redactDeep(v);
          if (w !== v) {
            update.run(w, ...key.map((_, i) => r[`k${i}`]));
            changed++;
          }
        }
        const lastRow = rows[rows.length - 1];
        const next = lastRow ? key.map((_, i) => lastRow[`k${i}`]) : last ?? [0];
        const finished = rows.length < REDACTION_BATCH_ROWS ? 1 : 0;
        this.db.prepare('INSERT OR REPLACE INTO redaction_progress (rules, target, last_key, done) VALUES (?, ?, ?, ?)').run(this.rules, target, JSON.stringify(next), finished);
        return { done: false, changed };
      }
      return { done: true, changed: 0 };
    }, 'immediate');
  }
}

/** How long after a start the pass begins (the start itself goes first). */
export const REDACTION_START_DELAY_MS = 2_000;
/** The pause between two batches (other writers get the lock in between). */
export const REDACTION_STEP_PAUSE_MS = 10;
/** How long the pass waits before trying a batch again when another process held the writer lock (ms). */
export const REDACTION_BUSY_RETRY_MS = 5_000;

/**
 * Runs the pass in the background, a batch at a time, until it is done or `stop` is called;
 * `onDone` hears how many values it rewrote (0 when there was nothing to do), `onError` a batch
 * that failed (the pass then stops; the next start goes on from the last saved batch).
 */
export function startRedactionPass(db: SqlDatabase, redactable: readonly RedactableColumns[], on: { onDone(changed: number): void; onError(e: unknown): void }, retryMs = REDACTION_BUSY_RETRY_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let changed = 0;
  let pass: RedactionPass | undefined;
  const tick = () => {
    if (stopped) return;
    try {
      pass ??= new RedactionPass(db, redactable);
      const step = pass.step();
      changed += step.changed;
      if (step.done) {
        on.onDone(changed);
        return;
      }
    } catch (e) {
      if (storeErrorOf(db.name, e).code === 'locked') {
        timer = setTimeout(tick, retryMs); // another process writes: later, without waiting here
        timer.unref();
        return;
      }
      on.onError(e);
      return;
    }
    timer = setTimeout(tick, REDACTION_STEP_PAUSE_MS);
    timer.unref();
  };
  timer = setTimeout(tick, REDACTION_START_DELAY_MS);
  timer.unref();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
