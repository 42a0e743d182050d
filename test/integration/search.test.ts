/**
 * Search across processes and through its clients: two processes writing to one database while a
 * third searches it (WAL: readers never wait for writers), `vox search --json`, and the
 * protocol's typed refusal of a bad query.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { searchThreads } from '../../src/engine/search/search';
import { runVox, REPO_ROOT } from '../support/cli';
import { driverEnv, forEachDriver } from '../support/drivers';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { ClientError } from '../../src/client/engine-client';

/** Messages each writer process appends. */
const WRITES_PER_PROCESS = 150;

/** Appends WRITES_PER_PROCESS messages (one event per transaction) with the word argv[2] to the database argv[1]. */
const WRITER = `
  require('./test/support/engine-schema.ts');
  const { VoxStore } = require('./src/engine/store/store.ts');
  const [file, word] = process.argv.slice(1);
  const s = VoxStore.open(file);
  const t = 'thread:' + word;
  s.append({ type: 'thread.created', threadId: t, title: 'writer ' + word });
  let parent = null;
  for (let i = 0; i < ${WRITES_PER_PROCESS}; i++) {
    const id = word + '-' + i;
    s.append({ type: 'message.added', threadId: t, messageId: id, parentId: parent, role: 'user', content: 'entry ' + i + ' mentions ' + word + 'marker', runId: null, status: 'complete' });
    parent = id;
  }
  s.close();
  console.log('ok');
`;

function writer(file: string, word: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', WRITER, file, word], { cwd: REPO_ROOT, env: { ...process.env, ...driverEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

forEachDriver('search: two processes writing while one searches', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('every search answers (no busy errors), counts only grow, and at the end every write is found', async () => {
    const file = path.join(dir, 'vox.db');
    const reader = VoxStore.open(file);
    const count = (word: string) => searchThreads(reader.db, `${word}marker`, { now: Date.now(), limit: 100 }).messages.length;
    const running = Promise.all([writer(file, 'alpha'), writer(file, 'bravo')]);
    let done = false;
    void running.then(() => (done = true));
    const seen: number[] = [];
    let searches = 0;
    while (!done) {
      const n = count('alpha') + count('bravo');
      assert.ok(seen.length === 0 || n >= seen[seen.length - 1]!, `counts shrank: ${seen.slice(-3).join(',')} then ${n}`);
      seen.push(n);
      searches++;
      await new Promise((r) => setTimeout(r, 5));
    }
    const results = await running;
    assert.deepEqual(results.map((r) => r.out.trim()), ['ok', 'ok'], results.map((r) => r.err).join('\n'));
    assert.ok(searches > 1);
    assert.equal(count('alpha'), 100); // the limit
    const all = (w: string) => (reader.db.prepare('SELECT COUNT(*) AS n FROM search_fts WHERE text LIKE ?').get(`%${w}marker%`) as { n: number }).n;
    assert.deepEqual([all('alpha'), all('bravo')], [WRITES_PER_PROCESS, WRITES_PER_PROCESS]);
    reader.close();
  });
});

describe('search: clients', () => {
  let dir: string;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    removeTmpDir(dir);
  });

  it('`vox search --json` prints both lists; the human form prints the snippet plain; bad flags and queries are refused', async () => {
    const home = path.join(dir, 'home');
    const s = VoxStore.open(path.join(home, 'vox.db'));
    s.append(
      { type: 'thread.created', threadId: 'th1', title: 'Flaky websocket test' },
      { type: 'message.added', threadId: 'th1', messageId: 'mm1', parentId: null, role: 'user', content: 'The reconnectWebsocket helper times out in CI.', runId: null, status: 'complete' },
    );
    s.close();
    const env = { ...process.env, VOX_HOME: home };
    const out = await runVox(['search', 'websocket', '--json', '--cwd', dir], env);
    assert.equal(out.code, 0, out.err);
    const parsed = JSON.parse(out.out) as { titles: { threadId: string }[]; messages: { messageId: string; snippet: string; ranges: { start: number; end: number }[] }[] };
    assert.deepEqual(parsed.titles.map((x) => x.threadId), ['th1']);
    assert.deepEqual(parsed.messages.map((m) => m.messageId), ['mm1']);
    assert.equal(parsed.messages[0]!.snippet.slice(parsed.messages[0]!.ranges[0]!.start, parsed.messages[0]!.ranges[0]!.end), 'Websocket');
    const human = await runVox(['search', 'times', 'out', '--cwd', dir], env);
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /^ {4}.*helper times out in CI\.$/m, 'the snippet, plain (no markers) when stdout is not a terminal');
    const bad = await runVox(['search', 'x', '--limit', '0', '--cwd', dir], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--limit must be an integer from 1 to 100/);
    const blank = await runVox(['search', '   ', '--cwd', dir], env);
    assert.notEqual(blank.code, 0);
    assert.match(blank.err, /query/);
  });

  it('searchThreads refuses an empty or oversized query with a typed protocol error', async () => {
    t = startTestEngine({ dir });
    const c = t.client();
    for (const query of ['', '  ', 'x'.repeat(501)]) {
      await assert.rejects(c.call('searchThreads', { query }), (e: unknown) => e instanceof ClientError && e.domain === 'protocol');
    }
    assert.deepEqual(await c.call('searchThreads', { query: 'nothing here' }), { titles: [], messages: [] });
  });
});
