/**
 * Adding a named OpenAI-compatible endpoint (the list itself, refs and key names:
 * ../providers/compat-endpoints.ts; the one-time move of the older single `compatBaseUrl`:
 * `migrateCompatSetting` in ../host.ts). `checkNewEndpoint` answers a typed `connect/*` error for
 * a URL without a scheme (`badUrl`), a name that cannot be one (`badName`) or a name another
 * endpoint has (`nameClash`).
 */
import { isEndpointName, MAX_ENDPOINT_NAME_CHARS, type CompatEndpoint } from '../providers/compat-endpoints';
import { ConnectError } from './errors';
import { CONNECT_PROVIDERS, checkBaseUrl } from './endpoints';

const COMPAT = CONNECT_PROVIDERS.compat;

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
