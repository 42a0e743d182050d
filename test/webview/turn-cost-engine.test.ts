/**
 * Turn costs end to end: the webview Controller against a real engine session (SQLite, the fake
 * OpenAI-compatible server on loopback, messages delivered asynchronously in order, the grant the
 * chat view connects with) — a priced turn's receipt reaches `model.costs` after its run ends,
 * exactly as the ledger priced it — and a workspace-bound session (an MCP client's grant) reads
 * the costs of its workspace's thread while an id outside it gets `store/notFound`.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine';
import { OWNER_CAPABILITIES } from '../../src/protocol/commands/grants';
import type { EngineUpdate } from '../../src/protocol/updates';
import { TestHost } from '../support/test-engine';
import { Controller, createModel } from '../../webview/src/lib/controller';
import { openThreadCosts, runCostLabel, runCostOf, threadCostLabel } from '../../webview/src/lib/turn-cost-state';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';
import { EngineBridge } from './support/engine-bridge';

const POLL = { everyMs: 5, timeoutMs: 15_000, failFast: true } as const;

describe('webview ↔ engine: turn costs', function () {
  this.timeout(30_000);
  let dir: string;
  let engine: Engine;
  let server: FakeServer;
  let bridge: EngineBridge;

  beforeEach(async () => {
    dir = makeTmpDir();
    // The bundled card: 1,000 uncached × $0.15/M + 1,000 cache reads × $0.075/M + 100 output × $0.60/M = 285 µ$.
    server = await startFakeOpenAI({ responses: [textTurn('Hello.', { usage: { inputTokens: 2_000, cacheReadTokens: 1_000, outputTokens: 100 } })] });
    const host = new TestHost({ model: 'openai:gpt-4o-mini', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, modelChoices: [] });
    engine = createEngine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: fs.realpathSync(dir), demoModelPath: '/nonexistent.gguf' }, host);
    bridge = new EngineBridge(engine);
    bridge.connect();
  });
  afterEach(async () => {
    bridge.dispose();
    await engine.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('a priced turn: its cost reaches the model after the run ends; a workspace-bound session reads it too', async () => {
    const model = createModel();
    const c = new Controller(model, bridge.bridge(), { warn: () => {}, error: (m) => assert.fail(m) });
    c.start();
    model.draft = 'hi';
    assert.ok(c.sendPrompt());
    await until(() => Object.keys(openThreadCosts(model)?.byRun ?? {}).length === 1, { ...POLL, what: 'the turn\'s cost' });
    const runId = Object.keys(model.thread!.runs)[0]!;
    const cost = runCostOf(model, runId)!;
    assert.equal(model.thread!.runs[runId]!.status, 'completed');
    assert.deepEqual([cost.costMicroUsd, cost.unpricedResponses, cost.responses, cost.sources, cost.models], [285, 0, 1, ['priced'], ['openai:gpt-4o-mini']]);
    assert.deepEqual(cost.tokens, { input: 1_000, cacheRead: 1_000, cacheWrite5m: 0, cacheWrite1h: 0, output: 100, reasoning: 0 });
    assert.equal(cost.cards[0]?.source, 'bundled');
    assert.equal(runCostLabel(cost), '$0.000285');
    assert.equal(threadCostLabel(openThreadCosts(model)!), '$0.000285');
    assert.deepEqual(model.notices, []);
    c.dispose();

    // An MCP client's grant: only the threads of this engine's workspace (src/engine/session/thread-scope.ts).
    const updates: EngineUpdate[] = [];
    const scoped = engine.connect((u) => void updates.push(structuredClone(u)), { capabilities: OWNER_CAPABILITIES, holder: 'mcp test', threads: 'workspace' });
    try {
      scoped.handle({ type: 'getThreadCosts', threadId: model.thread!.threadId, requestId: 'in' });
      scoped.handle({ type: 'getThreadCosts', threadId: 'thread:elsewhere', requestId: 'out' });
      await until(() => updates.filter((u) => u.type === 'result' || u.type === 'error').length === 2, { ...POLL, what: 'both answers' });
      const inside = updates.find((u) => (u.type === 'result' || u.type === 'error') && u.inReplyTo === 'in');
      assert.equal(inside?.type, 'result', JSON.stringify(inside));
      assert.equal((inside as { value: { costMicroUsd: number } }).value.costMicroUsd, 285);
      const outside = updates.find((u) => (u.type === 'result' || u.type === 'error') && u.inReplyTo === 'out');
      assert.deepEqual(outside?.type === 'error' ? [outside.domain, outside.code] : outside, ['store', 'notFound']);
    } finally {
      scoped.dispose();
    }
  });
});
