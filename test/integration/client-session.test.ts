/**
 * ClientSession: the engine side of the protocol, driven with raw (untrusted) messages against a
 * real Engine (real SQLite, fake OpenAI server over loopback).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/engine/engine';
import { ClientSession } from '../../src/engine/session/client-session';
import type { EngineUpdate } from '../../src/protocol/updates';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('client session (protocol handlers over a real engine)', function () {
  this.timeout(20_000);
  let dir: string;
  let engine: Engine;
  let server: FakeServer;
  let model = 'openai:gpt-test';

  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn(['Hel', 'lo ', 'there'])] });
    engine = new Engine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: fs.realpathSync(dir), providers: { demoModelPath: '/nonexistent.gguf', openaiBaseUrl: server.baseUrl, openaiApiKey: 'sk-x' } });
  });
  afterEach(async () => {
    await engine.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  function session(out: EngineUpdate[]) {
    return new ClientSession(engine, (u) => out.push(u), {
      getModel: () => model,
      setModel: (m) => void (model = m),
      modelChoices: () => [{ ref: 'openai:gpt-test', label: 'GPT test', isDemo: false }],
    });
  }

  async function until(out: EngineUpdate[], pred: (u: EngineUpdate) => boolean): Promise<EngineUpdate> {
    for (let i = 0; i < 200; i++) {
      const hit = out.find(pred);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out; got ${JSON.stringify(out.map((u) => u.type))}`);
  }

  it('sendPrompt → accepted; two clients see the same turn, one joining mid-way, text identical', async () => {
    const a: EngineUpdate[] = [];
    const sa = session(a);
    sa.handle({ type: 'sendPrompt', requestId: 'r1', threadId: null, prompt: 'hi' });
    const acc = (await until(a, (u) => u.type === 'accepted')) as Extract<EngineUpdate, { type: 'accepted' }>;
    assert.equal(acc.inReplyTo, 'r1');
    sa.handle({ type: 'subscribeTurn', turnId: acc.runId, afterSeq: 0 });
    await until(a, (u) => u.type === 'turnChunks');
    const b: EngineUpdate[] = [];
    const sb = session(b);
    sb.handle(JSON.stringify({ type: 'subscribeTurn', turnId: acc.runId, afterSeq: 1 }));
    sb.handle({ type: 'subscribeThread', threadId: acc.threadId!, afterSeq: 0 });
    await until(a, (u) => u.type === 'turnEnded');
    await until(b, (u) => u.type === 'turnEnded');
    const text = (out: EngineUpdate[], from = 0) =>
      out.flatMap((u) => (u.type === 'turnChunks' ? u.chunks : [])).filter((c) => c.seq > from && c.kind === 'text').map((c) => c.data).join('');
    assert.equal(text(a), 'Hello there');
    const firstChunk = engine.store.chunksAfter(acc.runId!, 0)[0]!.data;
    assert.equal(firstChunk + text(b), 'Hello there');
    await until(b, (u) => u.type === 'events' && u.events.some((e) => (e as { type: string }).type === 'run.ended'));
    sa.dispose();
    sb.dispose();
  });

  it('answers garbage, unknown commands and engine errors with typed error updates', () => {
    const out: EngineUpdate[] = [];
    const s = session(out);
    s.handle('{oops');
    s.handle({ type: 'teleport' });
    s.handle({ type: 'subscribeThread', requestId: 'q', threadId: 'nope', afterSeq: 0 });
    s.handle({ type: 'setModel', requestId: 'm', model: 'bogus' });
    const errs = out.filter((u) => u.type === 'error') as Extract<EngineUpdate, { type: 'error' }>[];
    assert.deepEqual(errs.map((e) => e.code), ['invalidCommand', 'unsupportedCommand', 'notFound', 'badRequest']);
    assert.equal(errs[2]!.inReplyTo, 'q');
    s.dispose();
  });

  it('settings: getSettings and setModel round trip; thread list, rename, delete', async () => {
    const out: EngineUpdate[] = [];
    const s = session(out);
    s.handle({ type: 'setModel', requestId: 'm', model: 'local:demo' });
    const st = (await until(out, (u) => u.type === 'settings')) as Extract<EngineUpdate, { type: 'settings' }>;
    assert.equal(st.model, 'local:demo');
    assert.match(st.demoNotice ?? '', /demo/i);
    engine.store.append({ type: 'thread.created', threadId: 't1', title: 'one' });
    s.handle({ type: 'renameThread', threadId: 't1', title: 'uno' });
    s.handle({ type: 'listThreads', requestId: 'l' });
    const list = out.find((u) => u.type === 'threads') as Extract<EngineUpdate, { type: 'threads' }>;
    assert.deepEqual(list.threads.map((t) => t.title), ['uno']);
    s.handle({ type: 'deleteThread', threadId: 't1' });
    assert.deepEqual(engine.store.listThreads(), []);
    s.dispose();
  });
});
