/**
 * Adding and migrating named OpenAI-compatible endpoints (the list itself, refs and key names:
 * ../providers/compat-endpoints.ts). `checkNewEndpoint` answers a typed `connect/*` error for a
 * URL without a scheme (`badUrl`), a name that cannot be one (`badName`) or a name another
 * endpoint has (`nameClash`). `migrateCompatSetting` moves the older single `compatBaseUrl` into
 * the list once, without losing its URL or its key.
 */
import type { CompatEndpointSecret, ProviderSettings } from '../providers/registry';
import { compatEndpoints, compatSecretName, isEndpointName, legacyEndpoint, MAX_ENDPOINT_NAME_CHARS, type CompatEndpoint } from '../providers/compat-endpoints';
import { ConnectError } from './errors';
import { CONNECT_PROVIDERS, checkBaseUrl } from './endpoints';

const COMPAT = CONNECT_PROVIDERS.compat;

/** The default name of an endpoint: its URL's host[:port]. */
export function defaultEndpointName(baseUrl: string): string {
  return new URL(checkBaseUrl(baseUrl, COMPAT)).host;
}

/** Checks a name a user typed (or the default from the URL). */
export function checkEndpointName(raw: string): string {
  const name = raw.trim();
  if (!isEndpointName(name)) {
    throw new ConnectError('badName', `"${name.slice(0, MAX_ENDPOINT_NAME_CHARS)}" is not an endpoint name; use up to ${MAX_ENDPOINT_NAME_CHARS} letters, digits and . - _ : (no spaces or /), e.g. its host:port.`, { provider: 'compat' });
  }
  return name;
}

/**
 * A new endpoint checked against the existing ones: the URL (http(s), no credentials), the name
 * (default: the host[:port]) and no clash with another endpoint's name. `replacing` names the
 * endpoint being edited (its own name is no clash).
 */
export function checkNewEndpoint(existing: CompatEndpoint[], input: { name?: string | undefined; baseUrl: string }, replacing?: string): CompatEndpoint {
  const text = input.baseUrl.trim();
  if (text && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new ConnectError('badUrl', `"${text.slice(0, MAX_ENDPOINT_NAME_CHARS)}" has no scheme; give the full base URL, e.g. http://${text.replace(/^\/+/, '').slice(0, MAX_ENDPOINT_NAME_CHARS)}.`, { provider: 'compat' });
  }
  const baseUrl = checkBaseUrl(text, COMPAT);
  const name = checkEndpointName(input.name?.trim() || new URL(baseUrl).host);
  const clash = existing.find((e) => e.name === name && e.name !== replacing);
  if (clash) {
    throw new ConnectError('nameClash', `An OpenAI-compatible endpoint named "${name}" already exists (${clash.baseUrl}); choose another name or edit that one.`, { provider: 'compat', endpoint: name });
  }
  return { name, baseUrl };
}

/** `list` with `endpoint` added, or put in place of `replacing`. */
export function withEndpoint(list: CompatEndpoint[], endpoint: CompatEndpoint, replacing?: string): CompatEndpoint[] {
  const i = replacing === undefined ? -1 : list.findIndex((e) => e.name === replacing);
  if (i < 0) return [...list, endpoint];
  return list.map((e, j) => (j === i ? endpoint : e));
}

/** Where the editor keeps the settings and keys the migration moves. */
export interface CompatSettingsStore {
  settings(): ProviderSettings;
  writeEndpoints(list: CompatEndpoint[]): Promise<void>;
  clearLegacyBaseUrl(): Promise<void>;
  getSecret(name: 'compatApiKey' | CompatEndpointSecret): Promise<string | undefined>;
  setSecret(name: CompatEndpointSecret, value: string): Promise<void>;
  deleteSecret(name: 'compatApiKey'): Promise<void>;
}

/**
 * Moves the older single `compatBaseUrl` into the endpoint list, once: an endpoint named by its
 * host (first, so plain `compat:<model>` refs keep their server), its key copied to the
 * endpoint's secret before the old one goes, then the old setting cleared. Answers the endpoint
 * migrated, or undefined when there was nothing to move.
 */
export async function migrateCompatSetting(store: CompatSettingsStore): Promise<CompatEndpoint | undefined> {
  const settings = store.settings();
  const legacy = legacyEndpoint(settings);
  if (!legacy) return undefined;
  const current = compatEndpoints({ compatEndpoints: settings.compatEndpoints });
  const same = current.find((e) => e.baseUrl === legacy.baseUrl);
  const target = same ?? { name: current.some((e) => e.name === legacy.name) ? `${legacy.name}-1` : legacy.name, baseUrl: legacy.baseUrl };
  if (!same) await store.writeEndpoints([target, ...current]);
  const key = await store.getSecret('compatApiKey');
  if (key && !(await store.getSecret(compatSecretName(target.name)))) await store.setSecret(compatSecretName(target.name), key);
  if (key) await store.deleteSecret('compatApiKey');
  await store.clearLegacyBaseUrl();
  return target;
}
