/**
 * The conversation tree through the protocol, on a real engine (real SQLite file) against the
 * scripted fake OpenAI server: regenerate keeps the old answer as a sibling branch (getThreadTree
 * shows both, switchBranch goes back, the model saw the right history each time), retry of a
 * failed and of a cut-off run, an assistant edit in place (original kept in the event log, the
 * next turn sees the edit), a user edit as a new branch, the posture recorded with the sampling
 * settings (and a model override, and a reasoning model's effort), compare data, and every bad
 * input as a typed error.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { startFakeOpenAI, httpError, textTurn, type FakeServer } from '../support/fake-openai-server';
import { heldGate, openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';
import { VoxStore } from '../../src/engine/store/store';
import { initRepo } from '../support/git-fixtures';
import { MAX_TREE_MESSAGES } from '../../src/protocol/commands/branches';

/** What the model was sent in request `i`, without the system prompt: `role: content` lines. */
const seen = (server: FakeServer, i: number): string[] =>
  (server.requests[i]!.body.messages as { role: string; content: string }[]).filter((m) => m.role !== 'system').map((m) => `${m.role}: ${m.content}`);

async function ended(client: EngineClient, threadId: string, runId: string): Promise<void> {
  await waitFor(`run ${runId} to end`, 20_000, async () => (await client.call('getThread', { threadId })).runs.some((r) => r.id === runId && r.status !== 'running'), 20);
}

async function typed(p: Promise<unknown>, domainCode: string): Promise<ClientError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ClientError, String(e));
    assert.equal(`${e.domain}/${e.code}`, domainCode, e.message);
    return e;
  }
  assert.fail(`expected ${domainCode}`);
}

describe('conversation tree: regenerate, retry, edit, switch, compare (engine + fake OpenAI)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;
  let c: EngineClient;

  async function start(responses: Parameters<typeof startFakeOpenAI>[0]['responses']) {
    server = await startFakeOpenAI({ responses });
    t = startTestEngine({ dir, host: openaiHost(server) });
    c = t.client();
  }
  /** Sends a prompt and waits for its run to end. */
  async function turn(threadId: string | null, prompt: string, extra: object = {}) {
    const r = await c.call('sendPrompt', { threadId, prompt, ...extra });
    await ended(c, r.threadId, r.runId!);
    return r as { threadId: string; runId: string };
  }

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  it('regenerate keeps the old answer as a sibling branch; switchBranch goes back to it; the model sees each branch\'s history', async () => {
    await start([textTurn('answer one'), textTurn('answer two'), textTurn('answer two, again'), textTurn('on the old branch')]);
    const { threadId } = await turn(null, 'q1');
    await turn(threadId, 'q2');
    const before = await c.call('getThread', { threadId });
    const oldAnswer = before.messages.at(-1)!;
    const oldPrompt = before.messages.at(-2)!;
    assert.equal(oldAnswer.content, 'answer two');

    const regen = await c.call('regenerate', { threadId, messageId: oldAnswer.id });
    await ended(c, threadId, regen.runId);
    assert.deepEqual(seen(server, 2), ['user: q1', 'assistant: answer one', 'user: q2'], 'the regenerated turn saw the history up to its prompt, not the old answer');

    const tree = await c.call('getThreadTree', { threadId });
    assert.equal(tree.messages.length, 6);
    const answers = tree.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    assert.deepEqual(answers, ['answer one', 'answer two', 'answer two, again']);
    const newPrompt = tree.messages.find((m) => m.id === regen.userMessageId)!;
    assert.equal(newPrompt.content, 'q2');
    assert.equal(newPrompt.parentId, oldPrompt.parentId, 'a sibling of the original prompt');
    assert.deepEqual(tree.branches.map((b) => [b.branchId, b.leafId, b.active]), [
      ['main', oldAnswer.id, false],
      [`main-${oldPrompt.parentId}-1`, tree.messages.at(-1)!.id, true],
    ]);
    assert.equal((await c.call('getThread', { threadId })).messages.at(-1)!.content, 'answer two, again');

    // Back to the old branch (by any message on it: the head goes to its latest leaf).
    const sw = await c.call('switchBranch', { threadId, toMessageId: oldPrompt.id });
    assert.equal(sw.headMessageId, oldAnswer.id);
    const back = await c.call('getThread', { threadId });
    assert.deepEqual(back.messages.map((m) => m.content), ['q1', 'answer one', 'q2', 'answer two']);
    assert.equal((await c.call('getThreadTree', { threadId })).branches.find((b) => b.active)!.leafId, oldAnswer.id);
    await turn(threadId, 'q3');
    assert.deepEqual(seen(server, 3), ['user: q1', 'assistant: answer one', 'user: q2', 'assistant: answer two', 'user: q3']);
    // The switch is in the log.
    const log = VoxStore.open(t.dbPath);
    try {
      assert.ok(log.eventsAfter(0, { threadId }).some((e) => e.type === 'thread.branchSwitched' && e.toMessageId === oldAnswer.id));
    } finally {
      log.close();
    }
  });

  it('the messages a checkpoint "thread" restore rewound are a branch that can be opened', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('a1'), textTurn('a2'), textTurn('a2 after the rewind')] });
    const repo = initRepo(path.join(dir, 'repo'), { 'a.txt': 'a\n' });
    t = startTestEngine({ dir, workspaceRoot: repo, host: openaiHost(server) });
    c = t.client();
    const { threadId } = await turn(null, 'q1');
    const cp = await c.call('captureCheckpoint', { threadId });
    await turn(threadId, 'q2');
    const full = (await c.call('getThread', { threadId })).messages;
    const restored = await c.call('restoreCheckpoint', { threadId, ordinal: cp.ordinal, mode: 'thread' });
    assert.equal(restored.rewoundTo, full[1]!.id);
    const rewound = await c.call('getThreadTree', { threadId });
    assert.equal(rewound.headMessageId, full[1]!.id);
    assert.deepEqual(rewound.branches.map((b) => [b.branchId, b.leafId, b.active]), [['main', full[3]!.id, false]], 'the rewound messages stay, as a branch not active');
    // A prompt after the rewind forks; the rewound branch is still there and opens with switchBranch.
    await turn(threadId, 'q2 again');
    const forked = await c.call('getThreadTree', { threadId });
    assert.deepEqual(forked.branches.map((b) => [b.branchId, b.active]), [['main', false], [`main-${full[1]!.id}-1`, true]]);
    assert.equal((await c.call('switchBranch', { threadId, toMessageId: full[2]!.id })).headMessageId, full[3]!.id);
    assert.deepEqual((await c.call('getThread', { threadId })).messages.map((m) => m.content), ['q1', 'a1', 'q2', 'a2']);
  });

  it('thread.branchSwitched reaches watchThreads listeners', async () => {
    await start([textTurn('a1'), textTurn('a1 again')]);
    const { threadId } = await turn(null, 'q');
    const first = (await c.call('getThread', { threadId })).messages.at(-1)!;
    const regen = await c.call('regenerate', { threadId });
    await ended(c, threadId, regen.runId);
    const changes: string[] = [];
    c.on('threadChanged', (u) => void changes.push(u.eventType));
    await c.call('watchThreads', {});
    await c.call('switchBranch', { threadId, toMessageId: first.id });
    await waitFor('the change to arrive', 5_000, () => changes.includes('thread.branchSwitched'), 10);
  });

  it('records the posture: sampling settings, mentions, a model override (same sampling), a reasoning model\'s effort', async () => {
    await start([textTurn('first'), textTurn('second'), textTurn('third')]);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'remember this\n');
    t.host.sampling = { temperature: 0.3, topP: 0.9 };
    const { threadId, runId } = await turn(null, 'read it', { mentions: [{ kind: 'file', target: 'notes.txt' }] });
    assert.equal(server.requests[0]!.body.temperature, 0.3);
    assert.equal(server.requests[0]!.body.top_p, 0.9);
    assert.equal(server.requests[0]!.body.reasoning_effort, undefined);
    const run0 = (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)!;
    assert.deepEqual(run0.posture, {
      provider: 'openai', model: 'openai:gpt-test', reasoningEffort: null, webSearch: false, temperature: 0.3, topP: 0.9, rules: [], mentions: ['notes.txt'],
    });

    // Regenerate with another model: the original sampling, not today's settings.
    t.host.sampling = { temperature: 1.5 };
    const regen = await c.call('regenerate', { threadId, runId, model: 'openai:gpt-other' });
    await ended(c, threadId, regen.runId);
    assert.equal(server.requests[1]!.body.model, 'gpt-other');
    assert.equal(server.requests[1]!.body.temperature, 0.3);
    const run1 = (await c.call('getThread', { threadId })).runs.find((r) => r.id === regen.runId)!;
    assert.deepEqual(run1.posture, { ...run0.posture, model: 'openai:gpt-other' });
    assert.match(seen(server, 1)[0]!, /remember this/, 'the regenerated prompt keeps its attached file');

    // A reasoning model gets reasoning_effort and no temperature.
    t.host.sampling = { temperature: 0.2, reasoningEffort: 'high' };
    const r2 = await turn(threadId, 'think', { model: 'openai:o3-mini' });
    assert.equal(server.requests[2]!.body.reasoning_effort, 'high');
    assert.equal(server.requests[2]!.body.temperature, undefined);
    const run2 = (await c.call('getThread', { threadId })).runs.find((r) => r.id === r2.runId)!;
    assert.equal(run2.posture!.reasoningEffort, 'high');
    assert.equal(run2.posture!.temperature, 0.2);

    // A bad setting is reported and the provider's defaults used.
    t.host.sampling = { temperature: 'hot' };
    server.push(textTurn('fourth'));
    await turn(threadId, 'again');
    assert.equal(server.requests[3]!.body.temperature, undefined);
    assert.ok(t.host.notices.some((n) => /vox\.sampling\.temperature must be a number/.test(n.message)), JSON.stringify(t.host.notices));
  });

  it('retry: a failed run and a run cut at the output limit become sibling branches; a completed run is notRetryable', async () => {
    await start([httpError(400, { message: 'bad request for this test' }), textTurn('worked this time'), textTurn('cut sh', { stopReason: 'length' }), textTurn('cut short no more')]);
    const failed = await turn(null, 'try');
    const tv = await c.call('getThread', { threadId: failed.threadId });
    assert.equal(tv.runs[0]!.status, 'failed');
    const retried = await c.call('retry', { threadId: failed.threadId, runId: failed.runId });
    await ended(c, failed.threadId, retried.runId);
    const tree = await c.call('getThreadTree', { threadId: failed.threadId });
    assert.deepEqual(tree.messages.map((m) => `${m.role}: ${m.content}`), ['user: try', 'user: try', 'assistant: worked this time']);
    assert.deepEqual(tree.branches.map((b) => b.branchId), ['main', 'main-root-1']);
    assert.deepEqual(seen(server, 1), ['user: try']);

    const cut = await turn(failed.threadId, 'long one');
    const again = await c.call('retry', { threadId: failed.threadId, runId: cut.runId });
    await ended(c, failed.threadId, again.runId);
    assert.equal((await c.call('getThread', { threadId: failed.threadId })).messages.at(-1)!.content, 'cut short no more');
    await typed(c.call('retry', { threadId: failed.threadId, runId: again.runId }), 'branch/notRetryable');
  });

  it('an assistant edit in place: marked edited, original kept in the event log, the next turn sees the edit', async () => {
    await start([textTurn('the wrong answer'), textTurn('ok')]);
    const { threadId } = await turn(null, 'q');
    const answer = (await c.call('getThread', { threadId })).messages.at(-1)!;
    const r = await c.call('editMessage', { threadId, messageId: answer.id, content: 'the right answer' });
    assert.deepEqual(r, { messageId: answer.id, edited: true, runId: null });
    const after = (await c.call('getThread', { threadId })).messages.at(-1)!;
    assert.equal(after.content, 'the right answer');
    assert.equal(typeof after.editedAt, 'number');
    assert.equal((await c.call('getThreadTree', { threadId })).messages.length, 2, 'no truncation, no new message');
    const log = VoxStore.open(t.dbPath);
    try {
      const events = log.eventsAfter(0, { threadId });
      assert.ok(events.some((e) => e.type === 'message.added' && e.messageId === answer.id && e.content === 'the wrong answer'), 'the original stays in the log');
      assert.ok(events.some((e) => e.type === 'message.edited' && e.messageId === answer.id && e.content === 'the right answer'));
    } finally {
      log.close();
    }
    await turn(threadId, 'next');
    assert.deepEqual(seen(server, 1), ['user: q', 'assistant: the right answer', 'user: next']);
  });

  it('a user edit makes a new branch from the original\'s parent and runs it', async () => {
    await start([textTurn('a1'), textTurn('a2'), textTurn('a2 for the edited prompt')]);
    const { threadId } = await turn(null, 'q1');
    await turn(threadId, 'q2');
    const path0 = (await c.call('getThread', { threadId })).messages;
    const r = await c.call('editMessage', { threadId, messageId: path0[2]!.id, content: 'q2, better' });
    assert.equal(r.edited, false);
    assert.ok(r.runId);
    await ended(c, threadId, r.runId);
    assert.deepEqual(seen(server, 2), ['user: q1', 'assistant: a1', 'user: q2, better']);
    const tree = await c.call('getThreadTree', { threadId });
    const edited = tree.messages.find((m) => m.id === r.messageId)!;
    assert.equal(edited.parentId, path0[1]!.id);
    assert.equal(tree.branches.length, 2);
    assert.equal(tree.messages.find((m) => m.id === path0[2]!.id)!.content, 'q2', 'the original prompt is untouched');
  });

  it('compareBranches: shared messages, columns after the divergence point, diffs of the final answers', async () => {
    await start([textTurn('a1'), textTurn('line one\nline two\n'), textTurn('line one\nline 2\n'), textTurn('line one\nline two\nline three\n')]);
    const { threadId } = await turn(null, 'q1');
    await turn(threadId, 'q2');
    const r1 = await c.call('regenerate', { threadId });
    await ended(c, threadId, r1.runId);
    const r2 = await c.call('regenerate', { threadId });
    await ended(c, threadId, r2.runId);
    const tree = await c.call('getThreadTree', { threadId });
    assert.equal(tree.branches.length, 3);
    const leaves = tree.branches.map((b) => b.leafId);
    const cmp = await c.call('compareBranches', { threadId, leafIds: leaves });
    const a1 = tree.messages[1]!;
    assert.deepEqual(cmp.divergence, { index: 2, messageId: a1.id });
    assert.deepEqual(cmp.shared.map((m) => m.content), ['q1', 'a1']);
    assert.deepEqual(cmp.columns.map((col) => [col.branchId, col.messages.map((m) => m.content)]), [
      ['main', ['q2', 'line one\nline two\n']], [`main-${a1.id}-1`, ['q2', 'line one\nline 2\n']], [`main-${a1.id}-2`, ['q2', 'line one\nline two\nline three\n']],
    ]);
    assert.equal(cmp.finalDiffs.length, 2);
    assert.equal(cmp.finalDiffs[0]!.against, leaves[0]);
    assert.match(cmp.finalDiffs[0]!.diff, /-line two\n\+line 2\n/);
    assert.match(cmp.finalDiffs[1]!.diff, /\+line three\n/);
  });

  it('every bad input is a typed error', async () => {
    const gate = heldGate();
    await start([textTurn('a1'), textTurn('b1'), textTurn(['slow ', 'answer'], { holds: [{ afterEvents: 1, release: gate.held }] })]);
    const { threadId } = await turn(null, 'q1');
    const other = await turn(null, 'other thread');
    const msgs = (await c.call('getThread', { threadId })).messages;
    const otherMsg = (await c.call('getThread', { threadId: other.threadId })).messages[0]!;
    const empty = await c.call('createThread', { title: 'empty' });

    await typed(c.call('getThreadTree', { threadId: 'thread:nope' }), 'store/notFound');
    await typed(c.call('switchBranch', { threadId, toMessageId: 'msg:nope' }), 'branch/unknownMessage');
    await typed(c.call('switchBranch', { threadId, toMessageId: otherMsg.id }), 'branch/wrongThread');
    await typed(c.call('regenerate', { threadId, messageId: otherMsg.id }), 'branch/wrongThread');
    await typed(c.call('regenerate', { threadId, messageId: msgs[0]!.id, runId: 'run:x' }), 'branch/badTarget');
    await typed(c.call('regenerate', { threadId, runId: 'run:nope' }), 'run/unknownRun');
    await typed(c.call('regenerate', { threadId: empty.threadId }), 'branch/nothingToRegenerate');
    await typed(c.call('retry', { threadId, runId: other.runId }), 'branch/wrongThread');
    await typed(c.call('editMessage', { threadId, messageId: msgs[1]!.id, content: '' }), 'branch/emptyContent');
    await typed(c.call('editMessage', { threadId, messageId: msgs[1]!.id, content: '  \n ' }), 'branch/emptyContent');
    await typed(c.call('editMessage', { threadId, messageId: 'msg:nope', content: 'x' }), 'branch/unknownMessage');
    await typed(c.call('compareBranches', { threadId, leafIds: [msgs[1]!.id] }), 'branch/badLeaves');
    await typed(c.call('compareBranches', { threadId, leafIds: [msgs[1]!.id, msgs[1]!.id] }), 'branch/badLeaves');
    await typed(c.call('compareBranches', { threadId, leafIds: ['a', 'b', 'c', 'd', 'e'] }), 'branch/badLeaves');
    await typed(c.call('compareBranches', { threadId, leafIds: [msgs[0]!.id, msgs[1]!.id] }), 'branch/badLeaves'); // msgs[0] is not a leaf
    await typed(c.call('compareBranches', { threadId, leafIds: [msgs[1]!.id, otherMsg.id] }), 'branch/wrongThread');
    await typed(c.call('getThreadTree', { threadId: 42 } as never), 'protocol/invalidCommand');

    // While the thread runs: switching and regenerating are refused, nothing written.
    const running = await c.call('sendPrompt', { threadId, prompt: 'q2' });
    await waitFor('the slow turn to stream', 10_000, () => server.requests.length === 3, 10);
    const before = (await c.call('getThreadTree', { threadId })).messages.length;
    const busy = await typed(c.call('switchBranch', { threadId, toMessageId: msgs[0]!.id }), 'run/threadBusy');
    assert.deepEqual(busy.details, { runId: running.runId, threadId });
    await typed(c.call('regenerate', { threadId, messageId: msgs[1]!.id }), 'run/threadBusy');
    await typed(c.call('retry', { threadId, runId: running.runId! }), 'run/threadBusy');
    assert.equal((await c.call('getThreadTree', { threadId })).messages.length, before);
    gate.release();
    await ended(c, threadId, running.runId!);
  });

  it(`getThreadTree of a 10,000-message thread with branches works (limit ${MAX_TREE_MESSAGES}); past the limit: branch/tooLarge`, async () => {
    await start([]);
    const { threadId } = await c.call('createThread', { title: 'big' });
    // Written straight into the store (the same events the engine appends), 500 per transaction.
    const store = VoxStore.open(t.dbPath);
    try {
      let parent: string | null = null;
      const batch: Parameters<VoxStore['append']> = [];
      for (let i = 0; i < 10_000; i++) {
        const forkHere = i % 1_000 === 999;
        const id = `msg:big-${i}`;
        batch.push({ type: 'message.added', threadId, messageId: id, parentId: forkHere ? `msg:big-${i - 3}` : parent, role: i % 2 ? 'assistant' : 'user', content: `m${i}`, runId: null, status: 'complete' });
        if (!forkHere) parent = id;
        if (batch.length === 500) store.append(...batch.splice(0));
      }
      if (batch.length) store.append(...batch);
    } finally {
      store.close();
    }
    const tree = await c.call('getThreadTree', { threadId });
    assert.equal(tree.messages.length, 10_000);
    assert.equal(tree.branches.length, 11);
    assert.equal(tree.branches[0]!.branchId, 'main');
    assert.ok(tree.branches.some((b) => b.branchId === 'main-msg:big-996-1' && b.length === 998));
    const store2 = VoxStore.open(t.dbPath);
    try {
      const extra: Parameters<VoxStore['append']> = [];
      for (let i = 0; i < MAX_TREE_MESSAGES - 10_000 + 1; i++) extra.push({ type: 'message.added', threadId, messageId: `msg:extra-${i}`, parentId: null, role: 'user', content: 'x', runId: null, status: 'complete' });
      for (let i = 0; i < extra.length; i += 1_000) store2.append(...extra.slice(i, i + 1_000));
    } finally {
      store2.close();
    }
    const e = await typed(c.call('getThreadTree', { threadId }), 'branch/tooLarge');
    assert.deepEqual(e.details, { threadId, count: MAX_TREE_MESSAGES + 1, max: MAX_TREE_MESSAGES });
  });
});
