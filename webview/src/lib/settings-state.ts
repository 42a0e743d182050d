/**
 * The settings as the webview keeps them, and what the model picker shows of them: the recent
 * models grouped by provider (one optgroup each, most recent group first), then the other
 * offered models not among them, then "Connect a model…". Pure functions, tested in Node.
 */
import type { ModelChoice, SettingsView, UiPreferencesView } from '../../../src/protocol/commands/index';

/** The picker's value that opens the Connect a Model flow instead of choosing a model. */
export const CONNECT_MODEL_VALUE = '__vox_connect_model__';

export const NO_UI_PREFERENCES: UiPreferencesView = { demoBannerDismissed: false, threadListCollapsed: false };

/** A settings update or answer, without its envelope fields. */
export function toSettings(u: SettingsView): SettingsView {
  return {
    model: u.model, models: u.models, demoNotice: u.demoNotice,
    ...(u.recent ? { recent: u.recent } : {}),
    ...(u.ui ? { ui: u.ui } : {}),
  };
}

export interface PickerGroup { label: string; models: ModelChoice[] }

/** The picker's groups: recent by provider, then "Models" for the rest (the current model always present). */
export function pickerGroups(s: SettingsView): PickerGroup[] {
  const groups: PickerGroup[] = (s.recent ?? []).filter((g) => g.models.length > 0).map((g) => ({ label: g.label, models: g.models }));
  const seen = new Set(groups.flatMap((g) => g.models.map((m) => m.ref)));
  const rest = s.models.filter((m) => !seen.has(m.ref));
  if (!seen.has(s.model) && !rest.some((m) => m.ref === s.model)) rest.unshift({ ref: s.model, label: s.model, isDemo: false });
  if (rest.length > 0) groups.push({ label: groups.length > 0 ? 'Other models' : 'Models', models: rest });
  return groups;
}
