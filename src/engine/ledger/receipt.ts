/**
 * A provider response's receipt (./writes.ts `Receipt`): its tokens by class, and its cost by
 * the most trusted source there is — the provider's own figure (OpenRouter's `usage.cost`),
 * else the price card's for the reported tokens, else (no usage reported) the card's for Vox's
 * own count, else unpriced (null, never $0).
 */
import type { Usage } from '../providers/types';
import type { CostSource, PriceCardRef } from '../../protocol/ledger';
import { usdToMicro } from './money';
import { ledgerTokensOf, priceTokens, type PriceCard } from './prices';
import type { Receipt } from './writes';

export function cardRef(card: PriceCard): PriceCardRef {
  return { id: card.id, source: card.source, version: card.version, fetchedAt: card.fetchedAt };
}

/** The receipt of `usage` (counted by Vox when `estimated`) priced by `card` (null: none). */
export function receiptOf(ids: { threadId: string; runId: string; responseId: string; model: string }, usage: Usage, card: PriceCard | null, estimated: boolean): Receipt {
  const tokens = ledgerTokensOf(usage);
  const priced = card ? priceTokens(card, tokens) : null;
  const reported = usage.costUsd !== undefined ? usdToMicro(usage.costUsd) : null;
  const costSource: CostSource = reported !== null ? 'providerReported' : priced === null ? 'unpriced' : estimated ? 'estimated' : 'priced';
  return {
    ...ids, tokens,
    costMicroUsd: reported ?? priced?.costMicroUsd ?? null,
    costSource,
    card: card ? cardRef(card) : null,
    premiums: priced?.premiums ?? [],
    pricedMicroUsd: reported !== null ? priced?.costMicroUsd ?? null : null,
  };
}
