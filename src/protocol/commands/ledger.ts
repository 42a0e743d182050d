/**
 * Cost ledger commands (SPEC 3.4; engine: src/engine/ledger/). Money is integer micro-dollars in
 * fields named `…MicroUsd`; prices are dollars per million tokens as users write them.
 *   getUsage     balance, today, totals per model / thread / day, the newest transactions, the caps
 *   grantBalance add money (purchase, subscription, bonus, refund): from then on the balance is enforced
 *   setBudget    a daily, per-thread or per-run cap with its action (`warn` or `block`); null removes it
 *   setPrice     the user's price for a model (wins over the bundled card); `getPrice` shows the card used
 */
import { arrayOf, bool, int, nullable, num, object, optional, refine, str, type Infer } from '../wire/validators';
import { capAction, capScope, grantKind, ledgerTokens, picoRates, priceCardRef, transactionKind } from '../ledger';
import { name } from './common';
import { defineCommand } from './define';

/** The longest grant note kept. */
export const MAX_GRANT_NOTE_CHARS = 200;
/** A day, `YYYY-MM-DD`. */
export const day = refine(str, (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)), 'a date YYYY-MM-DD');
const positiveMicro = refine(int, (n) => n > 0, 'a positive whole number of micro-dollars');
const price = refine(num, (n) => n >= 0 && n < 1e6, 'zero or more dollars per million tokens, under a million');

const usageLine = { responses: int, costMicroUsd: int, unpricedResponses: int, tokens: ledgerTokens };
export const usageReport = object({
  balanceMicroUsd: int,
  /** True once a grant was made: calls the balance cannot cover are refused. */
  balanceEnforced: bool,
  todayMicroUsd: int,
  totalMicroUsd: int,
  byModel: arrayOf(object({ model: str, ...usageLine })),
  byThread: arrayOf(object({ threadId: str, ...usageLine })),
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
