/**
 * The ledger's writes (./schema.ts's tables). `recordReceipt` is SPEC 3.4's post-stream write:
 * the receipt, the usage transaction with the balance after it, the balance, the day's summary and
 * the model's observed cost — one IMMEDIATE transaction, so two processes on one database never
 * lose an update, and a response id already recorded (a repeated report of one response) records
 * nothing. Grants, caps and user prices are one transaction each.
 */
import type { CapAction, CapScope, CostSource, GrantKind, LedgerTokensView, PicoRates, PriceCardRef } from '../../protocol/ledger';
import type { SqlDatabase } from '../store/driver';
import type { VoxStore } from '../store/store';
import { localDay } from './schema';

export interface Receipt {
  threadId: string;
  runId: string;
  responseId: string;
  model: string;
  tokens: LedgerTokensView;
  /** Null when unpriced. */
  costMicroUsd: number | null;
  costSource: CostSource;
  card: PriceCardRef | null;
  premiums: string[];
  /** The card's figure when the provider reported its own. */
  pricedMicroUsd: number | null;
}

function balanceOf(db: SqlDatabase): number {
  return (db.prepare('SELECT balance_micro_usd AS b FROM ledger_balance WHERE id = 1').get() as { b: number }).b;
}

/** Records `r` unless its run has a receipt of its response id already; true when it was recorded. */
export function recordReceipt(store: VoxStore, r: Receipt, time = Date.now()): boolean {
  return store.transact(() => {
    const db = store.db;
    if (db.prepare('SELECT 1 FROM ledger_receipts WHERE run_id = ? AND response_id = ?').get(r.runId, r.responseId)) return false;
    const t = r.tokens;
    const day = localDay(time);
    db.prepare(
      `INSERT INTO ledger_receipts (response_id, thread_id, run_id, model, input, cache_read, cache_write_5m, cache_write_1h, output, reasoning,
         cost_micro_usd, priced_micro_usd, cost_source, card_id, card_source, card_version, card_fetched_at, premiums, day, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(r.responseId, r.threadId, r.runId, r.model, t.input, t.cacheRead, t.cacheWrite5m, t.cacheWrite1h, t.output, t.reasoning,
      r.costMicroUsd, r.pricedMicroUsd, r.costSource, r.card?.id ?? null, r.card?.source ?? null, r.card?.version ?? null, r.card?.fetchedAt ?? null,
      JSON.stringify(r.premiums), day, time);
    const tokens = t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h + t.output;
    const charged = r.costMicroUsd !== null && r.costSource !== 'imported';
    db.prepare(
      `INSERT INTO ledger_daily (day, model, responses, tokens, cost_micro_usd, unpriced) VALUES (?, ?, 1, ?, ?, ?)
       ON CONFLICT(day, model) DO UPDATE SET responses = responses + 1, tokens = tokens + excluded.tokens,
         cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd, unpriced = unpriced + excluded.unpriced`,
    ).run(day, r.model, tokens, charged ? r.costMicroUsd : 0, r.costMicroUsd === null ? 1 : 0);
    if (!charged) return true;
    const cost = r.costMicroUsd!;
    db.prepare('UPDATE ledger_balance SET balance_micro_usd = balance_micro_usd - ? WHERE id = 1').run(cost);
    db.prepare('INSERT INTO ledger_transactions (kind, amount_micro_usd, balance_after_micro_usd, model, response_id, note, created_at) VALUES (?, ?, ?, ?, ?, NULL, ?)')
      .run('usage', -cost, balanceOf(db), r.model, r.responseId, time);
    db.prepare(
      `INSERT INTO ledger_observed (model, tokens, cost_micro_usd) VALUES (?, ?, ?)
       ON CONFLICT(model) DO UPDATE SET tokens = tokens + excluded.tokens, cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd`,
    ).run(r.model, tokens, cost);
    return true;
  });
}

/** Adds a grant to the balance (from then on the balance is enforced); the balance after it. */
export function grant(store: VoxStore, g: { kind: GrantKind; amountMicroUsd: number; note: string | null }, time = Date.now()): number {
  return store.transact(() => {
    const db = store.db;
    db.prepare('UPDATE ledger_balance SET balance_micro_usd = balance_micro_usd + ?, granted = 1 WHERE id = 1').run(g.amountMicroUsd);
    const after = balanceOf(db);
    db.prepare('INSERT INTO ledger_transactions (kind, amount_micro_usd, balance_after_micro_usd, model, response_id, note, created_at) VALUES (?, ?, ?, NULL, NULL, ?, ?)')
      .run(g.kind, g.amountMicroUsd, after, g.note, time);
    return after;
  });
}

/** Sets (or, with `capMicroUsd` null, removes) the cap of a scope; a thread cap names its thread. */
export function setCap(store: VoxStore, c: { scope: CapScope; threadId: string | null; capMicroUsd: number | null; action: CapAction }): void {
  const thread = c.scope === 'thread' ? c.threadId ?? '' : '';
  store.transact(() => {
    if (c.capMicroUsd === null) store.db.prepare('DELETE FROM ledger_caps WHERE scope = ? AND thread_id = ?').run(c.scope, thread);
    else {
      store.db.prepare('INSERT INTO ledger_caps (scope, thread_id, cap_micro_usd, action) VALUES (?, ?, ?, ?) ON CONFLICT(scope, thread_id) DO UPDATE SET cap_micro_usd = excluded.cap_micro_usd, action = excluded.action')
        .run(c.scope, thread, c.capMicroUsd, c.action);
    }
  });
}

/** Sets (or, with `rates` null, removes) the user's price card for `model`. */
export function setUserPrice(store: VoxStore, model: string, rates: PicoRates | null, time = Date.now()): void {
  store.transact(() => {
    if (rates === null) store.db.prepare('DELETE FROM ledger_prices WHERE model = ?').run(model);
    else store.db.prepare('INSERT INTO ledger_prices (model, rates, set_at) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET rates = excluded.rates, set_at = excluded.set_at').run(model, JSON.stringify(rates), time);
  });
}
