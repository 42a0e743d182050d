/** Settings commands: the model in use, the models offered (and recent ones), and changing the default model. */
import { arrayOf, bool, nullable, object, optional, str, type Infer } from '../wire/validators';
import { modelRef } from './common';
import { defineCommand } from './define';

export const modelChoice = object({ ref: str, label: str, isDemo: bool });
export type ModelChoice = Infer<typeof modelChoice>;

/** Recent models of one provider, most recent first (the picker's optgroup). */
export const recentGroup = object({ provider: str, label: str, models: arrayOf(modelChoice) });
export type RecentGroup = Infer<typeof recentGroup>;

/** UI choices kept across reloads (protocol/commands/models.ts `setUiPreference`). */
export const uiPreferencesView = object({ demoBannerDismissed: bool, threadListCollapsed: bool });
export type UiPreferencesView = Infer<typeof uiPreferencesView>;

export const settingsView = object({
  model: str,
  models: arrayOf(modelChoice),
  /** Set while the demo model is active: the banner text the UI must show. */
  demoNotice: nullable(str),
  /** Models picked before, grouped by provider (groups by their most recent model). */
  recent: optional(arrayOf(recentGroup)),
  ui: optional(uiPreferencesView),
});
export type SettingsView = Infer<typeof settingsView>;

export const settingsCommands = {
  getSettings: defineCommand('getSettings', {
    readOnly: true,
    summary: 'The default model, the models offered, the recent models by provider, the demo notice and the kept UI choices.',
    requires: ['read'],
    params: {},
    result: settingsView,
  }),
  setModel: defineCommand('setModel', {
    readOnly: true,
    summary: 'Changes the default model (a provider:model ref); answers the new settings.',
    requires: ['owner'],
    params: { model: modelRef },
    result: settingsView,
  }),
};
