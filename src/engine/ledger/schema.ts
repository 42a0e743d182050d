/**
 * The ledger's tables (SPEC 3.4; migration 16). They belong to the machine, not to a thread's
 * history: they are written directly (./writes.ts, each write one IMMEDIATE transaction), never
 * through thread events, so deleting, forking or exporting a thread never takes or copies what it
 * spent. Money columns are integer micro-dollars; a day is the machine's local date.
 *
 *   ledger_receipts      one per provider response id (within its run)
 *   ledger_transactions  grants (+) and charged usage (−), each with the balance after it
 *   ledger_balance       one row: the balance and whether a grant was ever made (then it is enforced)
 *   ledger_daily         per day and model: responses, tokens, cost, unpriced responses
 *   ledger_caps          a cap per scope (daily; thread; run) and its action
 *   ledger_prices        the user's price cards (win over the bundled snapshot)
 *   ledger_observed      per model: tokens and cost seen (the observed price per 1k tokens)
 */
import type { SqlDatabase } from '../store/driver';
import type { StoreSchema } from '../store/schema';

export const LEDGER_MIGRATION_VERSION = 16;
/** The tables migration 16 creates (tests that rebuild an older database drop them). */
export const LEDGER_TABLES = ['ledger_receipts', 'ledger_transactions', 'ledger_balance', 'ledger_daily', 'ledger_caps', 'ledger_prices', 'ledger_observed'] as const;

export function createLedgerTables(db: SqlDatabase): void {
  db.exec(`
    CREATE TABLE ledger_receipts (
      -- the provider's response id (or the run and step): one receipt per id within a run (ids of
      -- a local server's counter may repeat across runs; a repeated report of one response never does)
      response_id TEXT NOT NULL,
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
      created_at INTEGER NOT NULL,
      PRIMARY KEY (run_id, response_id)
    );
    CREATE INDEX ledger_receipts_by_thread ON ledger_receipts(thread_id);
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

/** The local date a receipt is filed under (protocol: shared with the clients that show the days). */
export { localDay } from '../../protocol/ledger';

/** The ledger module's part of the store: migration 16. */
export const LEDGER_SCHEMA: StoreSchema = {
  module: 'ledger',
  redactable: [{ table: 'ledger_transactions', columns: ['note'] }],
  migrations: [{ version: LEDGER_MIGRATION_VERSION, description: 'the cost ledger (SPEC 3.4): receipts, transactions, balance, daily summary, caps, user prices, observed cost', up: createLedgerTables }],
};
