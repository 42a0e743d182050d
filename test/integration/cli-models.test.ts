/**
 * `vox models` as a real process: lists a provider's models from its API (exit 0, `--json` the
 * protocol's answer), tests one with `--test`, and on failure exits 1 with the typed error naming
 * host and port (a closed port, a wrong key); a bad --provider is usage (exit 2); --help works.
 * The key comes from the environment and appears in no output.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const KEY = 'sk-test-cli-models-Zq9X7mB2vK4wLp8RtY3n';

describe('vox models', function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let fake: FakeServer | undefined;
  beforeEach(() => {
    dir = makeTmpDir();
    env = { ...process.env, VOX_HOME: path.join(dir, 'home'), OPENAI_API_KEY: '', VOX_MODEL: '' };
  });
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
    removeTmpDir(dir);
  });

  it('lists an OpenAI-compatible server\'s models (exit 0), --json is the protocol\'s answer, --test tests one', async () => {
    fake = await startFakeOpenAI({ responses: [textTurn('OK')], models: [{ id: 'b-model' }, { id: 'a-model' }], apiKey: KEY });
    env.VOX_COMPAT_API_KEY = KEY;
    const human = await runVox(['models', '--base-url', fake.baseUrl, '--cwd', dir], env);
    assert.equal(human.code, 0, human.err);
    const port = new URL(fake.baseUrl).port;
    assert.match(human.out, new RegExp(`^OpenAI-compatible server at 127\\.0\\.0\\.1:${port} \\(${fake.baseUrl}\\): 2 models\\ncompat:a-model\\ncompat:b-model\\n$`));
    const json = await runVox(['models', '--provider', 'compat', '--base-url', fake.baseUrl, '--test', 'a-model', '--json', '--cwd', dir], env);
    assert.equal(json.code, 0, json.err);
    const v = JSON.parse(json.out) as { provider: string; models: { id: string }[]; test: { ref: string; reply: string } };
    assert.equal(v.provider, 'compat');
    assert.deepEqual(v.models.map((m) => m.id), ['a-model', 'b-model']);
    assert.equal(v.test.ref, 'compat:a-model');
    assert.equal(v.test.reply, 'OK');
    assert.ok(!json.out.includes(KEY) && !json.err.includes(KEY));
  });

  it('a closed port exits 1 naming host and port; a wrong key exits 1 with the provider\'s message', async () => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const { port } = s.address() as AddressInfo;
    await new Promise<void>((r) => s.close(() => r()));
    const refused = await runVox(['models', '--provider', 'ollama', '--base-url', `http://127.0.0.1:${port}`, '--cwd', dir], env);
    assert.equal(refused.code, 1);
    assert.match(refused.err, new RegExp(`^vox: ConnectError \\(refused\\): Ollama at 127\\.0\\.0\\.1:${port} refused the connection \\(ECONNREFUSED\\)`));

    fake = await startFakeOpenAI({ responses: [], models: [{ id: 'm' }], apiKey: 'sk-another-key-0123456789' });
    const denied = await runVox(['models', '--provider', 'openai', '--base-url', fake.baseUrl, '--cwd', dir], { ...env, OPENAI_API_KEY: KEY });
    assert.equal(denied.code, 1);
    assert.match(denied.err, /^vox: ConnectError \(unauthorized\): OpenAI at 127\.0\.0\.1:\d+ rejected the API key \(HTTP 401\): Incorrect API key provided/);
    assert.ok(!denied.err.includes(KEY));
  });

  it('an unknown provider is usage (exit 2); --help exits 0', async () => {
    const bad = await runVox(['models', '--provider', 'nope', '--cwd', dir], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /Allowed choices are openai, anthropic, openrouter, ollama, lmstudio, compat/);
    const help = await runVox(['models', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.out, /--base-url <url>/);
  });
});
