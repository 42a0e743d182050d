/**
 * Usage that a cost figure can trust: the cache-read, cache-write and reasoning tokens the
 * providers report (over their real wire formats, through the official SDKs) are summed over a
 * turn's model calls and reach the `run.ended` event, the runs table and the protocol.
 */
import { strict as assert } from 'node:assert';
import { VoxStore } from '../../src/engine/store/store';
import type { UpdateOf } from '../../src/protocol/updates';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

describe('usage: cache and reasoning tokens reach the runs table', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  async function turn(model: string): Promise<{ threadId: string; runId: string; ended: UpdateOf<'events'>['events'] }> {
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'read a and answer', model });
    if (runId === null) throw new Error('a prompt in a new thread was queued');
    const events: unknown[] = [];
    c.on('events', (u) => void events.push(...u.events));
    await c.call('subscribeThread', { threadId, afterSeq: 0 });
    await waitFor('run.ended', 20_000, () => events.some((e) => (e as { type: string }).type === 'run.ended'), 20);
    return { threadId, runId, ended: events.filter((e) => (e as { type: string }).type === 'run.ended') };
  }

  it('OpenAI-compatible: cached prompt tokens and reasoning tokens, summed over two model calls', async () => {
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'read_file', args: { path: 'missing.txt' } }], { usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 25 } }),
        textTurn('done', { usage: { inputTokens: 1300, outputTokens: 60, cacheReadTokens: 1152, reasoningTokens: 15 } }),
      ],
    });
    t = startTestEngine({ dir, host: new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }) });
    const { threadId, ended } = await turn('openai:o4-mini');
    const expected = { inputTokens: 2500, outputTokens: 100, cacheReadTokens: 2176, reasoningTokens: 40 };
    assert.deepEqual((ended[0] as { usage: unknown }).usage, expected);
    const store = VoxStore.open(t.dbPath, { readonly: true });
    const row = store.runs(threadId)[0]!;
    store.close();
    assert.deepEqual(
      { i: row.inputTokens, o: row.outputTokens, cr: row.cacheReadTokens, cw: row.cacheWriteTokens, r: row.reasoningTokens },
      { i: 2500, o: 100, cr: 2176, cw: 0, r: 40 },
    );
    assert.deepEqual((await t.client().call('getThread', { threadId })).runs[0]!.usage, expected);
  });

  it('Anthropic: cache reads and cache writes (prompt tokens counted once, cached ones included)', async () => {
    server = await startFakeAnthropic({
      responses: [textTurn('cached answer', { usage: { inputTokens: 5000, outputTokens: 70, cacheReadTokens: 3000, cacheWriteTokens: 1500 } })],
    });
    t = startTestEngine({ dir, host: new TestHost({ secrets: { anthropicApiKey: 'sk-ant-x' }, providerSettings: { anthropicBaseUrl: server.baseUrl } }) });
    const { threadId, ended } = await turn('anthropic:claude-sonnet-4-5');
    const expected = { inputTokens: 5000, outputTokens: 70, cacheReadTokens: 3000, cacheWriteTokens: 1500 };
    assert.deepEqual((ended[0] as { usage: unknown }).usage, expected);
    const store = VoxStore.open(t.dbPath, { readonly: true });
    const row = store.runs(threadId)[0]!;
    store.close();
    assert.deepEqual({ cr: row.cacheReadTokens, cw: row.cacheWriteTokens, i: row.inputTokens, o: row.outputTokens }, { cr: 3000, cw: 1500, i: 5000, o: 70 });
    assert.deepEqual((await t.client().call('getThread', { threadId })).runs[0]!.usage, expected);
  });
});
