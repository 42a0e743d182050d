/** Handlers of the settings commands (../../../protocol/commands/settings.ts). */
import type { HandlerTable } from './types';

export const settingsHandlers: HandlerTable<'getSettings' | 'setModel'> = {
  getSettings({ session }) {
    return session.settings();
  },
  setModel({ services: { providers, host }, session }, cmd) {
    providers.parse(cmd.model); // a malformed ref or unknown provider is refused (at once) before anything is saved
    return host.setModel(cmd.model).then(() => session.settings());
  },
};
