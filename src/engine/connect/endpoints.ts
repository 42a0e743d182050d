/**
 * The providers a user can connect and where each one lives: its label, which API it speaks
 * (OpenAI-compatible, Anthropic, or Ollama's own for listing), its default base URL, the setting
 * that overrides it and the secret that holds its key. `resolveEndpoint` turns a provider (and
 * an optional base URL typed by the user) into the URL and key for one request, reading both
 * from the host when asked (ProviderContext), never keeping the key.
 */
import { DEFAULT_OLLAMA_BASE_URL, DEFAULT_LMSTUDIO_BASE_URL, DEFAULT_OPENROUTER_BASE_URL } from '../providers/builtins';
import { QUOTED_INPUT_CHARS, quote } from '../../protocol/wire/quote';
import type { ProviderContext, ProviderSecret, ProviderSettings } from '../providers/registry';
import { hostPort } from '../providers/network-cause';
import { ConnectError } from './errors';
import { compatEndpoints, compatKey, MAX_ENDPOINT_NAME_CHARS } from '../providers/compat-endpoints';
import { CONNECT_PROVIDER_IDS, type ConnectProviderId } from '../../protocol/commands/models';

/** The OpenAI API (the `openai` SDK's default). */
export const DEFAULT_OPENAI_API_URL = 'https://api.openai.com/v1';
/** The Anthropic API (the SDK's default; paths add `/v1/…`). */
export const DEFAULT_ANTHROPIC_API_URL = 'https://api.anthropic.com';
/** Longest base URL accepted from a user. */
export const MAX_BASE_URL_CHARS = 2048;

export { CONNECT_PROVIDER_IDS, type ConnectProviderId };

export interface ConnectProvider {
  id: ConnectProviderId;
  label: string;
  api: 'openai' | 'anthropic' | 'ollama';
  /** Undefined: the user must give one (`compat`). */
  defaultBaseUrl: string | undefined;
  setting: Exclude<keyof ProviderSettings, 'compatEndpoints'>;
  secret?: ProviderSecret;
  /** Refuse to call without a key (the hosted APIs); local servers need none. */
  keyRequired: boolean;
  /** Where the user gets a key, or how to start the server, for messages. */
  hint: string;
}

export const CONNECT_PROVIDERS: Record<ConnectProviderId, ConnectProvider> = {
  openai: { id: 'openai', label: 'OpenAI', api: 'openai', defaultBaseUrl: DEFAULT_OPENAI_API_URL, setting: 'openaiBaseUrl', secret: 'openaiApiKey', keyRequired: true, hint: 'keys: https://platform.openai.com/api-keys; CLI: OPENAI_API_KEY' },
  anthropic: { id: 'anthropic', label: 'Anthropic', api: 'anthropic', defaultBaseUrl: DEFAULT_ANTHROPIC_API_URL, setting: 'anthropicBaseUrl', secret: 'anthropicApiKey', keyRequired: true, hint: 'keys: https://console.anthropic.com/settings/keys; CLI: ANTHROPIC_API_KEY' },
  openrouter: { id: 'openrouter', label: 'OpenRouter', api: 'openai', defaultBaseUrl: DEFAULT_OPENROUTER_BASE_URL, setting: 'openrouterBaseUrl', secret: 'openrouterApiKey', keyRequired: true, hint: 'keys: https://openrouter.ai/keys; CLI: OPENROUTER_API_KEY' },
  ollama: { id: 'ollama', label: 'Ollama', api: 'ollama', defaultBaseUrl: DEFAULT_OLLAMA_BASE_URL, setting: 'ollamaBaseUrl', keyRequired: false, hint: 'start it with `ollama serve` and pull a model with `ollama pull NAME`' },
  lmstudio: { id: 'lmstudio', label: 'LM Studio', api: 'openai', defaultBaseUrl: DEFAULT_LMSTUDIO_BASE_URL, setting: 'lmstudioBaseUrl', keyRequired: false, hint: 'start its local server (Developer → Start Server) with a model loaded' },
  compat: { id: 'compat', label: 'OpenAI-compatible server', api: 'openai', defaultBaseUrl: undefined, setting: 'compatBaseUrl', secret: 'compatApiKey', keyRequired: false, hint: 'give its base URL, e.g. http://127.0.0.1:8000/v1' },
};

export function isConnectProvider(id: string): id is ConnectProviderId {
  return (CONNECT_PROVIDER_IDS as readonly string[]).includes(id);
}

export function connectProvider(id: string): ConnectProvider {
  if (!isConnectProvider(id)) {
    throw new ConnectError('unknownProvider', `"${id}" is not a provider whose models can be listed; use one of ${CONNECT_PROVIDER_IDS.join(', ')} (VS Code language models are listed inside VS Code).`, { provider: id });
  }
  return CONNECT_PROVIDERS[id];
}

/** Where one request goes: never printed with its key. */
export interface Endpoint {
  provider: ConnectProvider;
  /** The base URL, without a trailing slash. */
  baseUrl: string;
  /** `host:port`, for messages. */
  endpoint: string;
  apiKey: string | undefined;
}

/** Checks a user-typed base URL: http(s), a host, no credentials in it. */
export function checkBaseUrl(raw: string, provider: ConnectProvider): string {
  const text = raw.trim();
  let u: URL;
  try {
    if (text.length > MAX_BASE_URL_CHARS) throw new Error('too long');
    u = new URL(text);
  } catch {
    throw new ConnectError('badUrl', `"${quote(text, QUOTED_INPUT_CHARS)}" is not a URL; give ${provider.label}'s base URL, e.g. ${provider.defaultBaseUrl ?? 'http://127.0.0.1:8000/v1'}.`, { provider: provider.id });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConnectError('badUrl', `The base URL must start with http:// or https:// (got ${u.protocol}).`, { provider: provider.id });
  }
  if (u.username || u.password) {
    throw new ConnectError('badUrl', 'The base URL must not contain a user name or password; give the key separately (it is kept in SecretStorage).', { provider: provider.id });
  }
  return text.replace(/\/+$/, '');
}

/** A configuration under test, not saved yet: its key, or which named endpoint is meant. */
export interface EndpointCandidate {
  /** The key to send instead of the saved one (the connect flow tests before it saves). */
  apiKey?: string | undefined;
  /** `compat`: the named endpoint (default: the first). */
  endpointName?: string | undefined;
}

/**
 * The base URL and key for `provider`: the given URL, else the host's setting (for `compat`, the
 * named endpoint or the first), else the default; the candidate's key, else the saved one.
 */
export async function resolveEndpoint(providerId: string, baseUrl: string | undefined, ctx: ProviderContext, candidate: EndpointCandidate = {}): Promise<Endpoint> {
  const provider = connectProvider(providerId);
  let configured = baseUrl?.trim() || undefined;
  let savedKey: () => Promise<string | undefined> = async () => (provider.secret ? ctx.secret(provider.secret) : undefined);
  if (provider.id === 'compat' && !configured) {
    const list = compatEndpoints(ctx.settings());
    const named = candidate.endpointName === undefined ? list[0] : list.find((e) => e.name === candidate.endpointName);
    if (candidate.endpointName !== undefined && !named) {
      throw new ConnectError('badUrl', `No OpenAI-compatible endpoint is named "${candidate.endpointName.slice(0, MAX_ENDPOINT_NAME_CHARS)}"; ${list.length ? `the endpoints are ${list.map((e) => e.name).join(', ')}` : 'connect one with "Vox: Connect a Model…"'}.`, { provider: provider.id });
    }
    if (named) {
      configured = named.baseUrl;
      savedKey = () => compatKey(named, ctx);
    }
  }
  configured ||= (provider.id === 'compat' ? undefined : ctx.settings()[provider.setting]) || provider.defaultBaseUrl;
  if (!configured) {
    throw new ConnectError('badUrl', `No base URL is set for the ${provider.label}; ${provider.hint}.`, { provider: provider.id });
  }
  const url = checkBaseUrl(configured, provider);
  const apiKey = candidate.apiKey !== undefined ? candidate.apiKey || undefined : await savedKey();
  // OpenAI with its own base URL set is any OpenAI-compatible server (the `openai:` rule of the registry).
  const keyRequired = provider.keyRequired && !(provider.id === 'openai' && url !== DEFAULT_OPENAI_API_URL);
  if (keyRequired && !apiKey) {
    throw new ConnectError('noKey', `No ${provider.label} API key is set (VS Code: "Vox: Connect a Model…"; ${provider.hint}).`, { provider: provider.id, endpoint: hostPort(url) });
  }
  return { provider, baseUrl: url, endpoint: hostPort(url), apiKey };
}
