/**
 * What each turn of the open thread cost, and the thread's total (`getThreadCosts`, the engine's
 * ledger: src/engine/ledger/reads.ts). `ThreadCostRequests` asks for them — when a thread opens,
 * a new engine session comes, or runs end — with at most one request in flight: triggers in one
 * task are folded into one request (`schedule`), and triggers while a request waits make one
 * follow-up when its answer comes, so a replay of any number of ended runs asks once. The labels
 * and hover texts the views show are pure functions of the answer. Plain TypeScript (Node tests).
 *
 * Money is integer micro-dollars, shown exactly (`formatMicroUsd`). A run with no receipt (a
 * local model's, which costs nothing and is never recorded) is not in the answer: it shows nothing.
 */
import type { CostSource, LedgerTokensView, PriceCardRef } from '../../../src/protocol/ledger';
import { formatMicroUsd } from '../../../src/protocol/ledger';
import type { RunCostView, ThreadCostsView } from '../../../src/protocol/commands/ledger';

export type { RunCostView, ThreadCostsView };

/** The open thread's costs as the views read them: the answer, its runs by id. */
export interface ThreadCosts {
  threadId: string;
  costMicroUsd: number;
  unpricedResponses: number;
  responses: number;
  byRun: Record<string, RunCostView>;
}

/** The part of the app model this module keeps (../app-model.ts). */
export interface CostsHolder {
  costs?: ThreadCosts | null;
  thread: { threadId: string } | null;
}

export function threadCostsFrom(view: ThreadCostsView): ThreadCosts {
  const byRun: Record<string, RunCostView> = {};
  for (const r of view.runs) byRun[r.runId] = r;
  return { threadId: view.threadId, costMicroUsd: view.costMicroUsd, unpricedResponses: view.unpricedResponses, responses: view.responses, byRun };
}

/** The open thread's costs, if they were read for it (not a thread left meanwhile). */
export function openThreadCosts(model: CostsHolder): ThreadCosts | null {
  const c = model.costs;
  return c && model.thread && c.threadId === model.thread.threadId ? c : null;
}

/** The receipt of `runId` in the open thread, if it has one. */
export function runCostOf(model: CostsHolder, runId: string): RunCostView | null {
  return openThreadCosts(model)?.byRun[runId] ?? null;
}

// ---- labels -----------------------------------------------------------------------------------

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** 12345 → "12,345" (the same in every locale: the text is tested). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `$0.001200`; `cost unknown` when no response was priced; `$0.000300 + 1 unpriced` when some were not. */
export function runCostLabel(run: RunCostView): string {
  if (run.responses > 0 && run.unpricedResponses >= run.responses) return 'cost unknown';
  const money = formatMicroUsd(run.costMicroUsd);
  return run.unpricedResponses > 0 ? `${money} + ${run.unpricedResponses} unpriced` : money;
}

/** A cost source in words. */
export const SOURCE_WORDS: Record<CostSource, string> = {
  providerReported: 'reported by the provider',
  priced: 'priced by card',
  estimated: 'estimated (no usage from the provider)',
  unpriced: 'no price card',
  imported: 'imported (never charged)',
};

/** The token classes, in the order shown (`reasoning` is part of `output`). */
const TOKEN_CLASSES: ReadonlyArray<[Exclude<keyof LedgerTokensView, 'reasoning'>, string]> = [
  ['input', 'uncached input'],
  ['cacheRead', 'cache read'],
  ['cacheWrite5m', 'cache write 5 min'],
  ['cacheWrite1h', 'cache write 1 h'],
  ['output', 'output'],
];

export function tokenLines(t: LedgerTokensView): string[] {
  return TOKEN_CLASSES.map(([k, words]) => `${words}: ${formatCount(t[k])}${k === 'output' && t.reasoning > 0 ? `, of which reasoning ${formatCount(t.reasoning)}` : ''}`);
}

const cardText = (c: PriceCardRef): string => `${c.id} (${c.source}${c.version ? `, version ${c.version}` : ''})`;

/** The hover text of a run's cost: lines of what it spent, on which tokens, models, cards and sources. */
export function runCostDetail(run: RunCostView): string {
  const lines = [`${runCostLabel(run)} for ${plural(run.responses, 'response')}${run.unpricedResponses > 0 && run.unpricedResponses < run.responses ? ` (${run.unpricedResponses} with no price)` : ''}`];
  lines.push('Tokens:', ...tokenLines(run.tokens).map((l) => `  ${l}`));
  lines.push(`${run.models.length === 1 ? 'Model' : 'Models'}: ${run.models.join(', ') || 'none'}`);
  lines.push(`${run.cards.length > 1 ? 'Price cards' : 'Price card'}: ${run.cards.length > 0 ? run.cards.map(cardText).join('; ') : 'none'}`);
  if (run.premiums.length > 0) lines.push(`Premiums: ${run.premiums.join(', ')}`);
  lines.push(`Source: ${run.sources.map((s) => SOURCE_WORDS[s]).join('; ') || SOURCE_WORDS.unpriced}`);
  return lines.join('\n');
}

/** The header's total; null when the thread spent nothing (no response, or only $0 priced ones). */
export function threadCostLabel(c: ThreadCosts): string | null {
  if (c.responses === 0 || (c.costMicroUsd === 0 && c.unpricedResponses === 0)) return null;
  if (c.unpricedResponses >= c.responses) return 'cost unknown';
  const money = formatMicroUsd(c.costMicroUsd);
  return c.unpricedResponses > 0 ? `${money} + ${c.unpricedResponses} unpriced` : money;
}

export function threadCostTitle(c: ThreadCosts): string {
  const spent = c.unpricedResponses >= c.responses ? 'an unknown amount' : formatMicroUsd(c.costMicroUsd);
  const unpriced = c.unpricedResponses > 0 ? ` (${plural(c.unpricedResponses, 'response')} with no price card, not counted)` : '';
  return `This thread has spent ${spent}, ${plural(c.responses, 'response')}${unpriced}`;
}

// ---- requests ---------------------------------------------------------------------------------

export interface CostRequestDeps {
  model: CostsHolder;
  /** Sends `getThreadCosts` for `threadId`; returns its request id. */
  send(threadId: string): string;
  /** Runs `fn` once the current task is done (a microtask in the app; by hand in tests). */
  schedule(fn: () => void): void;
}

export class ThreadCostRequests {
  /** The request waiting for its answer, and the thread it asked about. */
  private inFlight: { requestId: string; threadId: string } | null = null;
  /** A trigger came while a request waited: ask again when it is answered. */
  private again = false;
  private scheduled = false;

  constructor(private readonly deps: CostRequestDeps) {}

  /** The open thread's costs may have changed (it opened, a run ended): ask, folded with the other triggers. */
  refresh(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.deps.schedule(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Another thread opened (or none): a wait for the old one's answer holds nothing back. */
  threadChanged(): void {
    const open = this.deps.model.thread?.threadId ?? null;
    if (this.deps.model.costs && this.deps.model.costs.threadId !== open) this.deps.model.costs = null;
    this.inFlight = null;
    this.again = false;
    if (open !== null) this.refresh();
  }

  /** A new engine session: an answer the old one owed never comes. */
  reconnected(): void {
    this.inFlight = null;
    this.again = false;
    this.refresh();
  }

  /** Any answer (result or error): the one in flight, if it is, is over. */
  settled(requestId: string | undefined): void {
    if (!this.inFlight || requestId !== this.inFlight.requestId) return;
    this.inFlight = null;
    if (this.again) {
      this.again = false;
      this.refresh();
    }
  }

  /** The answer: kept when it is the open thread's. */
  onResult(value: ThreadCostsView): void {
    if (this.deps.model.thread?.threadId !== value.threadId) return; // a thread left meanwhile
    this.deps.model.costs = threadCostsFrom(value);
  }

  private flush(): void {
    const threadId = this.deps.model.thread?.threadId;
    if (threadId === undefined) return;
    if (this.inFlight?.threadId === threadId) {
      this.again = true;
      return;
    }
    this.inFlight = { requestId: this.deps.send(threadId), threadId };
  }
}
