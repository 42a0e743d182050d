/**
 * Turn costs in the webview (webview/src/lib/turn-cost-state.ts, features/costs.ts): the labels
 * ($0 is a cost, "cost unknown" when no response was priced, "+ N unpriced" when some were not),
 * the hover text (tokens by class, models, cards, sources in words), the header's total (hidden
 * when nothing was spent), and the requests — one in flight, triggers folded — through the real
 * Controller: opening a thread asks once, a replay of 500 ended runs asks once more, 500 runs
 * ending one batch at a time while a request waits make one follow-up, and an answer for a thread
 * left meanwhile is dropped.
 */
import { strict as assert } from 'node:assert';
import type { ClientCommand } from '../../src/protocol/commands';
import type { RunCostView, ThreadCostsView } from '../../src/protocol/commands/ledger';
import { Controller, createModel } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import {
  ThreadCostRequests, openThreadCosts, runCostDetail, runCostLabel, runCostOf, threadCostLabel, threadCostTitle, threadCostsFrom,
} from '../../webview/src/lib/turn-cost-state';
import { until } from '../support/wait';

const T = 'thread:costs';
const tokens = (over: Partial<RunCostView['tokens']> = {}) => ({ input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0, reasoning: 0, ...over });
const card = { id: 'gpt-4o-mini', source: 'bundled' as const, version: '2026-01-15', fetchedAt: '2026-01-15T00:00:00Z' };
const runCost = (over: Partial<RunCostView> = {}): RunCostView => ({
  runId: 'r1', responses: 1, costMicroUsd: 1_200, unpricedResponses: 0, tokens: tokens({ input: 1_000, output: 200 }),
  models: ['openai:gpt-4o-mini'], sources: ['priced'], cards: [card], premiums: [], ...over,
});
const threadCosts = (runs: RunCostView[], threadId = T): ThreadCostsView => ({
  threadId, runs,
  costMicroUsd: runs.reduce((s, r) => s + r.costMicroUsd, 0),
  unpricedResponses: runs.reduce((s, r) => s + r.unpricedResponses, 0),
  responses: runs.reduce((s, r) => s + r.responses, 0),
});

describe('webview: turn costs', () => {
  describe('labels', () => {
    it('$0 is a cost; every response unpriced is "cost unknown"; some unpriced is "$… + N unpriced"', () => {
      assert.equal(runCostLabel(runCost()), '$0.001200');
      assert.equal(runCostLabel(runCost({ costMicroUsd: 0 })), '$0.000000', 'a free model priced at $0 is not unknown');
      assert.equal(runCostLabel(runCost({ costMicroUsd: 0, unpricedResponses: 1, sources: ['unpriced'], cards: [] })), 'cost unknown');
      assert.equal(runCostLabel(runCost({ responses: 3, costMicroUsd: 300, unpricedResponses: 1, sources: ['priced', 'unpriced'] })), '$0.000300 + 1 unpriced');
      assert.equal(runCostLabel(runCost({ costMicroUsd: 12_345_678 })), '$12.345678', 'exact, six decimals');
    });

    it('the hover lists tokens by class, the models, the cards and the sources in words', () => {
      const detail = runCostDetail(runCost({
        responses: 2, costMicroUsd: 31_200,
        tokens: tokens({ input: 3_000, cacheRead: 4_000, cacheWrite5m: 2_000, cacheWrite1h: 1_000, output: 500, reasoning: 120 }),
        models: ['anthropic:claude-sonnet-4-5'], sources: ['providerReported', 'estimated'],
        cards: [{ id: 'claude-sonnet-4-5', source: 'litellm', version: 'abc123', fetchedAt: '' }], premiums: ['contextAbove200k'],
      }));
      assert.deepEqual(detail.split('\n'), [
        '$0.031200 for 2 responses',
        'Tokens:',
        '  uncached input: 3,000',
        '  cache read: 4,000',
        '  cache write 5 min: 2,000',
        '  cache write 1 h: 1,000',
        '  output: 500, of which reasoning 120',
        'Model: anthropic:claude-sonnet-4-5',
        'Price card: claude-sonnet-4-5 (litellm, version abc123)',
        'Premiums: contextAbove200k',
        'Source: reported by the provider; estimated (no usage from the provider)',
      ]);
      const unknown = runCostDetail(runCost({ costMicroUsd: 0, unpricedResponses: 1, sources: ['unpriced'], cards: [] }));
      assert.match(unknown, /^cost unknown for 1 response\n/);
      assert.match(unknown, /\nPrice card: none\n/);
      assert.match(unknown, /\nSource: no price card$/);
      const mixed = runCostDetail(runCost({ responses: 3, costMicroUsd: 300, unpricedResponses: 1, models: ['a:x', 'b:y'], sources: ['priced', 'unpriced'] }));
      assert.match(mixed, /^\$0\.000300 \+ 1 unpriced for 3 responses \(1 with no price\)\n/);
      assert.match(mixed, /\nModels: a:x, b:y\n/);
    });

    it('the header: the total, "+ N unpriced", "cost unknown"; nothing when nothing was spent', () => {
      const c = threadCostsFrom(threadCosts([runCost(), runCost({ runId: 'r2', costMicroUsd: 3_300 })]));
      assert.equal(threadCostLabel(c), '$0.004500');
      assert.equal(threadCostTitle(c), 'This thread has spent $0.004500, 2 responses');
      const mixed = threadCostsFrom(threadCosts([runCost(), runCost({ runId: 'r2', costMicroUsd: 0, unpricedResponses: 1 })]));
      assert.equal(threadCostLabel(mixed), '$0.001200 + 1 unpriced');
      assert.equal(threadCostTitle(mixed), 'This thread has spent $0.001200, 2 responses (1 response with no price card, not counted)');
      const unknown = threadCostsFrom(threadCosts([runCost({ costMicroUsd: 0, unpricedResponses: 1 })]));
      assert.equal(threadCostLabel(unknown), 'cost unknown');
      assert.match(threadCostTitle(unknown), /^This thread has spent an unknown amount, 1 response/);
      assert.equal(threadCostLabel(threadCostsFrom(threadCosts([]))), null, 'no receipts (a local model\'s thread)');
      assert.equal(threadCostLabel(threadCostsFrom(threadCosts([runCost({ costMicroUsd: 0 })]))), null, 'only $0 responses');
    });

    it('the costs shown are the open thread\'s; a run with no receipt has none', () => {
      const model = { thread: { threadId: T }, costs: threadCostsFrom(threadCosts([runCost()])) };
      assert.equal(runCostOf(model, 'r1')?.costMicroUsd, 1_200);
      assert.equal(runCostOf(model, 'r-local'), null);
      assert.equal(openThreadCosts({ ...model, thread: { threadId: 'thread:other' } }), null);
      assert.equal(openThreadCosts({ ...model, thread: null }), null);
    });
  });

  describe('requests (a manual schedule)', () => {
    function setup() {
      const sent: string[] = [];
      const tasks: (() => void)[] = [];
      const model: { thread: { threadId: string } | null; costs?: ReturnType<typeof threadCostsFrom> | null } = { thread: { threadId: T } };
      const r = new ThreadCostRequests({ model, send: (threadId) => (sent.push(threadId), `q${sent.length}`), schedule: (fn) => void tasks.push(fn) });
      const run = () => tasks.splice(0).forEach((f) => f());
      return { sent, model, r, run, tasks };
    }

    it('triggers in one task are one request; triggers while it waits are one follow-up after its answer', () => {
      const { sent, r, run, tasks } = setup();
      for (let i = 0; i < 500; i++) r.refresh();
      assert.equal(tasks.length, 1);
      run();
      assert.deepEqual(sent, [T]);
      for (let i = 0; i < 500; i++) {
        r.refresh();
        run();
      }
      assert.deepEqual(sent, [T], 'nothing more while the first waits');
      r.settled('q-unknown');
      run();
      assert.equal(sent.length, 1, 'another answer settles nothing');
      r.settled('q1');
      run();
      assert.deepEqual(sent, [T, T], 'one follow-up');
      r.settled('q2');
      run();
      assert.equal(sent.length, 2, 'nothing was asked meanwhile');
    });

    it('another thread asks at once; the old thread\'s answer is dropped; a new engine session does not wait for the old one\'s answer', () => {
      const { sent, model, r, run } = setup();
      r.refresh();
      run();
      model.thread = { threadId: 'thread:b' };
      r.threadChanged();
      run();
      assert.deepEqual(sent, [T, 'thread:b']);
      r.onResult(threadCosts([runCost()], T));
      assert.equal(model.costs ?? null, null, 'an answer for the thread left');
      r.onResult(threadCosts([runCost()], 'thread:b'));
      assert.equal(model.costs?.byRun.r1?.costMicroUsd, 1_200);
      r.refresh();
      run();
      assert.equal(sent.length, 2, 'thread:b\'s request waits');
      r.reconnected();
      run();
      assert.deepEqual(sent, [T, 'thread:b', 'thread:b'], 'the old session\'s answer never comes');
      model.thread = null;
      r.threadChanged();
      run();
      assert.equal(model.costs, null, 'no thread, no costs');
      assert.equal(sent.length, 3);
    });
  });

  describe('through the Controller', () => {
    class FakeHost implements HostBridge {
      sent: Array<ClientCommand & { requestId: string }> = [];
      private readonly costs: Array<ClientCommand & { requestId: string }> = [];
      private listener: ((d: unknown) => void) | null = null;
      send(c: ClientCommand): void {
        const copy = structuredClone(c) as ClientCommand & { requestId: string };
        this.sent.push(copy);
        if (copy.type === 'getThreadCosts') this.costs.push(copy);
      }
      sendHostAction(_a: HostAction): void {}
      onMessage(l: (d: unknown) => void): () => void {
        this.listener = l;
        return () => (this.listener = null);
      }
      getState(): unknown {
        return undefined;
      }
      setState(): void {}
      post(u: unknown): void {
        this.listener?.(structuredClone(u));
      }
      costRequests() {
        return this.costs;
      }
    }
    const tick = () => new Promise<void>((r) => setImmediate(r));
    let seq = 0;
    const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
    const turn = (n: number) => [
      ev({ type: 'message.added', messageId: `u${n}`, parentId: n === 0 ? null : `a${n - 1}`, role: 'user', content: `q${n}`, runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: `r${n}`, ordinal: n, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: `u${n}` }),
      ev({ type: 'message.added', messageId: `a${n}`, parentId: `u${n}`, role: 'assistant', content: `a${n}`, runId: `r${n}`, status: 'complete' }),
      ev({ type: 'run.ended', runId: `r${n}`, status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 4 } }),
    ];

    function open() {
      seq = 0;
      const host = new FakeHost();
      const model = createModel();
      const c = new Controller(model, host, { warn: () => {}, error: (m) => assert.fail(m) });
      c.start();
      c.openThread(T);
      return { host, model, c };
    }

    it('opening asks once; a replay of 500 ended runs asks once more; the answer is kept in the model', async () => {
      const { host, model, c } = open();
      await tick();
      assert.deepEqual(host.costRequests().map((q) => (q.type === 'getThreadCosts' ? q.threadId : null)), [T]);
      host.post({ type: 'result', inReplyTo: host.costRequests()[0]!.requestId, value: threadCosts([runCost({ runId: 'r0' })]) });
      assert.equal(openThreadCosts(model)?.byRun.r0?.costMicroUsd, 1_200);
      host.post({ type: 'events', threadId: T, events: [ev({ type: 'thread.created', title: 'Costs' }), ...Array.from({ length: 500 }, (_, i) => turn(i)).flat()] });
      await until(async () => Object.keys(model.thread?.runs ?? {}).length === 500, { what: 'the replay to be applied', everyMs: 5 });
      await tick();
      assert.equal(host.costRequests().length, 2, 'one request for the 500 runs that ended');
      c.dispose();
    });

    it('500 runs ending one batch at a time while a request waits make one follow-up; an error shows no notice', async () => {
      const { host, model, c } = open();
      host.post({ type: 'events', threadId: T, events: [ev({ type: 'thread.created', title: 'Costs' })] });
      await tick();
      assert.equal(host.costRequests().length, 1);
      for (let i = 0; i < 500; i++) {
        host.post({ type: 'events', threadId: T, events: turn(i) });
        await tick();
        // Each run ended in the batch that started it: the controller asks for its stream too (answered, or the tracker would forget older requests).
        for (const q of host.sent.splice(0).filter((m) => m.type === 'subscribeTurn')) host.post({ type: 'error', inReplyTo: q.requestId, domain: 'protocol', code: 'unknownTurn', message: 'gone' });
      }
      assert.equal(Object.keys(model.thread!.runs).length, 500);
      assert.equal(host.costRequests().length, 1, 'the first still waits');
      host.post({ type: 'error', inReplyTo: host.costRequests()[0]!.requestId, domain: 'ledger', code: 'unknownThread', message: 'no such thread' });
      await tick();
      assert.equal(host.costRequests().length, 2, 'one follow-up');
      assert.deepEqual(model.notices, []);
      host.post({ type: 'result', inReplyTo: host.costRequests()[1]!.requestId, value: threadCosts([runCost({ runId: 'r7', costMicroUsd: 0, unpricedResponses: 1 })]) });
      await tick();
      assert.equal(host.costRequests().length, 2);
      assert.equal(runCostLabel(runCostOf(model, 'r7')!), 'cost unknown');
      assert.equal(runCostOf(model, 'r8'), null);
      c.dispose();
    });
  });
});
