/**
 * Named OpenAI-compatible endpoints, side by side: each `{name, baseUrl}` (the name defaults to
 * the URL's host[:port]) with its own key in the host's secrets (`compatApiKey:<name>`, never in
 * settings). A ref `compat:<name>/<model>` names its endpoint; a plain `compat:<model>` (refs
 * saved before endpoints had names) goes to the first one. The older single `compatBaseUrl`
 * setting still counts as an endpoint named by its host until the editor migrates it
 * (../connect/compat-endpoints.ts). Reading only: entries that are not valid are skipped here
 * (adding one checks it, with typed errors, in ../connect/).
 */
import type { CompatEndpointSecret, ProviderContext, ProviderSettings } from './registry';

/** Longest endpoint name (it is shown in pickers and is part of model refs). */
export const MAX_ENDPOINT_NAME_CHARS = 64;
/** Most endpoints kept (a picker of more would be unusable). */
export const MAX_COMPAT_ENDPOINTS = 32;
/** A name: letters, digits and `.-_:` (a host:port is one), starting with a letter or digit; no `/` (it ends the name in a ref). */
export const ENDPOINT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
/** The CLI's environment variable prefix of a named endpoint's key (`VOX_COMPAT_API_KEY_<NAME>`). */
export const COMPAT_KEY_ENV_PREFIX = 'VOX_COMPAT_API_KEY_';

export interface CompatEndpoint {
  name: string;
  /** Without a trailing slash. */
  baseUrl: string;
}

/** The secret that holds `name`'s key. */
export function compatSecretName(name: string): CompatEndpointSecret {
  return `compatApiKey:${name}`;
}

/** The CLI's environment variable of `name`'s key: upper case, other characters as `_`. */
export function compatKeyEnvName(name: string): string {
  return COMPAT_KEY_ENV_PREFIX + name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

export function isEndpointName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_ENDPOINT_NAME_CHARS && ENDPOINT_NAME_PATTERN.test(name);
}

/** An http(s) URL without credentials, without its trailing slash; undefined for anything else. */
function normalUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw.trim());
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password) return undefined;
    return raw.trim().replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

/**
 * The endpoints of the settings, valid ones only, in order: `compatEndpoints`, then the older
 * `compatBaseUrl` as an endpoint named by its host unless one already has that URL or name.
 */
export function compatEndpoints(settings: ProviderSettings): CompatEndpoint[] {
  const out: CompatEndpoint[] = [];
  const raw = Array.isArray(settings.compatEndpoints) ? (settings.compatEndpoints as unknown[]) : [];
  for (const e of raw.slice(0, MAX_COMPAT_ENDPOINTS)) {
    if (!e || typeof e !== 'object') continue;
    const { name, baseUrl } = e as Record<string, unknown>;
    const url = typeof baseUrl === 'string' ? normalUrl(baseUrl) : undefined;
    if (!url) continue;
    const n = typeof name === 'string' && name.trim() ? name.trim() : new URL(url).host;
    if (isEndpointName(n) && !out.some((o) => o.name === n)) out.push({ name: n, baseUrl: url });
  }
  const legacy = legacyEndpoint(settings);
  if (legacy && !out.some((o) => o.baseUrl === legacy.baseUrl || o.name === legacy.name)) out.push(legacy);
  return out;
}

/** The older single setting as an endpoint named by its host. */
export function legacyEndpoint(settings: ProviderSettings): CompatEndpoint | undefined {
  const url = settings.compatBaseUrl?.trim() ? normalUrl(settings.compatBaseUrl) : undefined;
  return url ? { name: new URL(url).host, baseUrl: url } : undefined;
}

/**
 * The endpoint and model of a `compat:` ref's model part: `<name>/<model>` when `<name>` is an
 * endpoint's, else the first endpoint with the whole text as the model (model ids may hold `/`).
 */
export function splitCompatModel(model: string, endpoints: CompatEndpoint[]): { endpoint: CompatEndpoint | undefined; model: string } {
  const slash = model.indexOf('/');
  if (slash > 0 && slash < model.length - 1) {
    const named = endpoints.find((e) => e.name === model.slice(0, slash));
    if (named) return { endpoint: named, model: model.slice(slash + 1) };
  }
  return { endpoint: endpoints[0], model };
}

/** The ref of `model` at `endpoint`. */
export function compatRef(endpoint: string, model: string): string {
  return `compat:${endpoint}/${model}`;
}

/** `endpoint`'s key: its own secret, else (for the endpoint of the older single setting) the older `compatApiKey`. */
export async function compatKey(endpoint: CompatEndpoint, ctx: ProviderContext): Promise<string | undefined> {
  const own = await ctx.secret(compatSecretName(endpoint.name));
  if (own) return own;
  return legacyEndpoint(ctx.settings())?.baseUrl === endpoint.baseUrl ? ctx.secret('compatApiKey') : undefined;
}
