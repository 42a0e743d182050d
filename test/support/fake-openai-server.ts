/**
 * Scriptable fake OpenAI Chat Completions server (real `node:http` on 127.0.0.1, random port)
 * speaking the real SSE wire format: `data: {chat.completion.chunk}\n\n` … `data: [DONE]\n\n`,
 * with OpenAI's error bodies. Also owns the provider-neutral script vocabulary (`FakeResponse`,
 * `textTurn`, `toolCallTurn`, …) and the scripted-server core that the fake Anthropic server
 * reuses. Each request consumes the next scripted response; every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from './wait';

/** Pieces a tool call's argument JSON is cut into when the script gives no explicit chunks. */
export const DEFAULT_ARG_PIECES = 3;
/** Fixed `created` timestamp so recorded streams are deterministic. */
const FIXED_CREATED_S = 1_700_000_000;

// ---------------------------------------------------------------- script vocabulary (shared)

export interface FakeToolCall {
  name: string;
  /** Object/array arguments are JSON-encoded; a string is sent verbatim (may be invalid JSON). */
  args: unknown;
  id?: string;
  /** Exact argument pieces, one streamed delta each (joined they are the full argument text). */
  argChunks?: string[];
  /** OpenAI wire only: a Gemini-style thought signature, sent as `extra_content.google.thought_signature` on the call's first delta. */
  thoughtSignature?: string;
}

export interface FakeUsage {
  /** All prompt tokens, cached ones included (OpenAI's `prompt_tokens`). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** OpenAI only (`completion_tokens_details.reasoning_tokens`); Anthropic counts thinking inside output_tokens. */
  reasoningTokens?: number;
  /** Anthropic only: of cacheWriteTokens, those written for 1 hour (`cache_creation.ephemeral_1h_input_tokens`). */
  cacheWrite1hTokens?: number;
  /** OpenAI wire only: the dollars the call cost, as OpenRouter reports it (`usage.cost`). */
  costUsd?: number;
}

export interface FakeTurn {
  kind: 'turn';
  reasoning?: string[];
  text?: string[];
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** Default: `toolCalls` when there are tool calls, else `end`. */
  stopReason?: 'end' | 'toolCalls' | 'length';
  /** OpenAI only: stream the tool calls' argument deltas round-robin instead of one after another. */
  interleaveToolCalls?: boolean;
  /** OpenAI only: delta field carrying reasoning (`reasoning_content`: DeepSeek/vLLM; `reasoning`: OpenRouter/Ollama). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** Pause between SSE events. */
  eventDelayMs?: number;
  /**
   * Points where the stream waits for the test: before writing event number `afterEvents`
   * (0-based, so `afterEvents: 3` = three events already sent), call `onReached` and wait for
   * `release`. Lets a test act at a known point mid-stream (hide a view, open a second client)
   * however slow the machine is. A client that went away meanwhile ends the stream as usual.
   */
  holds?: FakeHold[];
  /** Extra response headers. */
  headers?: Record<string, string>;
}

export interface FakeHold {
  afterEvents: number;
  release: Promise<unknown>;
  onReached?: () => void;
}

export interface FakeHttpError {
  kind: 'httpError';
  status: number;
  headers?: Record<string, string>;
  message?: string;
  /** Replaces the provider-shaped error body entirely. */
  body?: unknown;
}

/** Streams the first `afterEvents` SSE events of `turn`, then destroys the socket. */
export interface FakeDrop {
  kind: 'drop';
  turn: FakeTurn;
  afterEvents: number;
}

/** Streams the first `afterEvents` SSE events of `turn`, then stays silent with the socket open. */
export interface FakeStall {
  kind: 'stall';
  turn: FakeTurn;
  afterEvents: number;
}

/** Sends these bytes as the SSE body (status 200, `text/event-stream` unless overridden). */
export interface FakeRaw {
  kind: 'raw';
  chunks: (string | Uint8Array)[];
  status?: number;
  headers?: Record<string, string>;
  /** `end` (default) finishes the response normally; `destroy` cuts the socket after the bytes. */
  ending?: 'end' | 'destroy';
}

export type FakeResponse = FakeTurn | FakeHttpError | FakeDrop | FakeStall | FakeRaw;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined if the body was not JSON). `any` so tests can index into it freely. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** A streamed response: SSE events written of the scripted total, and whether the client closed the connection before the end. */
  stream?: { written: number; total: number; clientClosed: boolean };
}

export interface FakeServer {
  /** Base URL to hand to the SDK (`…/v1` for OpenAI, the origin for Anthropic). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Appends more scripted responses. */
  push(...responses: FakeResponse[]): void;
  /** Scripted responses not consumed yet. */
  pending(): number;
  close(): Promise<void>;
}

export interface FakeServerOptions {
  responses: FakeResponse[];
  /**
   * Picks a response by looking at the request (e.g. which of several concurrent agents asks);
   * undefined falls through to the queue. For concurrent callers whose order is not fixed.
   */
  route?: (request: RecordedRequest) => FakeResponse | undefined;
  /** JSON answers (status 200) for other POST paths, e.g. Anthropic's `/v1/messages/count_tokens`. */
  routes?: Record<string, (request: RecordedRequest) => unknown>;
  /** Models served at the wire's model-list route (`GET /v1/models`, OpenAI- or Anthropic-shaped). */
  models?: FakeModel[];
  /** Model names served at Ollama's `GET /api/tags` (an Ollama-shaped server). */
  ollamaTags?: string[];
  /** When set, every request must carry this key (Bearer, or x-api-key) or gets the provider's 401. */
  apiKey?: string;
}

export interface FakeModel {
  id: string;
  /** OpenRouter's `name` / Anthropic's `display_name`. */
  name?: string;
  contextLength?: number;
}

export type TurnOptions = Omit<FakeTurn, 'kind' | 'text' | 'toolCalls'>;

/** A plain text answer; a string is streamed as one piece, an array piece by piece. */
export function textTurn(text: string | string[], opts: TurnOptions = {}): FakeTurn {
  return { kind: 'turn', ...opts, text: Array.isArray(text) ? text : [text] };
}

/** A turn that calls tools (arguments streamed as several deltas), optionally after some text. */
export function toolCallTurn(calls: FakeToolCall[], opts: TurnOptions & { text?: string[] } = {}): FakeTurn {
  return { kind: 'turn', ...opts, toolCalls: calls };
}

export function httpError(status: number, opts: Omit<FakeHttpError, 'kind' | 'status'> = {}): FakeHttpError {
  return { kind: 'httpError', status, ...opts };
}

/** 429 with `retry-after` in seconds. */
export function rateLimited(retryAfterSeconds: number, headers: Record<string, string> = {}): FakeHttpError {
  return httpError(429, { headers: { 'retry-after': String(retryAfterSeconds), ...headers } });
}

export function dropAfter(afterEvents: number, turn: FakeTurn): FakeDrop {
  return { kind: 'drop', turn, afterEvents };
}

export function stallAfter(afterEvents: number, turn: FakeTurn): FakeStall {
  return { kind: 'stall', turn, afterEvents };
}

export function rawSse(chunks: (string | Uint8Array)[], opts: Omit<FakeRaw, 'kind' | 'chunks'> = {}): FakeRaw {
  return { kind: 'raw', chunks, ...opts };
}

/** The argument text of a scripted call and the pieces it is streamed in. */
export function argPieces(call: FakeToolCall): { full: string; pieces: string[] } {
  const full = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
  if (call.argChunks) {
    if (call.argChunks.join('') !== full) throw new Error(`fake server: argChunks of ${call.name} do not join to its args`);
    return { full, pieces: call.argChunks };
  }
  const chars = Array.from(full); // never split a surrogate pair
  const size = Math.max(1, Math.ceil(chars.length / DEFAULT_ARG_PIECES));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return { full, pieces };
}

export function defaultStopReason(turn: FakeTurn): 'end' | 'toolCalls' | 'length' {
  return turn.stopReason ?? (turn.toolCalls && turn.toolCalls.length > 0 ? 'toolCalls' : 'end');
}

// ---------------------------------------------------------------- scripted server core (shared)

export interface WireFormat {
  /** Only requests to this path consume scripted responses. */
  path: string;
  /** Path prefix included in `baseUrl` (e.g. `/v1`). */
  basePath: string;
  /** The complete SSE events (each ending in a blank line) for a turn. */
  encodeTurn(turn: FakeTurn, request: RecordedRequest, seq: number): string[];
  /** The provider's JSON error body. */
  errorBody(status: number, message: string | undefined): unknown;
  /** Headers every response carries (request ids, …). */
  responseHeaders(seq: number): Record<string, string>;
  /** The model-list route and its body. */
  modelsPath: string;
  encodeModels(models: FakeModel[]): unknown;
  /** The key a request carries (Bearer token or x-api-key). */
  keyOf(headers: IncomingHttpHeaders): string | undefined;
}

export async function startScriptedServer(format: WireFormat, opts: FakeServerOptions): Promise<FakeServer> {
  const queue = [...opts.responses];
  const requests: RecordedRequest[] = [];
  let seq = 0;

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string>) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const streamEvents = async (req: IncomingMessage, res: ServerResponse, turn: FakeTurn, events: string[], cut?: { after: number; mode: 'drop' | 'stall' }, rec?: RecordedRequest) => {
    const progress = { written: 0, total: events.length, clientClosed: false };
    if (rec) rec.stream = progress;
    res.on('close', () => void (!res.writableFinished && (progress.clientClosed = true)));
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...format.responseHeaders(seq),
      ...turn.headers,
    });
    res.flushHeaders();
    const limit = cut ? Math.min(cut.after, events.length) : events.length;
    for (let i = 0; i < limit; i++) {
      if (res.destroyed) return;
      if (turn.eventDelayMs && i > 0) await sleep(turn.eventDelayMs);
      for (const hold of turn.holds ?? []) {
        if (hold.afterEvents !== i) continue;
        hold.onReached?.();
        await hold.release;
        if (res.destroyed) return;
      }
      res.write(events[i]);
      progress.written++;
    }
    if (!cut) return void res.end();
    if (cut.mode === 'drop') {
      // Let the written bytes leave before cutting the connection mid-body.
      await sleep(0);
      return void req.socket.destroy();
    }
    // stall: keep the socket open until the client goes away or the server closes.
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rec: RecordedRequest = { method: req.method ?? '', path: url.pathname, headers: req.headers, body };
    requests.push(rec);
    seq++;
    const common = format.responseHeaders(seq);
    if (opts.apiKey !== undefined && format.keyOf(req.headers) !== opts.apiKey) {
      return sendJson(res, 401, format.errorBody(401, undefined), common);
    }
    if (req.method === 'GET' && opts.models && url.pathname === format.modelsPath) {
      return sendJson(res, 200, format.encodeModels(opts.models), common);
    }
    if (req.method === 'GET' && opts.ollamaTags && url.pathname === '/api/tags') {
      const models = opts.ollamaTags.map((name) => ({ name, model: name, modified_at: '2025-01-01T00:00:00Z', size: 1, digest: 'fake', details: { format: 'gguf', family: 'fake', parameter_size: '7B' } }));
      return sendJson(res, 200, { models }, common);
    }
    const extra = req.method === 'POST' ? opts.routes?.[url.pathname] : undefined;
    if (extra) return sendJson(res, 200, extra(rec), common);
    if (req.method !== 'POST' || url.pathname !== format.path) {
      return sendJson(res, 404, format.errorBody(404, `fake server: no route ${req.method} ${url.pathname}`), common);
    }
    if ((body as { stream?: unknown } | undefined)?.stream !== true) {
      return sendJson(res, 400, format.errorBody(400, 'fake server: only streaming requests (stream: true) are scripted'), common);
    }
    const next = opts.route?.(rec) ?? queue.shift();
    if (!next) {
      return sendJson(res, 500, format.errorBody(500, `fake server: no scripted response left for request #${seq}`), common);
    }
    switch (next.kind) {
      case 'httpError':
        return sendJson(res, next.status, next.body ?? format.errorBody(next.status, next.message), { ...common, ...next.headers });
      case 'raw': {
        res.writeHead(next.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', ...common, ...next.headers });
        for (const c of next.chunks) res.write(c);
        if (next.ending === 'destroy') {
          await sleep(0);
          return void req.socket.destroy();
        }
        return void res.end();
      }
      case 'turn':
        return streamEvents(req, res, next, format.encodeTurn(next, rec, seq), undefined, rec);
      case 'drop':
      case 'stall':
        return streamEvents(req, res, next.turn, format.encodeTurn(next.turn, rec, seq), { after: next.afterEvents, mode: next.kind }, rec);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, format.errorBody(500, `fake server crashed: ${String(e)}`), {});
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${format.basePath}`,
    requests,
    push: (...more) => void queue.push(...more),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections(); // ends stalled streams and keep-alive sockets
      }),
  };
}

// ---------------------------------------------------------------- OpenAI wire format

function sse(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

const OPENAI_FINISH: Record<'end' | 'toolCalls' | 'length', string> = { end: 'stop', toolCalls: 'tool_calls', length: 'length' };

const OPENAI_ERROR_TYPES: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
};

export const openAIWire: WireFormat = {
  path: '/v1/chat/completions',
  basePath: '/v1',
  modelsPath: '/v1/models',
  encodeModels: (models) => ({
    object: 'list',
    data: models.map((m) => ({ id: m.id, object: 'model', created: FIXED_CREATED_S, owned_by: 'fake', ...(m.name ? { name: m.name } : {}), ...(m.contextLength ? { context_length: m.contextLength } : {}) })),
  }),
  keyOf: (h) => /^Bearer (.+)$/.exec(String(h.authorization ?? ''))?.[1],
  responseHeaders: (seq) => ({ 'x-request-id': `req_fake_${seq}`, 'openai-processing-ms': '1' }),
  errorBody(status, message) {
    const known = OPENAI_ERROR_TYPES[status] ?? OPENAI_ERROR_TYPES[status >= 500 ? 500 : 400]!;
    return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
  },
  encodeTurn(turn, request, seq) {
    const model = typeof request.body?.model === 'string' ? request.body.model : 'fake-model';
    const withUsage = request.body?.stream_options?.include_usage === true;
    const base = { id: `chatcmpl-fake${seq}`, object: 'chat.completion.chunk', created: FIXED_CREATED_S, model, system_fingerprint: 'fp_fake' };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) });
    const out: string[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    const field = turn.reasoningField ?? 'reasoning_content';
    for (const r of turn.reasoning ?? []) out.push(chunk({ [field]: r }));
    for (const t of turn.text ?? []) out.push(chunk({ content: t }));
    const calls = (turn.toolCalls ?? []).map((c, i) => ({ c, i, id: c.id ?? `call_fake${seq}_${i}`, pieces: argPieces(c).pieces }));
    const open = (x: (typeof calls)[number]) =>
      chunk({ tool_calls: [{ index: x.i, id: x.id, type: 'function', function: { name: x.c.name, arguments: '' }, ...(x.c.thoughtSignature !== undefined ? { extra_content: { google: { thought_signature: x.c.thoughtSignature } } } : {}) }] });
    const piece = (x: (typeof calls)[number], p: string) => chunk({ tool_calls: [{ index: x.i, function: { arguments: p } }] });
    if (turn.interleaveToolCalls) {
      for (const x of calls) out.push(open(x));
      const longest = Math.max(0, ...calls.map((x) => x.pieces.length));
      for (let k = 0; k < longest; k++) for (const x of calls) if (k < x.pieces.length) out.push(piece(x, x.pieces[k]!));
    } else {
      for (const x of calls) {
        out.push(open(x));
        for (const p of x.pieces) out.push(piece(x, p));
      }
    }
    out.push(chunk({}, OPENAI_FINISH[defaultStopReason(turn)]));
    if (withUsage && turn.usage) {
      const u = turn.usage;
      out.push(sse({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: u.inputTokens,
          completion_tokens: u.outputTokens,
          total_tokens: u.inputTokens + u.outputTokens,
          prompt_tokens_details: { cached_tokens: u.cacheReadTokens ?? 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
          ...(u.costUsd !== undefined ? { cost: u.costUsd } : {}),
        },
      }));
    }
    out.push(sse('[DONE]'));
    return out;
  },
};

/** Starts a fake OpenAI server; hand `baseUrl` (ends in `/v1`) to the SDK as `baseURL`. */
export function startFakeOpenAI(opts: FakeServerOptions): Promise<FakeServer> {
  return startScriptedServer(openAIWire, opts);
}
