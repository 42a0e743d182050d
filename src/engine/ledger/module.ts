/**
 * The cost ledger module (SPEC 3.4): its tables (./schema.ts), the turn's gate and receipts
 * (./stages.ts), and the commands `getUsage`, `getThreadCosts`, `grantBalance`, `setBudget`, `setPrice`, `getPrice`.
 */
import type { EngineModule, ModuleHandlers } from '../module';
import type { VoxStore } from '../store/store';
import type { PriceView } from '../../protocol/commands/ledger';
import { LEDGER_SCHEMA } from './schema';
import { installLedgerStages } from './stages';
import { caps, threadCosts, usageReport } from './reads';
import { grant, setCap, setUserPrice } from './writes';
import { ratesToWire, resolveCard } from './catalog';
import { cardRef } from './receipt';
import { picoPerTokenFromPerMillion, type PriceCard } from './prices';
import { LedgerError } from './errors';

const PICO_PER_USD_PER_MILLION = 1_000_000; // pico-dollars per token → dollars per million tokens

function priceView(model: string, card: PriceCard | null): PriceView {
  const perMillion = (n: bigint) => Number(n) / PICO_PER_USD_PER_MILLION;
  return {
    model,
    card: card ? cardRef(card) : null,
    perMillionUsd: card ? {
      input: perMillion(card.rates.input), output: perMillion(card.rates.output), cacheRead: perMillion(card.rates.cacheRead),
      cacheWrite5m: perMillion(card.rates.cacheWrite5m), cacheWrite1h: perMillion(card.rates.cacheWrite1h),
    } : null,
    rates: card ? ratesToWire(card.rates) : null,
    tierAboveTokens: card?.tier?.aboveTokens ?? null,
  };
}

/** A model ref (`openai:gpt-4o`) as the label and the provider's name the catalog looks up. */
function modelKeys(model: string): { label: string; name: string } {
  const i = model.indexOf(':');
  return { label: model, name: i > 0 ? model.slice(i + 1) : model };
}

type LedgerCommands = 'getUsage' | 'getThreadCosts' | 'grantBalance' | 'setBudget' | 'setPrice' | 'getPrice';

const handlers: ModuleHandlers<LedgerCommands, { store: VoxStore }> = {
  getUsage({ services: { store } }, cmd) {
    return usageReport(store.db, { ...(cmd.since ? { since: cmd.since } : {}), ...(cmd.threadId ? { threadId: cmd.threadId } : {}) });
  },
  getThreadCosts({ services: { store } }, cmd) {
    if (!store.hasThread(cmd.threadId)) throw new LedgerError('unknownThread', `thread ${cmd.threadId} does not exist`);
    return threadCosts(store.db, cmd.threadId);
  },
  grantBalance({ services: { store } }, cmd) {
    return { balanceMicroUsd: grant(store, { kind: cmd.kind, amountMicroUsd: cmd.amountMicroUsd, note: cmd.note ?? null }) };
  },
  setBudget({ services: { store } }, cmd) {
    if (cmd.scope === 'thread' && !cmd.threadId) throw new LedgerError('invalidAmount', 'a thread cap names its thread (threadId)');
    if (cmd.scope === 'thread' && !store.hasThread(cmd.threadId!)) throw new LedgerError('unknownThread', `thread ${cmd.threadId} does not exist`);
    setCap(store, { scope: cmd.scope, threadId: cmd.threadId ?? null, capMicroUsd: cmd.capMicroUsd, action: cmd.action ?? 'block' });
    return { caps: caps(store.db) };
  },
  setPrice({ services: { store } }, cmd) {
    if (cmd.input === null) setUserPrice(store, cmd.model, null);
    else {
      if (cmd.output === undefined) throw new LedgerError('invalidPriceCard', `a price for ${cmd.model} needs an output price as well as an input price`);
      const p = (usd: number, field: string) => picoPerTokenFromPerMillion(usd, field, cmd.model);
      const input = p(cmd.input, 'input');
      const cacheWrite = cmd.cacheWrite !== undefined ? p(cmd.cacheWrite, 'cacheWrite') : input;
      setUserPrice(store, cmd.model, ratesToWire({
        input, output: p(cmd.output, 'output'),
        cacheRead: cmd.cacheRead !== undefined ? p(cmd.cacheRead, 'cacheRead') : input,
        cacheWrite5m: cacheWrite,
        cacheWrite1h: cmd.cacheWrite1h !== undefined ? p(cmd.cacheWrite1h, 'cacheWrite1h') : cacheWrite,
      }));
    }
    const { label, name } = modelKeys(cmd.model);
    return priceView(cmd.model, resolveCard(store.db, label, name));
  },
  getPrice({ services: { store } }, cmd) {
    const { label, name } = modelKeys(cmd.model);
    return priceView(cmd.model, resolveCard(store.db, label, name));
  },
};

export const ledgerModule: EngineModule = {
  name: 'ledger', deps: [], schema: LEDGER_SCHEMA, handlers,
  install: ({ hooks, store, host }) => void installLedgerStages(hooks, store, host),
};
