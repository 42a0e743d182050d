/**
 * The one interface every model provider implements (OpenAI-compatible, Anthropic, local
 * node-llama-cpp, and later vscode.lm). Providers turn a chat request into a stream of
 * `ProviderEvent`s; they never touch the store. Failures are thrown as `ProviderError`.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

/** A JSON Schema object describing a tool's parameters. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A fully assembled tool call. `argumentsJson` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  argumentsJson: string;
  /**
   * The provider's opaque signature of the call (Gemini's `thoughtSignature`), which its API wants
   * back unchanged with the call on later requests. Stored with the call's item and replayed byte
   * for byte; no built-in provider sets it yet (there is no Gemini provider).
   */
  thoughtSignature?: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's cache, when reported. */
  cacheWriteTokens?: number;
  /** Of cacheWriteTokens, those written with a 1-hour lifetime (Anthropic `cache_creation.ephemeral_1h_input_tokens`), when reported. */
  cacheWrite1hTokens?: number;
  /** Output tokens spent on reasoning (part of outputTokens), when reported. */
  reasoningTokens?: number;
  /** Counted by Vox (a call stopped before the provider reported its usage), not reported. */
  estimated?: boolean;
  /** The provider's id of the response (OpenAI's chunk `id`, Anthropic's message `id`): the ledger records one receipt per id. */
  responseId?: string;
  /** What the provider says the response cost, in dollars (OpenRouter's `usage.cost`), when it says. */
  costUsd?: number;
}

export type StopReason = 'end' | 'toolCalls' | 'length' | 'cancelled';

export type ProviderEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  /** Emitted once per tool call, when its arguments are complete. */
  | { type: 'toolCall'; call: ToolCall }
  | { type: 'usage'; usage: Usage }
  /** Always the last event of a successful stream. */
  | { type: 'done'; stopReason: StopReason };

export interface StreamRequest {
  /** Provider-specific model name (e.g. `gpt-4o-mini`, or a GGUF path for local). */
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  signal?: AbortSignal;
  maxTokens?: number;
  /** Sampling settings (unset: the provider's default); providers send what their API accepts. */
  temperature?: number;
  topP?: number;
  /** Reasoning effort, sent to reasoning models of APIs that take it (OpenAI o-series / gpt-5). */
  reasoningEffort?: 'low' | 'medium' | 'high';
}

export interface ModelProvider {
  /** Stable provider id: `openai`, `anthropic`, `local`, `vscode-lm`. */
  readonly id: string;
  /** Local providers cost nothing and skip the battery gate. */
  readonly isLocal: boolean;
  stream(req: StreamRequest): AsyncIterable<ProviderEvent>;
  /** Exact prompt tokens of a request, where the provider can count them itself (local llama.cpp: its own tokenizer). */
  countPromptTokens?(req: { model: string; messages: ChatMessage[]; tools: ToolSpec[] }): Promise<number>;
  /** The context window the provider reports for a model (local llama.cpp: the loaded context's size), or null when it cannot say. */
  contextWindow?(model: string): Promise<number | null>;
  /**
   * Loads what the first request for `model` would (local: llama.cpp, the GGUF, its context), so
   * that request streams at once; resolves to true when it did the work, false when it was ready.
   * Throws ProviderError like `stream` would. Providers with nothing to load leave it out.
   */
  prepare?(model: string): Promise<boolean>;
}

/** A model ref resolved to the provider that serves it. */
export interface ResolvedModel {
  provider: ModelProvider;
  /** Provider-specific model name (for local: the GGUF path). */
  model: string;
  /** The ref as the user wrote it (`openai:gpt-4o-mini`), for labels and the runs table. */
  label: string;
  /** False for models that cannot call tools (the demo model). */
  toolsEnabled: boolean;
}

export type ProviderErrorCode = ErrorCode<'provider'>;

/** Typed provider failure. `resetAtMs` is set for `rateLimited` when the reset time is known. */
export class ProviderError extends VoxError<'provider'> {
  override readonly name = 'ProviderError';
  readonly domain = 'provider' as const;
  constructor(
    code: ProviderErrorCode,
    message: string,
    readonly details: { status?: number; resetAtMs?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(code, message, { cause: details.cause });
  }
}

export function isProviderError(e: unknown): e is ProviderError {
  return e instanceof ProviderError;
}
