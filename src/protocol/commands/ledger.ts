/**
 * Cost ledger commands (SPEC 3.4; engine: src/engine/ledger/). Money is integer micro-dollars in
 * fields named `…MicroUsd`; prices are dollars per million tokens as users write them.
 *   getUsage     balance, today, totals per model / thread / thread family / day, the newest transactions, the caps
 *   getThreadCosts  a thread's total and each of its runs' cost (the chat shows it under each answer)
 *   grantBalance add money (purchase, subscription, bonus, refund): from then on the balance is enforced
 *   setBudget    a daily, per-thread or per-run cap with its action (`warn` or `block`); null removes it
 *   setPrice     the user's price for a model (wins over the bundled card); `getPrice` shows the card used
 */
import { arrayOf, bool, int, nullable, num, object, optional, refine, str, type Infer } from '../wire/validators';
import { capAction, capScope, costSource, grantKind, ledgerTokens, picoRates, priceCardRef, transactionKind } from '../ledger';
import { name } from './common';
import { defineCommand } from './define';

/** The longest grant note kept. */
export const MAX_GRANT_NOTE_CHARS = 200;
/** A day, `YYYY-MM-DD`. */
export const day = refine(str, (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)), 'a date YYYY-MM-DD');
const positiveMicro = refine(int, (n) => n > 0, 'a positive whole number of micro-dollars');
const price = refine(num, (n) => n >= 0 && n < 1e6, 'zero or more dollars per million tokens, under a million');

const usageLine = {
  responses: int, costMicroUsd: int, unpricedResponses: int, tokens: ledgerTokens,
  /** Reconciliation: what the provider itself reported it charged (its responses only), and what the price card says for those same responses. */
  providerReportedMicroUsd: int, pricedForReportedMicroUsd: int,
};
/** Where a cost figure came from and the card it was priced by (a run may have several responses). */
const runCost = object({
  runId: str, responses: int, costMicroUsd: int, unpricedResponses: int, tokens: ledgerTokens,
  models: arrayOf(str), sources: arrayOf(costSource), cards: arrayOf(priceCardRef), premiums: arrayOf(str),
});
export type RunCostView = Infer<typeof runCost>;
export const threadCosts = object({
  threadId: str, costMicroUsd: int, unpricedResponses: int, responses: int,
  /** Oldest run first; only runs that made a priced or unpriced provider call. */
  runs: arrayOf(runCost),
});
export type ThreadCostsView = Infer<typeof threadCosts>;
export const usageReport = object({
  balanceMicroUsd: int,
  /** True once a grant was made: calls the balance cannot cover are refused. */
  balanceEnforced: bool,
  todayMicroUsd: int,
  totalMicroUsd: int,
  byModel: arrayOf(object({ model: str, ...usageLine })),
  /** Per thread (deleted threads kept: what was spent stays spent), with its title and parent thread (a variant's group, a sub-agent's caller). */
  byThread: arrayOf(object({ threadId: str, title: nullable(str), parentThreadId: nullable(str), deleted: bool, ...usageLine })),
  /** Per thread family: a thread with its child threads (variants of a group, sub-agents) summed under the parent. */
  byFamily: arrayOf(object({ threadId: str, title: nullable(str), threads: int, ...usageLine })),
  daily: arrayOf(object({ day: str, costMicroUsd: int, responses: int })),
  transactions: arrayOf(object({
    id: int, kind: transactionKind, amountMicroUsd: int, balanceAfterMicroUsd: int,
    model: nullable(str), responseId: nullable(str), note: nullable(str), createdAt: int,
  })),
  caps: arrayOf(object({ scope: capScope, threadId: nullable(str), capMicroUsd: int, action: capAction })),
});
export type UsageReport = Infer<typeof usageReport>;

export const priceView = object({
  model: str,
  card: nullable(priceCardRef),
  /** Dollars per million tokens by class (null when no card prices the model). */
  perMillionUsd: nullable(object({ input: num, output: num, cacheRead: num, cacheWrite5m: num, cacheWrite1h: num })),
  rates: nullable(picoRates),
  /** The long-context tier, when the card has one. */
  tierAboveTokens: nullable(int),
});
export type PriceView = Infer<typeof priceView>;

export const ledgerCommands = {
  getUsage: defineCommand('getUsage', {
    readOnly: true,
    summary: 'The cost ledger: balance, today\'s spend, spend per model, thread and day, the newest transactions and the caps.',
    requires: ['read'],
    params: { since: optional(day), threadId: optional(name) },
    result: usageReport,
  }),
  getThreadCosts: defineCommand('getThreadCosts', {
    readOnly: true,
    summary: 'What one thread spent: its total and each run\'s cost with its tokens by class, models, cost sources and price cards.',
    requires: ['read'],
    params: { threadId: name },
    result: threadCosts,
  }),
  grantBalance: defineCommand('grantBalance', {
    summary: 'Adds money to the balance (a purchase, subscription, bonus or refund); from then on a call the balance cannot cover is refused before it is sent.',
    requires: ['owner'],
    params: { kind: grantKind, amountMicroUsd: positiveMicro, note: optional(nullable(str)) },
    result: object({ balanceMicroUsd: int }),
  }),
  setBudget: defineCommand('setBudget', {
    summary: 'Sets or removes (capMicroUsd null) a daily, per-thread or per-run spending cap; `block` refuses a call that would pass it, `warn` tells at 50/75/90/100 %.',
    requires: ['owner'],
    params: { scope: capScope, threadId: optional(name), capMicroUsd: nullable(positiveMicro), action: optional(capAction) },
    result: object({ caps: usageReport.shape.caps }),
  }),
  setPrice: defineCommand('setPrice', {
    summary: 'Sets (or removes, with input null) your price for a model in dollars per million tokens; it wins over the bundled price card.',
    requires: ['owner'],
    params: {
      model: name, input: nullable(price), output: optional(price),
      cacheRead: optional(price), cacheWrite: optional(price), cacheWrite1h: optional(price),
    },
    result: priceView,
  }),
  getPrice: defineCommand('getPrice', {
    readOnly: true,
    summary: 'The price card that prices a model (yours, else the bundled one), its source and rates; null card: unpriced.',
    requires: ['read'],
    params: { model: name },
    result: priceView,
  }),
};
