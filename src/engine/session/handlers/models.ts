/** Handlers of the model-connection commands (../../../protocol/commands/models.ts): list, test, UI choices. */
import type { Host, HostMemento } from '../../host';
import { memoryMemento } from '../../host';
import { listModels, testModel } from '../../connect/catalog';
import { setUiPreference } from '../../connect/recent';
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

export const modelHandlers: HandlerTable<'listModels' | 'testModel' | 'setUiPreference'> = {
  listModels({ services: { host } }, cmd) {
    return listModels(cmd.provider, contextOf(host), { baseUrl: cmd.baseUrl });
  },
  testModel({ services: { host } }, cmd) {
    return testModel(cmd.ref, contextOf(host), { baseUrl: cmd.baseUrl });
  },
  async setUiPreference({ services: { host }, session }, cmd) {
    await setUiPreference(mementoOf(host), cmd.key, cmd.value);
    return session.settings();
  },
};
