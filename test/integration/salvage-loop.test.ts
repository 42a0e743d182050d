/**
 * SPEC 3.2 through the real agent loop against the fake OpenAI server (real `openai` SDK over
 * loopback, real tools, real SQLite): the single false-refusal retry, and tool calls written as
 * text by a model without native tools — run through the normal approval path, malformed blocks
 * reported to the model in its next request — all of it surviving a reopen of the store.
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
import { ToolRegistry } from '../../src/engine/tools/registry';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry, type TurnChunk } from '../../src/engine/stream/turn-stream-registry';
import { applyRevision } from '../../src/protocol/revisions';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

type Msg = { role: string; content: string | null; tool_calls?: unknown[] };
const REFUSAL = "I'm sorry, but I can't run commands or read files in your environment.";

describe('false-refusal retry and tool-call salvage (agent loop, fake OpenAI server)', function () {
  this.timeout(20_000);
  let dir: string;
  let ws: string;
  let dbPath: string;
  let server: FakeServer;
  let store: VoxStore;
  let streams: TurnStreamRegistry;
  let gate: ApprovalGate;

  async function setup(responses: FakeResponse[], opts: { toolsEnabled?: boolean; tools?: ToolRegistry; decide?: 'approved' | 'denied' } = {}) {
    server = await startFakeOpenAI({ responses });
    gate.onPending((req) => gate.respond(req.callId, opts.decide ?? 'approved'));
    const model: ResolvedModel = {
      provider: new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl }),
      model: 'gpt-test', label: 'openai:gpt-test', toolsEnabled: opts.toolsEnabled ?? true,
    };
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate, tools: opts.tools ?? builtinToolRegistry(), policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
    return async (prompt: string) => {
      const h = runs.start({ prompt, model });
      const live: TurnChunk[] = [];
      const sub = streams.subscribeOrReplay(h.runId, 0, { onChunks: (c) => live.push(...c) });
      live.unshift(...sub.replay);
      const result = await h.done;
      return { result, live };
    };
  }

  /** The streamed text as a live view ends up showing it: text chunks with the revisions applied. */
  const shown = (chunks: TurnChunk[]) => chunks.reduce((acc, c) => (c.kind === 'text' ? acc + c.data : applyRevision(acc, c.kind, c.data)), '');
  const messagesOf = (i: number) => server.requests[i]!.body.messages as Msg[];

  beforeEach(() => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'ws'));
    ws = fs.realpathSync(path.join(dir, 'ws'));
    fs.writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
    dbPath = path.join(dir, 'vox.db');
    store = VoxStore.open(dbPath);
    streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
    gate = new ApprovalGate();
  });
  afterEach(async () => {
    await server?.close();
    store.close();
    removeTmpDir(dir);
  });

  it('a refusal is discarded and retried once with the tools named; the tool then runs; the note survives a reopen', async () => {
    const run = await setup([
      textTurn(['I\'m sorry, but I ', 'can\'t run commands or read files in your environment.']),
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }]),
      textTurn('a.txt says alpha.'),
    ]);
    const { result, live } = await run('what is in a.txt?');
    assert.equal(result.status, 'completed', result.error ?? '');
    assert.equal(server.requests.length, 3);
    // The retry: the refusal is not in the conversation; the reminder names the active tools.
    const second = messagesOf(1);
    assert.ok(!second.some((m) => m.content?.includes("can't run commands")), JSON.stringify(second));
    const reminder = second.at(-1)!;
    assert.equal(reminder.role, 'user');
    assert.match(reminder.content!, /read_file/);
    assert.match(reminder.content!, /run_command/);
    assert.ok(messagesOf(2).some((m) => m.role === 'tool' && m.content!.includes('alpha')), 'the tool ran');
    // The answer has no refusal; the live stream, revised, shows exactly the answer.
    assert.equal(result.text, 'a.txt says alpha.');
    assert.ok(live.some((c) => c.kind === 'refusalRetry'));
    assert.equal(shown(live), result.text);

    store.close();
    store = VoxStore.open(dbPath);
    assert.equal(store.activePath(result.threadId).at(-1)!.content, 'a.txt says alpha.');
    const items = store.items(result.runId);
    assert.deepEqual(items.map((i) => i.kind), ['refusalRetry', 'toolCall', 'text']);
    assert.equal(items[0]!.content, REFUSAL);
    assert.ok((JSON.parse(items[0]!.arguments!) as string[]).includes('read_file'));
    const ev = store.eventsAfter(0, { threadId: result.threadId }).find((e) => e.type === 'run.refusalRetried');
    assert.ok(ev && ev.type === 'run.refusalRetried' && ev.discarded === REFUSAL);
    assert.equal(shown(store.chunksAfter(result.runId, 0) as TurnChunk[]), result.text, 'the persisted chunks replay to the answer');
  });

  it('a second refusal in the same turn stands as the answer: no third call', async () => {
    const run = await setup([textTurn(REFUSAL), textTurn('I cannot execute a shell command, really.')]);
    const { result, live } = await run('run ls');
    assert.equal(result.status, 'completed');
    assert.equal(server.requests.length, 2);
    assert.equal(result.text, 'I cannot execute a shell command, really.');
    assert.equal(live.filter((c) => c.kind === 'refusalRetry').length, 1);
    assert.deepEqual(store.items(result.runId).map((i) => i.kind), ['refusalRetry', 'text']);
  });

  it('no retry when no tools are offered, or when the reply assembled a tool call', async () => {
    const none = await setup([textTurn(REFUSAL)], { tools: new ToolRegistry() });
    const a = await none('run ls');
    assert.equal(server.requests.length, 1);
    assert.equal(a.result.text, REFUSAL);
    await server.close();

    const withCall = await setup([toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }], { text: [REFUSAL] }), textTurn('ok')]);
    const b = await withCall('read a');
    assert.equal(server.requests.length, 2);
    assert.ok(!store.items(b.result.runId).some((i) => (i.kind as string) === 'refusalRetry'));
    assert.match(b.result.text, /can't run commands/);
  });

  it('a model without native tools: fenced and bare-JSON calls run, a malformed block goes back to the model, the system prompt tells the syntax', async () => {
    const reply = [
      'Reading both.',
      '```tool:read_file path=a.txt',
      '```',
      '{"name": "list_files", "arguments": {"path": "."}}',
      '```tool:read_file',
      '{"path": "a.txt",}',
      '```',
      '```tool:teleport',
      '{}',
      '```',
    ].join('\n');
    const run = await setup([textTurn([reply.slice(0, 30), reply.slice(30)]), textTurn('Done: a.txt holds alpha.')], { toolsEnabled: false });
    const { result, live } = await run('look around');
    assert.equal(result.status, 'completed', result.error ?? '');
    const first = server.requests[0]!.body;
    assert.equal(first.tools, undefined, 'no native tools are offered');
    assert.match((first.messages as Msg[])[0]!.content!, /```tool:read_file/);
    assert.match((first.messages as Msg[])[0]!.content!, /write_file\(path, content/);
    // The next request: the model's reply as written, then one message with results and problems.
    const second = messagesOf(1);
    assert.ok(!second.some((m) => m.role === 'tool' || m.tool_calls), 'no native tool messages');
    assert.equal(second.at(-2)!.role, 'assistant');
    assert.equal(second.at(-2)!.content, reply);
    const report = second.at(-1)!.content!;
    assert.match(report, /read_file \{"path":"a.txt"\} → result:\nalpha/);
    assert.match(report, /list_files \{"path":"\."\} → result:[\s\S]*a\.txt/);
    assert.match(report, /```tool:read_file → not run \(badJson\)/);
    assert.match(report, /```tool:teleport → not run \(unknownTool\): There is no tool named "teleport"\. The active tools are: .*read_file/);
    // Displayed: the calls left the text; the broken blocks stayed; the final message agrees with the live view.
    assert.equal(result.text, ['Reading both.', '```tool:read_file\n{"path": "a.txt",}\n```\n```tool:teleport\n{}\n```', 'Done: a.txt holds alpha.'].join('\n\n'));
    assert.equal(shown(live), result.text);
    store.close();
    store = VoxStore.open(dbPath);
    const items = store.items(result.runId);
    assert.deepEqual(items.map((i) => [i.kind, i.toolName, i.status]), [
      ['text', null, 'completed'], ['toolCall', 'read_file', 'completed'], ['toolCall', 'list_files', 'completed'], ['text', null, 'completed'],
    ]);
    assert.equal(items[1]!.arguments, '{"path":"a.txt"}');
  });

  it('salvaged calls go through the approval gate: a denied write changes nothing and the model is told', async () => {
    const run = await setup(
      [textTurn('```tool:write_file path=a.txt\n{"content": "clobbered"}\n```'), textTurn('OK, left alone.')],
      { toolsEnabled: false, decide: 'denied' },
    );
    const { result } = await run('overwrite a');
    assert.equal(result.status, 'completed');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'alpha\n');
    const call = store.items(result.runId).find((i) => i.kind === 'toolCall')!;
    assert.deepEqual([call.toolName, call.status], ['write_file', 'denied']);
    assert.match(messagesOf(1).at(-1)!.content!, /write_file .* → error:\nThe user denied this write_file call/);
  });

  it('a refusal by a model without native tools is retried with the fence syntax in the reminder', async () => {
    const run = await setup([textTurn(REFUSAL), textTurn('```tool:read_file path=a.txt\n```'), textTurn('alpha it is.')], { toolsEnabled: false });
    const { result } = await run('read a');
    assert.equal(result.status, 'completed');
    assert.equal(server.requests.length, 3);
    assert.match(messagesOf(1).at(-1)!.content!, /```tool:<name>/);
    assert.equal(result.text, 'alpha it is.');
    assert.deepEqual(store.items(result.runId).map((i) => i.kind), ['refusalRetry', 'toolCall', 'text']);
  });

  it('a native model: its fenced block is salvaged too, a JSON example about some other tool is left as text', async () => {
    const example = 'An OpenAI call looks like:\n{"name": "get_weather", "arguments": {"city": "Paris"}}';
    const run = await setup([textTurn(example)]);
    const { result } = await run('show me a function call');
    assert.equal(server.requests.length, 1);
    assert.equal(result.text, example);
    await server.close();
    const run2 = await setup([textTurn('```tool:read_file path=a.txt\n```'), textTurn('alpha.')]);
    const b = await run2('read a');
    assert.equal(b.result.text, 'alpha.');
    assert.equal(store.items(b.result.runId).filter((i) => i.kind === 'toolCall').length, 1);
  });
});
