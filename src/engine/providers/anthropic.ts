/**
 * `AnthropicProvider`: streams the Anthropic Messages API through the official
 * `@anthropic-ai/sdk`. Owns: converting `ChatMessage[]` (system → `system` param, tool calls →
 * `tool_use` blocks, tool results → user `tool_result` blocks, same-role runs merged), prompt-cache
 * breakpoints, and mapping the raw stream events (text/thinking/input_json deltas, usage from
 * `message_start`/`message_delta`, stop reasons) to `ProviderEvent`s. Retries and rate-limit
 * waits belong to the caller (SDK retries are off by default).
 */
import Anthropic from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/streaming';
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, ModelProvider, ProviderEvent, StopReason, StreamRequest, ToolSpec, Usage } from './types';
import { ProviderError } from './types';
import { cancelledError, toProviderError } from './provider-errors';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** `max_tokens` is mandatory on this API; used when the request sets none. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192;
/** Time allowed until response headers arrive. */
const DEFAULT_HEADERS_TIMEOUT_MS = 300_000;
/** The API accepts at most 4 `cache_control` breakpoints; we use system + the last 2 user turns. */
const CACHED_USER_TURNS = 2;
const PROVIDER_LABEL = 'Anthropic';
/** How long the context meter waits for the count_tokens endpoint (it falls back to the approximation). */
const COUNT_TOKENS_TIMEOUT_MS = 5_000;

export interface AnthropicProviderOptions {
  apiKey: string;
  /** Undefined or empty means `DEFAULT_ANTHROPIC_BASE_URL` (the SDK appends `/v1/messages`). */
  baseURL?: string | undefined;
  defaultHeaders?: Record<string, string>;
  /** SDK-level retries; 0 by default because the run queue owns retries and rate-limit waits. */
  maxRetries?: number;
  timeoutMs?: number;
  defaultMaxTokens?: number;
  /** Mark system + recent turns with ephemeral `cache_control` (default true). */
  promptCaching?: boolean;
}

type BlockState =
  | { kind: 'text' }
  | { kind: 'thinking' }
  | { kind: 'tool'; id: string; name: string; json: string; initialInput: unknown }
  | { kind: 'other' };

export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic';
  readonly isLocal = false;
  private readonly client: Anthropic;
  private readonly defaultMaxTokens: number;
  private readonly promptCaching: boolean;
  private readonly baseURL: string;

  constructor(opts: AnthropicProviderOptions) {
    this.baseURL = opts.baseURL || DEFAULT_ANTHROPIC_BASE_URL;
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      // Explicit null keeps ANTHROPIC_AUTH_TOKEN from the environment out of requests.
      authToken: null,
      baseURL: this.baseURL,
      maxRetries: opts.maxRetries ?? 0,
      timeout: opts.timeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
      // Failures reach the caller as ProviderError; the SDK must not print stream data to stdout.
      logLevel: 'off',
      ...(opts.defaultHeaders ? { defaultHeaders: opts.defaultHeaders } : {}),
    });
    this.defaultMaxTokens = opts.defaultMaxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
    this.promptCaching = opts.promptCaching ?? true;
  }

  /** The context meter: the API's own count of a request (`POST /v1/messages/count_tokens`). */
  async countPromptTokens(req: { model: string; messages: ChatMessage[]; tools: ToolSpec[] }): Promise<number> {
    const { system, messages } = toAnthropicMessages(req.messages, false);
    try {
      const r = await this.client.messages.countTokens(
        { model: req.model, messages, ...(system ? { system } : {}), ...(req.tools.length > 0 ? { tools: toAnthropicTools(req.tools) } : {}) },
        { timeout: COUNT_TOKENS_TIMEOUT_MS, maxRetries: 0 },
      );
      return r.input_tokens;
    } catch (e) {
      throw toProviderError(e, { provider: PROVIDER_LABEL, signal: undefined });
    }
  }

  async *stream(req: StreamRequest): AsyncIterable<ProviderEvent> {
    const signal = req.signal;
    const ctx = { provider: PROVIDER_LABEL, signal, baseUrl: this.baseURL };
    if (signal?.aborted) throw cancelledError();

    const { system, messages } = toAnthropicMessages(req.messages, this.promptCaching);
    const body: MessageCreateParamsStreaming = {
      model: req.model,
      max_tokens: req.maxTokens ?? this.defaultMaxTokens,
      messages,
      stream: true,
      ...(system ? { system } : {}),
      ...(req.tools && req.tools.length > 0 ? { tools: toAnthropicTools(req.tools) } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    };

    // One controller for the request and the SSE parser, linked to the caller's signal. The
    // stream is built with `Stream.fromSSEResponse(…, client)` rather than by `create()` itself
    // because SDK 0.60 then omits the client and prints unparseable SSE data to the console
    // instead of using the client's (silenced) logger.
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      yield* this.consume(body, controller, ctx);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async *consume(
    body: MessageCreateParamsStreaming,
    controller: AbortController,
    ctx: { provider: string; signal: AbortSignal | undefined },
  ): AsyncGenerator<ProviderEvent> {
    const signal = ctx.signal;
    let sdkStream: AsyncIterable<RawMessageStreamEvent>;
    try {
      const response = await this.client.messages.create(body, { signal: controller.signal }).asResponse();
      sdkStream = Stream.fromSSEResponse<RawMessageStreamEvent>(response, controller, this.client);
    } catch (e) {
      throw toProviderError(e, ctx);
    }

    const blocks = new Map<number, BlockState>();
    const usage = { input: 0, cacheWrite: 0, cacheWrite1h: 0, cacheRead: 0, output: 0, seen: false, id: '' };
    let stopReason: string | null = null;
    let sawToolCall = false;
    let sawStop = false;
    try {
      for await (const ev of sdkStream) {
        switch (ev.type) {
          case 'message_start': {
            // Proxies in front of the API sometimes drop usage; treat it as optional.
            const u: Partial<typeof ev.message.usage> = ev.message.usage ?? {};
            usage.seen = ev.message.usage !== undefined && ev.message.usage !== null;
            usage.input = u.input_tokens ?? 0;
            usage.cacheWrite = u.cache_creation_input_tokens ?? 0;
            usage.cacheRead = u.cache_read_input_tokens ?? 0;
            usage.output = u.output_tokens ?? 0;
            usage.cacheWrite1h = cacheWrite1hOf(u);
            if (typeof ev.message.id === 'string') usage.id = ev.message.id;
            break;
          }
          case 'content_block_start': {
            const b = ev.content_block;
            if (b.type === 'text') {
              blocks.set(ev.index, { kind: 'text' });
              if (b.text) yield { type: 'text', delta: b.text };
            } else if (b.type === 'thinking') {
              blocks.set(ev.index, { kind: 'thinking' });
              if (b.thinking) yield { type: 'reasoning', delta: b.thinking };
            } else if (b.type === 'tool_use') {
              blocks.set(ev.index, { kind: 'tool', id: b.id, name: b.name, json: '', initialInput: b.input });
            } else {
              // redacted_thinking, server tool blocks: nothing to surface.
              blocks.set(ev.index, { kind: 'other' });
            }
            break;
          }
          case 'content_block_delta': {
            const block = blocks.get(ev.index);
            if (!block) throw malformed(`content_block_delta for unknown block ${ev.index}`);
            const d = ev.delta;
            if (d.type === 'text_delta') {
              if (d.text) yield { type: 'text', delta: d.text };
            } else if (d.type === 'thinking_delta') {
              if (d.thinking) yield { type: 'reasoning', delta: d.thinking };
            } else if (d.type === 'input_json_delta') {
              // Server-tool blocks also stream input JSON; only our tool_use blocks matter.
              if (block.kind === 'tool') block.json += d.partial_json;
              else if (block.kind !== 'other') throw malformed(`input_json_delta on a ${block.kind} block ${ev.index}`);
            }
            // signature_delta / citations_delta carry nothing the engine uses.
            break;
          }
          case 'content_block_stop': {
            const block = blocks.get(ev.index);
            if (!block) throw malformed(`content_block_stop for unknown block ${ev.index}`);
            blocks.delete(ev.index);
            if (block.kind === 'tool') {
              sawToolCall = true;
              // A tool without parameters may stream no JSON at all; its input is then `{}`.
              const argumentsJson = block.json !== '' ? block.json : JSON.stringify(block.initialInput ?? {});
              yield { type: 'toolCall', call: { id: block.id, name: block.name, argumentsJson } };
            }
            break;
          }
          case 'message_delta': {
            if (ev.delta.stop_reason) stopReason = ev.delta.stop_reason;
            const u: Partial<typeof ev.usage> = ev.usage ?? {};
            // message_delta usage is cumulative; null fields mean "unchanged".
            if (typeof u.output_tokens === 'number') usage.output = u.output_tokens;
            if (typeof u.input_tokens === 'number') usage.input = u.input_tokens;
            if (typeof u.cache_creation_input_tokens === 'number') usage.cacheWrite = u.cache_creation_input_tokens;
            if (typeof u.cache_read_input_tokens === 'number') usage.cacheRead = u.cache_read_input_tokens;
            if ((u as { cache_creation?: unknown }).cache_creation) usage.cacheWrite1h = cacheWrite1hOf(u);
            if (ev.usage) usage.seen = true;
            break;
          }
          case 'message_stop':
            sawStop = true;
            break;
        }
      }
    } catch (e) {
      throw toProviderError(e, ctx);
    }
    // The SDK ends iteration quietly when its request is aborted.
    if (signal?.aborted) throw cancelledError();
    if (!sawStop) {
      throw new ProviderError('network', `${PROVIDER_LABEL} stream ended before message_stop (connection closed early)`);
    }
    if (usage.seen) {
      // Engine convention: inputTokens counts every prompt token, cached ones included.
      const u: Usage = {
        inputTokens: usage.input + usage.cacheWrite + usage.cacheRead,
        outputTokens: usage.output,
        cacheReadTokens: usage.cacheRead,
        cacheWriteTokens: usage.cacheWrite,
        ...(usage.cacheWrite1h > 0 ? { cacheWrite1hTokens: Math.min(usage.cacheWrite1h, usage.cacheWrite) } : {}),
        ...(usage.id ? { responseId: usage.id } : {}),
      };
      yield { type: 'usage', usage: u };
    }
    yield { type: 'done', stopReason: mapStopReason(stopReason, sawToolCall) };
  }
}

/** Of the cache writes, those with a 1-hour lifetime (`cache_creation.ephemeral_1h_input_tokens`), when the usage breaks them down. */
function cacheWrite1hOf(u: object): number {
  const split = (u as { cache_creation?: { ephemeral_1h_input_tokens?: unknown } | null }).cache_creation;
  const n = split?.ephemeral_1h_input_tokens;
  return typeof n === 'number' && n > 0 ? n : 0;
}

function malformed(what: string): ProviderError {
  return new ProviderError('malformedStream', `${PROVIDER_LABEL} stream out of order: ${what}`);
}

function mapStopReason(reason: string | null, sawToolCall: boolean): StopReason {
  if (reason === 'tool_use' || (reason === null && sawToolCall)) return 'toolCalls';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  // end_turn, stop_sequence, pause_turn, refusal.
  return 'end';
}

export function toAnthropicTools(tools: ToolSpec[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { type: 'object', ...t.parameters } as Tool.InputSchema,
  }));
}

/** Parses stored tool-call arguments; the API requires an object, so invalid JSON is wrapped. */
function toolInput(argumentsJson: string): unknown {
  try {
    const v: unknown = JSON.parse(argumentsJson);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // fall through: keep the model's raw text visible to it
  }
  return { invalid_arguments_json: argumentsJson };
}

/**
 * Converts engine messages: system messages join into `system`; consecutive same-role messages
 * (e.g. several tool results, then a user note) merge into one turn, tool results first as the
 * API requires; empty text is dropped (the API rejects empty text blocks).
 */
export function toAnthropicMessages(
  input: ChatMessage[],
  promptCaching = false,
): { system: TextBlockParam[] | undefined; messages: MessageParam[] } {
  const systemTexts: string[] = [];
  const out: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: [...blocks] });
  };
  for (const m of input) {
    switch (m.role) {
      case 'system':
        if (m.content !== '') systemTexts.push(m.content);
        break;
      case 'user':
        push('user', m.content !== '' ? [{ type: 'text', text: m.content }] : []);
        break;
      case 'assistant': {
        const blocks: ContentBlockParam[] = m.content !== '' ? [{ type: 'text', text: m.content }] : [];
        for (const c of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: toolInput(c.argumentsJson) });
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content, ...(m.isError ? { is_error: true } : {}) }]);
        break;
    }
  }
  for (const turn of out) {
    // tool_result blocks must lead their user turn.
    if (turn.role === 'user') turn.content.sort((a, b) => rank(a) - rank(b));
  }
  const system: TextBlockParam[] | undefined =
    systemTexts.length > 0 ? [{ type: 'text', text: systemTexts.join('\n\n') }] : undefined;
  if (promptCaching) {
    if (system) (system[0] as TextBlockParam).cache_control = { type: 'ephemeral' };
    let marked = 0;
    for (let i = out.length - 1; i >= 0 && marked < CACHED_USER_TURNS; i--) {
      const turn = out[i] as (typeof out)[number];
      if (turn.role !== 'user') continue;
      const lastBlock = turn.content[turn.content.length - 1];
      if (lastBlock && (lastBlock.type === 'text' || lastBlock.type === 'tool_result')) {
        lastBlock.cache_control = { type: 'ephemeral' };
        marked++;
      }
    }
  }
  return { system, messages: out };
}

/** Stable ordering key: tool results before anything else in a user turn. */
function rank(b: ContentBlockParam): number {
  return b.type === 'tool_result' ? 0 : 1;
}
