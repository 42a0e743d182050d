/**
 * The run registry: a thread has at most one active run, whoever asks — two sessions of one
 * engine, or separate `vox chat` processes on one database file — and the one refused (a client
 * that asked not to queue: `ifBusy: 'refuse'`, `--no-queue`; queueing is ./queue.test.ts) gets a
 * typed `run/threadBusy`, never a raw SQLite error or a lost or half-written prompt. Stop-all
 * reaches variant runs too. Real engine, real SQLite, real processes, fake OpenAI server.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ClientError } from '../../src/client/engine-client';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeRepo, makeSandbox, type Sandbox } from '../support/worktree-fixtures';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';
import { assertRejectsCode } from '../support/assert-code';

/** A turn slow enough that a second prompt arrives while it runs. */
const slowTurn = (text: string) => textTurn(text.split(' ').map((w) => `${w} `), { eventDelayMs: 60 });

describe('runs: one active run per thread, one owner of all runs', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;

  async function engineWith(responses: Parameters<typeof startFakeOpenAI>[0]['responses']) {
    server = await startFakeOpenAI({ responses });
    const host = openaiHost(server);
    t = startTestEngine({ dir, host });
    return t;
  }

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  it('two prompts on one thread from two sessions at once: one runs, the other gets threadBusy; nothing half-written', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const t = await engineWith([textTurn(['first ', 'answer'], { holds: [{ afterEvents: 1, release: held }] }), textTurn('second answer')]);
    const a = t.client();
    const b = t.client();
    const { threadId } = await a.call('createThread', { title: 'shared' });
    const [ra, rb] = await Promise.allSettled([
      a.call('sendPrompt', { threadId, prompt: 'from session A', ifBusy: 'refuse' }),
      b.call('sendPrompt', { threadId, prompt: 'from session B', ifBusy: 'refuse' }),
    ]);
    const ok = [ra, rb].filter((r) => r.status === 'fulfilled');
    const busy = [ra, rb].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(ok.length, 1);
    assert.equal(busy.length, 1);
    const e = await assertRejectsCode(Promise.reject(busy[0]!.reason), 'run/threadBusy', ClientError);
    const started = (ok[0] as PromiseFulfilledResult<{ runId: string }>).value;
    assert.deepEqual(e.details, { runId: started.runId, threadId });
    assert.match(e.message, /already running a turn/);
    release();

    const thread = await a.call('getThread', { threadId });
    assert.equal(thread.messages.filter((m) => m.role === 'user').length, 1, 'the refused prompt left no message behind');
    assert.equal(thread.runs.length, 1);
    // Once the run ended, the thread takes the next prompt.
    await until(async () => (await a.call('listRuns', {})).runs.length === 0, { what: 'the engine to get there' });
    const next = await b.call('sendPrompt', { threadId, prompt: 'now it is my turn' });
    await until(async () => (await a.call('getThread', { threadId })).runs.find((r) => r.id === next.runId)?.status === 'completed', { what: 'the engine to get there' });
    const after = await a.call('getThread', { threadId });
    assert.deepEqual(after.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant'], 'user → assistant → user → assistant, never user → user');
  });

  it('four `vox chat --no-queue --thread T` processes at once on one database: one runs, three get threadBusy (exit 75), no SQLite error, no lost or extra message', async () => {
    // The turn that wins holds its stream open until the three others have been refused.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    server = await startFakeOpenAI({ responses: [textTurn('created'), textTurn(['the only ', 'turn ', 'that ran'], { holds: [{ afterEvents: 2, release: held }] })] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const made = await runVox(['chat', '--model', 'openai:gpt-test', '--cwd', dir, 'create the thread'], env);
    assert.equal(made.code, 0, made.err);
    const store = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    const threadId = store.listThreads()[0]!.id;
    store.close();
    const runs = [1, 2, 3, 4].map((i) => runVox(['chat', '--no-queue', '--model', 'openai:gpt-test', '--cwd', dir, '--thread', threadId, `prompt ${i}`], env));
    let refused = 0;
    for (const r of runs) void r.then((x) => x.code === 75 && ++refused === 3 && release());
    const results = await Promise.all(runs);
    const codes = results.map((r) => r.code).sort();
    assert.deepEqual(codes, [0, 75, 75, 75], results.map((r) => r.err).join('\n---\n'));
    for (const r of results) assert.doesNotMatch(r.err, /SQLITE|constraint|UNIQUE/i, r.err);
    for (const r of results.filter((x) => x.code === 75)) assert.match(r.err, /already running a turn/);
    const db = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    const msgs = db.activePath(threadId);
    assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.deepEqual(db.runs(threadId).map((r) => [r.ordinal, r.status]), [[0, 'completed'], [1, 'completed']]);
    db.close();
  });

  it('a run left "running" by a dead process does not hold the thread: it is closed as interrupted and the prompt runs', async () => {
    const t = await engineWith([textTurn('fresh answer')]);
    const c = t.client();
    const { threadId } = await c.call('createThread', { title: 'stale' });
    // As a crashed process would leave it (written beside the engine, as another process would).
    const other = VoxStore.open(t.dbPath);
    other.append(
      { type: 'message.added', threadId, messageId: 'm:dead', parentId: null, role: 'user', content: 'before the crash', runId: null, status: 'complete' },
      { type: 'run.started', threadId, runId: 'run:dead', ordinal: 0, provider: 'openai', model: 'x', ownerPid: 2 ** 22 + 12345, userMessageId: 'm:dead' },
    );
    other.close();
    const { runId } = await c.call('sendPrompt', { threadId, prompt: 'after the crash' });
    await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'completed', { what: 'the engine to get there' });
    const runs = (await c.call('getThread', { threadId })).runs;
    assert.deepEqual(runs.map((r) => [r.id, r.status]), [['run:dead', 'interrupted'], [runId, 'completed']]);
  });

  it('a run whose owner pid now belongs to another process (pid reuse) does not hold the thread', async () => {
    const t = await engineWith([textTurn('after the pid was reused')]);
    const c = t.client();
    const { threadId } = await c.call('createThread', { title: 'reused pid' });
    // A live process (not Vox) with the pid the dead owner had; the recorded start time is the dead owner's.
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const w = VoxStore.open(t.dbPath);
      w.append(
        { type: 'message.added', threadId, messageId: 'm:old', parentId: null, role: 'user', content: 'long ago', runId: null, status: 'complete' },
        { type: 'run.started', threadId, runId: 'run:old', ordinal: 0, provider: 'openai', model: 'x', ownerPid: other.pid!, ownerStartedAt: 1_000, userMessageId: 'm:old' },
      );
      w.close();
      const { runId } = await c.call('sendPrompt', { threadId, prompt: 'now' });
      await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'completed', { what: 'the engine to get there' });
      assert.deepEqual((await c.call('getThread', { threadId })).runs.map((r) => [r.id, r.status]), [['run:old', 'interrupted'], [runId, 'completed']]);
    } finally {
      other.kill();
    }
  });

  it('Stop-all (cancelAllRuns) cancels variant runs too, and listRuns counts them', async () => {
    let sb: Sandbox | undefined;
    try {
      sb = makeSandbox();
      const repo = makeRepo(sb, 'proj', { files: { 'a.txt': 'a\n' } });
      server = await startFakeOpenAI({ responses: [slowTurn('variant zero is thinking for a long while'), slowTurn('variant one is thinking for a long while')] });
      const host = openaiHost(server);
      const te = startTestEngine({ dir, workspaceRoot: repo, host });
      t = te;
      const c = te.client();
      const pool = await c.call('startVariants', { prompt: 'think', models: ['openai:gpt-test', 'openai:gpt-test'] });
      await until(async () => (await c.call('listRuns', {})).runs.filter((r) => r.kind === 'variant').length === 2, { what: 'the engine to get there' });
      const { cancelled } = await c.call('cancelAllRuns', {});
      assert.equal(cancelled, 2);
      await until(async () => (await c.call('listVariants', {})).pools[0]!.variants.every((v) => v.status === 'cancelled'), { what: 'the engine to get there' });
      assert.deepEqual((await c.call('listRuns', {})).runs, []);
      await c.call('cancelVariants', { poolId: pool.poolId });
      for (const v of pool.variants) await c.call('discardVariant', { poolId: pool.poolId, index: v.index });
    } finally {
      await t?.dispose();
      sb?.cleanup();
    }
  });
});
