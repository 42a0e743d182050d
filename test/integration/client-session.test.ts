/**
 * ClientSession: the engine side of the protocol, driven with raw (untrusted) messages against a
 * real Engine (real SQLite, fake OpenAI server over loopback).
 */
import { strict as assert } from 'node:assert';
import { REPLAY_CHUNK_EVENTS, type EngineUpdate } from '../../src/protocol/updates';
import { readOnlyGrant } from '../../src/protocol/commands/grants';
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

  it('a long replay comes as batches of at most REPLAY_CHUNK_EVENTS, all but the last marked more, in order; live events follow', async () => {
    const threadId = 'thread:long-replay';
    const titles = Array.from({ length: REPLAY_CHUNK_EVENTS * 2 + 7 }, (_, i) => `title ${i}`);
    const writer = VoxStore.open(t.dbPath); // a second connection on the file, as the CLI beside VS Code
    writer.append({ type: 'thread.created', threadId, title: 't' }, ...titles.map((title) => ({ type: 'thread.renamed' as const, threadId, title })));
    writer.close();
    const out: EngineUpdate[] = [];
    const s = session(out);
    s.handle({ type: 'subscribeThread', requestId: 'sub', threadId, afterSeq: 0 });
    await until(out, (u) => u.type === 'result' && u.inReplyTo === 'sub');
    const batches = out.filter((u): u is Extract<EngineUpdate, { type: 'events' }> => u.type === 'events');
    assert.deepEqual(batches.map((b) => b.events.length), [REPLAY_CHUNK_EVENTS, REPLAY_CHUNK_EVENTS, 8]);
    assert.deepEqual(batches.map((b) => b.more === true), [true, true, false]);
    const replayed = batches.flatMap((b) => b.events as { type: string; title?: string; seq: number }[]);
    assert.deepEqual(replayed.slice(1).map((e) => e.title), titles, 'every event once, in order');
    assert.ok(replayed.every((e, i) => i === 0 || e.seq > replayed[i - 1]!.seq));
    s.handle({ type: 'renameThread', requestId: 'ren', threadId, title: 'live' });
    const live = (await until(out, (u) => u.type === 'events' && (u.events[0] as { title?: string }).title === 'live')) as Extract<EngineUpdate, { type: 'events' }>;
    assert.equal(live.more, undefined, 'a live batch is not part of the replay');
    s.dispose();
  });

  it('a short replay is one batch without more', async () => {
    const threadId = 'thread:short-replay';
    const writer = VoxStore.open(t.dbPath);
    writer.append({ type: 'thread.created', threadId, title: 't' });
    writer.close();
    const out: EngineUpdate[] = [];
    const s = session(out);
    s.handle({ type: 'subscribeThread', requestId: 'sub', threadId, afterSeq: 0 });
    await until(out, (u) => u.type === 'result' && u.inReplyTo === 'sub');
    const batches = out.filter((u): u is Extract<EngineUpdate, { type: 'events' }> => u.type === 'events');
    assert.equal(batches.length, 1);
    assert.equal(batches[0]!.events.length, 1);
    assert.equal(batches[0]!.more, undefined);
    s.dispose();
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

  it('a command above the session\'s grant is refused (capabilityDenied, nothing written); within it, it runs', async () => {
    const owner: EngineUpdate[] = [];
    const o = session(owner);
    o.handle({ type: 'createThread', requestId: 'c', threadId: 't1', title: 'one' });
    const errorsOf = (out: EngineUpdate[]) => out.filter((u): u is Extract<EngineUpdate, { type: 'error' }> => u.type === 'error');

    const guestOut: EngineUpdate[] = [];
    const guest = t.session(guestOut, readOnlyGrant('guest Ada'));
    guest.handle({ type: 'listThreads', requestId: 'l' });
    guest.handle({ type: 'sendPrompt', requestId: 'p', threadId: 't1', prompt: 'let me in' });
    guest.handle({ type: 'renameThread', requestId: 'r', threadId: 't1', title: 'mine now' });
    guest.handle({ type: 'setModel', requestId: 'm', model: 'local:demo' });
    assert.deepEqual(resultOf<{ threads: { id: string }[] }>(guestOut, 'l').threads.map((x) => x.id), ['t1'], 'reading is allowed');
    assert.deepEqual(errorsOf(guestOut).map((e) => [e.inReplyTo, e.domain, e.code]), [
      ['p', 'protocol', 'capabilityDenied'], ['r', 'protocol', 'capabilityDenied'], ['m', 'protocol', 'capabilityDenied'],
    ]);
    assert.match(errorsOf(guestOut)[0]!.message, /guest Ada may not sendPrompt: it needs write/);

    // `write` without `startThreads`: prompts in an existing thread, not new threads.
    const writerOut: EngineUpdate[] = [];
    const writer = t.session(writerOut, { holder: 'collaborator', capabilities: ['read', 'write'] });
    writer.handle({ type: 'sendPrompt', requestId: 'new', threadId: null, prompt: 'a new thread' });
    assert.deepEqual(errorsOf(writerOut).map((e) => [e.inReplyTo, e.code]), [['new', 'capabilityDenied']]);
    writer.handle({ type: 'sendPrompt', requestId: 'old', threadId: 't1', prompt: 'in t1' });
    await until(writerOut, (u) => u.type === 'result' && u.inReplyTo === 'old');

    o.handle({ type: 'getThread', requestId: 'g', threadId: 't1' });
    const thread = resultOf<{ thread: { title: string }; messages: { content: string }[] }>(owner, 'g');
    assert.equal(thread.thread.title, 'one', 'the refused rename changed nothing');
    assert.deepEqual(thread.messages.filter((m) => m.content === 'let me in'), [], 'the refused prompt left nothing');
    o.handle({ type: 'listThreads', requestId: 'l2' });
    assert.equal(resultOf<{ threads: unknown[] }>(owner, 'l2').threads.length, 1, 'no thread was started');
    for (const x of [o, guest, writer]) x.dispose();
  });
});
