/**
 * The ledger's report through the protocol (a real SQLite file, the engine's own commands): the
 * per-thread rows carry the title and parent and keep a deleted thread's spend; a variant group's
 * threads sum under their group (the family); the reconciliation pair holds what the provider
 * reported beside what the card says for the same responses; `getThreadCosts` gives each run's
 * cost, tokens by class, sources and cards, oldest first; bad input is a typed error.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { recordReceipt } from '../../src/engine/ledger/writes';
import type { Receipt } from '../../src/engine/ledger/writes';
import { VoxStore } from '../../src/engine/store/store';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const tokens = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output, reasoning: 0 });
const card = { id: 'gpt-4o-mini', source: 'bundled' as const, version: '2025-11-20', fetchedAt: '2025-11-20T00:00:00Z' };

describe('ledger: the usage report and a thread\'s costs', function () {
  this.timeout(60_000);
  let dir: string;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    removeTmpDir(dir);
  });

  function seed(): void {
    const store = VoxStore.open(path.join(dir, 'vox.db'));
    try {
      store.append(
        { type: 'thread.created', threadId: 'thread:group', title: 'Variants (2): fix the bug' },
        { type: 'thread.created', threadId: 'thread:v1', title: 'Variant 1/2 (openai:gpt-4o-mini): fix the bug', parentThreadId: 'thread:group' },
        { type: 'thread.created', threadId: 'thread:v2', title: 'Variant 2/2 (openrouter:x): fix the bug', parentThreadId: 'thread:group' },
        { type: 'thread.created', threadId: 'thread:gone', title: 'Deleted later' },
      );
      const r = (threadId: string, runId: string, responseId: string, costMicroUsd: number | null, extra: Partial<Receipt> = {}): Receipt => ({
        threadId, runId, responseId, model: 'openai:gpt-4o-mini', tokens: tokens(1_000, 100), costMicroUsd,
        costSource: costMicroUsd === null ? 'unpriced' : 'priced', card: costMicroUsd === null ? null : card, premiums: [], pricedMicroUsd: null, ...extra,
      });
      for (const receipt of [
        r('thread:v1', 'run:a', 'resp-1', 210),
        r('thread:v1', 'run:a', 'resp-2', 90),
        r('thread:v1', 'run:b', 'resp-3', null, { model: 'ollama:llama' }),
        r('thread:v2', 'run:c', 'resp-4', 12_300, { model: 'openrouter:x', costSource: 'providerReported', pricedMicroUsd: 285 }),
        r('thread:gone', 'run:d', 'resp-5', 1_000),
      ]) assert.equal(recordReceipt(store, receipt), true);
    } finally {
      store.close();
    }
  }

  it('per thread (titles, parents, a deleted thread kept), per family, with the reconciliation pair', async () => {
    seed();
    t = startTestEngine({ dir });
    const c = t.client();
    await c.call('deleteThread', { threadId: 'thread:gone' });
    const u = await c.call('getUsage', {});
    assert.equal(u.totalMicroUsd, 210 + 90 + 12_300 + 1_000);
    const byThread = Object.fromEntries(u.byThread.map((x) => [x.threadId, x]));
    assert.equal(byThread['thread:v1']!.costMicroUsd, 300);
    assert.equal(byThread['thread:v1']!.unpricedResponses, 1);
    assert.equal(byThread['thread:v1']!.parentThreadId, 'thread:group');
    assert.equal(byThread['thread:v2']!.title, 'Variant 2/2 (openrouter:x): fix the bug');
    assert.deepEqual([byThread['thread:gone']!.deleted, byThread['thread:gone']!.costMicroUsd], [true, 1_000], 'spent stays spent');
    const group = u.byFamily.find((f) => f.threadId === 'thread:group')!;
    assert.deepEqual([group.title, group.threads, group.costMicroUsd, group.responses], ['Variants (2): fix the bug', 2, 12_600, 4]);
    const openrouter = u.byModel.find((m) => m.model === 'openrouter:x')!;
    assert.deepEqual([openrouter.providerReportedMicroUsd, openrouter.pricedForReportedMicroUsd], [12_300, 285]);
    const mini = u.byModel.find((m) => m.model === 'openai:gpt-4o-mini')!;
    assert.deepEqual([mini.costMicroUsd, mini.providerReportedMicroUsd], [1_300, 0], 'no provider report: nothing to reconcile');
    // One thread's view of the same report.
    const one = await c.call('getUsage', { threadId: 'thread:v2' });
    assert.deepEqual(one.byFamily.map((f) => [f.threadId, f.costMicroUsd]), [['thread:group', 12_300]]);
  });

  it("getThreadCosts: each run's cost, tokens, sources and cards, oldest first; an unpriced run is unknown, not $0", async () => {
    seed();
    t = startTestEngine({ dir });
    const c = t.client();
    const v1 = await c.call('getThreadCosts', { threadId: 'thread:v1' });
    assert.deepEqual([v1.costMicroUsd, v1.responses, v1.unpricedResponses], [300, 3, 1]);
    assert.deepEqual(v1.runs.map((r) => [r.runId, r.costMicroUsd, r.responses, r.unpricedResponses, r.sources.join()]), [
      ['run:a', 300, 2, 0, 'priced'],
      ['run:b', 0, 1, 1, 'unpriced'],
    ]);
    assert.deepEqual(v1.runs[0]!.tokens, tokens(2_000, 200));
    assert.deepEqual(v1.runs[0]!.cards, [card]);
    assert.deepEqual(v1.runs[1]!.cards, []);
    const none = await c.call('getThreadCosts', { threadId: 'thread:group' });
    assert.deepEqual([none.costMicroUsd, none.runs], [0, []], 'a thread that spent nothing has no runs');
    await assert.rejects(c.call('getThreadCosts', { threadId: 'thread:nope' }), (e: Error & { code?: string }) => e.code === 'unknownThread' && /thread:nope does not exist/.test(e.message));
    await assert.rejects(c.call('setBudget', { scope: 'thread', threadId: 'thread:nope', capMicroUsd: 5, action: 'block' }), (e: Error & { code?: string }) => e.code === 'unknownThread');
  });
});
