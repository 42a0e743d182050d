/**
 * Removing and renaming named OpenAI-compatible endpoints through the protocol of a real engine,
 * with real HTTP servers on 127.0.0.1 that each assert their own bearer key: a removed endpoint's
 * entry, key and recent models go, and a default model on it falls back (to the most recent model
 * elsewhere, which then answers a turn; else the demo model) with the answer saying so; a renamed
 * endpoint keeps its place and its key (moved to the new name), and the default and recent refs
 * follow it, so a turn on the new ref reaches the same server with the same key; unknown names,
 * clashes and bad names are typed errors that change nothing; a host that cannot write its
 * endpoints says so. The palette's "Manage Model Endpoints" flow (src/extension/manage-endpoints.ts,
 * the user's answers scripted) runs the same commands.
 */
import { strict as assert } from 'node:assert';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { memoryMemento, type HostMemento } from '../../src/engine/host';
import { manageEndpoints, type ManageEndpointsUi, type ManageChoice } from '../../src/extension/manage-endpoints';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const KEY_ONE = 'sk-edit-one-Bq7Tn2Wx5Lm8Rc4V';
const KEY_TWO = 'sk-edit-two-Kd3Hs6Pz9Jf1Yg5N';
const RECENT = 'vox.recentModels';

/** Sends a prompt with `model` (default: the host's) and answers the thread once the run completed. */
async function turn(c: EngineClient, model?: string): Promise<string> {
  const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'hi', ...(model ? { model } : {}) });
  const run = await waitFor('the run to end', 20_000, async () => {
    const r = (await c.call('getThread', { threadId })).runs.find((x) => x.id === runId);
    return r && r.status !== 'running' ? r : undefined;
  }, 20);
  assert.equal(run.status, 'completed', `run ${run.status}: ${JSON.stringify(run)}`);
  return JSON.stringify(await c.call('getThread', { threadId }));
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ClientError, `not a typed error: ${String(e)}`);
    return `${e.domain}/${e.code}: ${e.message}`;
  }
  throw new Error('expected a typed error');
}

describe('connect a model: removing and renaming named endpoints', function () {
  this.timeout(40_000);
  let dir: string;
  let t: TestEngine | undefined;
  const servers: FakeServer[] = [];
  let memento: HostMemento;

  beforeEach(() => {
    dir = makeTmpDir('vox-endpoint-edits-');
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    for (const s of servers.splice(0)) await s.close();
    removeTmpDir(dir);
  });

  async function server(key: string, replies: string[]): Promise<FakeServer> {
    const s = await startFakeOpenAI({ responses: replies.map((r) => textTurn(r)), models: [{ id: 'fake-large' }], apiKey: key });
    servers.push(s);
    return s;
  }

  /** Endpoints `one` and `two` with their keys (and an entry that is not valid, which must survive edits); the default model on `model`. */
  async function engineWith(model: string, recent: string[], opts: { noWriter?: boolean } = {}): Promise<{ c: EngineClient; host: TestHost; one: FakeServer; two: FakeServer }> {
    const one = await server(KEY_ONE, ['from one', 'again one']);
    const two = await server(KEY_TWO, ['from two']);
    const host = new TestHost({
      model,
      secrets: { 'compatApiKey:one': KEY_ONE, 'compatApiKey:two': KEY_TWO },
      providerSettings: { compatEndpoints: [{ name: 'one', baseUrl: one.baseUrl }, { name: 'not valid', baseUrl: 'nope' }, { name: 'two', baseUrl: two.baseUrl }] },
    });
    memento = memoryMemento();
    await memento.update(RECENT, recent);
    Object.assign(host, { memento }, opts.noWriter ? { setCompatEndpoints: undefined } : {});
    t = startTestEngine({ dir, host });
    return { c: t.client(), host, one, two };
  }

  it('removing the endpoint the default model is on: its entry, key and recent models go; the default falls back to the most recent model elsewhere, which answers', async () => {
    const { c, host, one } = await engineWith('compat:two/fake-large', ['compat:two/fake-large', 'compat:one/fake-large', 'compat:two/other']);
    const r = await c.call('removeCompatEndpoint', { name: 'two' });
    assert.deepEqual(r.endpoint.name, 'two');
    assert.deepEqual(r.endpoints.map((e) => e.name), ['one']);
    assert.deepEqual(r.model, { was: 'compat:two/fake-large', now: 'compat:one/fake-large' });
    assert.deepEqual(host.endpoints.compatEndpoints, [{ name: 'one', baseUrl: one.baseUrl }, { name: 'not valid', baseUrl: 'nope' }]);
    assert.deepEqual(Object.keys(host.secrets), ['compatApiKey:one'], 'the removed endpoint\'s key is deleted, the other kept');
    assert.equal(host.modelRef, 'compat:one/fake-large');
    const settings = await c.call('getSettings', {});
    assert.equal(settings.model, 'compat:one/fake-large');
    assert.ok(!JSON.stringify(settings.recent).includes('compat:two/'), `recent still lists the removed endpoint: ${JSON.stringify(settings.recent)}`);
    assert.deepEqual((await c.call('listCompatEndpoints', {})).endpoints.map((e) => e.name), ['one']);
    assert.match(await turn(c), /from one/);
    assert.equal(one.requests.at(-1)!.headers.authorization, `Bearer ${KEY_ONE}`);
  });

  it('removing the first endpoint under a plain compat:<model> default with nothing else recent falls back to the demo model; another endpoint stays untouched', async () => {
    const { c, host } = await engineWith('compat:fake-large', ['compat:fake-large']);
    const r = await c.call('removeCompatEndpoint', { name: 'one' });
    assert.deepEqual(r.model, { was: 'compat:fake-large', now: 'local:demo' });
    assert.equal(host.modelRef, 'local:demo');
    assert.equal(host.secrets['compatApiKey:two'], KEY_TWO);
    assert.equal(host.secrets['compatApiKey:one'], undefined);
  });

  it('removing an endpoint the default model is not on leaves the model as it was (model: null)', async () => {
    const { c, host } = await engineWith('compat:one/fake-large', []);
    const r = await c.call('removeCompatEndpoint', { name: 'two' });
    assert.equal(r.model, null);
    assert.equal(host.modelRef, 'compat:one/fake-large');
  });

  it('renaming keeps the endpoint\'s place and key; the default and recent refs follow; a turn on the new ref reaches the same server with the same key', async () => {
    const { c, host, one } = await engineWith('compat:one/fake-large', ['compat:one/fake-large', 'compat:two/fake-large']);
    const r = await c.call('renameCompatEndpoint', { name: 'one', newName: ' lab ' });
    assert.deepEqual(r.endpoint, { name: 'lab', baseUrl: one.baseUrl });
    assert.deepEqual(r.endpoints.map((e) => e.name), ['lab', 'two']);
    assert.deepEqual(r.model, { was: 'compat:one/fake-large', now: 'compat:lab/fake-large' });
    assert.deepEqual((host.endpoints.compatEndpoints as { name: string }[]).map((e) => e.name), ['lab', 'not valid', 'two']);
    assert.equal(host.secrets['compatApiKey:lab'], KEY_ONE);
    assert.equal(host.secrets['compatApiKey:one'], undefined);
    assert.equal(host.modelRef, 'compat:lab/fake-large');
    assert.deepEqual(memento.get(RECENT), ['compat:lab/fake-large', 'compat:two/fake-large']);
    assert.match(await turn(c, 'compat:lab/fake-large'), /from one/);
    assert.equal(one.requests.at(-1)!.headers.authorization, `Bearer ${KEY_ONE}`);
  });

  it('an unknown name, a clash and bad names are typed errors that change nothing', async () => {
    const { c, host } = await engineWith('compat:one/fake-large', ['compat:one/fake-large']);
    const before = JSON.stringify({ e: host.endpoints, s: host.secrets, m: host.modelRef });
    assert.match(await code(c.call('removeCompatEndpoint', { name: 'three' })), /^connect\/unknownEndpoint: .*"three".*"one", "two"/);
    assert.match(await code(c.call('renameCompatEndpoint', { name: 'three', newName: 'x' })), /^connect\/unknownEndpoint/);
    assert.match(await code(c.call('renameCompatEndpoint', { name: 'one', newName: 'two' })), /^connect\/nameClash: .*"two" already exists/);
    assert.match(await code(c.call('renameCompatEndpoint', { name: 'one', newName: '   ' })), /^connect\/badName/);
    assert.match(await code(c.call('renameCompatEndpoint', { name: 'one', newName: 'x'.repeat(65) })), /^connect\/badName: .*up to 64/);
    assert.match(await code(c.call('renameCompatEndpoint', { name: 'one', newName: 'a/b' })), /^connect\/badName/);
    assert.equal(JSON.stringify({ e: host.endpoints, s: host.secrets, m: host.modelRef }), before);
  });

  it('a host that cannot write its endpoints answers connect/notSupported and keeps its keys', async () => {
    const { c, host } = await engineWith('compat:one/fake-large', [], { noWriter: true });
    assert.match(await code(c.call('removeCompatEndpoint', { name: 'one' })), /^connect\/notSupported: .*cannot change/);
    assert.equal(host.secrets['compatApiKey:one'], KEY_ONE);
  });

  it('the Manage Model Endpoints flow: rename (the name checked as it is typed), then remove with the fallback said', async () => {
    const { c, host } = await engineWith('compat:two/fake-large', ['compat:two/fake-large', 'compat:one/fake-large']);
    const choices: ManageChoice[] = [{ action: 'rename', endpoint: 'one' }, { action: 'remove', endpoint: 'two' }];
    const shown: { lists: string[][]; problems: (string | undefined)[]; told: string[]; confirmed: string[] } = { lists: [], problems: [], told: [], confirmed: [] };
    const ui: ManageEndpointsUi = {
      pick: async (endpoints) => {
        shown.lists.push(endpoints.map((e) => `${e.name}${e.current ? '*' : ''}`));
        return choices.shift();
      },
      askName: async (value, check) => {
        shown.problems.push(await check('two'), await check('has space'), await check('lab'));
        assert.equal(value, 'one');
        return 'lab';
      },
      confirmRemove: async (endpoint, message) => {
        shown.confirmed.push(`${endpoint.name}: ${message}`);
        return true;
      },
      tell: (message) => void shown.told.push(message),
      failed: (message) => assert.fail(`the flow failed: ${message}`),
    };
    await manageEndpoints(c, ui, { edit: async () => assert.fail('no edit') });
    assert.deepEqual(shown.lists, [['one', 'two*'], ['lab', 'two*'], ['lab*']]);
    assert.match(shown.problems[0]!, /"two" already exists/);
    assert.match(shown.problems[1]!, /not an endpoint name/);
    assert.equal(shown.problems[2], undefined);
    assert.match(shown.confirmed[0]!, /^two: .*compat:two\/fake-large.*uses it/);
    assert.match(shown.told[0]!, /renamed "one" to "lab"/);
    assert.match(shown.told[1]!, /removed "two" and its key.*compat:two\/fake-large.*now using compat:lab\/fake-large/);
    assert.equal(host.modelRef, 'compat:lab/fake-large');
    assert.deepEqual(Object.keys(host.secrets), ['compatApiKey:lab']);
  });
});
