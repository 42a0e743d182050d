/**
 * `prepareModel`: a chat view loads its model before the first prompt. Over a real engine (real
 * SQLite) with the generated demo GGUF through node-llama-cpp: the first call loads (loaded:
 * true), a second finds it ready, a prompt right after streams without loading again, a prompt
 * sent while the load is still under way waits for that same load, and a model that cannot load
 * answers prepared: false with the provider's reason (no error update, nothing stored).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { PreparedModel } from '../../src/protocol/commands/prepare';
import type { EngineUpdate } from '../../src/protocol/updates';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const SCRIPT = path.resolve(__dirname, '../../scripts/make-demo-model.mjs');
/** Loading node-llama-cpp's addon and the model: about 1.7 s idle, much more on a busy box. */
const LOAD_TIMEOUT_MS = 60_000;

describe('prepareModel (load the model before the first prompt)', function () {
  this.timeout(LOAD_TIMEOUT_MS);
  let dir: string;
  let modelPath: string;
  let t: TestEngine | undefined;

  before(() => {
    dir = makeTmpDir();
    modelPath = path.join(dir, 'vox-demo.gguf');
    execFileSync(process.execPath, [SCRIPT, modelPath], { stdio: 'pipe' });
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });
  after(() => removeTmpDir(dir));

  const start = (model = 'local:demo') => {
    t = startTestEngine({ dir: makeTmpDir(), host: new TestHost({ model }), config: { demoModelPath: modelPath } });
    return t;
  };
  const answer = (out: EngineUpdate[], id: string) =>
    waitFor(`the answer to ${id}`, LOAD_TIMEOUT_MS, () => out.find((u) => (u.type === 'result' || u.type === 'error') && u.inReplyTo === id), { everyMs: 20 });
  const valueOf = async (out: EngineUpdate[], id: string): Promise<PreparedModel> => {
    const u = await answer(out, id);
    assert.equal(u.type, 'result', `expected a result, got ${JSON.stringify(u)}`);
    return (u as Extract<EngineUpdate, { type: 'result' }>).value as PreparedModel;
  };

  it('loads the default model once: loaded the first time, ready the second; the prompt after it streams', async () => {
    const out: EngineUpdate[] = [];
    const s = start().session(out);
    s.handle({ type: 'prepareModel', requestId: 'p1' });
    const first = await valueOf(out, 'p1');
    assert.deepEqual({ ...first, ms: 0 }, { model: 'local:demo', prepared: true, loaded: true, ms: 0, reason: null });
    s.handle({ type: 'prepareModel', requestId: 'p2', model: 'local:demo' });
    const second = await valueOf(out, 'p2');
    assert.equal(second.prepared, true);
    assert.equal(second.loaded, false, 'the model was loaded already');
    s.handle({ type: 'sendPrompt', requestId: 's1', threadId: null, prompt: 'hello' });
    const sent = (await answer(out, 's1')) as Extract<EngineUpdate, { type: 'result' }>;
    const { runId } = sent.value as { runId: string };
    s.handle({ type: 'subscribeTurn', turnId: runId, afterSeq: 0 });
    const ended = (await waitFor('the turn to end', LOAD_TIMEOUT_MS, () => out.find((u) => u.type === 'turnEnded' && u.turnId === runId), { everyMs: 20 })) as Extract<EngineUpdate, { type: 'turnEnded' }>;
    assert.equal(ended.status, 'completed');
    const text = out.flatMap((u) => (u.type === 'turnChunks' && u.turnId === runId ? u.chunks : [])).filter((c) => c.kind === 'text').map((c) => c.data).join('');
    assert.ok(text.length > 0, 'the demo model streamed text');
    s.dispose();
  });

  it('a prompt sent while the model is still loading waits for that load, and both finish', async () => {
    const out: EngineUpdate[] = [];
    const s = start().session(out);
    s.handle({ type: 'prepareModel', requestId: 'p1' });
    s.handle({ type: 'sendPrompt', requestId: 's1', threadId: null, prompt: 'hello' });
    const [prepared, sent] = await Promise.all([valueOf(out, 'p1'), answer(out, 's1')]);
    assert.equal(prepared.prepared, true);
    const { runId } = (sent as Extract<EngineUpdate, { type: 'result' }>).value as { runId: string };
    s.handle({ type: 'subscribeTurn', turnId: runId, afterSeq: 0 });
    const ended = (await waitFor('the turn to end', LOAD_TIMEOUT_MS, () => out.find((u) => u.type === 'turnEnded' && u.turnId === runId), { everyMs: 20 })) as Extract<EngineUpdate, { type: 'turnEnded' }>;
    assert.equal(ended.status, 'completed');
    s.dispose();
  });

  it('a model that cannot load answers prepared: false with the reason; a malformed ref likewise; no error update', async () => {
    const out: EngineUpdate[] = [];
    const s = start('local:/nonexistent/model.gguf').session(out);
    s.handle({ type: 'prepareModel', requestId: 'p1' });
    const missing = await valueOf(out, 'p1');
    assert.equal(missing.prepared, false);
    assert.equal(missing.loaded, false);
    assert.match(missing.reason ?? '', /nonexistent\/model\.gguf/);
    s.handle({ type: 'prepareModel', requestId: 'p2', model: 'bogus' });
    const bogus = await valueOf(out, 'p2');
    assert.equal(bogus.prepared, false);
    assert.match(bogus.reason ?? '', /provider:model/);
    assert.equal(out.filter((u) => u.type === 'error').length, 0);
    s.dispose();
  });

  it('an empty model name is refused by the protocol (invalidCommand)', async () => {
    const out: EngineUpdate[] = [];
    const s = start().session(out);
    s.handle({ type: 'prepareModel', requestId: 'p1', model: '' });
    const u = await answer(out, 'p1');
    assert.equal(u.type, 'error');
    assert.equal((u as Extract<EngineUpdate, { type: 'error' }>).code, 'invalidCommand');
    s.dispose();
  });
});
