/**
 * The providers' usage as the ledger prices it, over the official SDKs against the fake servers'
 * real wire formats: Anthropic's `input_tokens` (cache excluded) with the 5-minute / 1-hour split
 * of `cache_creation` and the message id; OpenAI's chunk id and OpenRouter's `usage.cost`, which
 * wins over the card (the card's figure kept beside it for reconciliation). Each class is
 * hand-computed below from the bundled cards.
 */
import { strict as assert } from 'node:assert';
import { AnthropicProvider } from '../../src/engine/providers/anthropic';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import type { ProviderEvent, Usage } from '../../src/engine/providers/types';
import { receiptOf } from '../../src/engine/ledger/receipt';
import { resolveCard } from '../../src/engine/ledger/catalog';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import * as path from 'node:path';

async function usageOf(stream: AsyncIterable<ProviderEvent>): Promise<Usage> {
  let usage: Usage | undefined;
  for await (const e of stream) if (e.type === 'usage') usage = e.usage;
  assert.ok(usage, 'the provider reported usage');
  return usage;
}

describe('ledger: provider usage priced exactly', function () {
  this.timeout(30_000);
  let dir: string;
  let store: VoxStore;
  let server: FakeServer | undefined;
  beforeEach(() => {
    dir = makeTmpDir();
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    store.close();
    removeTmpDir(dir);
  });
  const ids = { threadId: 'thread:t', runId: 'run:r', responseId: 'x', model: 'm' };

  it('Anthropic: uncached input, cache reads, 5-minute and 1-hour writes and output, each at its rate', async () => {
    // 10,000 prompt tokens: 4,000 read from cache, 3,000 written (1,000 of them for 1 hour), 3,000 uncached.
    server = await startFakeAnthropic({ responses: [textTurn('ok', { usage: { inputTokens: 10_000, cacheReadTokens: 4_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 1_000, outputTokens: 500 } })] });
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.baseUrl });
    const usage = await usageOf(provider.stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    assert.equal(usage.responseId, 'msg_fake1');
    assert.deepEqual([usage.inputTokens, usage.cacheReadTokens, usage.cacheWriteTokens, usage.cacheWrite1hTokens, usage.outputTokens], [10_000, 4_000, 3_000, 1_000, 500]);
    const card = resolveCard(store.db, 'anthropic:claude-sonnet-4-5-20250929', 'claude-sonnet-4-5-20250929');
    assert.equal(card?.id, 'claude-sonnet-4-5', 'a dated name finds its card');
    const r = receiptOf(ids, usage, card, false);
    // 3,000 × $3/M = 9,000 µ$; 4,000 × $0.30/M = 1,200; 2,000 × $3.75/M = 7,500; 1,000 × $6/M = 6,000; 500 × $15/M = 7,500.
    assert.equal(r.costMicroUsd, 9_000 + 1_200 + 7_500 + 6_000 + 7_500);
    assert.deepEqual(r.tokens, { input: 3_000, cacheRead: 4_000, cacheWrite5m: 2_000, cacheWrite1h: 1_000, output: 500, reasoning: 0 });
    assert.equal(r.costSource, 'priced');
    assert.deepEqual(r.premiums, []);
  });

  it('OpenAI: the chunk id is the response id; OpenRouter-style usage.cost wins over the card, which is kept to reconcile', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('ok', { usage: { inputTokens: 2_000, cacheReadTokens: 1_000, outputTokens: 100, reasoningTokens: 40, costUsd: 0.0123 } })] });
    const provider = new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl });
    const usage = await usageOf(provider.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    assert.equal(usage.responseId, 'chatcmpl-fake1');
    const card = resolveCard(store.db, 'openai:gpt-4o-mini', 'gpt-4o-mini');
    const r = receiptOf(ids, usage, card, false);
    assert.equal(r.costSource, 'providerReported');
    assert.equal(r.costMicroUsd, 12_300);
    // 1,000 × $0.15/M = 150 µ$; 1,000 cached × $0.075/M = 75; 100 output (40 of them reasoning, not added) × $0.60/M = 60.
    assert.equal(r.pricedMicroUsd, 150 + 75 + 60);
    assert.equal(r.tokens.reasoning, 40);
  });

  it('a prompt above 200k tokens is priced at the long-context tier, and a model with no card is unpriced', () => {
    const card = resolveCard(store.db, 'anthropic:claude-sonnet-4', 'claude-sonnet-4');
    const r = receiptOf(ids, { inputTokens: 200_001, outputTokens: 1_000 }, card, false);
    // 200,001 × $6/M = 1,200,006 µ$; 1,000 × $22.50/M = 22,500.
    assert.equal(r.costMicroUsd, 1_200_006 + 22_500);
    assert.deepEqual(r.premiums, ['contextAbove200k']);
    const none = receiptOf(ids, { inputTokens: 10, outputTokens: 1 }, resolveCard(store.db, 'compat:x', 'my-local-finetune'), false);
    assert.deepEqual([none.costMicroUsd, none.costSource], [null, 'unpriced']);
  });
});
