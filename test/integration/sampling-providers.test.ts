/**
 * Sampling settings on the wire (posture, SPEC 6.3): what each provider sends for temperature,
 * top_p and reasoning effort — OpenAI chat models take temperature/top_p and no reasoning_effort,
 * OpenAI reasoning models (o-series, gpt-5; also behind a router's `openai/` prefix) take
 * reasoning_effort and no temperature/top_p, Anthropic takes temperature and top_p — and the
 * settings' validation. Real SDKs against the fake servers.
 */
import { strict as assert } from 'node:assert';
import { AnthropicProvider } from '../../src/engine/providers/anthropic';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import type { StreamRequest } from '../../src/engine/providers/types';
import { parseSampling, SamplingSettingsError } from '../../src/engine/branches/sampling';
import { startFakeAnthropic } from '../support/fake-anthropic-server';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { collect } from '../support/provider-stream';

const sampling = { temperature: 0.4, topP: 0.8, reasoningEffort: 'low' as const };
const req = (model: string): StreamRequest => ({ model, messages: [{ role: 'user', content: 'hi' }], ...sampling });

describe('sampling settings on the providers\' wire', function () {
  this.timeout(10_000);
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('OpenAI: chat models get temperature and top_p; reasoning models get reasoning_effort only', async () => {
    const models = ['gpt-4o-mini', 'o3-mini', 'gpt-5-mini', 'openai/o4-mini', 'gpt-test'];
    server = await startFakeOpenAI({ responses: models.map(() => textTurn('ok')) });
    const provider = new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl });
    for (const m of models) await collect(provider.stream(m === 'gpt-test' ? { model: m, messages: [{ role: 'user', content: 'hi' }] } : req(m)));
    const sent = server.requests.map((r) => ({ model: r.body.model, temperature: r.body.temperature, top_p: r.body.top_p, reasoning_effort: r.body.reasoning_effort }));
    assert.deepEqual(sent, [
      { model: 'gpt-4o-mini', temperature: 0.4, top_p: 0.8, reasoning_effort: undefined },
      { model: 'o3-mini', temperature: undefined, top_p: undefined, reasoning_effort: 'low' },
      { model: 'gpt-5-mini', temperature: undefined, top_p: undefined, reasoning_effort: 'low' },
      { model: 'openai/o4-mini', temperature: undefined, top_p: undefined, reasoning_effort: 'low' },
      { model: 'gpt-test', temperature: undefined, top_p: undefined, reasoning_effort: undefined },
    ]);
  });

  it('Anthropic: temperature and top_p', async () => {
    server = await startFakeAnthropic({ responses: [textTurn('ok')] });
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.baseUrl });
    await collect(provider.stream(req('claude-test')));
    assert.equal(server.requests[0]!.body.temperature, 0.4);
    assert.equal(server.requests[0]!.body.top_p, 0.8);
    assert.equal(server.requests[0]!.body.reasoning_effort, undefined);
  });

  it('the settings: unset and null are the provider default; bad values are settings/invalidSetting naming the setting', () => {
    assert.deepEqual(parseSampling(undefined), {});
    assert.deepEqual(parseSampling({ temperature: null, topP: '', reasoningEffort: null }), { temperature: null, topP: null, reasoningEffort: null });
    assert.deepEqual(parseSampling({ temperature: '0.7', topP: 1, reasoningEffort: 'medium' }), { temperature: 0.7, topP: 1, reasoningEffort: 'medium' });
    for (const [bad, name] of [[{ temperature: 3 }, 'temperature'], [{ temperature: 'hot' }, 'temperature'], [{ topP: -0.1 }, 'topP'], [{ reasoningEffort: 'max' }, 'reasoningEffort'], [[1], 'object']] as const) {
      assert.throws(() => parseSampling(bad), (e: unknown) => e instanceof SamplingSettingsError && e.code === 'invalidSetting' && e.message.includes(name), JSON.stringify(bad));
    }
  });
});
