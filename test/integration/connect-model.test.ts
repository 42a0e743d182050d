/**
 * Connecting a model, through the protocol of a real engine: `listModels` against the fake
 * OpenAI-compatible server, the fake Anthropic server and an Ollama-shaped server (real HTTP on
 * 127.0.0.1), `testModel` with the smallest real request, and each failure mode with its own
 * code and words naming host:port — a name under `.invalid` (DNS), a closed port (refused), a
 * wrong key (401), a missing model (404), a server that never answers (timeout, with the limit
 * injected small). The key never appears in any error. Recent models and UI choices come back
 * in `getSettings`.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ClientError } from '../../src/client/engine-client';
import { listModels, testModel } from '../../src/engine/connect/catalog';
import { ConnectError } from '../../src/engine/connect/errors';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { httpError, startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const KEY = 'sk-test-connect-Zq9X7mB2vK4wLp8RtY3n';

async function failure(p: Promise<unknown>): Promise<ClientError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ClientError, `expected a ClientError, got ${String(e)}`);
    assert.ok(!e.message.includes(KEY), `the key leaked into: ${e.message}`);
    return e;
  }
  throw new Error('expected a failure');
}

/** A port that was just free and is now closed (nothing listens). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('connect a model: listing and the connection test', function () {
  this.timeout(30_000);
  let dir: string;
  let t: TestEngine;
  const servers: FakeServer[] = [];

  beforeEach(() => {
    dir = makeTmpDir('vox-connect-');
  });
  afterEach(async () => {
    await t?.dispose();
    for (const s of servers.splice(0)) await s.close();
    removeTmpDir(dir);
  });

  const engineWith = (host: TestHost) => (t = startTestEngine({ dir, host }));

  it('lists an OpenAI-compatible server\'s models (GET /v1/models, Bearer key) and tests one', async () => {
    const fake = await startFakeOpenAI({ responses: [textTurn('OK')], models: [{ id: 'zeta-coder' }, { id: 'alpha-chat', name: 'Alpha Chat', contextLength: 32_768 }], apiKey: KEY });
    servers.push(fake);
    const c = engineWith(new TestHost({ secrets: { compatApiKey: KEY }, providerSettings: { compatBaseUrl: fake.baseUrl } })).client();
    const list = await c.call('listModels', { provider: 'compat' });
    assert.deepEqual(list.models, [{ id: 'alpha-chat', label: 'Alpha Chat', contextWindow: 32_768 }, { id: 'zeta-coder' }]);
    assert.equal(list.endpoint, new URL(fake.baseUrl).host);
    assert.equal(fake.requests[0]!.path, '/v1/models');
    assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${KEY}`);

    const ok = await c.call('testModel', { ref: 'compat:alpha-chat' });
    assert.equal(ok.reply, 'OK');
    assert.equal(ok.endpoint, new URL(fake.baseUrl).host);
    const sent = fake.requests[1]!;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.body.model, 'alpha-chat');
    assert.equal(sent.body.max_tokens, 16);
  });

  it('lists Anthropic models (x-api-key, anthropic-version) and tests one', async () => {
    const fake = await startFakeAnthropic({ responses: [textTurn('OK')], models: [{ id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5' }, { id: 'claude-haiku-4-5' }], apiKey: KEY });
    servers.push(fake);
    const c = engineWith(new TestHost({ secrets: { anthropicApiKey: KEY }, providerSettings: { anthropicBaseUrl: fake.baseUrl } })).client();
    const list = await c.call('listModels', { provider: 'anthropic' });
    assert.deepEqual(list.models.map((m) => m.id), ['claude-sonnet-4-5', 'claude-haiku-4-5']);
    assert.equal(list.models[0]!.label, 'Claude Sonnet 4.5');
    assert.equal(fake.requests[0]!.headers['anthropic-version'], '2023-06-01');
    const ok = await c.call('testModel', { ref: 'anthropic:claude-haiku-4-5' });
    assert.equal(ok.reply, 'OK');
    assert.equal(fake.requests[1]!.path, '/v1/messages');
  });

  it('lists an Ollama-shaped server\'s models (GET /api/tags) from its /v1 base URL and tests one', async () => {
    const fake = await startFakeOpenAI({ responses: [textTurn('OK')], ollamaTags: ['qwen2.5-coder:7b', 'llama3.2:3b'] });
    servers.push(fake);
    const c = engineWith(new TestHost({ providerSettings: { ollamaBaseUrl: fake.baseUrl } })).client();
    const list = await c.call('listModels', { provider: 'ollama' });
    assert.deepEqual(list.models.map((m) => m.id), ['llama3.2:3b', 'qwen2.5-coder:7b']);
    assert.equal(list.models[0]!.label, 'llama3.2:3b (7B)');
    assert.equal(fake.requests[0]!.path, '/api/tags');
    assert.equal((await c.call('testModel', { ref: 'ollama:llama3.2:3b' })).reply, 'OK');
  });

  it('an explicit baseUrl wins over the setting', async () => {
    const fake = await startFakeOpenAI({ responses: [], models: [{ id: 'm1' }] });
    servers.push(fake);
    const c = engineWith(new TestHost({ providerSettings: { lmstudioBaseUrl: 'http://127.0.0.1:1/v1' } })).client();
    const list = await c.call('listModels', { provider: 'lmstudio', baseUrl: fake.baseUrl });
    assert.deepEqual(list.models, [{ id: 'm1' }]);
    assert.equal(list.label, 'LM Studio');
  });

  it('DNS: a name under .invalid is connect/dnsFailed naming the host', async () => {
    const c = engineWith(new TestHost()).client();
    const e = await failure(c.call('listModels', { provider: 'compat', baseUrl: 'http://vox-no-such-host.invalid:8080/v1' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/dnsFailed');
    assert.match(e.message, /"vox-no-such-host\.invalid" does not resolve \((ENOTFOUND|EAI_AGAIN)\)/);
    assert.deepEqual(e.details, { provider: 'compat', endpoint: 'vox-no-such-host.invalid:8080' });
  });

  it('refused: a closed port is connect/refused naming host:port and how to start the server', async () => {
    const port = await closedPort();
    const c = engineWith(new TestHost({ providerSettings: { ollamaBaseUrl: `http://127.0.0.1:${port}/v1` } })).client();
    const e = await failure(c.call('listModels', { provider: 'ollama' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/refused');
    assert.match(e.message, new RegExp(`^Ollama at 127\\.0\\.0\\.1:${port} refused the connection \\(ECONNREFUSED\\).*ollama serve`));
  });

  it('401: a wrong key is connect/unauthorized with the provider\'s message, and the key is not in it', async () => {
    const fake = await startFakeOpenAI({ responses: [], models: [{ id: 'm' }], apiKey: 'sk-the-right-one-1234567890' });
    servers.push(fake);
    const c = engineWith(new TestHost({ secrets: { openaiApiKey: KEY }, providerSettings: { openaiBaseUrl: fake.baseUrl } })).client();
    const e = await failure(c.call('listModels', { provider: 'openai' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/unauthorized');
    assert.match(e.message, /^OpenAI at 127\.0\.0\.1:\d+ rejected the API key \(HTTP 401\): Incorrect API key provided/);
    assert.equal((e.details as { status?: number }).status, 401);
  });

  it('404 model: the test of a model the server does not have is connect/modelNotFound', async () => {
    const fake = await startFakeOpenAI({ responses: [httpError(404, { body: { error: { message: 'model "nope" not found, try pulling it first', type: 'api_error', param: null, code: null } } })], ollamaTags: ['a'] });
    servers.push(fake);
    const c = engineWith(new TestHost({ providerSettings: { ollamaBaseUrl: fake.baseUrl } })).client();
    const e = await failure(c.call('testModel', { ref: 'ollama:nope' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/modelNotFound');
    assert.match(e.message, /^Ollama at 127\.0\.0\.1:\d+ has no model "nope" \(HTTP 404\): model "nope" not found, try pulling it first$/);
  });

  it('other HTTP statuses carry the provider\'s own message', async () => {
    const fake = await startFakeAnthropic({ responses: [httpError(529)] });
    servers.push(fake);
    const c = engineWith(new TestHost({ secrets: { anthropicApiKey: KEY }, providerSettings: { anthropicBaseUrl: fake.baseUrl } })).client();
    const e = await failure(c.call('testModel', { ref: 'anthropic:claude-x' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/httpStatus');
    assert.match(e.message, /answered HTTP 529 \(the connection test\): Overloaded$/);
  });

  it('no key for a hosted API is connect/noKey before any request', async () => {
    const c = engineWith(new TestHost()).client();
    const e = await failure(c.call('listModels', { provider: 'openrouter' }));
    assert.equal(`${e.domain}/${e.code}`, 'connect/noKey');
    assert.match(e.message, /No OpenRouter API key is set/);
  });

  it('a bad base URL is connect/badUrl', async () => {
    const c = engineWith(new TestHost()).client();
    assert.equal((await failure(c.call('listModels', { provider: 'compat', baseUrl: 'ftp://x/v1' }))).code, 'badUrl');
    assert.equal((await failure(c.call('listModels', { provider: 'compat' }))).code, 'badUrl');
    assert.equal((await failure(c.call('listModels', { provider: 'compat', baseUrl: 'http://user:pw@127.0.0.1/v1' }))).code, 'badUrl');
  });

  it('timeout: a server that never answers is connect/timeout after the (injected) limit', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => void sockets.push(s)); // accepts, reads, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { port } = silent.address() as AddressInfo;
    const ctx = { secret: async () => undefined, settings: () => ({}) };
    try {
      for (const call of [
        () => listModels('lmstudio', ctx, { baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 200 }),
        () => testModel('lmstudio:m', ctx, { baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 200 }),
      ]) {
        await assert.rejects(call(), (e: unknown) => {
          assert.ok(e instanceof ConnectError);
          assert.equal(e.code, 'timeout');
          assert.match(e.message, new RegExp(`^LM Studio at 127\\.0\\.0\\.1:${port} did not answer within 0\\.2 s`));
          return true;
        });
      }
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('a model server failing mid-run names the provider and its URL (Ollama, refused)', async () => {
    const port = await closedPort();
    const c = engineWith(new TestHost({ model: 'ollama:qwen2.5-coder', providerSettings: { ollamaBaseUrl: `http://127.0.0.1:${port}/v1` } })).client();
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'hi', ifBusy: 'refuse' });
    let run: { status: string; error?: string | null } | undefined;
    for (let i = 0; i < 200 && !(run && run.status !== 'running'); i++) {
      run = (await c.call('getThread', { threadId })).runs?.[0] as typeof run;
      if (run?.status === 'running') await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(String(run?.error), new RegExp(`Ollama connection failed: 127\\.0\\.0\\.1:${port} \\(http://127\\.0\\.0\\.1:${port}/v1\\): the connection was refused`));
  });

  it('getSettings groups recent models by provider; UI choices are kept', async () => {
    const c = engineWith(new TestHost()).client();
    for (const m of ['openai:gpt-4o-mini', 'ollama:qwen2.5-coder', 'openai:gpt-4.1']) await c.call('setModel', { model: m });
    const s = await c.call('getSettings', {});
    assert.deepEqual(s.recent, [
      { provider: 'openai', label: 'OpenAI', models: [{ ref: 'openai:gpt-4.1', label: 'gpt-4.1', isDemo: false }, { ref: 'openai:gpt-4o-mini', label: 'gpt-4o-mini', isDemo: false }] },
      { provider: 'ollama', label: 'Ollama', models: [{ ref: 'ollama:qwen2.5-coder', label: 'qwen2.5-coder', isDemo: false }] },
    ]);
    assert.deepEqual(s.ui, { demoBannerDismissed: false, threadListCollapsed: false });
    const after = await c.call('setUiPreference', { key: 'demoBannerDismissed', value: true });
    assert.deepEqual(after.ui, { demoBannerDismissed: true, threadListCollapsed: false });
    assert.equal((await c.call('getSettings', {})).ui?.demoBannerDismissed, true);
  });
});
