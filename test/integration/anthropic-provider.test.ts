/**
 * AnthropicProvider against the fake Anthropic server over real loopback HTTP with the real
 * `@anthropic-ai/sdk`: text, thinking, tool_use assembly, usage with cache tokens, error mapping
 * (HTTP and `event: error`), drops, malformed SSE, cancellation and request conversion.
 */
import { strict as assert } from 'node:assert';
import { AnthropicProvider } from '../../src/engine/providers/anthropic';
import { type ChatMessage, type StreamRequest } from '../../src/engine/providers/types';
import {
  anthropicEvent,
  dropAfter,
  httpError,
  rateLimited,
  rawSse,
  stallAfter,
  startFakeAnthropic,
  textTurn,
  toolCallTurn,
  type FakeResponse,
  type FakeServer,
} from '../support/fake-anthropic-server';
import { CANCEL_DEADLINE_MS, READ_FILE, collect, textOf } from '../support/provider-stream';

const API_KEY = 'sk-ant-test-secret-456';

describe('AnthropicProvider (fake Anthropic server)', function () {
  this.timeout(5000);
  let server: FakeServer | undefined;

  async function setup(...responses: FakeResponse[]): Promise<{ server: FakeServer; provider: AnthropicProvider }> {
    server = await startFakeAnthropic({ responses });
    return { server, provider: new AnthropicProvider({ apiKey: API_KEY, baseURL: server.baseUrl }) };
  }
  const req = (extra: Partial<StreamRequest> = {}): StreamRequest => ({
    model: 'claude-test',
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('streams text and sends the key, version header and max_tokens', async () => {
    const { server, provider } = await setup(textTurn(['Hel', 'lo ', 'wörld']));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    assert.deepEqual(events.filter((e) => e.type !== 'usage'), [
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo ' },
      { type: 'text', delta: 'wörld' },
      { type: 'done', stopReason: 'end' },
    ]);
    const r = server.requests[0]!;
    assert.equal(r.path, '/v1/messages');
    assert.equal(r.headers['x-api-key'], API_KEY);
    assert.equal(r.headers.authorization, undefined);
    assert.ok(typeof r.headers['anthropic-version'] === 'string');
    assert.equal(r.body.stream, true);
    assert.equal(r.body.max_tokens, 8192);
  });

  it('maps a real transcript (thinking, text, tool_use, usage) byte for byte', async () => {
    const transcript = [
      anthropicEvent('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 1, service_tier: 'standard' } } }),
      'event: ping\ndata: {"type": "ping"}\n\n',
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me look.' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } }),
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      anthropicEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Reading it.' } }),
      anthropicEvent('content_block_stop', { index: 1 }),
      anthropicEvent('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: {} } }),
      anthropicEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '' } }),
      anthropicEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"path": "a' } }),
      anthropicEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '.txt"}' } }),
      anthropicEvent('content_block_stop', { index: 2 }),
      anthropicEvent('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 57 } }),
      anthropicEvent('message_stop', {}),
    ];
    const { provider } = await setup(rawSse(transcript));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    assert.deepEqual(events, [
      { type: 'reasoning', delta: 'Let me look.' },
      { type: 'text', delta: 'Reading it.' },
      { type: 'toolCall', call: { id: 'toolu_01', name: 'read_file', argumentsJson: '{"path": "a.txt"}' } },
      { type: 'usage', usage: { inputTokens: 3210, outputTokens: 57, cacheReadTokens: 3000, cacheWriteTokens: 200, responseId: 'msg_1' } },
      { type: 'done', stopReason: 'toolCalls' },
    ]);
  });

  it('assembles two tool calls whose JSON is split mid-string and mid-escape', async () => {
    const argsA = '{"path":"dir/a\\nb.txt","note":"caf\\u00e9 \\"q\\""}';
    const argsB = '{"path":"b.txt"}';
    const { provider } = await setup(
      toolCallTurn([
        { id: 'toolu_A', name: 'read_file', args: argsA, argChunks: ['{"path":"dir/a\\', 'nb.txt","note":"caf\\u0', '0e9 \\', '"q\\""}'] },
        { id: 'toolu_B', name: 'list_files', args: argsB, argChunks: ['{"pa', 'th":"b.t', 'xt"}'] },
      ]),
    );
    const { events, error } = await collect(provider.stream(req({ tools: [READ_FILE] })));
    assert.equal(error, undefined);
    assert.deepEqual(events.filter((e) => e.type !== 'usage'), [
      { type: 'toolCall', call: { id: 'toolu_A', name: 'read_file', argumentsJson: argsA } },
      { type: 'toolCall', call: { id: 'toolu_B', name: 'list_files', argumentsJson: argsB } },
      { type: 'done', stopReason: 'toolCalls' },
    ]);
  });

  it('delivers invalid JSON tool input intact as argumentsJson', async () => {
    const broken = '{"path": "a.txt", oops';
    const { provider } = await setup(toolCallTurn([{ name: 'read_file', args: broken }]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error, undefined);
    const call = events.find((e) => e.type === 'toolCall');
    assert.ok(call && call.type === 'toolCall');
    assert.equal(call.call.argumentsJson, broken);
  });

  it('reports usage with cache read and write tokens (inputTokens includes them)', async () => {
    const { provider } = await setup(textTurn('x', { usage: { inputTokens: 5000, outputTokens: 12, cacheReadTokens: 4000, cacheWriteTokens: 900 } }));
    const { events } = await collect(provider.stream(req()));
    assert.deepEqual(events.slice(-2), [
      { type: 'usage', usage: { inputTokens: 5000, outputTokens: 12, cacheReadTokens: 4000, cacheWriteTokens: 900, responseId: 'msg_fake1' } },
      { type: 'done', stopReason: 'end' },
    ]);
  });

  it('maps max_tokens to stopReason length', async () => {
    const { provider } = await setup(textTurn('trunc', { stopReason: 'length' }));
    const { events } = await collect(provider.stream(req()));
    assert.deepEqual(events.at(-1), { type: 'done', stopReason: 'length' });
  });

  it('429 with retry-after gives rateLimited with resetAtMs, and the SDK does not retry', async () => {
    const { server, provider } = await setup(rateLimited(12));
    const before = Date.now();
    const { error } = await collect(provider.stream(req()));
    const after = Date.now();
    assert.equal(error?.code, 'rateLimited');
    assert.equal(error?.details.status, 429);
    const resetAt = error?.details.resetAtMs ?? NaN;
    assert.ok(resetAt >= before + 12_000 && resetAt <= after + 12_000, `resetAtMs ${resetAt} not ~now+12s`);
    assert.equal(server.requests.length, 1);
  });

  it('429 with only anthropic-ratelimit-*-reset headers uses the RFC 3339 reset time', async () => {
    const reset = new Date(Date.now() + 45_000);
    reset.setMilliseconds(0);
    const { provider } = await setup(httpError(429, {
      headers: { 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': reset.toISOString().replace('.000Z', 'Z') },
    }));
    const { error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'rateLimited');
    assert.equal(error?.details.resetAtMs, reset.getTime());
  });

  it('401 gives auth, 529 overloaded gives server', async () => {
    const { provider } = await setup(httpError(401), httpError(529));
    const auth = await collect(provider.stream(req()));
    assert.equal(auth.error?.code, 'auth');
    assert.ok(!auth.error?.message.includes(API_KEY));
    const over = await collect(provider.stream(req()));
    assert.equal(over.error?.code, 'server');
    assert.equal(over.error?.details.status, 529);
  });

  it('an `event: error` mid-stream is mapped by its error type after the text received', async () => {
    const { provider } = await setup(rawSse([
      anthropicEvent('message_start', { message: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'so far' } }),
      'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
    ]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'server');
    assert.match(error?.message ?? '', /Overloaded/);
    assert.equal(textOf(events), 'so far');
  });

  it('a connection dropped mid-stream gives network, after yielding the text already received', async () => {
    // Events: message_start, ping, block_start, 'one', 'two', 'three', …; drop after 'two'.
    const { provider } = await setup(dropAfter(5, textTurn(['one ', 'two ', 'three'])));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'network');
    assert.equal(textOf(events), 'one two ');
    assert.ok(!events.some((e) => e.type === 'done'));
  });

  it('a stream that ends cleanly without message_stop gives network', async () => {
    const { provider } = await setup(rawSse([
      anthropicEvent('message_start', { message: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial' } }),
    ]));
    const { events, error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'network');
    assert.equal(textOf(events), 'partial');
  });

  it('garbage data in an SSE event gives malformedStream', async () => {
    const { provider } = await setup(rawSse([
      anthropicEvent('message_start', { message: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n',
      anthropicEvent('message_stop', {}),
    ]));
    const { error } = await collect(provider.stream(req()));
    assert.equal(error?.code, 'malformedStream');
  });

  it('aborting mid-stream gives cancelled quickly', async () => {
    const { provider } = await setup(stallAfter(4, textTurn(['first', 'never'])));
    const ac = new AbortController();
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
  });

  it('converts system, tool calls and tool results into the Messages format', async () => {
    const { server, provider } = await setup(textTurn('done'));
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Vox.' },
      { role: 'user', content: 'Read a.txt and b.txt' },
      {
        role: 'assistant',
        content: 'Reading.',
        toolCalls: [
          { id: 'toolu_1', name: 'read_file', argumentsJson: '{"path":"a.txt"}' },
          { id: 'toolu_2', name: 'read_file', argumentsJson: '{"path": oops' },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', name: 'read_file', content: 'hello from a' },
      { role: 'tool', toolCallId: 'toolu_2', name: 'read_file', content: 'invalid arguments', isError: true },
      { role: 'user', content: 'Summarise.' },
    ];
    await collect(provider.stream({ model: 'claude-test', messages, tools: [READ_FILE], maxTokens: 512, temperature: 0 }));
    const body = server.requests[0]!.body;
    assert.deepEqual(body.system, [{ type: 'text', text: 'You are Vox.', cache_control: { type: 'ephemeral' } }]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Read a.txt and b.txt', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { invalid_arguments_json: '{"path": oops' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello from a' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'invalid arguments', is_error: true },
          { type: 'text', text: 'Summarise.', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    assert.deepEqual(body.tools, [{ name: 'read_file', description: 'Read a file', input_schema: READ_FILE.parameters }]);
    assert.equal(body.max_tokens, 512);
    assert.equal(body.temperature, 0);
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
    assert.equal(server.requests[1]!.body.messages[2].content[0].tool_use_id, call.call.id);
    assert.equal(server.pending(), 0);
  });
});
