/** Settings commands: the model in use, the models offered, and changing the default model. */
import { arrayOf, bool, nullable, object, str, type Infer } from '../wire/validators';
import { MAX_TITLE_CHARS, nonEmpty } from './common';
import { defineCommand } from './define';

export const modelChoice = object({ ref: str, label: str, isDemo: bool });
export type ModelChoice = Infer<typeof modelChoice>;

export const settingsView = object({
  model: str,
  models: arrayOf(modelChoice),
  /** Set while the demo model is active: the banner text the UI must show. */
  demoNotice: nullable(str),
});
export type SettingsView = Infer<typeof settingsView>;

export const settingsCommands = {
  getSettings: defineCommand('getSettings', {
    summary: 'The default model, the models offered, and the demo notice.',
    requires: ['read'],
    params: {},
    result: settingsView,
  }),
  setModel: defineCommand('setModel', {
    summary: 'Changes the default model (a provider:model ref); answers the new settings.',
    requires: ['owner'],
    params: { model: nonEmpty(MAX_TITLE_CHARS) },
    result: settingsView,
  }),
};
