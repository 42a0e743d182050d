/**
 * Receipts of real turns (the agent loop, the official SDKs, the fake servers): what a provider
 * reports per response — its id, the 1-hour part of Anthropic's cache writes, OpenRouter's own
 * cost — reaches the receipt through the loop, not only the provider's usage event: the receipt
 * keeps the response id, prices the 1-hour writes at their rate, and takes the provider's cost.
 */
import { strict as assert } from 'node:assert';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

interface ReceiptRow { response_id: string; cost_micro_usd: number | null; priced_micro_usd: number | null; cost_source: string; cache_write_5m: number; cache_write_1h: number }

describe('ledger: receipts of real turns', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  async function turn(host: TestHost): Promise<ReceiptRow[]> {
    t = startTestEngine({ dir, host });
    const c = t.client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'hello' });
    await until(async () => (await c.call('getThread', { threadId })).runs[0]?.status === 'completed', { what: 'the turn to complete', everyMs: 20 });
    const store = VoxStore.open(t.dbPath, { readonly: true });
    try {
      return store.db.prepare('SELECT response_id, cost_micro_usd, priced_micro_usd, cost_source, cache_write_5m, cache_write_1h FROM ledger_receipts').all() as ReceiptRow[];
    } finally {
      store.close();
    }
  }

  it("Anthropic: the message id and the 1-hour cache writes reach the receipt, priced at their rate", async () => {
    server = await startFakeAnthropic({ responses: [textTurn('ok', { usage: { inputTokens: 10_000, cacheReadTokens: 4_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 1_000, outputTokens: 500 } })] });
    const rows = await turn(new TestHost({ model: 'anthropic:claude-sonnet-4-5', secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl } }));
    // 3,000 × $3/M + 4,000 × $0.30/M + 2,000 × $3.75/M + 1,000 × $6/M + 500 × $15/M.
    assert.deepEqual(rows, [{ response_id: 'msg_fake1', cost_micro_usd: 31_200, priced_micro_usd: null, cost_source: 'priced', cache_write_5m: 2_000, cache_write_1h: 1_000 }]);
  });

  it("OpenAI wire: the chunk id is the receipt's, and OpenRouter's usage.cost is the cost (the card's figure kept)", async () => {
    server = await startFakeOpenAI({ responses: [textTurn('ok', { usage: { inputTokens: 2_000, cacheReadTokens: 1_000, outputTokens: 100, costUsd: 0.0123 } })] });
    const rows = await turn(new TestHost({ model: 'openai:gpt-4o-mini', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }));
    // The card: 1,000 × $0.15/M + 1,000 × $0.075/M + 100 × $0.60/M = 285 µ$.
    assert.deepEqual(rows, [{ response_id: 'chatcmpl-fake1', cost_micro_usd: 12_300, priced_micro_usd: 285, cost_source: 'providerReported', cache_write_5m: 0, cache_write_1h: 0 }]);
  });
});
