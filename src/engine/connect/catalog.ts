/**
 * A provider's models, from its own API, and the connection test: OpenAI-compatible servers
 * (OpenAI, OpenRouter, LM Studio, any base URL) answer `GET /models`, Ollama `GET /api/tags`,
 * Anthropic `GET /v1/models` (x-api-key + anthropic-version). The test sends the smallest real
 * request the model serves (a streamed chat with `TEST_MAX_TOKENS`) and reads the answer to its
 * end, so a key, a model name and a base URL are proven together. Failures: ./http.ts.
 */
import type { ProviderContext } from '../providers/registry';
import { resolveEndpoint, type Endpoint, type ConnectProviderId } from './endpoints';
import { ConnectError } from './errors';
import { compatEndpoints, splitCompatModel } from '../providers/compat-endpoints';
import { request } from './http';

/** Time allowed for listing models (a local server answers in milliseconds, a hosted API in well under this). */
export const LIST_TIMEOUT_MS = 15_000;
/** Time allowed for the connection test (a local server may first load the model from disk). */
export const TEST_TIMEOUT_MS = 60_000;
/** Output tokens asked for by the connection test. */
export const TEST_MAX_TOKENS = 16;
/** Most models returned in one listing. */
export const MAX_LISTED_MODELS = 2000;
/** Anthropic's page size for `GET /v1/models` (its maximum). */
const ANTHROPIC_PAGE_LIMIT = 1000;
/** The Anthropic API version sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** OpenAI's own models that cannot chat (images, audio, embeddings, moderation, legacy completions). */
const OPENAI_NON_CHAT = /^(dall-e|whisper|tts|text-embedding|omni-moderation|text-moderation|babbage|davinci|gpt-image|sora|computer-use)/;
/** Most characters of the test reply kept. */
const MAX_REPLY_CHARS = 200;

export interface ListedModel {
  id: string;
  /** A display name when the API gives one. */
  label?: string;
  /** Context window in tokens when the API reports it. */
  contextWindow?: number;
}

export interface ModelList {
  provider: ConnectProviderId;
  label: string;
  baseUrl: string;
  endpoint: string;
  models: ListedModel[];
}

export interface ConnectionTest {
  ref: string;
  provider: ConnectProviderId;
  endpoint: string;
  latencyMs: number;
  /** The first characters the model answered (may be empty). */
  reply: string;
}

export interface ConnectOptions {
  /** Overrides the provider's base URL setting. */
  baseUrl?: string | undefined;
  /** Overrides the saved key (a configuration tested before it is saved). */
  apiKey?: string | undefined;
  timeoutMs?: number;
}

function headersFor(ep: Endpoint): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (ep.provider.api === 'anthropic') {
    h['anthropic-version'] = ANTHROPIC_VERSION;
    if (ep.apiKey) h['x-api-key'] = ep.apiKey;
  } else if (ep.apiKey) {
    h.authorization = `Bearer ${ep.apiKey}`;
  }
  return h;
}

/** Ollama's root (its native API), whether the URL was given with its `/v1` suffix or not. */
function ollamaRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

function parseJson(text: string, ep: Endpoint, what: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // below
  }
  throw new ConnectError('badResponse', `${ep.provider.label} at ${ep.endpoint} answered, but not with ${what} (is ${ep.baseUrl} the right base URL?).`, { provider: ep.provider.id, endpoint: ep.endpoint });
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

function toModels(rows: unknown[], pick: (r: Record<string, unknown>) => ListedModel | undefined): ListedModel[] {
  const out: ListedModel[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (!r || typeof r !== 'object') continue;
    const m = pick(r as Record<string, unknown>);
    if (m && !seen.has(m.id)) {
      seen.add(m.id);
      out.push(m);
    }
    if (out.length >= MAX_LISTED_MODELS) break;
  }
  return out;
}

/** Lists `provider`'s models from its API. */
export async function listModels(provider: string, ctx: ProviderContext, opts: ConnectOptions = {}): Promise<ModelList> {
  const ep = await resolveEndpoint(provider, opts.baseUrl, ctx, { apiKey: opts.apiKey });
  const timeoutMs = opts.timeoutMs ?? LIST_TIMEOUT_MS;
  const headers = headersFor(ep);
  const purpose = 'listing models';
  let models: ListedModel[];
  if (ep.provider.api === 'ollama') {
    const url = `${ollamaRoot(ep.baseUrl)}/api/tags`;
    const body = parseJson((await request(ep, { method: 'GET', url, headers, timeoutMs, purpose })).text, ep, "Ollama's model list");
    if (!Array.isArray(body.models)) parseJson('', ep, "Ollama's model list");
    models = toModels(body.models as unknown[], (r) => {
      const id = str(r.name) ?? str(r.model);
      const size = str((r.details as Record<string, unknown> | undefined)?.parameter_size);
      return id ? { id, ...(size ? { label: `${id} (${size})` } : {}) } : undefined;
    }).sort((a, b) => a.id.localeCompare(b.id));
  } else if (ep.provider.api === 'anthropic') {
    const url = `${ep.baseUrl}/v1/models?limit=${ANTHROPIC_PAGE_LIMIT}`;
    const body = parseJson((await request(ep, { method: 'GET', url, headers, timeoutMs, purpose })).text, ep, "Anthropic's model list");
    if (!Array.isArray(body.data)) parseJson('', ep, "Anthropic's model list");
    models = toModels(body.data as unknown[], (r) => {
      const id = str(r.id);
      const label = str(r.display_name);
      return id ? { id, ...(label ? { label } : {}) } : undefined;
    }); // newest first, as the API sorts them
  } else {
    const url = `${ep.baseUrl}/models`;
    const body = parseJson((await request(ep, { method: 'GET', url, headers, timeoutMs, purpose })).text, ep, 'a model list');
    if (!Array.isArray(body.data)) parseJson('', ep, 'a model list');
    const official = ep.provider.id === 'openai' && new URL(ep.baseUrl).hostname === 'api.openai.com';
    models = toModels(body.data as unknown[], (r) => {
      const id = str(r.id);
      if (!id || (official && OPENAI_NON_CHAT.test(id))) return undefined;
      const label = str(r.name);
      const ctxLen = num(r.context_length);
      return { id, ...(label && label !== id ? { label } : {}), ...(ctxLen ? { contextWindow: ctxLen } : {}) };
    }).sort((a, b) => a.id.localeCompare(b.id));
  }
  return { provider: ep.provider.id, label: ep.provider.label, baseUrl: ep.baseUrl, endpoint: ep.endpoint, models };
}

/** Splits `provider:model` for the test; only providers with an HTTP API can be tested here. */
export function splitRef(ref: string): { provider: string; model: string } {
  const i = ref.indexOf(':');
  if (i <= 0 || i === ref.length - 1) {
    throw new ConnectError('badUrl', `Model "${ref}" is not of the form provider:model (e.g. openai:gpt-4o-mini, ollama:qwen2.5-coder).`);
  }
  const provider = ref.slice(0, i);
  if (provider === 'local' || provider === 'vscode-lm') {
    throw new ConnectError('notSupported', `${provider}: models are not reached over HTTP; send a prompt to try one.`, { provider });
  }
  return { provider, model: ref.slice(i + 1) };
}

/** The text of a streamed test answer; an error event in the stream is the provider's failure. */
function readStream(text: string, ep: Endpoint, model: string): string {
  let reply = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '' || data === '[DONE]') continue;
    let ev: Record<string, unknown>;
    try {
      ev = JSON.parse(data) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (ev.error !== undefined || ev.type === 'error') {
      const err = (ev.error ?? {}) as Record<string, unknown>;
      const msg = str(err.message) ?? str(ev.error) ?? 'an error event';
      throw new ConnectError('httpStatus', `${ep.provider.label} at ${ep.endpoint} failed while answering the test with "${model}": ${msg}`, { provider: ep.provider.id, endpoint: ep.endpoint });
    }
    const delta = (ev.choices as { delta?: { content?: unknown } }[] | undefined)?.[0]?.delta?.content ?? (ev.delta as { text?: unknown } | undefined)?.text;
    if (typeof delta === 'string') reply += delta;
  }
  return reply.slice(0, MAX_REPLY_CHARS);
}

/** Sends the smallest real request to `ref` (`provider:model`) and reads the answer. */
export async function testModel(ref: string, ctx: ProviderContext, opts: ConnectOptions = {}, now: () => number = Date.now): Promise<ConnectionTest> {
  const { provider, model: named } = splitRef(ref);
  // `compat:<endpoint>/<model>` of a saved endpoint; with a base URL given, the model is the whole text.
  const split = provider === 'compat' && !opts.baseUrl ? splitCompatModel(named, compatEndpoints(ctx.settings())) : undefined;
  const model = split?.model ?? named;
  const ep = await resolveEndpoint(provider, opts.baseUrl, ctx, { apiKey: opts.apiKey, endpointName: split?.endpoint?.name });
  const timeoutMs = opts.timeoutMs ?? TEST_TIMEOUT_MS;
  const headers = { ...headersFor(ep), 'content-type': 'application/json', accept: 'text/event-stream' };
  const messages = [{ role: 'user', content: 'Reply with the word OK.' }];
  const t0 = now();
  let url: string;
  let body: Record<string, unknown>;
  if (ep.provider.api === 'anthropic') {
    url = `${ep.baseUrl}/v1/messages`;
    body = { model, max_tokens: TEST_MAX_TOKENS, messages, stream: true };
  } else {
    url = ep.provider.api === 'ollama' ? `${ollamaRoot(ep.baseUrl)}/v1/chat/completions` : `${ep.baseUrl}/chat/completions`;
    const official = new URL(ep.baseUrl).hostname === 'api.openai.com';
    body = { model, messages, stream: true, [official ? 'max_completion_tokens' : 'max_tokens']: TEST_MAX_TOKENS };
  }
  const answer = await request(ep, { method: 'POST', url, headers, body, timeoutMs, purpose: 'the connection test', model });
  const reply = readStream(answer.text, ep, model);
  return { ref, provider: ep.provider.id, endpoint: ep.endpoint, latencyMs: Math.max(0, Math.round(now() - t0)), reply };
}
