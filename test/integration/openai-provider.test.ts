/**
 * OpenAICompatibleProvider against the fake OpenAI server over real loopback HTTP with the real
 * `openai` SDK: text, reasoning, tool-call assembly, usage, error mapping, drops, malformed SSE,
 * cancellation and request conversion.
 */
import { strict as assert } from 'node:assert';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { type ChatMessage, type StreamRequest } from '../../src/engine/providers/types';
import {
  dropAfter,
  httpError,
  rateLimited,
  rawSse,
  stallAfter,
  startFakeOpenAI,
  textTurn,
  toolCallTurn,
  type FakeResponse,
  type FakeServer,
} from '../support/fake-openai-server';
import { CANCEL_DEADLINE_MS, READ_FILE, collect, textOf } from '../support/provider-stream';

const API_KEY = 'sk-test-secret-123';

describe('OpenAICompatibleProvider (fake OpenAI server)', function () {
  this.timeout(5000);
  let server: FakeServer | undefined;

  async function setup(...responses: FakeResponse[]): Promise<{ server: FakeServer; provider: OpenAICompatibleProvider }> {
    server = await startFakeOpenAI({ responses });
    return { server, provider: new OpenAICompatibleProvider({ apiKey: API_KEY, baseURL: server.baseUrl }) };
  }
  const req = (extra: Partial<StreamRequest> = {}): StreamRequest => ({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('streams text pieces in order and ends with done(end)', async () => {
    const { server, provider } = await setup(textTurn(['Hel', 'lo', ' wörld']));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    assert.deepEqual(events, [
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'text', delta: ' wörld' },
      { type: 'done', stopReason: 'end' },
    ]);
    const r = server.requests[0]!;
    assert.equal(r.path, '/v1/chat/completions');
    assert.equal(r.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(r.body.stream, true);
    assert.deepEqual(r.body.stream_options, { include_usage: true });
    assert.equal(r.body.model, 'gpt-test');
  });

  it('maps reasoning_content and reasoning deltas to reasoning events', async () => {
    const { provider } = await setup(
      textTurn(['answer'], { reasoning: ['think ', 'hard'], reasoningField: 'reasoning_content' }),
      textTurn(['ok'], { reasoning: ['openrouter style'], reasoningField: 'reasoning' }),
    );
    const first = await collect(provider.stream(req()));
    assert.deepEqual(first.events.slice(0, 3), [
      { type: 'reasoning', delta: 'think ' },
      { type: 'reasoning', delta: 'hard' },
      { type: 'text', delta: 'answer' },
    ]);
    const second = await collect(provider.stream(req()));
    assert.deepEqual(second.events[0], { type: 'reasoning', delta: 'openrouter style' });
  });

  it('assembles two interleaved parallel tool calls split mid-string and mid-escape', async () => {
    const argsA = '{"path":"dir/a\\nb.txt","note":"caf\\u00e9 \\"q\\""}';
    const argsB = '{"path":"b.txt"}';
    const { provider } = await setup(
      toolCallTurn(
        [
          { id: 'call_A', name: 'read_file', args: argsA, argChunks: ['{"path":"dir/a\\', 'nb.txt","note":"caf\\u0', '0e9 \\', '"q\\""}'] },
          { id: 'call_B', name: 'list_files', args: argsB, argChunks: ['{"pa', 'th":"b.t', 'xt"}'] },
        ],
        { text: ['Looking.'], interleaveToolCalls: true },
      ),
    );
    const { events, error } = await collect(provider.stream(req({ tools: [READ_FILE] })));
    assert.equal(error, undefined);
    assert.deepEqual(events, [
      { type: 'text', delta: 'Looking.' },
      { type: 'toolCall', call: { id: 'call_A', name: 'read_file', argumentsJson: argsA } },
      { type: 'toolCall', call: { id: 'call_B', name: 'list_files', argumentsJson: argsB } },
      { type: 'done', stopReason: 'toolCalls' },
    ]);
    assert.deepEqual(JSON.parse(argsA), { path: 'dir/a\nb.txt', note: 'café "q"' });
  });

  it('delivers invalid JSON tool arguments intact as argumentsJson', async () => {
    const broken = '{"path": "a.txt", oops';
    const { provider } = await setup(toolCallTurn([{ name: 'read_file', args: broken }]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    const call = events.find((e) => e.type === 'toolCall');
    assert.ok(call && call.type === 'toolCall');
    assert.equal(call.call.argumentsJson, broken);
    assert.equal(call.call.name, 'read_file');
    assert.ok(call.call.id.length > 0);
  });

  it('accepts Ollama-style tool calls (whole call in one chunk, finish_reason stop) and index-less calls', async () => {
    const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm' };
    const frame = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const { provider } = await setup(rawSse([
      frame({ role: 'assistant', tool_calls: [{ id: 'call_x', index: 0, type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] }),
      // A second call without `index` (Gemini-compatible endpoints), identified by its new id.
      frame({ tool_calls: [{ id: 'call_y', type: 'function', function: { name: 'read_file', arguments: '{"path":' } }] }),
      frame({ tool_calls: [{ function: { arguments: '"b.txt"}' } }] }),
      frame({}, 'stop'),
      'data: [DONE]\n\n',
    ]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    assert.deepEqual(events, [
      { type: 'toolCall', call: { id: 'call_x', name: 'read_file', argumentsJson: '{"path":"a.txt"}' } },
      { type: 'toolCall', call: { id: 'call_y', name: 'read_file', argumentsJson: '{"path":"b.txt"}' } },
      { type: 'done', stopReason: 'toolCalls' },
    ]);
  });

  it('reports usage including cached prompt tokens before done', async () => {
    const { provider } = await setup(textTurn('x', { usage: { inputTokens: 1200, outputTokens: 34, cacheReadTokens: 1024 } }));
    const { events } = await collect(provider.stream(req()));
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', usage: { inputTokens: 1200, outputTokens: 34, cacheReadTokens: 1024, responseId: 'chatcmpl-fake1' } },
      { type: 'done', stopReason: 'end' },
    ]);
  });

  it('maps finish_reason length to stopReason length', async () => {
    const { provider } = await setup(textTurn('trunc', { stopReason: 'length' }));
    const { events } = await collect(provider.stream(req()));
    assert.deepEqual(events.at(-1), { type: 'done', stopReason: 'length' });
  });

  it('429 with retry-after gives rateLimited with resetAtMs, and the SDK does not retry', async () => {
    const { server, provider } = await setup(rateLimited(30));
    const before = Date.now();
    const { events, error } = await collect(provider.stream(req()));
    const after = Date.now();
    assert.deepEqual(events, []);
    assert.equal(error?.code, 'rateLimited');
    assert.equal(error?.details.status, 429);
    const resetAt = error?.details.resetAtMs ?? NaN;
    assert.ok(resetAt >= before + 30_000 && resetAt <= after + 30_000, `resetAtMs ${resetAt} not ~now+30s`);
    assert.ok(Math.abs((error?.details.retryAfterMs ?? NaN) - 30_000) <= after - before + 5);
    assert.equal(server.requests.length, 1);
  });

  it('429 with only x-ratelimit-reset-* headers uses the exhausted limit', async () => {
    const { provider } = await setup(
      httpError(429, {
        headers: {
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '1m30s',
          'x-ratelimit-remaining-tokens': '5000',
          'x-ratelimit-reset-tokens': '6m0s',
        },
      }),
    );
    const before = Date.now();
    const { error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'rateLimited');
    const delta = (error?.details.resetAtMs ?? NaN) - before;
    assert.ok(delta >= 90_000 && delta < 91_000, `reset in ${delta} ms, expected ~90 s`);
  });

  it('401 gives auth without leaking the API key', async () => {
    const { provider } = await setup(httpError(401));
    const { error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'auth');
    assert.equal(error?.details.status, 401);
    assert.ok(!error?.message.includes(API_KEY));
  });

  it('400 gives badRequest, 500 gives server', async () => {
    const { provider } = await setup(httpError(400, { message: 'bad tools' }), httpError(503));
    const bad = await collect(provider.stream(req()));
    assert.equal(bad.error?.code, 'badRequest');
    assert.match(bad.error?.message ?? '', /bad tools/);
    const srv = await collect(provider.stream(req()));
    assert.equal(srv.error?.code, 'server');
    assert.equal(srv.error?.details.status, 503);
  });

  it('a connection dropped mid-stream gives network, after yielding the text already received', async () => {
    // Events: role chunk, 'one', 'two', 'three', finish, [DONE]; drop after 'two'.
    const { provider } = await setup(dropAfter(3, textTurn(['one ', 'two ', 'three'])));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'network');
    assert.equal(textOf(events), 'one two ');
    assert.ok(!events.some((e) => e.type === 'done'));
  });

  it('a stream that ends cleanly without finish_reason gives network', async () => {
    const chunk = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }] };
    const { provider } = await setup(rawSse([`data: ${JSON.stringify(chunk)}\n\n`]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'network');
    assert.equal(textOf(events), 'partial');
  });

  it('a garbage SSE data line gives malformedStream after the good text', async () => {
    const chunk = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'good' }, finish_reason: null }] };
    const { provider } = await setup(rawSse([`data: ${JSON.stringify(chunk)}\n\n`, 'data: {this is not json\n\n', 'data: [DONE]\n\n']));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'malformedStream');
    assert.equal(textOf(events), 'good');
  });

  it('an error object inside the stream is mapped by its code', async () => {
    const err = { error: { message: 'Rate limit reached. Please try again in 1.5s.', type: 'tokens', code: 'rate_limit_exceeded' } };
    const { provider } = await setup(rawSse([`data: ${JSON.stringify(err)}\n\n`]));
    const before = Date.now();
    const { error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'rateLimited');
    const delta = (error?.details.resetAtMs ?? NaN) - before;
    assert.ok(delta >= 1500 && delta < 2000, `reset in ${delta} ms`);
  });

  it('aborting mid-stream gives cancelled quickly', async () => {
    const { provider } = await setup(stallAfter(2, textTurn(['first', 'never'])));
    const ac = new AbortController();
    const started = Date.now();
    let abortedAt = 0;
    const { events, error } = await collect(provider.stream(req({ signal: ac.signal })), (e) => {
      if (e.type === 'text') {
        setTimeout(() => {
          abortedAt = Date.now();
          ac.abort();
        }, 20);
      }
    });
    assert.equal(error?.code, 'cancelled');
    assert.equal(textOf(events), 'first');
    assert.ok(abortedAt > 0 && Date.now() - abortedAt < CANCEL_DEADLINE_MS, `took ${Date.now() - abortedAt} ms after abort`);
    assert.ok(Date.now() - started < 3000);
  });

  it('an already aborted signal gives cancelled without sending a request', async () => {
    const { server, provider } = await setup(textTurn('unused'));
    const ac = new AbortController();
    ac.abort();
    const { error } = await collect(provider.stream(req({ signal: ac.signal })));
    assert.equal(error?.code, 'cancelled');
    assert.equal(server.requests.length, 0);
  });

  it('converts messages (assistant tool calls, tool results) and tools into the request body', async () => {
    const { server, provider } = await setup(textTurn('done'));
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Vox.' },
      { role: 'user', content: 'Read a.txt' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read_file', argumentsJson: '{"path":"a.txt"}' }] },
      { role: 'tool', toolCallId: 'call_1', name: 'read_file', content: 'hello from a', isError: false },
      { role: 'assistant', content: 'It says hello.' },
      { role: 'user', content: 'Thanks' },
    ];
    await collect(provider.stream({ model: 'gpt-test', messages, tools: [READ_FILE], maxTokens: 256, temperature: 0.2 }));
    const body = server.requests[0]!.body;
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are Vox.' },
      { role: 'user', content: 'Read a.txt' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'hello from a' },
      { role: 'assistant', content: 'It says hello.' },
      { role: 'user', content: 'Thanks' },
    ]);
    assert.deepEqual(body.tools, [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: READ_FILE.parameters } }]);
    assert.equal(body.max_tokens, 256);
    assert.equal(body.temperature, 0.2);
  });

  it('runs a two-step agent script: tool call, then text', async () => {
    const { server, provider } = await setup(toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }]), textTurn('The file says hi.'));
    const step1 = await collect(provider.stream(req({ tools: [READ_FILE] })));
    const call = step1.events.find((e) => e.type === 'toolCall');
    assert.ok(call && call.type === 'toolCall');
    assert.deepEqual(JSON.parse(call.call.argumentsJson), { path: 'a.txt' });
    const step2 = await collect(provider.stream(req({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', toolCalls: [call.call] },
        { role: 'tool', toolCallId: call.call.id, name: 'read_file', content: 'hi' },
      ],
    })));
    assert.equal(textOf(step2.events), 'The file says hi.');
    assert.equal(server.requests[1]!.body.messages[2].tool_call_id, call.call.id);
    assert.equal(server.pending(), 0);
  });

  it('sends defaultHeaders and uses max_completion_tokens for api.openai.com-style config', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('a')] });
    const provider = new OpenAICompatibleProvider({
      apiKey: API_KEY,
      baseURL: server.baseUrl,
      defaultHeaders: { 'HTTP-Referer': 'https://vox.dev', 'X-Title': 'Vox' },
      maxTokensParam: 'max_completion_tokens',
    });
    await collect(provider.stream(req({ maxTokens: 99 })));
    const r = server.requests[0]!;
    assert.equal(r.headers['http-referer'], 'https://vox.dev');
    assert.equal(r.headers['x-title'], 'Vox');
    assert.equal(r.body.max_completion_tokens, 99);
    assert.equal(r.body.max_tokens, undefined);
  });
});
