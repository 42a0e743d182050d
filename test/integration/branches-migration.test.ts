/**
 * Migration 9 (runs.posture, messages.edited_at) on a database written before it: a schema-8 file
 * with a finished turn (its `run.started` has no posture) opens, its runs report `posture: null`,
 * its tree and branches read, its answer can be edited in place and its prompt regenerated (with
 * the run's model and today's sampling settings, recorded as the new run's posture).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/engine/store/migrations';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** The schema before the conversation tree's migration. */
const BEFORE_TREE = 8;

describe('conversation tree: a database from before migration 9', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  it('opens, reads its tree, edits and regenerates an old turn', async () => {
    const file = path.join(dir, 'vox.db');
    const raw = new Database(file);
    for (const m of MIGRATIONS.filter((x) => x.version <= BEFORE_TREE)) m.up(raw as never);
    raw.pragma(`user_version = ${BEFORE_TREE}`);
    const ev = raw.prepare('INSERT INTO events (thread_id, type, payload, time) VALUES (?, ?, ?, ?)');
    const events: [string, object][] = [
      ['thread.created', { threadId: 'th', title: 'old' }],
      ['message.added', { threadId: 'th', messageId: 'u1', parentId: null, role: 'user', content: 'old question', runId: null, status: 'complete' }],
      ['run.started', { threadId: 'th', runId: 'r1', ordinal: 0, provider: 'openai', model: 'openai:gpt-old', ownerPid: 1, userMessageId: 'u1' }],
      ['message.added', { threadId: 'th', messageId: 'a1', parentId: 'u1', role: 'assistant', content: 'old answer', runId: 'r1', status: 'complete' }],
      ['run.ended', { threadId: 'th', runId: 'r1', status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'end' }],
    ];
    events.forEach(([type, payload], i) => ev.run('th', type, JSON.stringify(payload), 1_000 + i));
    raw.prepare('INSERT INTO threads (id, title, created_at, updated_at, head_message_id, head_set) VALUES (?, ?, ?, ?, ?, 1)').run('th', 'old', 1_000, 1_004, 'a1');
    const msg = raw.prepare('INSERT INTO messages (id, thread_id, parent_id, role, content, run_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    msg.run('u1', 'th', null, 'user', 'old question', null, 'complete', 1_001);
    msg.run('a1', 'th', 'u1', 'assistant', 'old answer', 'r1', 'complete', 1_003);
    raw.prepare("INSERT INTO runs (id, thread_id, ordinal, provider, model, status, owner_pid, user_message_id, started_at, ended_at) VALUES ('r1', 'th', 0, 'openai', 'openai:gpt-old', 'completed', 1, 'u1', 1002, 1004)").run();
    raw.close();

    server = await startFakeOpenAI({ responses: [textTurn('new answer')] });
    const host = openaiHost(server);
    host.sampling = { topP: 0.5 };
    t = startTestEngine({ dir, host });
    const c = t.client();
    const before = await c.call('getThread', { threadId: 'th' });
    assert.equal(before.runs[0]!.posture, null);
    assert.equal(before.messages[1]!.editedAt, null);
    const tree = await c.call('getThreadTree', { threadId: 'th' });
    assert.deepEqual(tree.branches.map((b) => [b.branchId, b.leafId, b.active]), [['main', 'a1', true]]);

    assert.deepEqual(await c.call('editMessage', { threadId: 'th', messageId: 'a1', content: 'old answer, fixed' }), { messageId: 'a1', edited: true, runId: null });
    const regen = await c.call('regenerate', { threadId: 'th', messageId: 'a1' });
    await waitFor('the regenerated run to end', 20_000, async () => (await c.call('getThread', { threadId: 'th' })).runs.some((r) => r.id === regen.runId && r.status === 'completed'), 20);
    assert.equal(server.requests[0]!.body.model, 'gpt-old');
    assert.equal(server.requests[0]!.body.top_p, 0.5);
    const after = await c.call('getThread', { threadId: 'th' });
    assert.deepEqual(after.runs.find((r) => r.id === regen.runId)!.posture, {
      provider: 'openai', model: 'openai:gpt-old', reasoningEffort: null, webSearch: false, temperature: null, topP: 0.5, rules: [], mentions: [],
    });
    const all = await c.call('getThreadTree', { threadId: 'th' });
    assert.deepEqual(all.messages.map((m) => `${m.id === 'a1' ? 'a1' : m.role}: ${m.content}`), ['user: old question', 'a1: old answer, fixed', 'user: old question', 'assistant: new answer']);
  });
});
