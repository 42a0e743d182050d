/** Handlers of the settings commands (../../../protocol/commands/settings.ts). */
import { rememberModel } from '../../connect/recent';
import { mementoOf } from './models';
import type { HandlerTable } from './types';

export const settingsHandlers: HandlerTable<'getSettings' | 'setModel'> = {
  getSettings({ session }) {
    return session.settings();
  },
  setModel({ services: { providers, host }, session }, cmd) {
    providers.parse(cmd.model); // a malformed ref or unknown provider is refused (at once) before anything is saved
    // Remembered first: the host's settings-change event (sent to every session) then carries it.
    return rememberModel(mementoOf(host), cmd.model)
      .then(() => host.setModel(cmd.model))
      .then(() => session.settings());
  },
};
