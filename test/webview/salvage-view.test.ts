/**
 * What the chat shows of SPEC 3.2, from the events and chunks a real agent-loop run stored
 * (fake OpenAI server, real SQLite): the "retried after a refusal" note with the discarded reply,
 * and tool calls the model wrote as text shown as tool calls — the same blocks live (chunks
 * before the final message), after the run, and replayed from the store's events alone. Plus the
 * reducer's edge cases: a revision never reaches past a tool call, reasoning stays, duplicates
 * and broken chunks are skipped.
 */
import { turnBus } from '../support/turn-stages';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalGate, ApprovalPolicy } from '../../src/engine/approvals/approval';
import { AgentRunner } from '../../src/engine/agent/runner';
import { RateLimitWaits, systemClock } from '../../src/engine/runs/rate-limit';
import { RunRegistry } from '../../src/engine/runs/registry';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry } from '../../src/engine/stream/turn-stream-registry';
import { applyChunks, applyEvents, createThreadState, type RunView, type WireChunk } from '../../webview/src/lib/thread-state';
import { runBlocks, runText } from '../../webview/src/lib/blocks';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const REFUSAL = "Sorry, I don't have access to a terminal or your files.";

describe('chat view of refusal retries and salvaged tool calls (from a real run)', function () {
  this.timeout(20_000);
  let dir: string;
  let server: FakeServer;
  let store: VoxStore;

  async function runOnce(responses: FakeResponse[], toolsEnabled: boolean) {
    server = await startFakeOpenAI({ responses });
    const streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
    const gate = new ApprovalGate();
    gate.onPending((req) => gate.respond(req.callId, 'approved'));
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate, tools: builtinToolRegistry(), policy: () => policy });
    const ws = fs.realpathSync(path.join(dir, 'ws'));
    const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
    const model = { provider: new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl }), model: 'gpt-test', label: 'openai:gpt-test', toolsEnabled };
    const result = await runs.start({ prompt: 'go', model }).done;
    const events = store.eventsAfter(0, { threadId: result.threadId });
    const chunks = store.chunksAfter(result.runId, 0) as WireChunk[];
    /** The view at three moments: live (every chunk, no final message yet), after the run, and replayed from events alone. */
    const view = (which: 'live' | 'done' | 'replay'): RunView => {
      const state = createThreadState(result.threadId);
      const finalAt = events.findIndex((e) => e.type === 'message.added' && e.role === 'assistant');
      applyEvents(state, which === 'live' ? events.slice(0, finalAt) : events);
      if (which !== 'replay') applyChunks(state, result.runId, chunks.map((c) => ({ ...c, turnId: result.runId })));
      return state.runs[result.runId]!;
    };
    return { result, view };
  }

  const kinds = (run: RunView) => runBlocks(run).map((b) => (b.kind === 'tool' ? `tool:${b.tool.name}` : b.kind));

  beforeEach(() => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'ws'));
    fs.writeFileSync(path.join(dir, 'ws', 'a.txt'), 'alpha\n');
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(async () => {
    await server?.close();
    store.close();
    removeTmpDir(dir);
  });

  it('the note replaces the streamed refusal, live and replayed; the discarded text stays readable in it', async () => {
    const { result, view } = await runOnce([
      textTurn(['Sorry, I don\'t have ', 'access to a terminal or your files.']),
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }]),
      textTurn('It says alpha.'),
    ], true);
    assert.equal(result.text, 'It says alpha.');
    for (const which of ['live', 'done', 'replay'] as const) {
      const run = view(which);
      assert.deepEqual(kinds(run), ['refusalRetry', 'tool:read_file', 'text'], which);
      assert.equal(runText(run), 'It says alpha.', which);
      const note = runBlocks(run)[0]!;
      assert.ok(note.kind === 'refusalRetry' && note.discarded === REFUSAL && note.tools.includes('read_file'), which);
    }
  });

  it('calls written as text show as tool calls and leave the text, live and replayed', async () => {
    const reply = 'Let me read it.\n```tool:read_file path=a.txt\n```\n';
    const { result, view } = await runOnce([textTurn([reply.slice(0, 20), reply.slice(20)]), textTurn('It says alpha.')], false);
    assert.equal(result.text, 'Let me read it.\n\nIt says alpha.');
    for (const which of ['live', 'done', 'replay'] as const) {
      const run = view(which);
      assert.deepEqual(kinds(run), ['text', 'tool:read_file', 'text'], which);
      assert.deepEqual(runBlocks(run).flatMap((b) => (b.kind === 'text' ? [b.text.trim()] : [])), ['Let me read it.', 'It says alpha.'], which);
      assert.ok(!runText(run).includes('```tool'), which);
    }
  });
});

describe('salvage chunks in the reducer', () => {
  const R = 'run:1';
  function liveRun() {
    const state = createThreadState('t');
    applyEvents(state, [
      { seq: 1, time: 1, type: 'thread.created', threadId: 't', title: 'x' },
      { seq: 2, time: 2, type: 'message.added', threadId: 't', messageId: 'u', parentId: null, role: 'user', content: 'hi', runId: null, status: 'complete' },
      { seq: 3, time: 3, type: 'run.started', threadId: 't', runId: R, ordinal: 0, provider: 'openai', model: 'm', ownerPid: 1, userMessageId: 'u' },
    ]);
    let seq = 0;
    const chunk = (kind: string, data: string) => applyChunks(state, R, [{ turnId: R, seq: ++seq, kind, data }], (w) => warnings.push(w));
    const warnings: string[] = [];
    return { state, chunk, warnings, run: () => state.runs[R]! };
  }

  it('removes only the step\'s text: reasoning stays, text before a tool call is never reached', () => {
    const v = liveRun();
    v.chunk('text', 'Before.');
    v.chunk('toolCall', JSON.stringify({ itemId: 'i1', callId: 'c1', name: 'read_file', arguments: '{}' }));
    v.chunk('text', '\n\nI can');
    v.chunk('reasoning', 'hmm');
    v.chunk('text', "'t run it.");
    v.chunk('refusalRetry', JSON.stringify({ itemId: 'n1', discarded: "I can't run it.", tools: ['read_file'] }));
    assert.deepEqual(v.run().stream.map((s) => s.kind), ['text', 'tool', 'text', 'reasoning', 'refusalRetry']);
    assert.equal((v.run().stream[2] as { text: string }).text, '\n\n');
    assert.deepEqual(v.warnings, []);
    // A revision longer than the step's text stops at the note and says so.
    v.chunk('textRevised', JSON.stringify({ removed: 50, text: 'x' }));
    assert.equal(v.warnings.length, 1);
  });

  it('textRevised swaps the step text; broken or duplicate chunks are skipped with a warning', () => {
    const v = liveRun();
    v.chunk('text', 'Reading.\n```tool:read_file path=a\n```');
    v.chunk('textRevised', JSON.stringify({ removed: 'Reading.\n```tool:read_file path=a\n```'.length, text: 'Reading.' }));
    assert.equal(runText(v.run()), 'Reading.');
    v.chunk('refusalRetry', '{"itemId": 1}');
    v.chunk('textRevised', 'not json');
    assert.equal(v.warnings.length, 2);
    v.chunk('refusalRetry', JSON.stringify({ itemId: 'n', discarded: '', tools: [] }));
    v.chunk('refusalRetry', JSON.stringify({ itemId: 'n', discarded: '', tools: [] }));
    assert.equal(v.run().stream.filter((s) => s.kind === 'refusalRetry').length, 1);
  });
});
