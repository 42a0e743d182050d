/**
 * Price cards and what a provider response costs by them (SPEC 3.4). A card's rates are integer
 * pico-dollars per token (1 p$ = 10⁻⁶ µ$), so $0.075 per million tokens is exact; a response's
 * cost is Σ tokens × rate over its token classes, rounded once to whole micro-dollars. Cards read
 * from LiteLLM's `model_prices_and_context_window.json` entries (`input_cost_per_token`,
 * `output_cost_per_token`, `cache_read_input_token_cost`, `cache_creation_input_token_cost`,
 * `cache_creation_input_token_cost_above_1hr`, and the `…_above_200k_tokens` tier), numbers or
 * cost expressions (./money.ts).
 */
import type { Usage } from '../providers/types';
import { LedgerError } from './errors';
import { evalCostExpression, MICRO_USD_PER_USD } from './money';

/** Pico-dollars per dollar. */
const PICO_PER_USD = 1_000_000_000_000n;
const PICO_PER_MICRO = 1_000_000n;
/** LiteLLM's long-context tier: rates above this many prompt tokens (Anthropic's and Gemini's 200k premium). */
export const LONG_CONTEXT_TIER_TOKENS = 200_000;

/** A response's tokens by class: uncached input, cache reads, cache writes (5 min, 1 h), output; reasoning is a subset of output. */
export interface LedgerTokens {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
  reasoning: number;
}

export interface Rates {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite5m: bigint;
  cacheWrite1h: bigint;
}

export interface PriceCard {
  /** The model the card prices (its key in the source). */
  id: string;
  /** Where the card came from and when. */
  source: 'bundled' | 'litellm' | 'modelsDev' | 'user';
  version: string;
  fetchedAt: string;
  /** Pico-dollars per token. */
  rates: Rates;
  /** Rates for a request whose prompt is above `aboveTokens` (the whole request is priced at them). */
  tier?: { aboveTokens: number; rates: Rates };
}

export interface PricedResponse {
  costMicroUsd: number;
  /** The premiums applied (`contextAbove200k`). */
  premiums: string[];
}

/** The engine's Usage (inputTokens counts every prompt token, cached ones included) as ledger classes. */
export function ledgerTokensOf(u: Usage): LedgerTokens {
  const cacheRead = u.cacheReadTokens ?? 0;
  const cacheWrite = u.cacheWriteTokens ?? 0;
  const cacheWrite1h = Math.min(u.cacheWrite1hTokens ?? 0, cacheWrite);
  return {
    input: Math.max(0, u.inputTokens - cacheRead - cacheWrite),
    cacheRead,
    cacheWrite5m: cacheWrite - cacheWrite1h,
    cacheWrite1h,
    output: u.outputTokens,
    reasoning: Math.min(u.reasoningTokens ?? 0, u.outputTokens),
  };
}

/** The cost of one response by `card`; reasoning is part of output and is not added again. */
export function priceTokens(card: PriceCard, t: LedgerTokens): PricedResponse {
  const prompt = t.input + t.cacheRead + t.cacheWrite5m + t.cacheWrite1h;
  const tiered = card.tier !== undefined && prompt > card.tier.aboveTokens;
  const r = tiered ? card.tier!.rates : card.rates;
  const pico = BigInt(t.input) * r.input + BigInt(t.cacheRead) * r.cacheRead + BigInt(t.cacheWrite5m) * r.cacheWrite5m
    + BigInt(t.cacheWrite1h) * r.cacheWrite1h + BigInt(t.output) * r.output;
  // Round half up to whole micro-dollars, once per response.
  const micro = (pico + PICO_PER_MICRO / 2n) / PICO_PER_MICRO;
  return { costMicroUsd: Number(micro), premiums: tiered ? [`contextAbove${card.tier!.aboveTokens / 1000}k`] : [] };
}

/** A dollars-per-token figure (number or cost expression) as pico-dollars per token. */
export function picoPerToken(v: unknown, field: string, model: string): bigint {
  const usd = typeof v === 'number' ? v : typeof v === 'string' ? evalCostExpression(v) : NaN;
  if (!Number.isFinite(usd) || usd < 0) throw new LedgerError('invalidPriceCard', `price card "${model}": ${field} is not a price`);
  return BigInt(Math.round(usd * Number(PICO_PER_USD)));
}

/** USD per million tokens (as users and `vox prices set` write prices) as pico-dollars per token. */
export function picoPerTokenFromPerMillion(usdPerMillion: number, field: string, model: string): bigint {
  return picoPerToken(usdPerMillion / MICRO_USD_PER_USD, field, model);
}

type LiteLlmEntry = Record<string, unknown>;

/**
 * A card from a LiteLLM entry. Missing cache rates: reads and writes cost input (what a provider
 * that does not cache charges); a missing 1-hour write rate is twice input (Anthropic's rule). A
 * card without input and output rates is `invalidPriceCard`.
 */
export function cardFromLiteLlm(id: string, e: LiteLlmEntry, meta: Pick<PriceCard, 'source' | 'version' | 'fetchedAt'>): PriceCard {
  if (typeof e !== 'object' || e === null) throw new LedgerError('invalidPriceCard', `price card "${id}" is not an object`);
  if (e.input_cost_per_token === undefined || e.output_cost_per_token === undefined) {
    throw new LedgerError('invalidPriceCard', `price card "${id}" has no input_cost_per_token/output_cost_per_token`);
  }
  const rate = (f: string, fallback: bigint): bigint => (e[f] === undefined ? fallback : picoPerToken(e[f], f, id));
  const rates = (suffix: string, base?: Rates): Rates => {
    const input = rate(`input_cost_per_token${suffix}`, base?.input ?? 0n);
    const cacheWrite5m = rate(`cache_creation_input_token_cost${suffix}`, base ? base.cacheWrite5m : input);
    return {
      input,
      output: rate(`output_cost_per_token${suffix}`, base?.output ?? 0n),
      cacheRead: rate(`cache_read_input_token_cost${suffix}`, base ? base.cacheRead : input),
      cacheWrite5m,
      cacheWrite1h: rate(`cache_creation_input_token_cost_above_1hr${suffix}`, base ? base.cacheWrite1h : input * 2n),
    };
  };
  const base = rates('');
  const card: PriceCard = { id, ...meta, rates: base };
  if (e.input_cost_per_token_above_200k_tokens !== undefined) {
    card.tier = { aboveTokens: LONG_CONTEXT_TIER_TOKENS, rates: rates('_above_200k_tokens', base) };
  }
  return card;
}
