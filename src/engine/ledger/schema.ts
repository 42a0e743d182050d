/**
 * The ledger's tables (SPEC 3.4; migration 16) and how its events project into them, inside the
 * transaction that appends them — so one `ledger.usageRecorded` writes its receipt, its usage
 * transaction, the balance, the day's summary and the model's observed cost per token together,
 * or none of them. Money columns are integer micro-dollars; a day is the machine's local date.
 *
 *   ledger_receipts      one per provider response id
 *   ledger_transactions  grants (+) and charged usage (−), each with the balance after it
 *   ledger_balance       one row: the balance and whether a grant was ever made (then it is enforced)
 *   ledger_daily         per day and model: responses, tokens, cost, unpriced responses
 *   ledger_caps          a cap per scope (daily; thread; run) and its action
 *   ledger_prices        the user's price cards (win over the bundled snapshot)
 *   ledger_observed      per model: tokens and cost seen (the observed price per 1k tokens)
 */
import type { EventOf } from '../../protocol/events';
import type { SqlDatabase } from '../store/driver';
import type { StoreSchema } from '../store/schema';

export const LEDGER_MIGRATION_VERSION = 16;

export function createLedgerTables(db: SqlDatabase): void {
  db.exec(`
    CREATE TABLE ledger_receipts (
      response_id TEXT PRIMARY KEY,
      thread_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      model TEXT NOT NULL,
      input INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write_5m INTEGER NOT NULL,
      cache_write_1h INTEGER NOT NULL, output INTEGER NOT NULL, reasoning INTEGER NOT NULL,
      -- NULL when unpriced
      cost_micro_usd INTEGER,
      -- the card's figure when the provider reported its own (reconciliation)
      priced_micro_usd INTEGER,
      cost_source TEXT NOT NULL,
      card_id TEXT, card_source TEXT, card_version TEXT, card_fetched_at TEXT,
      premiums TEXT NOT NULL,
      day TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX ledger_receipts_by_thread ON ledger_receipts(thread_id);
    CREATE INDEX ledger_receipts_by_run ON ledger_receipts(run_id);
    CREATE INDEX ledger_receipts_by_day ON ledger_receipts(day);
    CREATE TABLE ledger_transactions (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL,
      amount_micro_usd INTEGER NOT NULL,
      balance_after_micro_usd INTEGER NOT NULL,
      model TEXT,
      response_id TEXT,
      note TEXT,
      created_at INTEGER NOT NULL
    );
    CREATE TABLE ledger_balance (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      balance_micro_usd INTEGER NOT NULL,
      granted INTEGER NOT NULL
    );
    INSERT INTO ledger_balance (id, balance_micro_usd, granted) VALUES (1, 0, 0);
    CREATE TABLE ledger_daily (
      day TEXT NOT NULL, model TEXT NOT NULL,
      responses INTEGER NOT NULL, tokens INTEGER NOT NULL, cost_micro_usd INTEGER NOT NULL, unpriced INTEGER NOT NULL,
      PRIMARY KEY (day, model)
    );
    CREATE TABLE ledger_caps (
      scope TEXT NOT NULL,
      -- the thread of a thread cap; '' for the daily and run caps
      thread_id TEXT NOT NULL,
      cap_micro_usd INTEGER NOT NULL,
      action TEXT NOT NULL,
      PRIMARY KEY (scope, thread_id)
    );
    CREATE TABLE ledger_prices (model TEXT PRIMARY KEY, rates TEXT NOT NULL, set_at INTEGER NOT NULL);
    CREATE TABLE ledger_observed (model TEXT PRIMARY KEY, tokens INTEGER NOT NULL, cost_micro_usd INTEGER NOT NULL);
  `);
}

/** The local date of `time` (ms), `YYYY-MM-DD`: what "today" means to the person at the machine. */
export function localDay(time: number): string {
  const d = new Date(time);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function balanceOf(db: SqlDatabase): number {
  return (db.prepare('SELECT balance_micro_usd AS b FROM ledger_balance WHERE id = 1').get() as { b: number }).b;
}

function projectUsage(db: SqlDatabase, e: EventOf<'ledger.usageRecorded'>, time: number): void {
  const t = e.tokens;
  const day = localDay(time);
  db.prepare(
    `INSERT INTO ledger_receipts (response_id, thread_id, run_id, model, input, cache_read, cache_write_5m, cache_write_1h, output, reasoning,
       cost_micro_usd, priced_micro_usd, cost_source, card_id, card_source, card_version, card_fetched_at, premiums, day, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(e.responseId, e.thread, e.run, e.model, t.input, t.cacheRead, t.cacheWrite5m, t.cacheWrite1h, t.output, t.reasoning,
    e.costMicroUsd, e.pricedMicroUsd, e.costSource, e.card?.id ?? null, e.card?.source ?? null, e.card?.version ?? null, e.card?.fetchedAt ?? null,
    JSON.stringify(e.premiums), day, time);
  const tokens = t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h + t.output;
  const cost = e.costMicroUsd ?? 0;
  db.prepare(
    `INSERT INTO ledger_daily (day, model, responses, tokens, cost_micro_usd, unpriced) VALUES (?, ?, 1, ?, ?, ?)
     ON CONFLICT(day, model) DO UPDATE SET responses = responses + 1, tokens = tokens + excluded.tokens,
       cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd, unpriced = unpriced + excluded.unpriced`,
  ).run(day, e.model, tokens, e.costSource === 'imported' ? 0 : cost, e.costMicroUsd === null ? 1 : 0);
  if (e.costMicroUsd === null || e.costSource === 'imported') return;
  db.prepare('UPDATE ledger_balance SET balance_micro_usd = balance_micro_usd - ? WHERE id = 1').run(cost);
  db.prepare('INSERT INTO ledger_transactions (kind, amount_micro_usd, balance_after_micro_usd, model, response_id, note, created_at) VALUES (?, ?, ?, ?, ?, NULL, ?)')
    .run('usage', -cost, balanceOf(db), e.model, e.responseId, time);
  db.prepare(
    `INSERT INTO ledger_observed (model, tokens, cost_micro_usd) VALUES (?, ?, ?)
     ON CONFLICT(model) DO UPDATE SET tokens = tokens + excluded.tokens, cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd`,
  ).run(e.model, tokens, cost);
}

const LEDGER_PROJECTORS = {
  'ledger.usageRecorded': projectUsage,
  'ledger.granted'(db: SqlDatabase, e: EventOf<'ledger.granted'>, time: number): void {
    db.prepare('UPDATE ledger_balance SET balance_micro_usd = balance_micro_usd + ?, granted = 1 WHERE id = 1').run(e.amountMicroUsd);
    db.prepare('INSERT INTO ledger_transactions (kind, amount_micro_usd, balance_after_micro_usd, model, response_id, note, created_at) VALUES (?, ?, ?, NULL, NULL, ?, ?)')
      .run(e.kind, e.amountMicroUsd, balanceOf(db), e.note, time);
  },
  'ledger.capSet'(db: SqlDatabase, e: EventOf<'ledger.capSet'>): void {
    const thread = e.scope === 'thread' ? e.thread ?? '' : '';
    if (e.capMicroUsd === null) db.prepare('DELETE FROM ledger_caps WHERE scope = ? AND thread_id = ?').run(e.scope, thread);
    else {
      db.prepare('INSERT INTO ledger_caps (scope, thread_id, cap_micro_usd, action) VALUES (?, ?, ?, ?) ON CONFLICT(scope, thread_id) DO UPDATE SET cap_micro_usd = excluded.cap_micro_usd, action = excluded.action')
        .run(e.scope, thread, e.capMicroUsd, e.action);
    }
  },
  'ledger.priceSet'(db: SqlDatabase, e: EventOf<'ledger.priceSet'>, time: number): void {
    if (e.rates === null) db.prepare('DELETE FROM ledger_prices WHERE model = ?').run(e.model);
    else db.prepare('INSERT INTO ledger_prices (model, rates, set_at) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET rates = excluded.rates, set_at = excluded.set_at').run(e.model, JSON.stringify(e.rates), time);
  },
};

/** The ledger module's part of the store: migration 16 and the projections above. */
export const LEDGER_SCHEMA: StoreSchema = {
  module: 'ledger',
  redactable: [{ table: 'ledger_transactions', columns: ['note'] }],
  migrations: [{ version: LEDGER_MIGRATION_VERSION, description: 'the cost ledger (SPEC 3.4): receipts, transactions, balance, daily summary, caps, user prices, observed cost', up: createLedgerTables }],
  projectors: LEDGER_PROJECTORS,
};
