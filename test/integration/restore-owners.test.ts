/**
 * A restore says who wrote the files it would delete (SPEC 4.2): this thread's tool calls,
 * another thread's, or nobody (hand-made), and asks once more when it would delete files not
 * written by this thread. A real git repository, a real engine, the real OpenAI provider against
 * a fake server writing files with write_file; the undo of the restore through the protocol.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineClient } from '../../src/client/engine-client';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { TestHost, startTestEngine, type TestEngine } from '../support/test-engine';
import { makeRepo, makeSandbox, userState, writeFile, type Sandbox } from '../support/worktree-fixtures';
import { until } from '../support/wait';

describe('restore: who wrote the files it would delete', function () {
  this.timeout(60_000);
  let sb: Sandbox;
  let repo: string;
  let server: FakeServer;
  let t: TestEngine;
  let c: EngineClient;

  beforeEach(async () => {
    sb = makeSandbox();
    fs.mkdirSync(path.join(sb.dir, 'state'));
    repo = makeRepo(sb, 'proj', { files: { 'a.txt': 'base\n' } });
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: 'by-this.txt', content: 'this thread\n' } }]), textTurn('wrote it'),
        toolCallTurn([{ name: 'write_file', args: { path: 'by-other.txt', content: 'other thread\n' } }]), textTurn('wrote mine'),
      ],
    });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, approval: { write: 'auto', execute: 'auto' } });
    t = startTestEngine({ dir: path.join(sb.dir, 'state'), workspaceRoot: repo, host });
    c = t.client();
  });
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    sb.cleanup();
  });
  const idle = () => until(async () => (await c.call('listRuns', {})).runs.length === 0, { what: 'the runs to end' });

  it("lists the deletions by owner and asks when another thread's or a hand-made file would go; Undo puts every byte back", async () => {
    const { threadId } = await c.call('createThread', { title: 'Fix the parser' });
    const { threadId: other } = await c.call('createThread', { title: 'Write the docs' });
    const cp = await c.call('captureCheckpoint', { threadId });
    await c.call('sendPrompt', { threadId, prompt: 'write by-this.txt' });
    await idle();
    const onlyOwn = await c.call('previewRestore', { threadId, ordinal: cp.ordinal });
    assert.deepEqual(onlyOwn.deletedBy, { thisThread: [{ path: 'by-this.txt' }], otherThreads: [], handMade: [] });
    assert.equal(onlyOwn.confirm, false, "deleting only this thread's own files needs no second question");

    await c.call('sendPrompt', { threadId: other, prompt: 'write by-other.txt' });
    await idle();
    writeFile(repo, 'mine.txt', 'typed by hand\n');
    const before = userState(repo);
    const preview = await c.call('previewRestore', { threadId, ordinal: cp.ordinal });
    assert.deepEqual(preview.deleted.map((p) => p.path).sort(), ['by-other.txt', 'by-this.txt', 'mine.txt']);
    assert.deepEqual(preview.deletedBy, {
      thisThread: [{ path: 'by-this.txt' }],
      otherThreads: [{ path: 'by-other.txt', threadId: other, title: 'Write the docs' }],
      handMade: [{ path: 'mine.txt' }],
    });
    assert.equal(preview.confirm, true);

    const r = await c.call('restoreCheckpoint', { threadId, ordinal: cp.ordinal, mode: 'files' });
    for (const f of ['by-this.txt', 'by-other.txt', 'mine.txt']) assert.equal(fs.existsSync(path.join(repo, f)), false, f);
    // The undo is reachable afterwards through the protocol: the newest restore point, undone.
    const { restorePoints } = await c.call('listRestorePoints', {});
    assert.equal(restorePoints[0]!.ref, r.files!.restorePoint);
    await c.call('undoRestore', {});
    assert.equal(fs.readFileSync(path.join(repo, 'mine.txt'), 'utf8'), 'typed by hand\n');
    assert.equal(fs.readFileSync(path.join(repo, 'by-other.txt'), 'utf8'), 'other thread\n');
    const after = userState(repo);
    assert.deepEqual([after.head, after.branch, after.index, after.status], [before.head, before.branch, before.index, before.status]);
  });
});
