/**
 * The `vox` CLI as a real process: a kill -9 in the middle of a streamed turn leaves a readable
 * database in which the turn is marked interrupted and the text that streamed is kept.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, stallAfter, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { driverEnv, forEachDriver } from '../support/drivers';
import { until } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');
const CLI = [process.execPath, '--import', 'tsx', path.join(ROOT, 'src/cli/main.ts')];
/** How long to wait for the child to stream its first chunks. */
const STREAM_WAIT_MS = 15_000;

forEachDriver('vox CLI crash safety', () => {
  let dir: string;
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  it('kill -9 mid-stream: database readable, run interrupted, partial text kept', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [stallAfter(4, textTurn(['Partial ', 'answer ', 'that ', 'never ', 'ends']))] });
    const env = { ...process.env, ...driverEnv(), VOX_HOME: dir, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const child = spawn(CLI[0]!, [...CLI.slice(1), 'chat', 'tell me something', '--model', 'openai:gpt-test'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const dbFile = path.join(dir, 'vox.db');
    await until(() => {
      if (child.exitCode !== null) assert.fail(`the child exited before it streamed: ${err}`);
      let n = 0;
      try {
        const db = new Database(dbFile, { readonly: true, fileMustExist: true });
        n = (db.prepare("SELECT COUNT(*) AS n FROM turn_chunks WHERE kind = 'text'").get() as { n: number }).n;
        db.close();
      } catch {
        /* not created yet */
      }
      return n >= 2;
    }, { what: 'the child to stream two text chunks', timeoutMs: STREAM_WAIT_MS, everyMs: 100, failFast: true, detail: () => `stderr: ${err}` });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    assert.match(out, /Partial answer/);

    // Readable without recovery: the run still says running, its chunks are there.
    const ro = VoxStore.open(dbFile, { readonly: true });
    const [thread] = ro.listThreads();
    assert.ok(thread);
    assert.equal(ro.runs(thread.id)[0]!.status, 'running');
    ro.close();

    const store = VoxStore.open(dbFile);
    const recovered = store.recoverInterrupted();
    assert.equal(recovered.length, 1);
    const run = store.runs(thread.id)[0]!;
    assert.equal(run.status, 'interrupted');
    const last = store.activePath(thread.id).at(-1)!;
    assert.equal(last.status, 'interrupted');
    assert.ok(last.content.startsWith('Partial answer'), last.content);
    store.close();

    // The CLI itself recovers on its next start and lists the thread.
    const list = spawnSync(CLI[0]!, [...CLI.slice(1), 'threads', '--json'], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual((JSON.parse(list.stdout) as { id: string }[]).map((t) => t.id), [thread.id]);
  });

  it('bad usage exits 2 with a message; a non-SQLite database is refused with a typed error and kept', () => {
    dir = makeTmpDir();
    const env = { ...process.env, ...driverEnv(), VOX_HOME: dir };
    const bad = spawnSync(CLI[0]!, [...CLI.slice(1), 'chat', '--frobnicate'], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown option --frobnicate/);
    fs.writeFileSync(path.join(dir, 'vox.db'), 'not a database');
    const r = spawnSync(CLI[0]!, [...CLI.slice(1), 'threads'], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /StoreError \(notSqlite\)/);
    assert.equal(fs.readFileSync(path.join(dir, 'vox.db'), 'utf8'), 'not a database');
  });
});
