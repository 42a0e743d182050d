/**
 * `OpenAICompatibleProvider`: streams chat completions from OpenAI or any OpenAI-compatible
 * server (OpenRouter, Ollama, LM Studio, vLLM, llama.cpp server, DeepSeek) through the official
 * `openai` SDK. Owns: converting `ChatMessage[]`/tools to the Chat Completions format, assembling
 * tool-call argument deltas by index, mapping `reasoning_content`/`reasoning` deltas, usage
 * (incl. cached prompt tokens) and finish reasons. Retries and rate-limit waits belong to the
 * caller (the SDK's own retries are off by default).
 */
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ModelProvider, ProviderEvent, StopReason, StreamRequest, ToolCall, ToolSpec, Usage } from './types';
import { ProviderError } from './types';
import { cancelledError, toProviderError } from './provider-errors';

/** Time allowed until response headers arrive (a local server may first load the model). */
const DEFAULT_HEADERS_TIMEOUT_MS = 300_000;
/** Hosts that reject `max_tokens` for newer models and want `max_completion_tokens`. */
const OFFICIAL_OPENAI_HOST = 'api.openai.com';
const PROVIDER_LABEL = 'OpenAI-compatible';
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAICompatibleProviderOptions {
  apiKey: string;
  /**
   * e.g. `https://openrouter.ai/api/v1`, `http://127.0.0.1:11434/v1`; undefined or empty means
   * `DEFAULT_OPENAI_BASE_URL`.
   */
  baseURL?: string | undefined;
  /** Extra headers on every request (OpenRouter's `HTTP-Referer`/`X-Title`, …). */
  defaultHeaders?: Record<string, string>;
  /** SDK-level retries; 0 by default because the run queue owns retries and rate-limit waits. */
  maxRetries?: number;
  /** Time until response headers; defaults to `DEFAULT_HEADERS_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Which request field carries `StreamRequest.maxTokens`; default depends on the host. */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** Provider id reported to the engine (default `openai`). */
  id?: string;
  /** Who the user thinks they are talking to, in failure messages (default `OpenAI-compatible`; `Ollama`, `LM Studio`, …). */
  label?: string;
}

/** One tool call being assembled from deltas. */
interface PendingToolCall {
  id: string;
  name: string;
  args: string;
  /** Gemini's OpenAI-compatible API: `extra_content.google.thought_signature`, to be sent back with the call. */
  signature?: string;
}

export class OpenAICompatibleProvider implements ModelProvider {
  readonly id: string;
  readonly isLocal = false;
  private readonly client: OpenAI;
  private readonly maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  private readonly label: string;
  private readonly baseURL: string;

  constructor(opts: OpenAICompatibleProviderOptions) {
    this.id = opts.id ?? 'openai';
    this.label = opts.label ?? PROVIDER_LABEL;
    const baseURL = opts.baseURL || DEFAULT_OPENAI_BASE_URL;
    this.baseURL = baseURL;
    this.client = new OpenAI({
      apiKey: opts.apiKey,
      baseURL,
      // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT from the environment out of requests.
      organization: null,
      project: null,
      maxRetries: opts.maxRetries ?? 0,
      timeout: opts.timeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
      // Failures reach the caller as ProviderError; the SDK must not print stream data to stdout.
      logLevel: 'off',
      ...(opts.defaultHeaders ? { defaultHeaders: opts.defaultHeaders } : {}),
    });
    this.maxTokensParam = opts.maxTokensParam ?? (hostOf(baseURL) === OFFICIAL_OPENAI_HOST ? 'max_completion_tokens' : 'max_tokens');
  }

  async *stream(req: StreamRequest): AsyncIterable<ProviderEvent> {
    const signal = req.signal;
    const ctx = { provider: this.label, signal, baseUrl: this.baseURL };
    if (signal?.aborted) throw cancelledError();

    const body: ChatCompletionCreateParamsStreaming = {
      model: req.model,
      messages: toOpenAIMessages(req.messages),
      stream: true,
      stream_options: { include_usage: true },
      ...(req.tools && req.tools.length > 0 ? { tools: toOpenAITools(req.tools) } : {}),
      ...(req.maxTokens !== undefined ? { [this.maxTokensParam]: req.maxTokens } : {}),
      ...samplingParams(req),
    };

    let sdkStream: AsyncIterable<ChatCompletionChunk>;
    try {
      sdkStream = await this.client.chat.completions.create(body, signal ? { signal } : {});
    } catch (e) {
      throw toProviderError(e, ctx);
    }

    const calls = new ToolCallAssembler();
    let finishReason: string | null = null;
    let usage: Usage | undefined;
    let responseId: string | undefined;
    try {
      for await (const chunk of sdkStream) {
        if (chunk.usage) usage = mapUsage(chunk.usage);
        if (typeof chunk.id === 'string' && chunk.id !== '') responseId = chunk.id;
        // vLLM sends the usage-only chunk with `choices: null`.
        const choice = (chunk.choices ?? []).find((c) => c.index === 0) ?? chunk.choices?.[0];
        if (!choice) continue;
        const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & Record<string, unknown>;
        const reasoning = pickReasoning(delta);
        if (reasoning) yield { type: 'reasoning', delta: reasoning };
        if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text', delta: delta.content };
        if (typeof delta.refusal === 'string' && delta.refusal !== '') yield { type: 'text', delta: delta.refusal };
        if (delta.tool_calls) {
          for (const tc of delta.tool_calls) calls.add(tc);
        }
        if (choice.finish_reason && finishReason === null) {
          finishReason = choice.finish_reason;
          // No more deltas follow for this choice: the calls are complete.
          for (const call of calls.drain()) yield { type: 'toolCall', call };
        }
      }
    } catch (e) {
      throw toProviderError(e, ctx);
    }
    // The SDK ends iteration quietly when its request is aborted.
    if (signal?.aborted) throw cancelledError();
    if (finishReason === null) {
      throw new ProviderError('network', `${this.label} stream ended before a finish_reason (connection closed early)`);
    }
    const sawToolCalls = calls.emittedCount > 0;
    if (usage) yield { type: 'usage', usage: responseId ? { ...usage, responseId } : usage };
    yield { type: 'done', stopReason: mapFinishReason(finishReason, sawToolCalls) };
  }
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

function pickReasoning(delta: Record<string, unknown>): string | undefined {
  // DeepSeek / older vLLM: `reasoning_content`; OpenRouter / Ollama / newer vLLM: `reasoning`.
  for (const key of ['reasoning_content', 'reasoning']) {
    const v = delta[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function mapFinishReason(reason: string, sawToolCalls: boolean): StopReason {
  // Some servers (Ollama, older llama.cpp) say `stop` even when the turn is tool calls.
  if (sawToolCalls || reason === 'tool_calls' || reason === 'function_call') return 'toolCalls';
  if (reason === 'length') return 'length';
  return 'end';
}

function mapUsage(u: NonNullable<ChatCompletionChunk['usage']>): Usage {
  const raw = u as typeof u & { prompt_cache_hit_tokens?: number; cost?: unknown };
  const usage: Usage = { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 };
  // OpenAI: prompt_tokens_details.cached_tokens; DeepSeek: prompt_cache_hit_tokens. Both are
  // part of prompt_tokens, matching the engine's convention that inputTokens includes cache.
  const cached = u.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens;
  if (typeof cached === 'number') usage.cacheReadTokens = cached;
  // Reasoning models (o-series, gpt-5, DeepSeek R1 via compatible servers): part of completion_tokens.
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number' && reasoning > 0) usage.reasoningTokens = reasoning;
  // OpenRouter: what the call was charged, in dollars.
  if (typeof raw.cost === 'number' && Number.isFinite(raw.cost) && raw.cost >= 0) usage.costUsd = raw.cost;
  return usage;
}

/** Assembles streamed tool-call fragments, keyed by the delta `index`. */
class ToolCallAssembler {
  /** Calls in the order they first appeared. */
  private readonly slots: PendingToolCall[] = [];
  private readonly byWireIndex = new Map<number, PendingToolCall>();
  private last: PendingToolCall | undefined;
  emittedCount = 0;

  add(tc: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const wire = typeof tc.index === 'number' ? tc.index : undefined;
    let call = wire !== undefined ? this.byWireIndex.get(wire) : undefined;
    // Some servers reuse one index for several calls, each arriving with a new id.
    if (call && tc.id && call.id && call.id !== tc.id) call = undefined;
    // Servers that omit `index`: route by id, else continue the latest call.
    if (!call && wire === undefined) call = tc.id ? this.slots.find((s) => s.id === tc.id) : this.last;
    if (!call) {
      call = { id: '', name: '', args: '' };
      this.slots.push(call);
    }
    if (wire !== undefined) this.byWireIndex.set(wire, call);
    this.last = call;
    if (tc.id) call.id = tc.id;
    if (tc.function?.name && call.name === '') call.name = tc.function.name;
    if (typeof tc.function?.arguments === 'string') call.args += tc.function.arguments;
    const sig = (tc as { extra_content?: { google?: { thought_signature?: unknown } } }).extra_content?.google?.thought_signature;
    if (typeof sig === 'string') call.signature = sig;
  }

  /** Returns the complete calls in order of appearance and forgets them. */
  drain(): ToolCall[] {
    const out = this.slots.map((c, i): ToolCall => {
      if (c.name === '') {
        throw new ProviderError('malformedStream', `${PROVIDER_LABEL} stream sent a tool call (#${i}) without a function name`);
      }
      return { id: c.id || `call_${i}`, name: c.name, argumentsJson: c.args, ...(c.signature !== undefined ? { thoughtSignature: c.signature } : {}) };
    });
    this.slots.length = 0;
    this.byWireIndex.clear();
    this.last = undefined;
    this.emittedCount += out.length;
    return out;
  }
}

export function toOpenAITools(tools: ToolSpec[]): ChatCompletionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** Converts engine messages to Chat Completions messages (tool results become `role: tool`). */
export function toOpenAIMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'system':
        return { role: 'system', content: m.content };
      case 'user':
        return { role: 'user', content: m.content };
      case 'assistant':
        if (m.toolCalls && m.toolCalls.length > 0) {
          return {
            role: 'assistant',
            // OpenAI wants null, not "", when a tool-call message has no text.
            content: m.content === '' ? null : m.content,
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.argumentsJson },
              // Gemini's OpenAI-compatible API wants the call's thought signature back, unchanged.
              ...(c.thoughtSignature !== undefined ? { extra_content: { google: { thought_signature: c.thoughtSignature } } } : {}),
            })),
          };
        }
        return { role: 'assistant', content: m.content };
      case 'tool':
        // Chat Completions has no error flag on tool results; the content carries the error text.
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    }
  });
}

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…) take `reasoning_effort` and refuse a
 * temperature or top_p other than the default; other chat models take temperature and top_p
 * and refuse `reasoning_effort`. The model name decides, as the API itself does.
 */
const REASONING_MODEL_RE = /^(?:[\w.-]+\/)?(?:o\d|gpt-5)/;

function samplingParams(req: StreamRequest): { temperature?: number; top_p?: number; reasoning_effort?: 'low' | 'medium' | 'high' } {
  if (REASONING_MODEL_RE.test(req.model)) return req.reasoningEffort !== undefined ? { reasoning_effort: req.reasoningEffort } : {};
  return {
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
  };
}
