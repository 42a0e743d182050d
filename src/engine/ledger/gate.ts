/**
 * The pre-flight gate (SPEC 3.4): before a paid call, what it could cost at most — the prompt's
 * real token count at the cache-cold input rate plus GATE_COMPLETION_TOKENS at the output rate —
 * is checked against the balance (once a grant made it enforced) and every `block` cap that
 * applies (today's spend, the thread's, the run's). A call that does not fit is refused with a
 * typed LedgerError before anything is sent; with no balance granted and no cap set nothing is
 * ever refused. A model no card prices cannot be checked: refused only when something is enforced.
 * Also the `warn` caps' thresholds, crossed by a response just recorded.
 */
import { microToBu, formatMicroUsd } from './money';
import { LedgerError } from './errors';
import { balance, caps, spent, type Cap } from './reads';
import type { PriceCard } from './prices';
import { priceTokens } from './prices';
import type { SqlDatabase } from '../store/driver';

/**
 * The completion a call is assumed to need at most: the turn's requests set no max tokens, so
 * the gate prices this many output tokens (a long answer or a large file written by a tool call).
 */
export const GATE_COMPLETION_TOKENS = 8_192;
/** The shares of a `warn` cap at which Vox tells the user (and at the cap itself). */
export const WARN_THRESHOLDS: readonly number[] = [0.5, 0.75, 0.9, 1];

export interface CallEstimate {
  /** Cache-cold: every prompt token at the input rate. */
  upperMicroUsd: number;
  /** Given the prompt the provider will have cached from the call before (read at the cache rate). */
  expectedMicroUsd: number;
}

/** What a call with `promptTokens` could cost by `card`; `cachedTokens`: the part the provider likely has cached. */
export function estimateCall(card: PriceCard, promptTokens: number, cachedTokens: number): CallEstimate {
  const zero = { input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: GATE_COMPLETION_TOKENS, reasoning: 0 };
  const cached = Math.min(cachedTokens, promptTokens);
  return {
    upperMicroUsd: priceTokens(card, { ...zero, input: promptTokens }).costMicroUsd,
    expectedMicroUsd: priceTokens(card, { ...zero, input: promptTokens - cached, cacheRead: cached }).costMicroUsd,
  };
}

function applies(c: Cap, threadId: string | null): boolean {
  return c.scope !== 'thread' || c.threadId === threadId;
}

function scopeLabel(c: Cap): string {
  return c.scope === 'daily' ? "today's cap" : c.scope === 'thread' ? "this thread's cap" : 'the per-run cap';
}

/** Refuses (a LedgerError) a call whose estimate the balance or a `block` cap cannot cover; `estimate` null: the model is unpriced. */
export function checkCall(db: SqlDatabase, call: { threadId: string; runId: string; model: string; estimate: CallEstimate | null }, now = Date.now()): void {
  checkCalls(db, { threadId: call.threadId, what: `this call to ${call.model}`, calls: [{ runId: call.runId, model: call.model, estimate: call.estimate }] }, now);
}

/**
 * Refuses calls that leave together — a variant fan-out's first calls — unless the balance and
 * the `block` caps cover all of them at once: their sum against the balance, today's cap and the
 * thread's, each against the per-run cap (each is its own run). `runId` null: a run not started yet.
 */
export function checkCalls(db: SqlDatabase, group: { threadId: string | null; what: string; calls: Array<{ runId: string | null; model: string; estimate: CallEstimate | null }> }, now = Date.now()): void {
  const b = balance(db);
  const blocking = caps(db).filter((c) => c.action === 'block' && (c.scope !== 'thread' || c.threadId === group.threadId));
  if (!b.enforced && blocking.length === 0) return;
  const unpriced = group.calls.find((c) => c.estimate === null);
  if (unpriced) {
    throw new LedgerError('unpricedModel', `No price card prices ${unpriced.model}, so Vox cannot check ${group.what} against your balance or caps; set its price with \`vox prices set\` (or remove the balance and caps).`);
  }
  const need = group.calls.reduce((sum, c) => sum + c.estimate!.upperMicroUsd, 0);
  if (b.enforced && b.balanceMicroUsd < need) {
    const remaining = Math.max(0, b.balanceMicroUsd);
    throw new LedgerError('insufficientBattery',
      `Insufficient battery: ${group.what} could cost up to ${formatMicroUsd(need)} (${microToBu(need)} BU) and the balance is ${formatMicroUsd(b.balanceMicroUsd)} (${microToBu(remaining)} BU); nothing was sent. Add to it with \`vox budget grant\`.`,
      { requiredBu: microToBu(need), remainingBu: microToBu(remaining) });
  }
  for (const c of blocking) {
    const perRun = c.scope === 'run';
    const checks = perRun ? group.calls.map((x) => ({ used: x.runId === null ? 0 : spent(db, 'run', x.runId, now), need: x.estimate!.upperMicroUsd })) : [{ used: spent(db, c.scope, group.threadId, now), need }];
    for (const { used, need: n } of checks) {
      if (used + n <= c.capMicroUsd) continue;
      const left = Math.max(0, c.capMicroUsd - used);
      throw new LedgerError('capReached',
        `${scopeLabel(c)[0]!.toUpperCase()}${scopeLabel(c).slice(1)} (${formatMicroUsd(c.capMicroUsd)}) would be passed: ${formatMicroUsd(used)} spent, and ${group.what} could cost up to ${formatMicroUsd(n)}; nothing was sent. Raise it with \`vox budget set\`.`,
        { requiredBu: microToBu(n), remainingBu: microToBu(left), scope: c.scope });
    }
  }
}

/** The warnings of `warn` caps whose thresholds the last `costMicroUsd` crossed. */
export function crossedWarnings(db: SqlDatabase, at: { threadId: string; runId: string; costMicroUsd: number }, now = Date.now()): string[] {
  const out: string[] = [];
  for (const c of caps(db).filter((x) => x.action === 'warn' && applies(x, at.threadId))) {
    const after = spent(db, c.scope, c.scope === 'run' ? at.runId : at.threadId, now);
    const before = after - at.costMicroUsd;
    const crossed = WARN_THRESHOLDS.filter((t) => before < t * c.capMicroUsd && after >= t * c.capMicroUsd).at(-1);
    if (crossed !== undefined) out.push(`${Math.round(crossed * 100)} % of ${scopeLabel(c)} (${formatMicroUsd(c.capMicroUsd)}) spent: ${formatMicroUsd(after)}.`);
  }
  return out;
}
