/**
 * Scriptable fake Anthropic Messages API server (real `node:http` on 127.0.0.1, random port)
 * speaking the real SSE wire format: `event: message_start` → `ping` → per block
 * `content_block_start` / `content_block_delta` (text_delta, thinking_delta + signature_delta,
 * input_json_delta) / `content_block_stop` → `message_delta` (stop_reason, usage) →
 * `message_stop`, and Anthropic's `{"type":"error","error":{…}}` bodies. The script vocabulary
 * and server core are shared with the fake OpenAI server and re-exported here.
 */
import {
  argPieces,
  defaultStopReason,
  startScriptedServer,
  type FakeServer,
  type FakeServerOptions,
  type FakeTurn,
  type WireFormat,
} from './fake-openai-server';

export {
  argPieces,
  dropAfter,
  httpError,
  rateLimited,
  rawSse,
  stallAfter,
  textTurn,
  toolCallTurn,
  type FakeDrop,
  type FakeHttpError,
  type FakeRaw,
  type FakeResponse,
  type FakeServer,
  type FakeServerOptions,
  type FakeStall,
  type FakeToolCall,
  type FakeTurn,
  type FakeUsage,
  type RecordedRequest,
  type TurnOptions,
} from './fake-openai-server';

/** Fake but well-formed thinking signature (the real one is an opaque base64 blob). */
const FAKE_SIGNATURE = 'RmFrZVNpZ25hdHVyZUZvclRlc3Rz';

const STOP_REASONS: Record<'end' | 'toolCalls' | 'length', string> = { end: 'end_turn', toolCalls: 'tool_use', length: 'max_tokens' };

/** Error `type` per HTTP status, as the API documents them. */
const ERROR_TYPES: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'messages: field required' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'The requested resource could not be found.' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

/** One SSE event exactly as the API frames it: `event:` line, `data:` line, blank line. */
export function anthropicEvent(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export const anthropicWire: WireFormat = {
  path: '/v1/messages',
  basePath: '',
  modelsPath: '/v1/models',
  encodeModels: (models) => ({
    data: models.map((m) => ({ type: 'model', id: m.id, display_name: m.name ?? m.id, created_at: '2025-01-01T00:00:00Z' })),
    has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null,
  }),
  keyOf: (h) => (typeof h['x-api-key'] === 'string' ? h['x-api-key'] : undefined),
  responseHeaders: (seq) => ({ 'request-id': `req_fake${seq}`, 'anthropic-organization-id': 'org-fake' }),
  errorBody(status, message) {
    const known = ERROR_TYPES[status] ?? ERROR_TYPES[status >= 500 ? 500 : 400]!;
    return { type: 'error', error: { type: known.type, message: message ?? known.message } };
  },
  encodeTurn(turn: FakeTurn, request, seq) {
    const model = typeof request.body?.model === 'string' ? request.body.model : 'claude-fake';
    const u = turn.usage;
    const cacheRead = u?.cacheReadTokens ?? 0;
    const cacheWrite = u?.cacheWriteTokens ?? 0;
    const out: string[] = [];
    out.push(anthropicEvent('message_start', {
      message: {
        id: `msg_fake${seq}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          // The API's input_tokens excludes cache reads and writes.
          input_tokens: u ? u.inputTokens - cacheRead - cacheWrite : 0,
          cache_creation_input_tokens: cacheWrite,
          ...(u?.cacheWrite1hTokens !== undefined ? { cache_creation: { ephemeral_5m_input_tokens: cacheWrite - u.cacheWrite1hTokens, ephemeral_1h_input_tokens: u.cacheWrite1hTokens } } : {}),
          cache_read_input_tokens: cacheRead,
          output_tokens: 1,
          service_tier: 'standard',
        },
      },
    }));
    out.push(anthropicEvent('ping', {}));
    let index = 0;
    if (turn.reasoning && turn.reasoning.length > 0) {
      out.push(anthropicEvent('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const r of turn.reasoning) out.push(anthropicEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: r } }));
      out.push(anthropicEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature: FAKE_SIGNATURE } }));
      out.push(anthropicEvent('content_block_stop', { index }));
      index++;
    }
    if (turn.text && turn.text.length > 0) {
      out.push(anthropicEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const t of turn.text) out.push(anthropicEvent('content_block_delta', { index, delta: { type: 'text_delta', text: t } }));
      out.push(anthropicEvent('content_block_stop', { index }));
      index++;
    }
    for (const [i, call] of (turn.toolCalls ?? []).entries()) {
      const id = call.id ?? `toolu_fake${seq}_${i}`;
      out.push(anthropicEvent('content_block_start', { index, content_block: { type: 'tool_use', id, name: call.name, input: {} } }));
      // The API opens every tool input with an empty partial_json.
      out.push(anthropicEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }));
      for (const p of argPieces(call).pieces) {
        out.push(anthropicEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } }));
      }
      out.push(anthropicEvent('content_block_stop', { index }));
      index++;
    }
    out.push(anthropicEvent('message_delta', {
      delta: { stop_reason: STOP_REASONS[defaultStopReason(turn)], stop_sequence: null },
      usage: { output_tokens: u?.outputTokens ?? 0 },
    }));
    out.push(anthropicEvent('message_stop', {}));
    return out;
  },
};

/** Starts a fake Anthropic server; hand `baseUrl` (the origin) to the SDK as `baseURL`. */
export function startFakeAnthropic(opts: FakeServerOptions): Promise<FakeServer> {
  return startScriptedServer(anthropicWire, opts);
}
