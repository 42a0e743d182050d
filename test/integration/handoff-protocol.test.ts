/**
 * Context handoff over the protocol (a real engine, real SQLite, the fake OpenAI server):
 * `sendPrompt {handoff: {strategy: 'manualContext', …}}` sends the user's text as the handoff even
 * on the same model, `handoff.built` reaches a subscribed client live, `previewHandoff` answers
 * for another model and refuses an unknown thread and manualContext without text with typed
 * errors, and `sendPrompt` refuses manualContext without text before anything is written.
 */
import { strict as assert } from 'node:assert';
import type { EngineUpdate } from '../../src/protocol/updates';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

describe('context handoff over the protocol (real engine)', function () {
  this.timeout(30_000);
  let dir: string;
  let t: TestEngine;
  let server: FakeServer;
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('sendPrompt with a chosen strategy, handoff.built live, previewHandoff and its typed errors', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn('one'), textTurn('two')] });
    const host = new TestHost({
      model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl },
      modelChoices: [{ ref: 'openai:gpt-test', label: 'GPT test', isDemo: false }],
    });
    t = startTestEngine({ dir, host, config: { demoModelPath: '/nonexistent.gguf' } });
    const out: EngineUpdate[] = [];
    const s = t.session(out);
    const until = (what: string, pred: (u: EngineUpdate) => boolean) => waitFor(what, 10_000, () => out.find(pred), { everyMs: 20, detail: () => JSON.stringify(out.map((u) => u.type)) });
    const reply = async (id: string) => {
      const u = await until(`reply ${id}`, (x) => (x.type === 'result' || x.type === 'error') && x.inReplyTo === id);
      return u as Extract<EngineUpdate, { type: 'result' | 'error' }>;
    };
    const value = async <T>(id: string) => {
      const u = await reply(id);
      assert.equal(u.type, 'result', JSON.stringify(u));
      return (u as Extract<EngineUpdate, { type: 'result' }>).value as T;
    };

    s.handle({ type: 'sendPrompt', requestId: 'p1', threadId: null, prompt: 'first' });
    const { threadId } = await value<{ threadId: string }>('p1');
    s.handle({ type: 'subscribeThread', requestId: 'sub', threadId, afterSeq: 0 });
    await value('sub');
    await until('run 1 ended', (u) => u.type === 'events' && (u.events as unknown as { type: string }[]).some((e) => e.type === 'run.ended'));

    // manualContext without text: refused, nothing written.
    s.handle({ type: 'sendPrompt', requestId: 'bad', threadId, prompt: 'x', handoff: { strategy: 'manualContext' } });
    const bad = await reply('bad');
    assert.deepEqual([bad.type, (bad as { domain?: string }).domain, (bad as { code?: string }).code], ['error', 'handoff', 'manualContextMissing']);

    s.handle({ type: 'sendPrompt', requestId: 'p2', threadId, prompt: 'second', handoff: { strategy: 'manualContext', manualContext: 'We agreed: no new deps.' } });
    await value('p2');
    type Ev = Record<string, unknown>;
    const eventsOf = (u: EngineUpdate): Ev[] => (u.type === 'events' ? (u.events as unknown as Ev[]) : []);
    const built = await until('handoff.built live', (u) => eventsOf(u).some((e) => e.type === 'handoff.built'));
    const ev = eventsOf(built).find((e) => e.type === 'handoff.built')!;
    assert.deepEqual([ev.strategy, ev.sourceModel, ev.coveredFrom, ev.coveredTo, ev.manualChars, ev.manualCharsOmitted], ['manualContext', 'openai:gpt-test', 0, 0, 23, 0]);
    await waitFor('the second request', 10_000, () => server.requests.length === 2 || undefined);
    const sent = (server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!.content;
    assert.ok(sent.startsWith('<context_handoff covered_runs="0..0" source_model="openai:gpt-test" strategy="manualContext">\n'), sent);
    assert.ok(sent.endsWith('\nWe agreed: no new deps.\n</context_handoff>\n\nsecond'), sent);

    s.handle({ type: 'previewHandoff', requestId: 'pv', threadId, model: 'openai:gpt-other', strategy: 'fullThreadSummary' });
    const pv = await value<{ modelChanged: boolean; handoff: { coveredFrom: number; coveredTo: number; turnsVerbatim: number; preamble: string } }>('pv');
    assert.equal(pv.modelChanged, true);
    assert.deepEqual([pv.handoff.coveredFrom, pv.handoff.coveredTo, pv.handoff.turnsVerbatim], [0, 1, 2]);
    assert.match(pv.handoff.preamble, /^<context_handoff covered_runs="0\.\.1" source_model="openai:gpt-test" strategy="fullThreadSummary">/);

    s.handle({ type: 'previewHandoff', requestId: 'nothread', threadId: 'thread:none' });
    const nt = await reply('nothread');
    assert.deepEqual([nt.type, (nt as { code?: string }).code], ['error', 'unknownThread']);
    s.handle({ type: 'previewHandoff', requestId: 'bogus', threadId, strategy: 'everything' });
    const bs = await reply('bogus');
    assert.deepEqual([bs.type, (bs as { domain?: string }).domain], ['error', 'protocol']);
  });
});
