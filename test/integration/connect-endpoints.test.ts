/**
 * Named OpenAI-compatible endpoints, through the protocol of a real engine and real HTTP servers
 * on 127.0.0.1 (each fake server asserts its own bearer key): the save-after-test connect flow
 * (src/extension/connect-compat.ts, the user's answers scripted) against a second server that
 * refuses the key or is not there leaves the first endpoint's settings and key untouched and the
 * first endpoint still answers a turn; two endpoints answer turns side by side with their own
 * keys; the older single `compatBaseUrl` is migrated once to an endpoint named by its host, its
 * key kept; bad input (a URL without a scheme, a name clash, a bad name) is a typed error.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { migrateCompatSetting } from '../../src/engine/host';
import type { CompatEndpoint } from '../../src/engine/providers/compat-endpoints';
import type { ProviderSecret } from '../../src/engine/providers/registry';
import { connectCompat, type ConnectCompatUi, type FailureChoice } from '../../src/extension/connect-compat';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const KEY_ONE = 'sk-endpoint-one-Hq2Lr8Vb3Nk5Tz7W';
const KEY_TWO = 'sk-endpoint-two-Pw4Xc6Jd9Fm1Gs3Y';

/** A port that was just free and is now closed (nothing listens). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Sends a prompt with `model` and answers the assistant's text once the run completed. */
async function turn(c: EngineClient, model: string): Promise<string> {
  const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'hi', model });
  const run = await waitFor('the run to end', 20_000, async () => {
    const r = (await c.call('getThread', { threadId })).runs.find((x) => x.id === runId);
    return r && r.status !== 'running' ? r : undefined;
  }, 20);
  assert.equal(run.status, 'completed', `run ${run.status}: ${JSON.stringify(run)}`);
  return JSON.stringify(await c.call('getThread', { threadId }));
}

/** The user's answers, in order; failures answer `onFailure`. */
function scriptedUi(answers: { url: string; name?: string; key: string; model: string; onFailure: FailureChoice[] }): ConnectCompatUi & { failures: string[] } {
  const failures: string[] = [];
  return {
    failures,
    askUrl: async () => answers.url,
    askName: async (value) => answers.name ?? value,
    askKey: async () => answers.key,
    pickModel: async () => answers.model,
    failed: async (message) => {
      failures.push(message);
      return answers.onFailure.shift() ?? 'cancel';
    },
  };
}

describe('connect a model: named OpenAI-compatible endpoints', function () {
  this.timeout(40_000);
  let dir: string;
  let t: TestEngine | undefined;
  const servers: FakeServer[] = [];

  beforeEach(() => {
    dir = makeTmpDir('vox-endpoints-');
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

  /** A host whose endpoint `one` is `first` with its key, and a store that saves into the host like the extension does. */
  function hostWith(first: FakeServer): { host: TestHost; saved: CompatEndpoint[] } {
    const host = new TestHost({ model: 'compat:one/fake-large', secrets: { 'compatApiKey:one': KEY_ONE }, providerSettings: { compatEndpoints: [{ name: 'one', baseUrl: first.baseUrl }] } });
    return { host, saved: [] };
  }
  const storeOf = (host: TestHost) => ({
    async save(e: CompatEndpoint, key: string) {
      host.endpoints = { ...host.endpoints, compatEndpoints: [...((host.endpoints.compatEndpoints as CompatEndpoint[]) ?? []), e] };
      if (key) host.secrets[`compatApiKey:${e.name}`] = key;
    },
  });

  for (const [what, second] of [
    ['refuses the key (401)', async () => (await server(KEY_TWO, [])).baseUrl],
    ['is not there (refused)', async () => `http://127.0.0.1:${await closedPort()}/v1`],
  ] as const) {
    it(`a second server that ${what}: the failed attempt saves nothing and the first endpoint still answers`, async () => {
      const first = await server(KEY_ONE, ['from one']);
      const { host } = hostWith(first);
      const before = { settings: JSON.stringify(host.endpoints), secrets: JSON.stringify(host.secrets), model: host.modelRef };
      t = startTestEngine({ dir, host });
      const c = t.client();
      const ui = scriptedUi({ url: await second(), name: 'two', key: 'sk-wrong-key-for-two-000000', model: 'fake-large', onFailure: ['retry', 'cancel'] });
      const result = await connectCompat(c, ui, storeOf(host));
      assert.equal(result, undefined);
      assert.equal(ui.failures.length, 2, 'the failure was shown, retried, shown again');
      assert.match(ui.failures[0]!, /127\.0\.0\.1:\d+/);
      assert.ok(!ui.failures.join('\n').includes('sk-wrong-key'), 'the candidate key is not in the message');
      assert.deepEqual({ settings: JSON.stringify(host.endpoints), secrets: JSON.stringify(host.secrets), model: host.modelRef }, before);
      assert.match(await turn(c, 'compat:one/fake-large'), /from one/);
      assert.equal(first.requests.at(-1)!.headers.authorization, `Bearer ${KEY_ONE}`);
    });
  }

  it('a test that fails and "Use Anyway" saves the endpoint, under its own key', async () => {
    const first = await server(KEY_ONE, []);
    const secondServer = await server(KEY_TWO, []);
    const { host } = hostWith(first);
    t = startTestEngine({ dir, host });
    const ui = scriptedUi({ url: secondServer.baseUrl, key: 'sk-still-wrong-key-0000000', model: 'fake-large', onFailure: ['useAnyway', 'useAnyway'] });
    const result = await connectCompat(t.client(), ui, storeOf(host));
    const name = new URL(secondServer.baseUrl).host;
    assert.deepEqual(result, { ref: `compat:${name}/fake-large`, endpoint: { name, baseUrl: secondServer.baseUrl }, tested: false });
    assert.equal(host.secrets[`compatApiKey:${name}`], 'sk-still-wrong-key-0000000');
    assert.equal(host.secrets['compatApiKey:one'], KEY_ONE);
  });

  it('two endpoints side by side answer turns, each with its own key; a plain compat:<model> goes to the first', async () => {
    const one = await server(KEY_ONE, ['from one', 'plain ref']);
    const two = await server(KEY_TWO, ['OK', 'from two']);
    const { host } = hostWith(one);
    t = startTestEngine({ dir, host });
    const c = t.client();
    const result = await connectCompat(c, scriptedUi({ url: two.baseUrl, name: 'two', key: KEY_TWO, model: 'fake-large', onFailure: [] }), storeOf(host));
    assert.equal(result?.ref, 'compat:two/fake-large');
    assert.equal(result?.tested, true);
    assert.deepEqual((await c.call('listCompatEndpoints', {})).endpoints.map((e) => e.name), ['one', 'two']);
    assert.match(await turn(c, 'compat:two/fake-large'), /from two/);
    assert.match(await turn(c, 'compat:one/fake-large'), /from one/);
    assert.match(await turn(c, 'compat:fake-large'), /plain ref/);
    assert.ok(two.requests.every((r) => r.headers.authorization === `Bearer ${KEY_TWO}`));
    assert.ok(one.requests.every((r) => r.headers.authorization === `Bearer ${KEY_ONE}`));
    assert.equal(two.requests.at(-1)!.body.model, 'fake-large');
  });

  it('bad input is a typed connect error: no scheme, a name clash, a bad name', async () => {
    const one = await server(KEY_ONE, []);
    t = startTestEngine({ dir, host: hostWith(one).host });
    const c = t.client();
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        assert.ok(e instanceof ClientError);
        return `${e.code}: ${e.message}`;
      }
      return 'no error';
    };
    assert.match(await code(c.call('checkCompatEndpoint', { baseUrl: '127.0.0.1:8000/v1' })), /^badUrl: .*no scheme/);
    assert.match(await code(c.call('checkCompatEndpoint', { baseUrl: 'http://127.0.0.1:9/v1', name: 'one' })), /^nameClash: .*"one" already exists/);
    assert.match(await code(c.call('checkCompatEndpoint', { baseUrl: 'http://127.0.0.1:9/v1', name: 'has space' })), /^badName/);
    assert.deepEqual(await c.call('checkCompatEndpoint', { baseUrl: 'http://127.0.0.1:9/v1/' }), { name: '127.0.0.1:9', baseUrl: 'http://127.0.0.1:9/v1' });
    assert.deepEqual(await c.call('checkCompatEndpoint', { baseUrl: 'http://127.0.0.1:9/v1', name: 'one', replacing: 'one' }), { name: 'one', baseUrl: 'http://127.0.0.1:9/v1' });
  });

  it('migrates the older single compatBaseUrl once to an endpoint named by its host, keeping its key; old refs still answer', async () => {
    const old = await server(KEY_ONE, ['old ref', 'new ref']);
    const host = new TestHost({ model: 'compat:fake-large', secrets: { compatApiKey: KEY_ONE }, providerSettings: { compatBaseUrl: old.baseUrl } });
    const name = new URL(old.baseUrl).host;
    const store = {
      settings: () => host.endpoints,
      writeEndpoints: async (list: CompatEndpoint[]) => void (host.endpoints = { ...host.endpoints, compatEndpoints: list }),
      clearLegacyBaseUrl: async () => void (host.endpoints = { ...host.endpoints, compatBaseUrl: undefined }),
      getSecret: async (n: ProviderSecret) => host.secrets[n],
      setSecret: async (n: ProviderSecret, v: string) => void (host.secrets[n] = v),
      deleteSecret: async (n: ProviderSecret) => void delete host.secrets[n],
    };
    assert.deepEqual(await migrateCompatSetting(store), { name, baseUrl: old.baseUrl });
    assert.deepEqual(host.endpoints.compatEndpoints, [{ name, baseUrl: old.baseUrl }]);
    assert.equal(host.endpoints.compatBaseUrl, undefined);
    assert.deepEqual(host.secrets, { [`compatApiKey:${name}`]: KEY_ONE });
    assert.equal(await migrateCompatSetting(store), undefined, 'once: nothing left to move');
    t = startTestEngine({ dir, host });
    const c = t.client();
    assert.match(await turn(c, 'compat:fake-large'), /old ref/);
    assert.match(await turn(c, `compat:${name}/fake-large`), /new ref/);
    assert.ok(old.requests.every((r) => r.headers.authorization === `Bearer ${KEY_ONE}`));
  });
});
