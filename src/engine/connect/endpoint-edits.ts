/**
 * Removing and renaming a named OpenAI-compatible endpoint (protocol `removeCompatEndpoint`,
 * `renameCompatEndpoint`). The host persists the list and the keys (`Host.setCompatEndpoints`,
 * `Host.setProviderSecret`); a host without them (the CLI, whose endpoints come from its
 * environment) answers `connect/notSupported`. Entries of the settings other than the one
 * edited are written back as they were.
 *
 * Remove: the entry goes, then its key (SecretStorage), then its models from the recent ones; a
 * default model served by it (`compat:<name>/<model>`, or a plain `compat:<model>` when it was
 * the first endpoint) falls back to the most recent model served elsewhere, else the demo model,
 * and the answer says so (`model: {was, now}`). Rename: the key is copied to the new name before
 * the entry is renamed and the old key deleted after, so no moment has the endpoint without its
 * key; the default and recent refs `compat:<old>/<model>` become `compat:<new>/<model>`; the
 * endpoint keeps its place (plain `compat:<model>` refs keep their server). Typed errors: an
 * unknown name `connect/unknownEndpoint`, a bad new name `connect/badName`, a name another
 * endpoint has `connect/nameClash`.
 */
import type { Host, HostMemento } from '../host';
import { compatEndpoints, compatRef, compatSecretName, MAX_ENDPOINT_NAME_CHARS, splitCompatModel, type CompatEndpoint } from '../providers/compat-endpoints';
import { DEFAULT_MODEL_REF } from '../providers/registry';
import { rememberSecret } from '../platform/secrets';
import { checkEndpointName } from './compat-endpoints';
import { ConnectError } from './errors';
import { recentModels, RECENT_MODELS_KEY } from './recent';

export interface EndpointEdit {
  endpoint: CompatEndpoint;
  endpoints: CompatEndpoint[];
  model: { was: string; now: string } | null;
}

const COMPAT_PREFIX = 'compat:';

/** The name of the endpoint that serves `ref` among `list` (undefined: not a `compat:` ref, or no endpoint). */
function servedBy(ref: string, list: CompatEndpoint[]): string | undefined {
  return ref.startsWith(COMPAT_PREFIX) ? splitCompatModel(ref.slice(COMPAT_PREFIX.length), list).endpoint?.name : undefined;
}

/** The name a raw settings entry has once read (undefined: the entry is not a valid endpoint). */
function entryName(entry: unknown): string | undefined {
  return compatEndpoints({ compatEndpoints: [entry] })[0]?.name;
}

/** What an edit needs: the host's writers, the endpoints as read, the raw entries, the target. */
function prepare(host: Host, name: string): { write: (list: unknown[]) => Promise<void>; setSecret: NonNullable<Host['setProviderSecret']>; list: CompatEndpoint[]; raw: unknown[]; target: CompatEndpoint } {
  const settings = host.providerSettings();
  const list = compatEndpoints(settings);
  const target = list.find((e) => e.name === name);
  if (!target) {
    const known = list.length ? `the endpoints are ${list.map((e) => `"${e.name}"`).join(', ')}` : 'there are none';
    throw new ConnectError('unknownEndpoint', `No OpenAI-compatible endpoint is named "${name.slice(0, MAX_ENDPOINT_NAME_CHARS)}"; ${known}.`, { provider: 'compat' });
  }
  const raw = Array.isArray(settings.compatEndpoints) ? [...(settings.compatEndpoints as unknown[])] : [];
  if (!raw.some((e) => entryName(e) === name)) {
    throw new ConnectError('notSupported', `The endpoint "${name}" comes from the older vox.compatBaseUrl setting; reload the window to move it into vox.compatEndpoints, then edit it.`, { provider: 'compat', endpoint: name });
  }
  if (!host.setCompatEndpoints || !host.setProviderSecret) {
    throw new ConnectError('notSupported', `This host cannot change its OpenAI-compatible endpoints (the CLI reads them from VOX_COMPAT_ENDPOINTS); change them there.`, { provider: 'compat', endpoint: name });
  }
  const write = host.setCompatEndpoints.bind(host);
  return { write, setSecret: host.setProviderSecret.bind(host), list, raw, target };
}

async function setRecent(memento: HostMemento, refs: string[]): Promise<void> {
  await memento.update(RECENT_MODELS_KEY, [...new Set(refs)]);
}

export async function removeEndpoint(host: Host, memento: HostMemento, name: string): Promise<EndpointEdit> {
  const { write, setSecret, list, raw, target } = prepare(host, name);
  const onIt = (ref: string) => servedBy(ref, list) === name;
  const current = host.model();
  const recent = recentModels(memento);
  const fallback = onIt(current) ? (recent.find((r) => r !== current && !onIt(r)) ?? DEFAULT_MODEL_REF) : undefined;
  await write(raw.filter((e) => entryName(e) !== name));
  await setSecret(compatSecretName(name), undefined);
  await setRecent(memento, recent.filter((r) => !onIt(r)));
  if (fallback !== undefined) await host.setModel(fallback);
  return {
    endpoint: target,
    endpoints: list.filter((e) => e.name !== name),
    model: fallback !== undefined ? { was: current, now: fallback } : null,
  };
}

export async function renameEndpoint(host: Host, memento: HostMemento, name: string, newName: string): Promise<EndpointEdit> {
  const { write, setSecret, list, raw, target } = prepare(host, name);
  const to = checkEndpointName(newName);
  if (to === name) return { endpoint: target, endpoints: list, model: null };
  const clash = list.find((e) => e.name === to);
  if (clash) {
    throw new ConnectError('nameClash', `An OpenAI-compatible endpoint named "${to}" already exists (${clash.baseUrl}); choose another name.`, { provider: 'compat', endpoint: to });
  }
  const renamed = { name: to, baseUrl: target.baseUrl };
  // The key first under the new name (a stale key there from elsewhere is not inherited), then the entry, then the old key goes.
  const key = await host.secret(compatSecretName(name));
  rememberSecret(key);
  await setSecret(compatSecretName(to), key || undefined);
  let done = false;
  await write(raw.map((e) => (!done && entryName(e) === name ? ((done = true), renamed) : e)));
  await setSecret(compatSecretName(name), undefined);
  // Refs that name the endpoint follow it; plain `compat:<model>` refs still go to the first endpoint, which it still is or is not.
  const prefix = `${COMPAT_PREFIX}${name}/`;
  const follow = (ref: string) => (ref.startsWith(prefix) && servedBy(ref, list) === name ? compatRef(to, ref.slice(prefix.length)) : ref);
  await setRecent(memento, recentModels(memento).map(follow));
  const current = host.model();
  const now = follow(current);
  if (now !== current) await host.setModel(now);
  return {
    endpoint: renamed,
    endpoints: list.map((e) => (e.name === name ? renamed : e)),
    model: now !== current ? { was: current, now } : null,
  };
}
