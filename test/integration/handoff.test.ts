/**
 * Context handoff end to end (SPEC 5.1) against the fake OpenAI-compatible server (real `openai`
 * SDK, real SQLite, real tools): a thread's first runs use one model, the next another; the
 * second model's request carries the `<context_handoff>` block (with the first run's tool
 * traffic), the first's does not, and `handoff.built` records what was carried.
 */
import { turnBus } from '../support/turn-stages';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalGate, ApprovalPolicy } from '../../src/engine/approvals/approval';
import { AgentRunner } from '../../src/engine/agent/runner';
import { RateLimitWaits, systemClock } from '../../src/engine/runs/rate-limit';
import { RunRegistry } from '../../src/engine/runs/registry';
import type { ResolvedModel } from '../../src/engine/providers/types';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry } from '../../src/engine/stream/turn-stream-registry';
import { collectTurns, handoffFor } from '../../src/engine/handoff/apply';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

type Sent = { messages: { role: string; content: string }[] };

describe('context handoff through the fake OpenAI server', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let store: VoxStore;
  afterEach(async () => {
    await server?.close();
    store.close();
    removeTmpDir(dir);
  });

  it('a second model gets the handoff block with the first model\'s tool traffic; the first gets none; handoff.built records it', async () => {
    dir = makeTmpDir();
    const ws = fs.realpathSync(fs.mkdirSync(path.join(dir, 'ws'), { recursive: true }) ?? path.join(dir, 'ws'));
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'the build uses esbuild 0.25\n');
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'read_file', args: { path: 'notes.txt' } }]),
        textTurn(['It uses esbuild.']),
        textTurn(['Still gpt-a.']),
        textTurn(['Hello from gpt-b.']),
        textTurn(['gpt-b again.']),
      ],
    });
    store = VoxStore.open(path.join(dir, 'vox.db'));
    const streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
    const provider = new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl });
    const modelA: ResolvedModel = { provider, model: 'gpt-a', label: 'openai:gpt-a', toolsEnabled: true };
    const modelB: ResolvedModel = { provider, model: 'gpt-b', label: 'openai:gpt-b', toolsEnabled: true };
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate: new ApprovalGate(), tools: builtinToolRegistry(), policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });

    const r1 = await runs.start({ prompt: 'which bundler?', model: modelA }).done;
    assert.equal(r1.status, 'completed', r1.error ?? '');
    const r2 = await runs.start({ threadId: r1.threadId, prompt: 'sure?', model: modelA }).done;
    const r3 = await runs.start({ threadId: r1.threadId, prompt: 'now you', model: modelB }).done;
    assert.equal(r3.status, 'completed', r3.error ?? '');
    const r4 = await runs.start({ threadId: r1.threadId, prompt: 'and again', model: modelB }).done;
    assert.equal(r4.status, 'completed', r4.error ?? '');

    const bodies = server.requests.map((r) => JSON.stringify((r.body as Sent).messages));
    for (const b of bodies.slice(0, 3)) assert.ok(!b.includes('<context_handoff'), 'gpt-a\'s requests carry no handoff');
    assert.ok(!bodies[4]!.includes('<context_handoff'), 'the same model again: no new handoff');
    const sent = (server.requests[3]!.body as Sent).messages;
    const last = sent[sent.length - 1]!;
    assert.equal(last.role, 'user');
    assert.ok(last.content.startsWith('<context_handoff covered_runs="0..1" source_model="openai:gpt-a" strategy="deltaSinceTargetLastSeen">\n'), last.content.slice(0, 200));
    assert.ok(last.content.endsWith('</context_handoff>\n\nnow you'), last.content.slice(-80));
    // The tool traffic the history replay never shows is in the handoff.
    assert.match(last.content, /<tool name="read_file" status="completed">\n<arguments>\{"path":"notes.txt"\}<\/arguments>\n<result>[^<]*esbuild 0\.25/);
    assert.match(last.content, /<user>which bundler\?<\/user>[\s\S]*<assistant>It uses esbuild\.<\/assistant>/);
    // The stored prompt is what the user typed.
    assert.equal(store.activePath(r1.threadId).find((m) => m.role === 'user' && m.content.includes('now you'))!.content, 'now you');

    const built = store.eventsAfter(0, { threadId: r1.threadId }).filter((e) => e.type === 'handoff.built');
    assert.equal(built.length, 1);
    assert.deepEqual({ ...built[0], seq: 0, time: 0 }, {
      type: 'handoff.built', seq: 0, time: 0, threadId: r1.threadId, runId: r3.runId, strategy: 'deltaSinceTargetLastSeen', sourceModel: 'openai:gpt-a',
      coveredFrom: 0, coveredTo: 1, turnsVerbatim: 2, turnsCompacted: 0, turnsOmitted: 0, checkpoints: 0, manualChars: 0, manualCharsOmitted: 0,
      tokens: (built[0] as { tokens: number }).tokens, bytes: Buffer.byteLength(last.content.slice(0, last.content.indexOf('</context_handoff>') + '</context_handoff>'.length)),
    });
    void r2;

    // A preview for a third model: deltaSinceTargetLastSeen covers every run (it never ran here); fullThreadSummary too.
    const head = store.activePath(r1.threadId).at(-1)!;
    const modelC: ResolvedModel = { provider, model: 'gpt-c', label: 'openai:gpt-c', toolsEnabled: true };
    assert.equal(collectTurns(store, r1.threadId, head.id, null).turns.length, 4);
    const preview = await handoffFor(store, { threadId: r1.threadId, runId: '', userMessageId: head.id, model: modelC });
    assert.deepEqual(preview?.coveredRuns, { from: 0, to: 3 });
    // For gpt-a: only the runs after its last one (gpt-b's two).
    const back = await handoffFor(store, { threadId: r1.threadId, runId: '', userMessageId: head.id, model: modelA });
    assert.deepEqual(back?.coveredRuns, { from: 2, to: 3 });
    assert.equal(back?.sourceModel, 'openai:gpt-b');
  });

  it('the fork of forkDeltaSummary: an edit of an earlier prompt branches the path; the delta is the new branch\'s runs', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn('a0'), textTurn('a1'), textTurn('a2 on the branch')] });
    store = VoxStore.open(path.join(dir, 'vox.db'));
    const streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
    const provider = new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl });
    const modelA: ResolvedModel = { provider, model: 'gpt-a', label: 'openai:gpt-a', toolsEnabled: false };
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate: new ApprovalGate(), tools: builtinToolRegistry(), policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: dir });
    const r0 = await runs.start({ prompt: 'p0', model: modelA }).done;
    await runs.start({ threadId: r0.threadId, prompt: 'p1', model: modelA }).done;
    const a0 = store.activePath(r0.threadId)[1]!;
    // A new prompt after a0: a sibling of p1, the branch the thread is now on.
    const r2 = await runs.start({ threadId: r0.threadId, prompt: 'p1 edited', model: modelA, parentMessageId: a0.id }).done;
    const head = store.activePath(r0.threadId).at(-1)!;
    const { turns, forkIndex } = collectTurns(store, r0.threadId, head.id, null);
    assert.deepEqual(turns.map((t) => t.prompt), ['p0', 'p1 edited'], 'the other branch\'s run is not on the path');
    assert.equal(forkIndex, 1);
    const modelB: ResolvedModel = { provider, model: 'gpt-b', label: 'openai:gpt-b', toolsEnabled: false };
    const fork = await handoffFor(store, { threadId: r0.threadId, runId: '', userMessageId: head.id, model: modelB }, { strategy: 'forkDeltaSummary' });
    assert.deepEqual(fork?.carried.runs, [r2.runId]);
    assert.match(fork!.preamble, /^<context_handoff covered_runs="2\.\.2" source_model="openai:gpt-a" strategy="forkDeltaSummary">\n[\s\S]*- run 2 \(openai:gpt-a\) user: p1 edited \| answer: a2 on the branch\n<\/context_handoff>$/);
  });
});
