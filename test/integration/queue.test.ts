/**
 * The thread run queue (SPEC 2.4) over the protocol: a prompt sent while its thread runs is
 * queued (edited, reordered, cancelled) and runs when the turn ends, in queue order; the queue
 * survives an engine restart on the same database; a promoted entry lands at the running turn's
 * next boundary — before the tool batch the model just asked for (which then does not run), or
 * before the next model call — never in the middle of a tool; a prompt queued by a second
 * process (`vox chat --thread T`) waits for the turn of the first and runs in its own process.
 * Real engine, real SQLite, a real OpenAI-wire server that holds a turn open until told.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { MAX_QUEUED_PER_THREAD } from '../../src/engine/runs/queue';
import { STEERED_TOOL_RESULT } from '../../src/engine/agent/runner';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { heldGate } from '../support/scripted';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { CLI_ENTRY, REPO_ROOT, runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';
import { assertRejectsCode } from '../support/assert-code';

describe('thread run queue: queue, edit, reorder, cancel, steer', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;

  const hostFor = (s: FakeServer) => new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: s.baseUrl } });
  async function engineWith(responses: FakeResponse[]) {
    server = await startFakeOpenAI({ responses });
    t = startTestEngine({ dir, host: hostFor(server) });
    return t;
  }
  const userPrompts = async (c: EngineClient, threadId: string) =>
    (await c.call('getThread', { threadId })).messages.filter((m) => m.role === 'user').map((m) => m.content);
  const allEnded = async (c: EngineClient, threadId: string, n: number) => {
    const runs = (await c.call('getThread', { threadId })).runs;
    return runs.length === n && runs.every((r) => r.status !== 'running');
  };

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  it('prompts sent while the thread runs are queued; edited, reordered and cancelled entries run in queue order when the turn ends', async () => {
    const g = heldGate();
    const t = await engineWith([textTurn(['first ', 'answer'], { holds: [{ afterEvents: 1, release: g.held }] }), textTurn('answer B'), textTurn('answer C')]);
    const c = t.client();
    const events: { type: string; entryId?: string }[] = [];
    c.on('events', (u) => void events.push(...(u.events as { type: string }[])));
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'first' });
    const threadId = first.threadId;
    await c.call('subscribeThread', { threadId, afterSeq: 0 });
    assert.ok(first.runId);
    const a = await c.call('sendPrompt', { threadId, prompt: 'prompt A' });
    const b = await c.call('sendPrompt', { threadId, prompt: 'prompt B' });
    const cc = await c.call('sendPrompt', { threadId, prompt: 'prompt C' });
    assert.deepEqual([a, b, cc].map((r) => [r.runId, r.queued?.position]), [[null, 0], [null, 1], [null, 2]]);
    const [ea, eb, ec] = [a.queued!.entryId, b.queued!.entryId, cc.queued!.entryId];

    await c.call('editQueued', { threadId, entryId: eb, prompt: 'prompt B, edited' });
    await c.call('moveQueued', { threadId, entryId: ec, toIndex: 0 });
    await c.call('cancelQueued', { threadId, entryId: ea });
    const listed = (await c.call('listQueue', { threadId })).entries;
    assert.deepEqual(listed.map((e) => [e.entryId, e.prompt, e.position]), [[ec, 'prompt C', 0], [eb, 'prompt B, edited', 1]]);
    assert.equal((await c.call('getQueued', { entryId: ea })).entry.status, 'cancelled');
    await until(() => events.filter((e) => e.type.startsWith('queue.')).length >= 6, { what: 'queue events delivered' });

    g.release();
    await until(() => allEnded(c, threadId, 3), { what: 'three runs ended' });
    assert.deepEqual(await userPrompts(c, threadId), ['first', 'prompt C', 'prompt B, edited']);
    const runs = (await c.call('getThread', { threadId })).runs;
    assert.deepEqual(runs.map((r) => r.status), ['completed', 'completed', 'completed']);
    const started = (await c.call('getQueued', { entryId: ec })).entry;
    assert.deepEqual([started.status, started.runId], ['started', runs[1]!.id]);
    assert.deepEqual((await c.call('listQueue', { threadId })).entries, []);
    // The model saw the edited text, never the cancelled one.
    const sent = JSON.stringify(server.requests.map((r) => r.body.messages));
    assert.match(sent, /prompt B, edited/);
    assert.doesNotMatch(sent, /prompt A/);
  });

  it('Stop pauses the queue: nothing starts by itself; Run now (steer on an idle thread) or a new prompt goes on', async () => {
    const g = heldGate();
    const t = await engineWith([textTurn(['held ', 'turn'], { holds: [{ afterEvents: 1, release: g.held }] }), textTurn('B ran'), textTurn('A ran')]);
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'first' });
    const a = await c.call('sendPrompt', { threadId, prompt: 'A' });
    const b = await c.call('sendPrompt', { threadId, prompt: 'B' });
    await c.call('cancelRun', { runId: runId! });
    g.release();
    await until(async () => (await c.call('getThread', { threadId })).runs[0]?.status === 'cancelled', { what: 'the run stopped' });
    await new Promise((r) => setTimeout(r, 1_200)); // more than two queue polls
    assert.equal((await c.call('getThread', { threadId })).runs.length, 1, 'nothing started after Stop');
    assert.equal((await c.call('listQueue', { threadId })).entries.length, 2);
    const now = await c.call('steerQueued', { threadId, entryId: b.queued!.entryId });
    assert.equal(now.outcome, 'started');
    await until(() => allEnded(c, threadId, 3), { what: 'B and then A ran' });
    assert.deepEqual(await userPrompts(c, threadId), ['first', 'B', 'A']);
    assert.equal((await c.call('getQueued', { entryId: a.queued!.entryId })).entry.status, 'started');
  });

  it('bad input: unknown or finished entries, a full queue, `ifBusy: refuse`, an edit of an earlier message while running', async () => {
    const g = heldGate();
    const t = await engineWith([textTurn(['held ', 'turn'], { holds: [{ afterEvents: 1, release: g.held }] })]);
    const c = t.client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'hold the thread' });
    await assertRejectsCode(c.call('editQueued', { threadId, entryId: 'queued:nope', prompt: 'x' }), 'run/unknownEntry', ClientError);
    await assertRejectsCode(c.call('getQueued', { entryId: 'queued:nope' }), 'run/unknownEntry', ClientError);
    await assertRejectsCode(c.call('listQueue', { threadId: 'thread:nope' }), 'store/notFound', ClientError);
    const one = await c.call('sendPrompt', { threadId, prompt: 'one' });
    await c.call('cancelQueued', { threadId, entryId: one.queued!.entryId });
    await assertRejectsCode(c.call('cancelQueued', { threadId, entryId: one.queued!.entryId }), 'run/unknownEntry', ClientError);
    await assertRejectsCode(c.call('steerQueued', { threadId, entryId: one.queued!.entryId }), 'run/unknownEntry', ClientError);
    await assertRejectsCode(c.call('sendPrompt', { threadId, prompt: 'no queue', ifBusy: 'refuse' }), 'run/threadBusy', ClientError);
    const head = (await c.call('getThread', { threadId })).messages[0]!.id;
    await assertRejectsCode(c.call('sendPrompt', { threadId, prompt: 'an edit', parentMessageId: head }), 'run/threadBusy', ClientError);
    for (let i = 0; i < MAX_QUEUED_PER_THREAD; i++) await c.call('sendPrompt', { threadId, prompt: `p${i}` });
    const full = await assertRejectsCode(c.call('sendPrompt', { threadId, prompt: 'one too many' }), 'run/queueFull', ClientError);
    assert.match(full.message, new RegExp(`${MAX_QUEUED_PER_THREAD} prompts waiting`));
    await assertRejectsCode(c.call('moveQueued', { threadId, entryId: 'queued:nope', toIndex: 0 }), 'run/unknownEntry', ClientError);
    for (const e of (await c.call('listQueue', { threadId })).entries) await c.call('cancelQueued', { threadId, entryId: e.entryId });
    g.release();
  });

  it('the queue survives an engine restart on the same database and drains when the new engine starts', async () => {
    const g = heldGate();
    const t1 = await engineWith([textTurn(['never ', 'finishes'], { holds: [{ afterEvents: 1, release: g.held }] }), textTurn('after restart 1'), textTurn('after restart 2')]);
    const c1 = t1.client();
    const { threadId } = await c1.call('sendPrompt', { threadId: null, prompt: 'interrupted by the restart' });
    await c1.call('sendPrompt', { threadId, prompt: 'queued one' });
    await c1.call('sendPrompt', { threadId, prompt: 'queued two' });
    const disposing = t1.dispose(); // ends the held run: interrupted by the shutdown
    g.release();
    await disposing;
    t = startTestEngine({ dir, host: hostFor(server) });
    const c2 = t.client();
    await until(() => allEnded(c2, threadId, 3), { what: 'both queued prompts ran after the restart' });
    assert.deepEqual(await userPrompts(c2, threadId), ['interrupted by the restart', 'queued one', 'queued two']);
    assert.deepEqual((await c2.call('getThread', { threadId })).runs.map((r) => r.status), ['interrupted', 'completed', 'completed']);
  });

  it('steering before a tool batch: the tool calls the model just asked for do not run; the new instructions go to the model instead', async () => {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello\n');
    const g = heldGate();
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    // The first model call streams a tool call and waits before its last event; the steer is asked meanwhile.
    const t = await engineWith([
      toolCallTurn([{ name: 'write_file', args: { path: 'notes.txt', content: 'overwritten\n' } }], { holds: [{ afterEvents: 2, release: g.held, onReached: () => reached() }] }),
      textTurn('understood, not touching notes.txt'),
      textTurn('a later turn'),
    ]);
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'rewrite notes.txt' });
    await atHold;
    const q = await c.call('sendPrompt', { threadId, prompt: 'stop: do not change notes.txt', steer: true });
    assert.ok(q.queued);
    assert.equal((await c.call('listQueue', { threadId })).entries[0]!.steer, true);
    g.release();
    await until(() => allEnded(c, threadId, 1), { what: 'the run ended' });

    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'hello\n', 'the pre-empted write never ran');
    const entry = (await c.call('getQueued', { entryId: q.queued!.entryId })).entry;
    assert.deepEqual([entry.status, entry.runId], ['steered', runId]);
    const store = VoxStore.open(t.dbPath, { readonly: true });
    const steered = store.eventsAfter(0, { threadId }).filter((e) => e.type === 'run.steered');
    const items = store.items(runId!);
    store.close();
    assert.equal(steered.length, 1);
    assert.deepEqual(steered[0]!.type === 'run.steered' && steered[0]!.skippedTools, ['write_file']);
    assert.deepEqual(items.map((i) => i.kind), ['steer', 'text'], 'no tool item: the call never started');
    // The second model call got a "not run" result for the call, then the user's new instructions.
    const second = server.requests[1]!.body.messages as { role: string; content: unknown }[];
    const tail = second.slice(-2);
    assert.deepEqual(tail.map((m) => m.role), ['tool', 'user']);
    assert.equal(tail[0]!.content, STEERED_TOOL_RESULT);
    assert.equal(tail[1]!.content, 'stop: do not change notes.txt');
    const thread = await c.call('getThread', { threadId });
    assert.deepEqual(thread.messages.map((m) => m.role), ['user', 'assistant'], 'one turn: the steer did not start another');
    assert.equal(thread.runs.length, 1);
    // A later turn's history has the steering prompt where it landed: after the prompt, before the answer.
    const later = await c.call('sendPrompt', { threadId, prompt: 'and now?' });
    await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === later.runId)?.status === 'completed', { what: 'the later turn' });
    const history = (server.requests[2]!.body.messages as { role: string; content: string }[]).filter((m) => m.role !== 'system').map((m) => m.content);
    assert.deepEqual(history, ['rewrite notes.txt', 'stop: do not change notes.txt', 'understood, not touching notes.txt', 'and now?']);
  });

  it('steering while a tool waits for approval never interrupts it: the tool runs, then the steer lands before the next model call', async () => {
    const t = await engineWith(
      [toolCallTurn([{ name: 'write_file', args: { path: 'out.txt', content: 'written\n' } }]), textTurn('done, and noted')],
    ); // write_file asks for approval by default
    const c = t.client();
    const asked: { callId: string }[] = [];
    c.on('approvalRequested', (u) => void asked.push(u));
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'write out.txt' });
    await until(() => asked.length === 1, { what: 'the approval request' });
    const q = await c.call('sendPrompt', { threadId, prompt: 'also mention the file size' });
    const steer = await c.call('steerQueued', { threadId, entryId: q.queued!.entryId });
    assert.deepEqual(steer, { outcome: 'steering', runId });
    await c.call('respondToApproval', { callId: asked[0]!.callId, decision: 'approved' });
    await until(() => allEnded(c, threadId, 1), { what: 'the run ended' });
    assert.equal(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8'), 'written\n');
    const store = VoxStore.open(t.dbPath, { readonly: true });
    const items = store.items(runId!);
    store.close();
    assert.deepEqual(items.map((i) => [i.kind, i.status]), [['toolCall', 'completed'], ['steer', 'completed'], ['text', 'completed']]);
    const second = server.requests[1]!.body.messages as { role: string; content: unknown }[];
    assert.deepEqual(second.slice(-2).map((m) => m.role), ['tool', 'user']);
    assert.equal(second[second.length - 1]!.content, 'also mention the file size');
  });

  it('a steer asked when the turn has no boundary left runs next; steering an idle thread starts the prompt at once', async () => {
    const g = heldGate();
    const t = await engineWith([
      textTurn(['one ', 'two'], { holds: [{ afterEvents: 1, release: g.held }] }),
      textTurn('the steer, as the next turn'),
      textTurn('started by the steer'),
    ]);
    const c = t.client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'start' });
    await c.call('sendPrompt', { threadId, prompt: 'plain queued' });
    const q = await c.call('sendPrompt', { threadId, prompt: 'steer me in', steer: true });
    await c.call('cancelQueued', { threadId, entryId: (await c.call('listQueue', { threadId })).entries[0]!.entryId });
    g.release();
    // The model answered without tools after the steer was asked: no boundary left, so the steer is the next turn.
    await until(() => allEnded(c, threadId, 2), { what: 'two turns ended' });
    assert.deepEqual(await userPrompts(c, threadId), ['start', 'steer me in']);
    assert.equal((await c.call('getQueued', { entryId: q.queued!.entryId })).entry.status, 'started');

    // An entry waiting for another live process (as a CLI leaves it) on an idle thread: steering it starts it here, now.
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const w = VoxStore.open(t.dbPath);
      w.append({ type: 'queue.added', threadId, entryId: 'queued:from-cli', prompt: 'waiting for its cli', model: null, ownerPid: other.pid!, ownerStartedAt: null });
      w.close();
      const r = await c.call('steerQueued', { threadId, entryId: 'queued:from-cli' });
      assert.equal(r.outcome, 'started');
      assert.ok(r.runId);
      await until(() => allEnded(c, threadId, 3), { what: 'the steered-in prompt ran' });
      assert.deepEqual(await userPrompts(c, threadId), ['start', 'steer me in', 'waiting for its cli']);
    } finally {
      other.kill();
    }
  });

  it('a prompt queued by a second process (`vox chat --thread T`) waits for the running turn here, then runs and streams in that process', async () => {
    const g = heldGate();
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    server = await startFakeOpenAI({ responses: [textTurn(['vs code ', 'turn'], { holds: [{ afterEvents: 1, release: g.held, onReached: () => reached() }] }), textTurn('the cli turn answered')] });
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    t = startTestEngine({ dir, host: hostFor(server), config: { dbPath: path.join(home, 'vox.db') } });
    const c = t.client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'the running turn' });
    await atHold;
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const cli = runVox(['chat', '--model', 'openai:gpt-test', '--cwd', dir, '--thread', threadId, 'from the terminal'], env);
    await until(async () => (await c.call('listQueue', { threadId })).entries.length === 1, { what: 'the CLI queued its prompt' });
    const entry = (await c.call('listQueue', { threadId })).entries[0]!;
    assert.notEqual(entry.ownerPid, process.pid, 'queued by the CLI process');
    g.release();
    const r = await cli;
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /is running a turn; your prompt is queued/);
    assert.match(r.out, /the cli turn answered/);
    assert.deepEqual(await userPrompts(c, threadId), ['the running turn', 'from the terminal']);
    const runs = (await c.call('getThread', { threadId })).runs;
    assert.deepEqual(runs.map((x) => x.status), ['completed', 'completed']);
  });

  it('Ctrl-C while `vox chat` waits in the queue takes its prompt out (exit 130); it never runs', async () => {
    const g = heldGate();
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    server = await startFakeOpenAI({ responses: [textTurn(['held ', 'turn'], { holds: [{ afterEvents: 1, release: g.held, onReached: () => reached() }] })] });
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    t = startTestEngine({ dir, host: hostFor(server), config: { dbPath: path.join(home, 'vox.db') } });
    const c = t.client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'the running turn' });
    await atHold;
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'chat', '--model', 'openai:gpt-test', '--cwd', dir, '--thread', threadId, 'never mind'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await until(async () => (await c.call('listQueue', { threadId })).entries.length === 1, { what: 'queued' });
    // The CLI takes Ctrl-C once it has its answer and says so; a signal before that is the default (exit by signal).
    await until(() => err.includes('Ctrl-C takes it out of the queue'), { what: 'the CLI waiting in the queue' });
    const entryId = (await c.call('listQueue', { threadId })).entries[0]!.entryId;
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (x) => r(x)));
    assert.equal(code, 130, err);
    assert.match(err, /your queued prompt was cancelled; it did not run/);
    assert.equal((await c.call('getQueued', { entryId })).entry.status, 'cancelled');
    g.release();
    await until(() => allEnded(c, threadId, 1), { what: 'the held turn ended' });
    assert.deepEqual(await userPrompts(c, threadId), ['the running turn']);
  });
});
