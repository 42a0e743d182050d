/**
 * The cost ledger's vocabulary (SPEC 3.4), shared by its events (./events.ts), its commands
 * (./commands/ledger.ts) and its clients: money is integer micro-dollars (1 µ$ = $0.000001; the
 * SPEC's Battery Unit, 1 BU = $0.001 = 1,000 µ$, is an input unit), a response's tokens by the
 * class they are priced in, where a cost figure came from, and the grants and caps a user sets.
 */
import { arrayOf, int, literal, nullable, object, str, type Infer } from './wire/validators';

/** Micro-dollars per Battery Unit. */
export const MICRO_USD_PER_BU = 1_000;
export const MICRO_USD_PER_USD = 1_000_000;

/** Dollars to whole micro-dollars, rounded half away from zero; null for a non-finite or unsafe amount. */
export function usdToMicroOrNull(usd: number): number | null {
  if (!Number.isFinite(usd)) return null;
  const micro = Math.sign(usd) * Math.round(Math.abs(usd) * MICRO_USD_PER_USD);
  if (!Number.isSafeInteger(micro)) return null;
  return micro === 0 ? 0 : micro;
}

/** The local date of `time` (ms), `YYYY-MM-DD`: what "today" means to the person at the machine (the ledger's days). */
export function localDay(time: number): string {
  const d = new Date(time);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** `$1.234567` — six decimals, so a figure shown is the figure stored. */
export function formatMicroUsd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  return `${sign}$${Math.floor(abs / MICRO_USD_PER_USD)}.${String(abs % MICRO_USD_PER_USD).padStart(6, '0')}`;
}

/**
 * Where a response's cost came from, most trusted first: the provider said what it charged
 * (OpenRouter's `usage.cost`); Vox priced the provider's token counts by a price card; Vox priced
 * its own token count (the provider sent no usage); no card prices the model (shown as unknown,
 * never as $0). `imported`: another agent's session, recorded and never charged.
 */
export const costSource = literal('providerReported', 'priced', 'estimated', 'unpriced', 'imported');
export type CostSource = Infer<typeof costSource>;

/** What a user enters to fund the ledger (SPEC's transaction kinds; `usage` is what a response spends). */
export const grantKind = literal('purchase', 'subscription', 'bonus', 'refund');
export type GrantKind = Infer<typeof grantKind>;
export const transactionKind = literal('purchase', 'subscription', 'bonus', 'refund', 'usage');

/** What a cap does when spending reaches it: warn (at 50/75/90 % and at the cap), or refuse the next call. */
export const capAction = literal('warn', 'block');
export type CapAction = Infer<typeof capAction>;
export const capScope = literal('daily', 'thread', 'run');
export type CapScope = Infer<typeof capScope>;

/** A response's tokens by the class they are priced in; `reasoning` is part of `output`, never added to it. */
export const ledgerTokens = object({ input: int, cacheRead: int, cacheWrite5m: int, cacheWrite1h: int, output: int, reasoning: int });
export type LedgerTokensView = Infer<typeof ledgerTokens>;

/** The price card a cost was computed by: the model key it priced, its source and when that source was read. */
export const priceCardRef = object({ id: str, source: literal('bundled', 'litellm', 'modelsDev', 'user'), version: str, fetchedAt: str });
export type PriceCardRef = Infer<typeof priceCardRef>;

/** A card's rates, pico-dollars (10⁻¹² $) per token, as decimal integer strings (exact at any size). */
export const picoRates = object({ input: str, output: str, cacheRead: str, cacheWrite5m: str, cacheWrite1h: str });
export type PicoRates = Infer<typeof picoRates>;

/** The recorded cost of one provider response (one receipt). */
export const receiptShape = {
  /** The thread and run the response belongs to (kept when the thread is deleted: spending stays spent). */
  thread: str,
  run: str,
  /** The provider's response id (or the run and step when it sends none): one receipt per id. */
  responseId: str,
  model: str,
  tokens: ledgerTokens,
  /** Null when unpriced. */
  costMicroUsd: nullable(int),
  costSource,
  card: nullable(priceCardRef),
  /** Premiums the price includes (`contextAbove200k`). */
  premiums: arrayOf(str),
  /** What the card priced it at when the provider reported its own figure (reconciliation), else null. */
  pricedMicroUsd: nullable(int),
} as const;
