/**
 * The agent loop end to end against the fake OpenAI server (real `openai` SDK over loopback):
 * multi-step tool tasks, approvals, bad tool calls fed back to the model, cancellation, and
 * everything persisted as events in a real SQLite file. Runs start through the run registry, as
 * in the engine; a `beforeTool` hook stands in for checkpoints.
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
import { TurnStreamRegistry, type TurnChunk } from '../../src/engine/stream/turn-stream-registry';
import { httpError, startFakeOpenAI, stallAfter, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('agent loop (fake OpenAI server, real tools, real SQLite)', function () {
  this.timeout(20_000);
  let dir: string;
  let ws: string;
  let server: FakeServer;
  let store: VoxStore;
  let streams: TurnStreamRegistry;
  let gate: ApprovalGate;
  let mutatingCalls: string[];

  async function setup(responses: FakeResponse[], decide: 'approved' | 'denied' = 'approved') {
    server = await startFakeOpenAI({ responses });
    gate.onPending((req) => gate.respond(req.callId, decide));
    const model: ResolvedModel = {
      provider: new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl }),
      model: 'gpt-test', label: 'openai:gpt-test', toolsEnabled: true,
    };
    const hooks = turnBus(store);
    hooks.on('beforeTool', ({ call, tool }) => void (tool.mutating && mutatingCalls.push(`${call.name}:${fs.existsSync(path.join(ws, 'b.txt'))}`)), { name: 'test' });
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate, tools: builtinToolRegistry(), policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks, waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
    const runner = { startTurn: (o: { prompt: string; model: ResolvedModel }) => runs.start(o) };
    return { runner, model };
  }

  beforeEach(() => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'ws'));
    ws = fs.realpathSync(path.join(dir, 'ws'));
    fs.writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
    store = VoxStore.open(path.join(dir, 'vox.db'));
    streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
    gate = new ApprovalGate();
    mutatingCalls = [];
  });
  afterEach(async () => {
    await server?.close();
    store.close();
    removeTmpDir(dir);
  });

  it('completes a two-step tool task: reads a file, writes another (approved), answers', async () => {
    const { runner, model } = await setup([
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'b.txt', content: 'beta from alpha\n' } }], { text: ['Writing b.txt.'] }),
      textTurn(['Done: ', 'b.txt now holds beta.']),
    ]);
    const h = runner.startTurn({ prompt: 'copy a to b', model });
    const live: TurnChunk[] = [];
    const sub = streams.subscribeOrReplay(h.runId, 0, { onChunks: (c) => live.push(...c) });
    live.unshift(...sub.replay);
    const result = await h.done;
    assert.equal(result.status, 'completed', result.error ?? '');
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'beta from alpha\n');
    assert.deepEqual(mutatingCalls, ['write_file:false'], 'checkpoint hook runs before the write');

    // The model saw the read result in its second request, and the tool call id matched.
    const second = server.requests[1]!.body as { messages: { role: string; content: string; tool_call_id?: string }[] };
    const toolMsg = second.messages.find((m) => m.role === 'tool');
    assert.ok(toolMsg && toolMsg.content.includes('alpha'), JSON.stringify(second.messages));
    assert.ok(server.requests[0]!.body.tools.some((t: { function: { name: string } }) => t.function.name === 'write_file'));

    // Persisted: user + final assistant message, the run, the items.
    const msgs = store.activePath(result.threadId);
    assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant']);
    assert.equal(msgs[1]!.content, result.text);
    assert.match(result.text, /Writing b\.txt\.[\s\S]*Done: b\.txt now holds beta\./);
    const items = store.items(result.runId);
    assert.deepEqual(items.filter((i) => i.kind === 'toolCall').map((i) => [i.toolName, i.status]), [['read_file', 'completed'], ['write_file', 'completed']]);
    assert.equal(store.runs(result.threadId)[0]!.status, 'completed');

    // The stream subscriber saw exactly the final text, and the store's chunks agree.
    const streamed = live.filter((c) => c.kind === 'text').map((c) => c.data).join('');
    assert.equal(streamed, result.text);
    assert.deepEqual(live.map((c) => c.seq), live.map((_, i) => i + 1));
    assert.equal(store.chunksAfter(h.runId, 0).length, live.length);
  });

  it('feeds invalid JSON arguments and unknown tools back to the model as errors, and goes on', async () => {
    const { runner, model } = await setup([
      toolCallTurn([{ name: 'read_file', args: '{"path": "a.txt"' }, { name: 'teleport', args: { to: 'mars' } }]),
      textTurn('Sorry, fixed.'),
    ]);
    const result = await runner.startTurn({ prompt: 'go', model }).done;
    assert.equal(result.status, 'completed');
    const toolMsgs = (server.requests[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    assert.equal(toolMsgs.length, 2);
    assert.match(toolMsgs[0]!.content, /invalidArguments/);
    assert.match(toolMsgs[1]!.content, /unknownTool[\s\S]*read_file/);
    const items = store.items(result.runId).filter((i) => i.kind === 'toolCall');
    assert.deepEqual(items.map((i) => [i.status, i.isError]), [['failed', true], ['failed', true]]);
    assert.equal(items[0]!.arguments, '{"path": "a.txt"', 'the raw arguments are kept as sent');
  });

  it('a denied write changes nothing and tells the model', async () => {
    const { runner, model } = await setup(
      [toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'clobbered' } }]), textTurn('OK, I will not.')],
      'denied',
    );
    const result = await runner.startTurn({ prompt: 'overwrite a', model }).done;
    assert.equal(result.status, 'completed');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'alpha\n');
    assert.deepEqual(mutatingCalls, []);
    assert.equal(store.items(result.runId).find((i) => i.kind === 'toolCall')!.status, 'denied');
  });

  it('cancel mid-stream ends the run as cancelled and keeps the streamed text', async () => {
    const { runner, model } = await setup([stallAfter(3, textTurn(['Hello ', 'there ', 'never', 'arrives']))]);
    const h = runner.startTurn({ prompt: 'talk', model });
    await new Promise<void>((resolve) => {
      const sub = streams.subscribeOrReplay(h.runId, 0, {
        onChunks: () => {
          if ((streams.accumulated(h.runId)?.text ?? '').length > 0) resolve();
        },
      });
      if (sub.replay.length > 0) resolve();
    });
    h.cancel();
    const result = await h.done;
    assert.equal(result.status, 'cancelled');
    const last = store.activePath(result.threadId).at(-1)!;
    assert.equal(last.role, 'assistant');
    assert.equal(last.status, 'cancelled');
    assert.ok(last.content.startsWith('Hello'), last.content);
    assert.equal(store.runs(result.threadId)[0]!.status, 'cancelled');
  });

  it('a provider failure ends the run as failed with a clear error', async () => {
    const { runner, model } = await setup([httpError(401, { message: 'bad key' })]);
    const result = await runner.startTurn({ prompt: 'hi', model }).done;
    assert.equal(result.status, 'failed');
    assert.ok(result.error && result.error.length > 0);
    assert.equal(store.runs(result.threadId)[0]!.error, result.error);
  });

  it('two threads run concurrently without mixing their streams', async () => {
    const { runner, model } = await setup([textTurn(['one ', 'one']), textTurn(['two ', 'two'])]);
    const [a, b] = await Promise.all([runner.startTurn({ prompt: 'a', model }).done, runner.startTurn({ prompt: 'b', model }).done]);
    assert.notEqual(a.threadId, b.threadId);
    assert.deepEqual([a.text, b.text].sort(), ['one one', 'two two']);
    for (const r of [a, b]) {
      assert.equal(store.chunksAfter(r.runId, 0).map((c) => c.data).join(''), r.text);
    }
  });
});
