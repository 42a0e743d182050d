/**
 * A workspace-bound protocol session (`Grant.threads: 'workspace'`, what an MCP client holds) on
 * an engine whose database also holds another workspace's threads and a thread of an older build
 * (no workspace recorded): it names, lists, resolves and watches only its workspace's threads; the
 * others' ids get the error an id of no thread gets; a command addressed by a run id is refused;
 * the owner's session on the same engine still reaches everything. The real engine, a real file.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError } from '../../src/client/engine-client';
import { allocate } from '../../src/engine/ids/ids';
import { VoxStore } from '../../src/engine/store/store';
import type { Grant } from '../../src/protocol/commands/grants';
import type { EngineUpdate } from '../../src/protocol/updates';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const bound: Grant = { capabilities: ['read', 'write', 'startThreads'], holder: 'bound client', threads: 'workspace' };

async function failure(p: Promise<unknown>): Promise<{ domain: string; code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ClientError, String(e));
    return { domain: e.domain, code: e.code, message: e.message };
  }
  assert.fail('expected a refusal');
}

describe('a workspace-bound protocol session reaches only its workspace\'s threads', function () {
  this.timeout(60_000);
  let dir: string;
  let t: TestEngine;
  let mine: string;
  let theirs: string;
  const legacy = 'thread:from-an-older-build';

  before(async () => {
    dir = makeTmpDir();
    const wsA = path.join(dir, 'a');
    const wsB = path.join(dir, 'b');
    fs.mkdirSync(wsA);
    fs.mkdirSync(wsB);
    const old = VoxStore.open(path.join(dir, 'vox.db')); // no workspace: what a build before threads.workspace wrote
    old.append({ type: 'thread.created', threadId: legacy, title: 'legacy thread' });
    old.close();
    const b = startTestEngine({ dir, workspaceRoot: wsB });
    theirs = (await b.client().call('createThread', { title: 'their thread' })).threadId;
    await b.dispose();
    t = startTestEngine({ dir, workspaceRoot: wsA });
    mine = (await t.client().call('createThread', { title: 'my thread' })).threadId;
  });
  after(async () => {
    await t.dispose();
    removeTmpDir(dir);
  });

  it('lists and resolves only its own; another workspace\'s or an older build\'s id is notFound like an id of no thread', async () => {
    const c = t.client(bound);
    assert.deepEqual((await c.call('listThreads', {})).threads.map((x) => x.id), [mine]);
    const random = allocate('thread');
    const norm = (e: { domain: string; code: string; message: string }, id: string) => ({ ...e, message: e.message.split(id).join('<id>') });
    const none = norm(await failure(c.call('getThread', { threadId: random })), random);
    assert.deepEqual([none.domain, none.code], ['store', 'notFound']);
    for (const id of [theirs, legacy]) {
      assert.deepEqual(norm(await failure(c.call('getThread', { threadId: id })), id), none);
      assert.deepEqual(norm(await failure(c.call('renameThread', { threadId: id, title: 'mine now' })), id), none);
      assert.deepEqual(norm(await failure(c.call('sendPrompt', { threadId: null, prompt: 'see @that', mentions: [{ kind: 'thread', target: id }] })), id), none);
      assert.deepEqual(await c.call('resolveThreadId', { ref: id }), { threadId: null });
    }
    assert.equal((await c.call('getThread', { threadId: mine })).thread.title, 'my thread');
    const run = await failure(c.call('cancelRun', { runId: 'run:any' }));
    assert.deepEqual([run.domain, run.code], ['protocol', 'capabilityDenied']);
    assert.match(run.message, /only the threads of its workspace/);
    // The owner is not confined.
    const owner = t.client();
    assert.deepEqual((await owner.call('listThreads', {})).threads.map((x) => x.id).sort(), [mine, theirs, legacy].sort());
    assert.equal((await owner.call('getThread', { threadId: theirs })).thread.title, 'their thread');
  });

  it('a thread it creates belongs to its workspace; watchThreads pushes only its workspace\'s changes', async () => {
    const c = t.client(bound);
    const created = (await c.call('createThread', { title: 'new one' })).threadId;
    assert.ok((await c.call('listThreads', {})).threads.some((x) => x.id === created));
    const out: EngineUpdate[] = [];
    const s = t.session(out, bound);
    s.handle({ type: 'watchThreads', requestId: 'w' });
    await waitFor('the watch to start', 5_000, () => out.some((u) => u.type === 'result'), 10);
    const owner = t.client();
    await owner.call('renameThread', { threadId: theirs, title: 'theirs, renamed' });
    await owner.call('renameThread', { threadId: legacy, title: 'legacy, renamed' });
    await owner.call('renameThread', { threadId: mine, title: 'mine, renamed' });
    await waitFor('my thread\'s change', 5_000, () => out.some((u) => u.type === 'threadChanged' && u.threadId === mine), 10);
    const changed = out.flatMap((u) => (u.type === 'threadChanged' ? [u.threadId] : []));
    assert.deepEqual([...new Set(changed)], [mine], 'the other threads\' changes (delivered first, in order) were not pushed');
    s.dispose();
  });
});
