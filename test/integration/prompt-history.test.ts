/**
 * The prompt history (SPEC 6.3) over the protocol: `sendPrompt` records the prompt as typed (its
 * @tokens kept, the attached context not), across threads and engine restarts on the same
 * database; consecutive repeats collapse; the table keeps only the newest MAX_PROMPT_HISTORY;
 * `listPromptHistory` answers newest last; a prompt that failed is still recalled; a client's own
 * prompt (`history: false`) is not; `vox chat` adds to the same history and `vox history --json`
 * reads it. Real engine, real SQLite, a real OpenAI-wire server, the CLI as a real process.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { MAX_PROMPT_HISTORY } from '../../src/protocol/commands/history';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

describe('prompt history: recorded by sendPrompt, persisted, bounded', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;

  const hostFor = (s: FakeServer) => new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: s.baseUrl } });
  const history = async (c: EngineClient, limit?: number) =>
    (await c.call('listPromptHistory', limit === undefined ? {} : { limit })).prompts.map((p) => p.prompt);
  const idle = async (c: EngineClient, threadId: string) => (await c.call('getThread', { threadId })).runs.every((r) => r.status !== 'running');

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  it('keeps prompts as typed across threads and an engine restart, newest last, repeats collapsed, client prompts left out', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('one'), textTurn('two'), textTurn('three'), textTurn('four'), textTurn('five')] });
    t = startTestEngine({ dir, host: hostFor(server) });
    const c = t.client();
    fs.writeFileSync(path.join(dir, 'notes.md'), 'the notes\n');
    const a = await c.call('sendPrompt', { threadId: null, prompt: 'explain @notes.md please', mentions: [{ kind: 'file', target: 'notes.md' }] });
    await until(() => idle(c, a.threadId), { what: 'first turn ended' });
    const b = await c.call('sendPrompt', { threadId: null, prompt: 'second thread' });
    await until(() => idle(c, b.threadId), { what: 'second turn ended' });
    await c.call('sendPrompt', { threadId: b.threadId, prompt: 'second thread' }); // a repeat: collapsed
    await until(() => idle(c, b.threadId), { what: 'third turn ended' });
    await c.call('sendPrompt', { threadId: b.threadId, prompt: 'Continue', history: false });
    await until(() => idle(c, b.threadId), { what: 'fourth turn ended' });
    assert.deepEqual(await history(c), ['explain @notes.md please', 'second thread']);
    const entries = (await c.call('listPromptHistory', {})).prompts;
    assert.deepEqual(entries.map((e) => e.threadId), [a.threadId, b.threadId]);
    assert.ok(entries[0]!.at <= entries[1]!.at);
    await t.dispose();
    t = startTestEngine({ dir, host: hostFor(server) });
    const c2 = t.client();
    assert.deepEqual(await history(c2), ['explain @notes.md please', 'second thread'], 'persisted across the restart');
    assert.deepEqual(await history(c2, 1), ['second thread'], 'limit takes the newest');
    await assert.rejects(c2.call('listPromptHistory', { limit: MAX_PROMPT_HISTORY + 1 }), (e: unknown) => e instanceof ClientError && `${e.domain}/${e.code}` === 'protocol/invalidCommand');
  });

  it('a prompt that failed (unknown model) is still in the history', async () => {
    server = await startFakeOpenAI({ responses: [] });
    t = startTestEngine({ dir, host: hostFor(server) });
    const c = t.client();
    await assert.rejects(c.call('sendPrompt', { threadId: null, prompt: 'to a model that is not there', model: 'nosuch:model' }), ClientError);
    const entries = (await c.call('listPromptHistory', {})).prompts;
    assert.deepEqual(entries.map((e) => [e.prompt, e.threadId]), [['to a model that is not there', null]]);
  });

  it('keeps only the newest MAX_PROMPT_HISTORY rows in the table', () => {
    const store = VoxStore.open(path.join(dir, 'bounded.db'));
    try {
      for (let i = 0; i < MAX_PROMPT_HISTORY + 25; i++) store.recordPrompt(`prompt ${i}`, null);
      store.recordPrompt(`prompt ${MAX_PROMPT_HISTORY + 24}`, 'thread:x'); // the newest again: no new row
      const rows = store.db.prepare('SELECT COUNT(*) AS n FROM prompt_history').get() as { n: number };
      assert.equal(rows.n, MAX_PROMPT_HISTORY);
      const all = store.promptHistory();
      assert.equal(all.length, MAX_PROMPT_HISTORY);
      assert.equal(all[0]!.prompt, 'prompt 25');
      assert.equal(all.at(-1)!.prompt, `prompt ${MAX_PROMPT_HISTORY + 24}`);
      assert.equal(all.at(-1)!.threadId, 'thread:x');
      store.recordPrompt('   ', null);
      assert.equal(store.promptHistory().length, MAX_PROMPT_HISTORY, 'blank prompts are not recorded');
    } finally {
      store.close();
    }
  });

  it('`vox chat` adds to the same history; `vox history --json` reads it', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('from the cli')] });
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    t = startTestEngine({ dir, host: hostFor(server), config: { dbPath: path.join(home, 'vox.db') } });
    const c = t.client();
    await c.call('sendPrompt', { threadId: null, prompt: 'from the view', model: 'nosuch:model' }).catch(() => undefined);
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const chat = await runVox(['chat', '--model', 'openai:gpt-test', '--cwd', dir, 'typed in the terminal'], env);
    assert.equal(chat.code, 0, chat.err);
    assert.deepEqual(await history(c), ['from the view', 'typed in the terminal']);
    const out = await runVox(['history', '--json', '--cwd', dir], env);
    assert.equal(out.code, 0, out.err);
    const parsed = JSON.parse(out.out) as { prompt: string; threadId: string | null }[];
    assert.deepEqual(parsed.map((p) => p.prompt), ['from the view', 'typed in the terminal']);
    const bad = await runVox(['history', '--limit', '0', '--cwd', dir], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--limit must be an integer from 1 to 100/);
  });
});
