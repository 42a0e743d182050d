/**
 * A run whose process died mid-stream (a window reload kills the extension host; a CLI killed
 * with -9), found by the next engine that opens the database: two `vox chat` processes stream
 * into one database, one is killed, and a new engine marks only that one's run interrupted —
 * "stopped by a reload", with the streamed text kept — while the live process's run goes on.
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { driverEnv } from '../support/drivers';
import { TestHost, startTestEngine, type TestEngine } from '../support/test-engine';
import { VoxStore } from '../../src/engine/store/store';
import { until } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');
const CLI = [process.execPath, '--import', 'tsx', path.join(ROOT, 'src/cli/main.ts')];
/** How long to wait for a child to stream up to its hold. */
const STREAM_WAIT_MS = 20_000;
/** Text chunks each child streams before the server holds its answer. */
const HELD_AT = 3;

describe('reload recovery: a run cut by a reload or a dead process is stopped by a reload, a live one is untouched', () => {
  let dir: string;
  let server: FakeServer | undefined;
  let engine: TestEngine | undefined;
  const children: ChildProcess[] = [];
  const releases: Array<() => void> = [];
  const stores: VoxStore[] = [];
  afterEach(async () => {
    for (const r of releases.splice(0)) r();
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const s of stores.splice(0)) s.close();
    await engine?.dispose();
    engine = undefined;
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  /** A turn held after `HELD_AT` text chunks until the test releases it. */
  function heldTurn(words: string[]): ReturnType<typeof textTurn> {
    const gate = new Promise<void>((r) => releases.push(r));
    // Event 0 is the role chunk: text chunk k is event 1 + k.
    return textTurn(words, { holds: [{ afterEvents: 1 + HELD_AT, release: gate }] });
  }

  function chat(prompt: string, env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string } {
    const child = spawn(CLI[0]!, [...CLI.slice(1), 'chat', prompt, '--model', 'openai:gpt-test'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    children.push(child);
    return { child, stderr: () => err };
  }

  /** Text chunks streamed so far for the run of the thread whose first prompt is `prompt`. */
  function textChunks(dbFile: string, prompt: string): number {
    try {
      const db = new Database(dbFile, { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare(
          `SELECT COUNT(*) AS n FROM turn_chunks c JOIN runs r ON r.id = c.turn_id JOIN messages m ON m.id = r.user_message_id
           WHERE c.kind = 'text' AND m.content = ?`,
        ).get(prompt) as { n: number };
        return row.n;
      } finally {
        db.close();
      }
    } catch {
      return 0; // not created yet
    }
  }

  it('SIGKILL mid-stream: the next engine marks that run interrupted (ownerEnded, text kept); the other process keeps running its own', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [heldTurn(['Killed ', 'run ', 'text ', 'never ', 'ends']), heldTurn(['Live ', 'run ', 'text ', 'goes ', 'on'])] });
    const env = { ...process.env, ...driverEnv(), VOX_HOME: dir, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const dbFile = path.join(dir, 'vox.db');

    const killed = chat('the run that is killed', env);
    await until(() => textChunks(dbFile, 'the run that is killed') >= HELD_AT, { what: 'the first child to stream to its hold', timeoutMs: STREAM_WAIT_MS, everyMs: 100, detail: killed.stderr });
    const live = chat('the run that lives', env);
    await until(() => textChunks(dbFile, 'the run that lives') >= HELD_AT, { what: 'the second child to stream to its hold', timeoutMs: STREAM_WAIT_MS, everyMs: 100, detail: live.stderr });

    const exited = new Promise((r) => killed.child.once('exit', r));
    killed.child.kill('SIGKILL');
    await exited;

    // A new engine on the same database (the reloaded window's).
    engine = startTestEngine({ dir });
    const store = VoxStore.open(dbFile, { readonly: true });
    stores.push(store);
    const byPrompt = (prompt: string) => {
      const t = store.listThreads().find((th) => store.activePath(th.id)[0]?.content === prompt);
      assert.ok(t, `no thread for ${prompt}`);
      return t.id;
    };
    const killedThread = byPrompt('the run that is killed');
    const liveThread = byPrompt('the run that lives');

    const [stopped] = store.runs(killedThread);
    assert.equal(stopped!.status, 'interrupted');
    const ended = store.eventsAfter(0, { threadId: killedThread }).filter((e) => e.type === 'run.ended');
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.type === 'run.ended' && ended[0]!.cause, 'ownerEnded', `run.ended: ${JSON.stringify(ended[0])}`);
    assert.match(stopped!.error ?? '', /stopped by a reload/i);
    const last = store.activePath(killedThread).at(-1)!;
    assert.equal(last.role, 'assistant');
    assert.equal(last.status, 'interrupted');
    assert.equal(last.content, 'Killed run text ');
    assert.ok(engine.host.notices.some((n) => /interrupted/.test(n.message)), JSON.stringify(engine.host.notices));

    // The live process's run is untouched, and finishes in its own process.
    assert.equal(store.runs(liveThread)[0]!.status, 'running');
    assert.equal(live.child.exitCode, null);
    const liveExit = new Promise<number | null>((r) => live.child.once('exit', (code) => r(code)));
    for (const r of releases.splice(0)) r();
    assert.equal(await liveExit, 0, live.stderr());
    await until(() => store.runs(liveThread)[0]!.status === 'completed', { what: 'the live run to complete', timeoutMs: STREAM_WAIT_MS, everyMs: 100 });
    assert.equal(store.activePath(liveThread).at(-1)!.content, 'Live run text goes on');
  });

  it('the engine shut down mid-stream (the window reloads with time to deactivate): the run ends interrupted, ownerEnded, its text kept', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [heldTurn(['Cut ', 'by ', 'the ', 'reload ', 'here'])] });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    const first = startTestEngine({ dir, host });
    const dbFile = first.dbPath;
    const { threadId } = await first.client().call('sendPrompt', { threadId: null, prompt: 'the run the reload cuts' });
    await until(() => textChunks(dbFile, 'the run the reload cuts') >= HELD_AT, { what: 'the turn to stream to its hold', timeoutMs: STREAM_WAIT_MS, everyMs: 50 });
    await first.dispose();

    const store = VoxStore.open(dbFile, { readonly: true });
    stores.push(store);
    const [run] = store.runs(threadId);
    assert.equal(run!.status, 'interrupted');
    const ended = store.eventsAfter(0, { threadId }).filter((e) => e.type === 'run.ended');
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.type === 'run.ended' && ended[0]!.cause, 'ownerEnded', `run.ended: ${JSON.stringify(ended[0])}`);
    const last = store.activePath(threadId).at(-1)!;
    assert.deepEqual({ role: last.role, status: last.status, content: last.content }, { role: 'assistant', status: 'interrupted', content: 'Cut by the ' });
  });
});
