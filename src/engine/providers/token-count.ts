/**
 * Counting the tokens of a request, per provider family (the context meter, and the usage of a
 * stopped run the provider never reported):
 *   - OpenAI models (gpt-4o, gpt-4.1, gpt-5, o-series, gpt-oss: `o200k_base`; gpt-4 and gpt-3.5:
 *     `cl100k_base`) with gpt-tokenizer, plus OpenAI's documented per-message framing
 *     (`OPENAI_TOKENS_PER_MESSAGE` per message, `OPENAI_REPLY_PRIMING_TOKENS` for the reply);
 *   - a provider that can count itself (`ModelProvider.countPromptTokens`: the local llama.cpp
 *     model tokenizes the exact prompt its chat template builds);
 *   - everything else (Anthropic, Ollama and other OpenAI-compatible models, VS Code models):
 *     an approximation of `APPROX_CHARS_PER_TOKEN` characters per token, rounded up, which
 *     over-counts English and code slightly rather than under-counting.
 * Tool definitions are counted as their JSON text (the APIs frame them their own way).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChatMessage, ResolvedModel, ToolSpec } from './types';

/** Characters per token of the approximation (Anthropic documents about 3.5 for English text). */
export const APPROX_CHARS_PER_TOKEN = 3.5;
/** OpenAI chat framing: tokens each message costs beyond its content (`<|im_start|>role … <|im_end|>`). */
export const OPENAI_TOKENS_PER_MESSAGE = 3;
/** OpenAI chat framing: tokens priming the assistant's reply. */
export const OPENAI_REPLY_PRIMING_TOKENS = 3;

export type Encoding = 'o200k_base' | 'cl100k_base';

/** Providers speaking OpenAI's wire format, whose OpenAI models (by name) count with gpt-tokenizer. */
const OPENAI_WIRE_PROVIDERS: ReadonlySet<string> = new Set(['openai', 'openrouter', 'compat', 'lmstudio']);
/** How a count was made: a gpt-tokenizer encoding, the local model's own tokenizer, the provider's count (VS Code models), or the approximation. */
export type CountSource = Encoding | 'llama.cpp' | 'provider' | 'approximation';

type Encodings = Record<Encoding, (text: string) => number>;
let loaded: Promise<Encodings> | undefined;

/** The encodings module: dist/tokenizer.js beside the bundle, or the source entry when run from source (tests). */
function loadEncodings(): Promise<Encodings> {
  loaded ??= (async () => {
    const bundled = path.join(__dirname, 'tokenizer.js');
    const file = fs.existsSync(bundled) ? bundled : path.join(__dirname, 'gpt-tokenizer-entry.ts');
    const mod = (await import(pathToFileURL(file).href)) as { encodings?: Encodings; default?: { encodings?: Encodings } };
    const enc = mod.encodings ?? mod.default?.encodings;
    if (!enc) throw new Error(`${file} does not export the tokenizer encodings`);
    return enc;
  })();
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

/** The OpenAI encoding of a model name (an OpenRouter-style `openai/` prefix is ignored), or null when it is not an OpenAI model. */
export function openaiEncodingOf(model: string): Encoding | null {
  const name = model.toLowerCase().replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-|o1|o3|o4|gpt-oss|codex-)/.test(name)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return 'cl100k_base';
  return null;
}

/** Which way `model`'s requests are counted (without counting anything). */
export function countSourceOf(model: ResolvedModel): CountSource {
  if (model.provider.countPromptTokens) return model.provider.id === 'local' ? 'llama.cpp' : 'provider';
  // OpenAI's own models wherever they are served by name (OpenAI, OpenRouter's `openai/…`, a compatible proxy).
  if (OPENAI_WIRE_PROVIDERS.has(model.provider.id)) return openaiEncodingOf(model.model) ?? 'approximation';
  return 'approximation';
}

export function approximateTokens(text: string): number {
  return Math.ceil(text.length / APPROX_CHARS_PER_TOKEN);
}

/** Counts one text the way `source` does (llama.cpp and providers count whole prompts only: the approximation stands in for them here). */
export async function countText(source: CountSource, text: string): Promise<number> {
  if (source === 'o200k_base' || source === 'cl100k_base') return (await loadEncodings())[source](text);
  return approximateTokens(text);
}

/** A synchronous counter of one encoding (the tokenizer loaded once), for code that counts many small texts (../handoff/). */
export async function textCounter(encoding: Encoding): Promise<(text: string) => number> {
  return (await loadEncodings())[encoding];
}

function messageText(m: ChatMessage): string {
  if (m.role === 'assistant' && m.toolCalls?.length) return `${m.content}${m.toolCalls.map((c) => `${c.name}${c.argumentsJson}`).join('')}`;
  return m.content;
}

export interface PromptCount { tokens: number; source: CountSource }

/** Tokens of a whole request: messages (with the family's framing) and tool definitions. */
export async function countPrompt(model: ResolvedModel, messages: ChatMessage[], tools: ToolSpec[] = [], opts: { offline?: boolean } = {}): Promise<PromptCount> {
  // `offline`: no request leaves the machine to count (the ledger's gate decides before any traffic):
  // a provider that counts over its API (Anthropic's count_tokens) gives way to the approximation.
  const remote = model.provider.countPromptTokens !== undefined && model.provider.id !== 'local';
  const own = opts.offline && remote ? undefined : model.provider.countPromptTokens;
  const source = opts.offline && remote ? 'approximation' : countSourceOf(model);
  if (own) {
    try {
      return { tokens: await own.call(model.provider, { model: model.model, messages, tools }), source };
    } catch {
      // A provider that cannot count now (a model gone from VS Code): the approximation stands in.
      return { tokens: approximateTokens(messages.map(messageText).join('') + (tools.length > 0 ? JSON.stringify(tools) : '')), source: 'approximation' };
    }
  }
  const toolText = tools.length > 0 ? JSON.stringify(tools) : '';
  if (source === 'approximation') {
    return { tokens: approximateTokens(messages.map(messageText).join('') + toolText), source };
  }
  let tokens = OPENAI_REPLY_PRIMING_TOKENS;
  for (const m of messages) tokens += OPENAI_TOKENS_PER_MESSAGE + (await countText(source, messageText(m)));
  if (toolText) tokens += await countText(source, toolText);
  return { tokens, source };
}
