/** Reads of the ledger's tables (./schema.ts): the balance, what a scope spent, the caps, and the usage report. */
import type { CapAction, CapScope, CostSource, PriceCardRef } from '../../protocol/ledger';
import type { RunCostView, ThreadCostsView, UsageReport } from '../../protocol/commands/ledger';
import type { SqlDatabase } from '../store/driver';
import { localDay } from './schema';

/** Most transactions a usage report lists (newest first). */
export const USAGE_REPORT_TRANSACTIONS = 100;

export interface Balance { balanceMicroUsd: number; enforced: boolean }

export function balance(db: SqlDatabase): Balance {
  const row = db.prepare('SELECT balance_micro_usd AS b, granted AS g FROM ledger_balance WHERE id = 1').get() as { b: number; g: number };
  return { balanceMicroUsd: row.b, enforced: row.g === 1 };
}

export interface Cap { scope: CapScope; threadId: string | null; capMicroUsd: number; action: CapAction }

export function caps(db: SqlDatabase): Cap[] {
  const rows = db.prepare('SELECT scope, thread_id AS threadId, cap_micro_usd AS capMicroUsd, action FROM ledger_caps ORDER BY scope, thread_id').all() as Cap[];
  return rows.map((c) => ({ ...c, threadId: c.threadId === '' ? null : c.threadId }));
}

/** What has been charged today (local date), for a thread, or for a run. */
export function spent(db: SqlDatabase, scope: CapScope, id: string | null, now = Date.now()): number {
  const [where, arg] = scope === 'daily' ? ['day = ?', localDay(now)] : scope === 'thread' ? ['thread_id = ?', id] : ['run_id = ?', id];
  const row = db.prepare(`SELECT COALESCE(SUM(cost_micro_usd), 0) AS s FROM ledger_receipts WHERE ${where} AND cost_source != 'imported'`).get(arg) as { s: number };
  return row.s;
}

const TOKEN_SUMS = `SUM(input) AS input, SUM(cache_read) AS cacheRead, SUM(cache_write_5m) AS cacheWrite5m, SUM(cache_write_1h) AS cacheWrite1h, SUM(output) AS output, SUM(reasoning) AS reasoning`;
/** A group's sums: cost, unpriced responses, tokens by class and the reconciliation pair. */
const LINE_SUMS = `COUNT(*) AS responses, COALESCE(SUM(cost_micro_usd), 0) AS costMicroUsd, SUM(cost_micro_usd IS NULL) AS unpriced,
  COALESCE(SUM(CASE WHEN cost_source = 'providerReported' THEN cost_micro_usd END), 0) AS reported,
  COALESCE(SUM(CASE WHEN cost_source = 'providerReported' THEN priced_micro_usd END), 0) AS pricedForReported, ${TOKEN_SUMS}`;

interface LineRow { key: string; responses: number; costMicroUsd: number; unpriced: number; reported: number; pricedForReported: number; input: number; cacheRead: number; cacheWrite5m: number; cacheWrite1h: number; output: number; reasoning: number }

const tokensOf = (r: LineRow) => ({ input: r.input, cacheRead: r.cacheRead, cacheWrite5m: r.cacheWrite5m, cacheWrite1h: r.cacheWrite1h, output: r.output, reasoning: r.reasoning });
const lineOf = (r: LineRow) => ({
  responses: r.responses, costMicroUsd: r.costMicroUsd, unpricedResponses: r.unpriced, tokens: tokensOf(r),
  providerReportedMicroUsd: r.reported, pricedForReportedMicroUsd: r.pricedForReported,
});

/** The usage report (`getUsage`): balance, today, per model, thread, family and day, and the transactions, since a day and for a thread when asked. */
export function usageReport(db: SqlDatabase, opts: { since?: string; threadId?: string }, now = Date.now()): UsageReport {
  const b = balance(db);
  const conds: string[] = ["r.cost_source != 'imported'"];
  const args: string[] = [];
  if (opts.since) {
    conds.push('r.day >= ?');
    args.push(opts.since);
  }
  if (opts.threadId) {
    conds.push('r.thread_id = ?');
    args.push(opts.threadId);
  }
  const where = conds.join(' AND ');
  const group = (col: string, extra = '') => db.prepare(
    `SELECT ${col} AS key${extra}, ${LINE_SUMS} FROM ledger_receipts r LEFT JOIN threads t ON t.id = r.thread_id LEFT JOIN threads p ON p.id = t.parent_thread_id
     WHERE ${where} GROUP BY ${col} ORDER BY costMicroUsd DESC, key`,
  ).all(...args) as Array<LineRow & { title?: string | null; parentThreadId?: string | null; deleted?: number | null; threads?: number }>;
  const transactions = db.prepare(
    `SELECT id, kind, amount_micro_usd AS amountMicroUsd, balance_after_micro_usd AS balanceAfterMicroUsd, model, response_id AS responseId, note, created_at AS createdAt
     FROM ledger_transactions ORDER BY id DESC LIMIT ?`,
  ).all(USAGE_REPORT_TRANSACTIONS) as UsageReport['transactions'];
  const daily = db.prepare(
    `SELECT r.day AS day, COALESCE(SUM(r.cost_micro_usd), 0) AS costMicroUsd, COUNT(*) AS responses FROM ledger_receipts r WHERE ${where} GROUP BY r.day ORDER BY r.day`,
  ).all(...args) as UsageReport['daily'];
  return {
    balanceMicroUsd: b.balanceMicroUsd,
    balanceEnforced: b.enforced,
    todayMicroUsd: spent(db, 'daily', null, now),
    totalMicroUsd: daily.reduce((s, d) => s + d.costMicroUsd, 0),
    byModel: group('r.model').map((r) => ({ model: r.key, ...lineOf(r) })),
    byThread: group('r.thread_id', ', t.title AS title, t.parent_thread_id AS parentThreadId, t.deleted AS deleted').map((r) => ({
      threadId: r.key, title: r.title ?? null, parentThreadId: r.parentThreadId ?? null, deleted: r.deleted === 1, ...lineOf(r),
    })),
    byFamily: group('COALESCE(t.parent_thread_id, r.thread_id)', ', COALESCE(p.title, t.title) AS title, COUNT(DISTINCT r.thread_id) AS threads').map((r) => ({
      threadId: r.key, title: r.title ?? null, threads: r.threads ?? 1, ...lineOf(r),
    })),
    daily,
    transactions,
    caps: caps(db),
  };
}

/** What one thread spent, run by run (`getThreadCosts`), oldest run first. */
export function threadCosts(db: SqlDatabase, threadId: string): ThreadCostsView {
  const rows = db.prepare(
    `SELECT run_id AS runId, model, cost_micro_usd AS cost, cost_source AS source, card_id AS cardId, card_source AS cardSource, card_version AS cardVersion,
       card_fetched_at AS cardFetchedAt, premiums, input, cache_read AS cacheRead, cache_write_5m AS cacheWrite5m, cache_write_1h AS cacheWrite1h, output, reasoning
     FROM ledger_receipts WHERE thread_id = ? AND cost_source != 'imported' ORDER BY created_at, rowid`,
  ).all(threadId) as Array<{ runId: string; model: string; cost: number | null; source: CostSource; cardId: string | null; cardSource: PriceCardRef['source'] | null; cardVersion: string | null; cardFetchedAt: string | null; premiums: string; input: number; cacheRead: number; cacheWrite5m: number; cacheWrite1h: number; output: number; reasoning: number }>;
  const runs = new Map<string, RunCostView>();
  for (const r of rows) {
    let run = runs.get(r.runId);
    if (!run) {
      run = { runId: r.runId, responses: 0, costMicroUsd: 0, unpricedResponses: 0, tokens: { input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0, reasoning: 0 }, models: [], sources: [], cards: [], premiums: [] };
      runs.set(r.runId, run);
    }
    run.responses += 1;
    if (r.cost === null) run.unpricedResponses += 1;
    else run.costMicroUsd += r.cost;
    for (const k of ['input', 'cacheRead', 'cacheWrite5m', 'cacheWrite1h', 'output', 'reasoning'] as const) run.tokens[k] += r[k];
    if (!run.models.includes(r.model)) run.models.push(r.model);
    if (!run.sources.includes(r.source)) run.sources.push(r.source);
    if (r.cardId && !run.cards.some((c) => c.id === r.cardId && c.version === r.cardVersion)) {
      run.cards.push({ id: r.cardId, source: r.cardSource ?? 'bundled', version: r.cardVersion ?? '', fetchedAt: r.cardFetchedAt ?? '' });
    }
    for (const p of JSON.parse(r.premiums) as string[]) if (!run.premiums.includes(p)) run.premiums.push(p);
  }
  const list = [...runs.values()];
  return {
    threadId,
    costMicroUsd: list.reduce((s, r) => s + r.costMicroUsd, 0),
    unpricedResponses: list.reduce((s, r) => s + r.unpricedResponses, 0),
    responses: list.reduce((s, r) => s + r.responses, 0),
    runs: list,
  };
}
