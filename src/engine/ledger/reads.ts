/** Reads of the ledger's tables (./schema.ts): the balance, what a scope spent, the caps, and the usage report. */
import type { CapAction, CapScope } from '../../protocol/ledger';
import type { UsageReport } from '../../protocol/commands/ledger';
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

/** The usage report (`getUsage`): balance, today, per model, per thread and the transactions, since a day and for a thread when asked. */
export function usageReport(db: SqlDatabase, opts: { since?: string; threadId?: string }, now = Date.now()): UsageReport {
  const b = balance(db);
  const conds: string[] = ["cost_source != 'imported'"];
  const args: string[] = [];
  if (opts.since) {
    conds.push('day >= ?');
    args.push(opts.since);
  }
  if (opts.threadId) {
    conds.push('thread_id = ?');
    args.push(opts.threadId);
  }
  const where = conds.join(' AND ');
  const group = (col: string) => db.prepare(
    `SELECT ${col} AS key, COUNT(*) AS responses, COALESCE(SUM(cost_micro_usd), 0) AS costMicroUsd, SUM(cost_micro_usd IS NULL) AS unpriced,
       SUM(input) AS input, SUM(cache_read) AS cacheRead, SUM(cache_write_5m) AS cacheWrite5m, SUM(cache_write_1h) AS cacheWrite1h, SUM(output) AS output, SUM(reasoning) AS reasoning
     FROM ledger_receipts WHERE ${where} GROUP BY ${col} ORDER BY costMicroUsd DESC, key`,
  ).all(...args) as Array<{ key: string; responses: number; costMicroUsd: number; unpriced: number; input: number; cacheRead: number; cacheWrite5m: number; cacheWrite1h: number; output: number; reasoning: number }>;
  const line = (r: ReturnType<typeof group>[number]) => ({
    responses: r.responses, costMicroUsd: r.costMicroUsd, unpricedResponses: r.unpriced,
    tokens: { input: r.input, cacheRead: r.cacheRead, cacheWrite5m: r.cacheWrite5m, cacheWrite1h: r.cacheWrite1h, output: r.output, reasoning: r.reasoning },
  });
  const transactions = db.prepare(
    `SELECT id, kind, amount_micro_usd AS amountMicroUsd, balance_after_micro_usd AS balanceAfterMicroUsd, model, response_id AS responseId, note, created_at AS createdAt
     FROM ledger_transactions ORDER BY id DESC LIMIT ?`,
  ).all(USAGE_REPORT_TRANSACTIONS) as UsageReport['transactions'];
  const daily = db.prepare(
    `SELECT day, COALESCE(SUM(cost_micro_usd), 0) AS costMicroUsd, COUNT(*) AS responses FROM ledger_receipts WHERE ${where} GROUP BY day ORDER BY day`,
  ).all(...args) as UsageReport['daily'];
  return {
    balanceMicroUsd: b.balanceMicroUsd,
    balanceEnforced: b.enforced,
    todayMicroUsd: spent(db, 'daily', null, now),
    totalMicroUsd: daily.reduce((s, d) => s + d.costMicroUsd, 0),
    byModel: group('model').map((r) => ({ model: r.key, ...line(r) })),
    byThread: group('thread_id').map((r) => ({ threadId: r.key, ...line(r) })),
    daily,
    transactions,
    caps: caps(db),
  };
}
