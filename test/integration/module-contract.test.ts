/**
 * The module contract end to end: a capability defined only in this test — one command, one event
 * with its migration and projector, a prepareRequest stage — installed in a real engine (real
 * SQLite, the fake OpenAI server) works with no edit outside its own definition; and the stage
 * policy: order, a time limit, a `stopsTurn` failure ending the turn with its typed error, a
 * `reported` one shown to the host and the turn going on.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { defineCommand, type CommandSpec } from '../../src/protocol/commands/define';
import type { EngineUpdate } from '../../src/protocol/updates';
import { object, str, num } from '../../src/protocol/wire/validators';
import { VoxError } from '../../src/protocol/wire/vox-error';
import { PREPARE_ORDER } from '../../src/engine/agent/hooks';
import type { EngineModule, ModuleHandlers } from '../../src/engine/module';
import { ModuleError, installOrder } from '../../src/engine/module';
import { LATEST_SCHEMA_VERSION, STORE_SCHEMAS } from '../../src/engine/modules';
import type { VoxStore } from '../../src/engine/store/store';
import { VoxStore as Store } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** The test capability's protocol file. */
const addNote = defineCommand('addNote', { summary: 'Adds a note to a thread.', requires: ['write'], params: { threadId: str, text: str }, result: object({ count: num }) });

/** The test capability's module: its own table, event, command and stage. */
function notesModule(log: string[] = []): EngineModule {
  const handlers: ModuleHandlers<never, never> = {};
  const table = {
    addNote({ services: { store } }: { services: { store: VoxStore } }, cmd: { threadId: string; text: string }) {
      store.getThread(cmd.threadId);
      store.append({ type: 'note.added', threadId: cmd.threadId, text: cmd.text } as never);
      return { count: (store.db.prepare('SELECT COUNT(*) AS n FROM notes WHERE thread_id = ?').get(cmd.threadId) as { n: number }).n };
    },
  };
  return {
    name: 'notes', deps: ['conversation'],
    commands: { addNote: addNote as unknown as CommandSpec },
    handlers: { ...handlers, ...table } as never,
    schema: {
      module: 'notes',
      migrations: [{ version: LATEST_SCHEMA_VERSION + 1, description: 'notes (test module)', up: (db) => db.exec('CREATE TABLE notes (thread_id TEXT NOT NULL, text TEXT NOT NULL, at INTEGER NOT NULL)') }],
      projectors: { ['note.added' as 'thread.renamed']: ((db: { prepare(s: string): { run(...a: unknown[]): unknown } }, e: { threadId: string; text: string }, time: number) => void db.prepare('INSERT INTO notes VALUES (?, ?, ?)').run(e.threadId, e.text, time)) as never },
    },
    install({ hooks, store }) {
      hooks.on('prepareRequest', ({ threadId }, out) => {
        const notes = (store.db.prepare('SELECT text FROM notes WHERE thread_id = ? ORDER BY at').all(threadId) as { text: string }[]).map((r) => r.text);
        log.push('notes');
        if (notes.length > 0) out.system = `${out.system}\n\nNotes: ${notes.join('; ')}`;
      }, { name: 'notes: system prompt', order: PREPARE_ORDER.system + 50, failure: 'stopsTurn' });
    },
  };
}

class StageTestError extends VoxError<'internal'> {
  override readonly name = 'StageTestError';
  readonly domain = 'internal' as const;
  constructor(message: string) {
    super('internal', message);
  }
}

describe('the module contract: a capability as one module', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
  });
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    server = undefined as unknown as FakeServer;
    t = undefined as unknown as TestEngine;
    removeTmpDir(dir);
  });

  const engineWith = async (modules: EngineModule[], responses = [textTurn('one'), textTurn('two')]) => {
    server = await startFakeOpenAI({ responses });
    const host = new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    t = startTestEngine({ dir, host, modules });
    return t;
  };
  const systemOf = (i: number) => (server.requests[i]!.body.messages as Array<{ role: string; content: string }>)[0]!.content;

  it('a module added in the test only: its command, its event with migration and projector, its prepareRequest stage', async () => {
    const notes = notesModule();
    await engineWith([notes]);
    const c = t.client();
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'hi', model: 'openai:gpt-4o' });
    await waitFor('the first run ends', 30_000, () => server.pending() === 1, 20);
    assert.ok(!systemOf(0).includes('Notes:'));
    // A client that knows the module's protocol file speaks it over a session like any command.
    const out: EngineUpdate[] = [];
    const raw = t.session(out);
    raw.handle({ type: 'addNote', requestId: 'n1', threadId: first.threadId, text: 'use tabs' });
    const added = await waitFor('the answer', 5_000, () => out.find((u) => 'inReplyTo' in u && u.inReplyTo === 'n1'));
    assert.deepEqual(added, { type: 'result', inReplyTo: 'n1', value: { count: 1 } }, 'the handler ran, the event was projected into the module\'s own table');
    await c.call('sendPrompt', { threadId: first.threadId, prompt: 'again', model: 'openai:gpt-4o' });
    await waitFor('the second request', 30_000, () => server.requests.length >= 2, 20);
    assert.ok(systemOf(1).endsWith('Notes: use tabs'), systemOf(1));
    // A bad message is the protocol's typed error, decoded by the module's own spec.
    raw.handle({ type: 'addNote', requestId: 'n2', threadId: first.threadId });
    const bad = await waitFor('the error', 5_000, () => out.find((u) => 'inReplyTo' in u && u.inReplyTo === 'n2'));
    assert.equal(bad.type, 'error');
    assert.equal((bad as { domain?: string }).domain, 'protocol');
    await t.dispose();
    const reopened = Store.open(t.dbPath, { readonly: true, schema: [...STORE_SCHEMAS, notes.schema!] });
    try {
      assert.equal(reopened.db.pragma('user_version'), LATEST_SCHEMA_VERSION + 1, 'the module\'s migration ran');
    } finally {
      reopened.close();
    }
  });

  it('stages run by order, not install order; a stopsTurn failure ends the turn with its typed error', async () => {
    const log: string[] = [];
    const failing: EngineModule = {
      name: 'failing', deps: [],
      install({ hooks }) {
        hooks.on('prepareRequest', () => void log.push('late'), { name: 'late', order: PREPARE_ORDER.messages + 90 });
        hooks.on('prepareRequest', () => void log.push('early'), { name: 'early', order: PREPARE_ORDER.history - 1 });
        hooks.on('reviewStep', () => {
          throw new StageTestError('the test stage refused this reply');
        }, { name: 'test: refuse', failure: 'stopsTurn' });
      },
    };
    await engineWith([failing, notesModule(log)]);
    const c = t.client();
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'hi', model: 'openai:gpt-4o' });
    const ended = await waitFor('the run ends', 30_000, async () => (await c.call('getThread', { threadId: r.threadId })).runs.find((x) => x.status !== 'running'), 20);
    assert.equal(ended.status, 'failed');
    assert.equal(ended.error, 'the test stage refused this reply', 'the typed error\'s own message');
    assert.deepEqual(log, ['early', 'notes', 'late']);
  });

  it('a reported failure and a stage over its time limit are shown to the host; the turn goes on', async () => {
    const reported: EngineModule = {
      name: 'reported', deps: [],
      install({ hooks }) {
        hooks.on('prepareRequest', () => {
          throw new Error('the test stage failed');
        }, { name: 'test: reported', failure: 'reported' });
        hooks.on('beforeModelCall', () => new Promise((resolve) => setTimeout(resolve, 2_000)), { name: 'test: slow', timeoutMs: 50 });
      },
    };
    await engineWith([reported]);
    const c = t.client();
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'hi', model: 'openai:gpt-4o' });
    const ended = await waitFor('the run ends', 30_000, async () => (await c.call('getThread', { threadId: r.threadId })).runs.find((x) => x.status !== 'running'), 20);
    assert.equal(ended.status, 'completed');
    const notices = t.host.notices.filter((n) => n.source === 'hooks').map((n) => n.message);
    assert.ok(notices.some((m) => m.includes('test: reported (prepareRequest) failed: the test stage failed')), notices.join('\n'));
    assert.ok(notices.some((m) => m.includes('test: slow did not finish its beforeModelCall stage within 50 ms')), notices.join('\n'));
  });

  it('a module whose dependency is missing, a dependency loop and two handlers of one command are refused', () => {
    assert.throws(() => installOrder([{ name: 'a', deps: ['nowhere'] }]), (e) => e instanceof ModuleError && /needs nowhere/.test(e.message));
    assert.throws(() => installOrder([{ name: 'a', deps: ['b'] }, { name: 'b', deps: ['a'] }]), (e) => e instanceof ModuleError && /a → b → a/.test(e.message));
    assert.deepEqual(installOrder([{ name: 'b', deps: ['a'] }, { name: 'a', deps: [] }]).map((m) => m.name), ['a', 'b']);
    const dup: EngineModule = { name: 'dup', deps: [], handlers: { searchThreads: (() => ({ threads: [] })) as never } };
    assert.throws(() => startTestEngine({ dir, modules: [dup] }), (e) => e instanceof ModuleError && /searchThreads has two handlers/.test(e.message));
  });
});
