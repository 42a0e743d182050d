/**
 * `sendPrompt` with `strictMentions` on a real engine (real SQLite, the official OpenAI SDK against
 * a loopback server): a mention that cannot be attached at send time (the file is gone) refuses
 * the send with `context/mentionNotAttached`, naming the mention by index and reason; no thread,
 * no message and no request to the model come of it. Without the flag the old behaviour stands (the
 * mention is a warning inside the message), and with every mention attached the prompt goes.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('sendPrompt strictMentions: an unattachable mention refuses the send', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  beforeEach(async () => {
    dir = fs.realpathSync(makeTmpDir());
    fs.writeFileSync(path.join(dir, 'notes.md'), 'The notes.\n');
    server = await startFakeOpenAI({ responses: [textTurn('ok')] });
    t = startTestEngine({ dir, host: new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }) });
  });
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('a missing file is a typed error naming the mention; nothing is stored or sent', async () => {
    const c = t.client();
    const before = (await c.call('listThreads', {})).threads.length;
    await assert.rejects(
      c.call('sendPrompt', { threadId: null, prompt: 'read them', model: 'openai:gpt-4o-mini', strictMentions: true,
        mentions: [{ kind: 'file', target: 'notes.md' }, { kind: 'file', target: 'gone.md' }] }),
      (e: { domain?: string; code?: string; message?: string; details?: { mentions?: Array<{ index: number; label: string; warning: string }> } }) => {
        assert.equal(e.domain, 'context');
        assert.equal(e.code, 'mentionNotAttached');
        assert.match(e.message ?? '', /gone\.md/);
        assert.deepEqual(e.details?.mentions?.map((m) => [m.index, m.label]), [[1, 'gone.md']]);
        assert.match(e.details?.mentions?.[0]?.warning ?? '', /File not found/);
        return true;
      });
    assert.equal((await c.call('listThreads', {})).threads.length, before, 'no thread was created');
    assert.equal(server.requests.length, 0, 'nothing reached the model');
  });

  it('every mention attached: the prompt goes with them', async () => {
    const { threadId, runId } = await t.client().call('sendPrompt', { threadId: null, prompt: 'read them', model: 'openai:gpt-4o-mini', strictMentions: true, mentions: [{ kind: 'file', target: 'notes.md' }] });
    assert.ok(threadId && runId);
  });
});
