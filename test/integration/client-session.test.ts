/**
 * ClientSession: the engine side of the protocol, driven with raw (untrusted) messages against a
 * real Engine (real SQLite, fake OpenAI server over loopback).
 */
import { strict as assert } from 'node:assert';
import type { EngineUpdate } from '../../src/protocol/updates';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

describe('client session (protocol handlers over a real engine)', function () {
  this.timeout(20_000);
  let dir: string;
  let t: TestEngine;
  let server: FakeServer;

  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn(['Hel', 'lo ', 'there'])] });
    const host = new TestHost({
      model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl },
      modelChoices: [{ ref: 'openai:gpt-test', label: 'GPT test', isDemo: false }],
    });
    t = startTestEngine({ dir, host, config: { demoModelPath: '/nonexistent.gguf' } });
  });
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  function session(out: EngineUpdate[]) {
    return t.session(out);
  }
  const resultOf = <T>(out: EngineUpdate[], id: string) => (out.find((u) => u.type === 'result' && u.inReplyTo === id) as Extract<EngineUpdate, { type: 'result' }> | undefined)?.value as T;

  const until = (out: EngineUpdate[], pred: (u: EngineUpdate) => boolean): Promise<EngineUpdate> =>
    waitFor('an update', 4_000, () => out.find(pred), { everyMs: 20, detail: () => `got ${JSON.stringify(out.map((u) => u.type))}` });

  it('sendPrompt → result {threadId, runId}; two clients see the same turn, one joining mid-way, text identical', async () => {
    const a: EngineUpdate[] = [];
    const sa = session(a);
    sa.handle({ type: 'sendPrompt', requestId: 'r1', threadId: null, prompt: 'hi' });
    const res = (await until(a, (u) => u.type === 'result')) as Extract<EngineUpdate, { type: 'result' }>;
    assert.equal(res.inReplyTo, 'r1');
    const acc = res.value as { threadId: string; runId: string };
    sa.handle({ type: 'subscribeTurn', turnId: acc.runId, afterSeq: 0 });
    await until(a, (u) => u.type === 'turnChunks');
    const b: EngineUpdate[] = [];
    const sb = session(b);
    sb.handle(JSON.stringify({ type: 'subscribeTurn', turnId: acc.runId, afterSeq: 1 }));
    sb.handle({ type: 'subscribeThread', threadId: acc.threadId, afterSeq: 0 });
    await until(a, (u) => u.type === 'turnEnded');
    await until(b, (u) => u.type === 'turnEnded');
    const text = (out: EngineUpdate[], from = 0) =>
      out.flatMap((u) => (u.type === 'turnChunks' ? u.chunks : [])).filter((c) => c.seq > from && c.kind === 'text').map((c) => c.data).join('');
    assert.equal(text(a), 'Hello there');
    const store = VoxStore.open(t.dbPath, { readonly: true });
    const firstChunk = store.chunksAfter(acc.runId, 0)[0]!.data;
    store.close();
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
    await until(out, (u) => u.type === 'result' && u.inReplyTo === 'm');
    const st = resultOf<{ model: string; demoNotice: string | null }>(out, 'm');
    assert.equal(st.model, 'local:demo');
    assert.match(st.demoNotice ?? '', /demo/i);
    s.handle({ type: 'createThread', requestId: 'c', threadId: 't1', title: 'one' });
    s.handle({ type: 'renameThread', threadId: 't1', title: 'uno' });
    s.handle({ type: 'listThreads', requestId: 'l' });
    const list = resultOf<{ threads: { title: string }[] }>(out, 'l');
    assert.deepEqual(list.threads.map((x) => x.title), ['uno']);
    s.handle({ type: 'deleteThread', threadId: 't1' });
    s.handle({ type: 'listThreads', requestId: 'l2' });
    assert.deepEqual(resultOf<{ threads: unknown[] }>(out, 'l2').threads, []);
    s.dispose();
  });
});
