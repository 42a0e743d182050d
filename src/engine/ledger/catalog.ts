/**
 * Which price card prices a model: the user's (`ledger_prices`, set by `setPrice`) by the model's
 * label or name, else the bundled snapshot (./snapshot.ts) by its name — as given, lower-cased,
 * without a vendor prefix (`openai/gpt-4o` → `gpt-4o`) or a date suffix (`claude-sonnet-4-5-20250929`,
 * `gpt-4o-2024-08-06`). No card: null (the response is `unpriced`, never $0).
 */
import type { PicoRates } from '../../protocol/ledger';
import type { SqlDatabase } from '../store/driver';
import { cardFromLiteLlm, type PriceCard, type Rates } from './prices';
import { BUNDLED_PRICES, BUNDLED_PRICES_VERSION } from './snapshot';

const DATE_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** The names a model may be listed under, most specific first. */
export function cardKeys(name: string): string[] {
  const keys = [name, name.toLowerCase()];
  const bare = name.toLowerCase().replace(/^[a-z0-9_.-]+\//, '');
  keys.push(bare, bare.replace(DATE_SUFFIX, ''));
  return [...new Set(keys)];
}

export function ratesToWire(r: Rates): PicoRates {
  return { input: String(r.input), output: String(r.output), cacheRead: String(r.cacheRead), cacheWrite5m: String(r.cacheWrite5m), cacheWrite1h: String(r.cacheWrite1h) };
}

export function ratesFromWire(r: PicoRates): Rates {
  return { input: BigInt(r.input), output: BigInt(r.output), cacheRead: BigInt(r.cacheRead), cacheWrite5m: BigInt(r.cacheWrite5m), cacheWrite1h: BigInt(r.cacheWrite1h) };
}

const bundledCards = new Map<string, PriceCard>();

function bundledCard(key: string): PriceCard | null {
  const entry = BUNDLED_PRICES[key];
  if (!entry) return null;
  let card = bundledCards.get(key);
  if (!card) {
    card = cardFromLiteLlm(key, entry, { source: 'bundled', version: BUNDLED_PRICES_VERSION, fetchedAt: BUNDLED_PRICES_VERSION });
    bundledCards.set(key, card);
  }
  return card;
}

/** The user's card for `key`, if they set one. */
export function userCard(db: SqlDatabase, key: string): PriceCard | null {
  const row = db.prepare('SELECT rates, set_at AS setAt FROM ledger_prices WHERE model = ?').get(key) as { rates: string; setAt: number } | undefined;
  if (!row) return null;
  const setAt = new Date(row.setAt).toISOString();
  return { id: key, source: 'user', version: setAt, fetchedAt: setAt, rates: ratesFromWire(JSON.parse(row.rates) as PicoRates) };
}

/** The card that prices a model known by `label` (`openai:gpt-4o`) and provider name `name` (`gpt-4o`). */
export function resolveCard(db: SqlDatabase, label: string, name: string): PriceCard | null {
  for (const key of [label, ...cardKeys(name)]) {
    const card = userCard(db, key);
    if (card) return card;
  }
  for (const key of cardKeys(name)) {
    const card = bundledCard(key);
    if (card) return card;
  }
  return null;
}
