/**
 * The one interface every model provider implements (OpenAI-compatible, Anthropic, local
 * node-llama-cpp, and later vscode.lm). Providers turn a chat request into a stream of
 * `ProviderEvent`s; they never touch the store. Failures are thrown as `ProviderError`.
 */

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
  temperature?: number;
}

export interface ModelProvider {
  /** Stable provider id: `openai`, `anthropic`, `local`, `vscode-lm`. */
  readonly id: string;
  /** Local providers cost nothing and skip the battery gate. */
  readonly isLocal: boolean;
  stream(req: StreamRequest): AsyncIterable<ProviderEvent>;
}

export type ProviderErrorCode =
  | 'rateLimited'
  | 'auth'
  | 'badRequest'
  | 'server'
  | 'network'
  | 'malformedStream'
  | 'cancelled'
  | 'modelLoad'
  | 'notSupported';

/** Typed provider failure. `resetAtMs` is set for `rateLimited` when the reset time is known. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly details: { status?: number; resetAtMs?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message);
  }
}

export function isProviderError(e: unknown): e is ProviderError {
  return e instanceof ProviderError;
}
