/** Handlers of the model-connection commands (../../../protocol/commands/models.ts): list, test, the named endpoints, UI choices. */
import type { Host, HostMemento } from '../../host';
import { memoryMemento } from '../../host';
import { listModels, testModel } from '../../connect/catalog';
import { setUiPreference } from '../../connect/recent';
import { checkNewEndpoint } from '../../connect/compat-endpoints';
import { removeEndpoint, renameEndpoint } from '../../connect/endpoint-edits';
import { compatEndpoints } from '../../providers/compat-endpoints';
import { rememberSecret } from '../../platform/secrets';
import type { ProviderContext } from '../../providers/registry';
import type { HandlerTable } from './types';

const fallback = new WeakMap<Host, HostMemento>();

/** The host's memento (the engine always binds one; a bare host gets one in memory). */
export function mementoOf(host: Host): HostMemento {
  if (host.memento) return host.memento;
  let m = fallback.get(host);
  if (!m) fallback.set(host, (m = memoryMemento()));
  return m;
}

/** Keys and endpoints asked of the host when a request needs them; a key read is remembered for redaction. */
function contextOf(host: Host): ProviderContext {
  return {
    secret: async (n) => {
      const v = await host.secret(n);
      rememberSecret(v);
      return v;
    },
    settings: () => host.providerSettings(),
  };
}

export const modelHandlers: HandlerTable<'listModels' | 'testModel' | 'checkCompatEndpoint' | 'listCompatEndpoints' | 'removeCompatEndpoint' | 'renameCompatEndpoint' | 'setUiPreference'> = {
  listModels({ services: { host } }, cmd) {
    rememberSecret(cmd.apiKey);
    return listModels(cmd.provider, contextOf(host), { baseUrl: cmd.baseUrl, apiKey: cmd.apiKey });
  },
  testModel({ services: { host } }, cmd) {
    rememberSecret(cmd.apiKey);
    return testModel(cmd.ref, contextOf(host), { baseUrl: cmd.baseUrl, apiKey: cmd.apiKey });
  },
  checkCompatEndpoint({ services: { host } }, cmd) {
    return checkNewEndpoint(compatEndpoints(host.providerSettings()), { baseUrl: cmd.baseUrl, name: cmd.name }, cmd.replacing);
  },
  listCompatEndpoints({ services: { host } }) {
    return { endpoints: compatEndpoints(host.providerSettings()) };
  },
  removeCompatEndpoint({ services: { host } }, cmd) {
    return removeEndpoint(host, mementoOf(host), cmd.name);
  },
  renameCompatEndpoint({ services: { host } }, cmd) {
    return renameEndpoint(host, mementoOf(host), cmd.name, cmd.newName);
  },
  async setUiPreference({ services: { host }, session }, cmd) {
    await setUiPreference(mementoOf(host), cmd.key, cmd.value);
    return session.settings();
  },
};
