/**
 * An imported session is a normal Vox thread: imported over the protocol (`scanExternalSessions`,
 * `importExternalSessions {ids}` through a real engine and an in-process client), it opens with
 * `getThread`, its sub-agent is listed under it, and a prompt continues it with another model (a
 * real OpenAI-wire server): the request carries the imported conversation, and the new run follows
 * the imported ones.
 */
import { strict as assert } from 'node:assert';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';
import { copyFixture } from '../unit/importers/support';

describe('importers: an imported thread continues with any model', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir('vox-import-continue-')));
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    t = undefined;
    server = undefined;
    removeTmpDir(dir);
  });

  it('imports through the protocol, opens, and answers a new prompt with the imported history in the request', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('Continuing from Claude Code.')] });
    t = startTestEngine({ dir, host: new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } }) });
    const c = t.client();
    const claudeDir = copyFixture('claude-code-2.1', dir);
    const scan = await c.call('scanExternalSessions', { claudeDir });
    assert.equal(scan.sessions.length, 1);
    const r = await c.call('importExternalSessions', { claudeDir, ids: [scan.sessions[0]!.id] });
    assert.equal(r.sources[0]!.threads, 2);
    const threadId = (await c.call('listThreads', { limit: 10 })).threads[0]!.id;
    const thread = await c.call('getThread', { threadId });
    assert.ok(thread.runs.length >= 2 && thread.runs.every((run) => run.status === 'completed'));
    const children = await c.call('listChildThreads', { threadId });
    assert.equal(children.threads.length, 1, 'the sub-agent is listed under its session');

    const before = server.requests.length;
    await c.call('sendPrompt', { threadId, prompt: 'What did the sub-agent find?' });
    await waitFor('the new turn to end', 20_000, async () => (await c.call('getThread', { threadId })).runs.every((run) => run.status !== 'running'), 20);
    const body = server.requests[before]!.body as { messages: { role: string; content: unknown }[] };
    const text = JSON.stringify(body.messages);
    assert.match(text, /FIXTURE-START: look at hello\.txt/, 'the imported prompt is in the history sent');
    assert.match(text, /FIXTURE-RESUME/, 'so is the resumed turn');
    assert.equal(body.messages.at(-1)!.role, 'user');
    const after = await c.call('getThread', { threadId });
    const last = after.runs.at(-1)!;
    assert.equal(last.status, 'completed');
    assert.equal(last.ordinal, thread.runs.length, 'the new run follows the imported ones');
  });
});
