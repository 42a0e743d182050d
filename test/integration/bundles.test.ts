/**
 * Bundles (SPEC 6.6) through the protocol on real engines (real SQLite files)
 * with real runs against the scripted fake OpenAI server: a thread with two branches (a
 * regenerate), a tool call, postures; a workspace rule file and a user rule. Export → import into
 * a fresh database gives the same threads, messages, branches, runs, items and postures; a second
 * import changes nothing; a thread that grew gains exactly its new turn; a thread filter; a newer
 * format version, malformed bundles and a clash are typed errors that import nothing (one
 * transaction); and the `vox session` CLI round trip with --json.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';
import { runVox } from '../support/cli';
import { VoxStore } from '../../src/engine/store/store';
import { BUNDLE_FORMAT_VERSION } from '../../src/engine/bundles/format';

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

/** Everything a thread is, as the protocol shows it (tree, runs with postures, and the items from the store). */
async function snapshot(c: EngineClient, dbPath: string, threadId: string) {
  const tree = await c.call('getThreadTree', { threadId });
  const thread = await c.call('getThread', { threadId });
  const store = VoxStore.open(dbPath, { readonly: true });
  try {
    const items = store.db.prepare('SELECT id, run_id AS runId, kind, tool_name AS toolName, status, content FROM turn_items WHERE run_id IN (SELECT id FROM runs WHERE thread_id = ?) ORDER BY id').all(threadId);
    return {
      title: thread.thread.title,
      createdAt: thread.thread.createdAt,
      messages: tree.messages.map((m) => [m.id, m.parentId, m.role, m.content]),
      branches: tree.branches.map((b) => [b.branchId, b.leafId, b.active]),
      runs: thread.runs.map((r) => [r.id, r.ordinal, r.model, r.status, JSON.stringify(r.posture ?? null), r.usage.inputTokens, r.startedAt]),
      items,
    };
  } finally {
    store.close();
  }
}

function eventCount(dbPath: string): number {
  const s = VoxStore.open(dbPath, { readonly: true });
  try {
    return s.lastSeq();
  } finally {
    s.close();
  }
}

describe('bundles: export and import a whole install (real engines, fake OpenAI)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer;
  let a: TestEngine;
  let ca: EngineClient;
  let threadA: string;
  let threadB: string;
  const bundle = () => path.join(dir, 'vox.bundle.json');

  async function turn(threadId: string | null, prompt: string) {
    const r = await ca.call('sendPrompt', { threadId, prompt });
    await ended(ca, r.threadId, r.runId!);
    return r as { threadId: string; runId: string };
  }

  /** A fresh install (its own database and workspace). */
  function fresh(name: string, host = new TestHost()): TestEngine {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    return startTestEngine({ dir: d, host });
  }

  before(async () => {
    dir = makeTmpDir('vox-bundles-');
    fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
    fs.mkdirSync(path.join(dir, '.vox', 'rules'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.vox', 'rules', 'style.md'), '---\nattach: always\n---\nUse tabs.\n');
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ id: 'call_1', name: 'read_file', args: { path: 'src/a.ts' } }]), textTurn('a is 1'),
        textTurn('second answer'), textTurn('second answer, regenerated'),
        textTurn('other thread answer'),
        textTurn('a later answer'),
      ],
    });
    const host = openaiHost(server);
    host.rules = { rules: [{ name: 'tone', attach: 'manual', body: 'Be brief.' }] };
    a = startTestEngine({ dir, host });
    ca = a.client();
    threadA = (await turn(null, 'what is a?')).threadId;
    await turn(threadA, 'and then?');
    const answer = (await ca.call('getThread', { threadId: threadA })).messages.at(-1)!;
    const regen = await ca.call('regenerate', { threadId: threadA, messageId: answer.id });
    await ended(ca, threadA, regen.runId);
    threadB = (await turn(null, 'another thread')).threadId;
  });

  after(async () => {
    await a?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  it('round trip: export, then import into a fresh database gives the same threads, messages, branches, runs, items and postures', async () => {
    const out = await ca.call('exportBundle', { path: bundle() });
    assert.equal(out.version, BUNDLE_FORMAT_VERSION);
    assert.equal(out.threads, 2);
    const messagesHere = (await ca.call('getThreadTree', { threadId: threadA })).messages.length + (await ca.call('getThreadTree', { threadId: threadB })).messages.length;
    assert.equal(out.messages, messagesHere, 'every message of every branch');
    assert.equal(out.workspaceRules, 1);
    assert.equal(out.userRules, 1);
    const b = fresh('b');
    try {
      const cb = b.client();
      const res = await cb.call('importBundle', { path: bundle() });
      assert.deepEqual([res.threadsAdded, res.threadsMerged, res.threadsUnchanged], [2, 0, 0]);
      assert.equal(res.events, out.events);
      assert.deepEqual(res.workspaceRules, { added: 1, unchanged: 0, conflicts: [] });
      assert.equal(res.userRules.added, 1);
      for (const id of [threadA, threadB]) assert.deepEqual(await snapshot(cb, b.dbPath, id), await snapshot(ca, a.dbPath, id), `thread ${id} is the same`);
      const treeA = await cb.call('getThreadTree', { threadId: threadA });
      assert.equal(treeA.branches.length, 2, 'both branches came along');
      const items = (await snapshot(cb, b.dbPath, threadA)).items as { toolName: string | null }[];
      assert.ok(items.some((i) => i.toolName === 'read_file'), 'the tool call item came along');
      const listed = (await cb.call('listThreads', {})).threads.map((t) => t.id).sort();
      assert.deepEqual(listed, [threadA, threadB].sort());
      assert.equal(fs.readFileSync(path.join(dir, 'b', '.vox', 'rules', 'style.md'), 'utf8'), '---\nattach: always\n---\nUse tabs.\n');
      assert.deepEqual(b.host.rules?.rules, [{ name: 'tone', attach: 'manual', body: 'Be brief.' }]);

      // Importing twice is a no-op.
      const before = eventCount(b.dbPath);
      const again = await cb.call('importBundle', { path: bundle() });
      assert.deepEqual([again.threadsAdded, again.threadsMerged, again.threadsUnchanged, again.events], [0, 0, 2, 0]);
      assert.deepEqual(again.workspaceRules, { added: 0, unchanged: 1, conflicts: [] });
      assert.deepEqual([again.userRules.added, again.userRules.unchanged], [0, 1]);
      assert.equal(eventCount(b.dbPath), before, 'not one event more');
    } finally {
      await b.dispose();
    }
  });

  it('a thread that grew elsewhere gains exactly its new turn; a rule that differs here is kept and reported', async () => {
    const b = fresh('grow');
    try {
      const cb = b.client();
      await ca.call('exportBundle', { path: bundle() });
      await cb.call('importBundle', { path: bundle() });
      await turn(threadB, 'more please');
      fs.writeFileSync(path.join(dir, 'grow', '.vox', 'rules', 'style.md'), 'Use spaces.\n'); // changed here meanwhile
      await ca.call('exportBundle', { path: bundle() });
      const res = await cb.call('importBundle', { path: bundle() });
      assert.deepEqual([res.threadsAdded, res.threadsMerged, res.threadsUnchanged], [0, 1, 1]);
      assert.equal(res.messages, 2, 'the new prompt and its answer');
      assert.equal(res.runs, 1);
      assert.deepEqual(res.workspaceRules.conflicts, ['style']);
      assert.equal(fs.readFileSync(path.join(dir, 'grow', '.vox', 'rules', 'style.md'), 'utf8'), 'Use spaces.\n', 'not overwritten');
      assert.deepEqual(await snapshot(cb, b.dbPath, threadB), await snapshot(ca, a.dbPath, threadB));
      const listed = await cb.call('listThreads', {});
      assert.equal(listed.threads[0]!.id, threadB, 'the grown thread is the most recently updated');
    } finally {
      await b.dispose();
    }
  });

  it('--thread exports only that thread; an unknown thread is a typed error', async () => {
    const out = await ca.call('exportBundle', { path: bundle(), threadIds: [threadB] });
    assert.equal(out.threads, 1);
    const b = fresh('filter');
    try {
      const cb = b.client();
      await cb.call('importBundle', { path: bundle() });
      assert.deepEqual((await cb.call('listThreads', {})).threads.map((t) => t.id), [threadB]);
    } finally {
      await b.dispose();
    }
    await typed(ca.call('exportBundle', { path: bundle(), threadIds: ['thread:nope'] }), 'bundle/unknownThread');
  });

  it('a newer format version, malformed bundles and a clash are typed errors that import nothing', async () => {
    await ca.call('exportBundle', { path: bundle() });
    const good = JSON.parse(fs.readFileSync(bundle(), 'utf8'));
    const b = fresh('bad');
    try {
      const cb = b.client();
      const before = eventCount(b.dbPath);
      const write = (v: unknown, name: string) => {
        const f = path.join(dir, name);
        fs.writeFileSync(f, typeof v === 'string' ? v : JSON.stringify(v));
        return f;
      };
      const newer = await typed(cb.call('importBundle', { path: write({ ...good, version: BUNDLE_FORMAT_VERSION + 1 }, 'newer.json') }), 'bundle/newerVersion');
      assert.match(newer.message, /version 2; this version of Vox reads up to version 1/);
      await typed(cb.call('importBundle', { path: write('{"format": "vox-bundle", "version": 1, "thr', 'cut.json') }), 'bundle/notABundle');
      await typed(cb.call('importBundle', { path: write({ hello: 'world' }, 'other.json') }), 'bundle/notABundle');
      await typed(cb.call('importBundle', { path: path.join(dir, 'missing.json') }), 'bundle/io');
      // The second thread is broken: the first, valid one is not imported either.
      const truncated = structuredClone(good);
      truncated.threads[1].events.pop();
      const e1 = await typed(cb.call('importBundle', { path: write(truncated, 'truncated.json') }), 'bundle/malformed');
      assert.match(e1.message, /threads\[1\]/);
      const badEvent = structuredClone(good);
      badEvent.threads[1].events[1].role = 'wizard';
      await typed(cb.call('importBundle', { path: write(badEvent, 'bad-event.json') }), 'bundle/malformed');
      const foreign = structuredClone(good);
      foreign.threads[1].events[1].threadId = foreign.threads[0].id;
      await typed(cb.call('importBundle', { path: write(foreign, 'foreign.json') }), 'bundle/malformed');
      const badRule = structuredClone(good);
      badRule.rules.workspace[0].file = '../escape.md';
      await typed(cb.call('importBundle', { path: write(badRule, 'bad-rule.json') }), 'bundle/malformed');
      assert.equal(eventCount(b.dbPath), before, 'nothing was imported');
      assert.equal(fs.existsSync(path.join(dir, 'bad', '.vox', 'rules', 'style.md')), false, 'no rule file either');
      assert.deepEqual((await cb.call('listThreads', {})).threads, []);

      // A clash the store refuses (a message id of the bundle's second thread is already another
      // thread's here) rolls back the whole import, the first thread included.
      const clash = structuredClone(good);
      const victim = clash.threads[1].events.find((e: { type: string }) => e.type === 'message.added');
      const store = VoxStore.open(b.dbPath);
      try {
        store.append({ type: 'thread.created', threadId: 'thread:local', title: 'local' }, { type: 'message.added', threadId: 'thread:local', messageId: victim.messageId, parentId: null, role: 'user', content: 'mine', runId: null, status: 'complete' });
      } finally {
        store.close();
      }
      const mid = eventCount(b.dbPath);
      await typed(cb.call('importBundle', { path: write(clash, 'clash.json') }), 'bundle/conflict');
      assert.equal(eventCount(b.dbPath), mid, 'all or nothing');
      assert.equal((await cb.call('listThreads', {})).threads.some((t) => t.id === good.threads[0].id), false, 'the first thread was rolled back too');
      // The rule files and user rules are put in place before the transaction fails: both are taken back.
      assert.equal(fs.existsSync(path.join(dir, 'bad', '.vox', 'rules', 'style.md')), false, 'the rule file was taken back');
      assert.deepEqual(fs.readdirSync(path.join(dir, 'bad')).filter((n) => n === '.vox'), [], 'and the folders made for it');
      assert.deepEqual(b.host.rules?.rules ?? [], [], 'the user rules are as they were');
    } finally {
      await b.dispose();
    }
  });

  it('vox session export-bundle / import-bundle (--json) round trip', async () => {
    const home1 = path.join(dir, 'home1');
    const home2 = path.join(dir, 'home2');
    fs.mkdirSync(home1, { recursive: true });
    fs.mkdirSync(home2, { recursive: true });
    // The CLI's install ($VOX_HOME/vox.db) holds what a's bundle holds.
    await ca.call('exportBundle', { path: bundle() });
    const seed = startTestEngine({ dir: path.join(dir, 'home1'), config: { dbPath: path.join(home1, 'vox.db') } });
    await seed.client().call('importBundle', { path: bundle() });
    await seed.dispose();
    fs.writeFileSync(path.join(dir, 'newer.json'), JSON.stringify({ ...JSON.parse(fs.readFileSync(bundle(), 'utf8')), version: BUNDLE_FORMAT_VERSION + 1 }));
    const file = path.join(dir, 'cli.bundle.json');
    const env = (home: string) => ({ ...process.env, VOX_HOME: home, HOME: dir });
    const ex = await runVox(['session', 'export-bundle', file, '--thread', threadA, '--json', '--cwd', dir], env(home1));
    assert.equal(ex.code, 0, ex.err);
    const exported = JSON.parse(ex.out);
    assert.equal(exported.threads, 1);
    const ws2 = path.join(dir, 'ws2');
    fs.mkdirSync(ws2, { recursive: true });
    const im = await runVox(['session', 'import-bundle', file, '--json', '--cwd', ws2], env(home2));
    assert.equal(im.code, 0, im.err);
    const imported = JSON.parse(im.out);
    assert.equal(imported.threadsAdded, 1);
    const full = await runVox(['session', 'import-bundle', bundle(), '--json', '--cwd', ws2], env(home2));
    assert.equal(full.code, 0, full.err);
    const fullImported = JSON.parse(full.out);
    assert.deepEqual([fullImported.threadsAdded, fullImported.threadsUnchanged], [1, 1]);
    assert.equal(fullImported.userRules.unsupported, 1, 'the CLI keeps no user rules: reported, not lost silently');
    const human = await runVox(['session', 'import-bundle', file, '--cwd', ws2], env(home2));
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /threads: 0 added, 0 merged, 1 unchanged/);
    assert.match(human.out, / {2}0 event\(s\) added/);
    const bad = await runVox(['session', 'import-bundle', path.join(dir, 'newer.json'), '--cwd', ws2], env(home2));
    assert.notEqual(bad.code, 0);
    assert.match(bad.err + bad.out, /BundleError \(newerVersion\)/);
  });
});
