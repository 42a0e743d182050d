/**
 * The models a user picked before, most recent first, and the small UI choices that must outlive
 * a window reload (a dismissed demo banner, a collapsed thread list). Both live in the host's
 * memento (VS Code: the extension's globalState), not in SQLite: they are per-user preferences
 * like `vox.model` (the same in every workspace), need no schema or migration, and a database
 * restored from another machine must not carry them.
 */
import type { HostMemento } from '../host';
import { isDemoModel } from '../model/demo-model';
import { CONNECT_PROVIDERS, isConnectProvider } from './endpoints';
import { splitCompatModel } from '../providers/compat-endpoints';
import { UI_PREFERENCE_KEYS, type UiPreferenceKey } from '../../protocol/commands/models';

/** Most recent models remembered. */
export const MAX_RECENT_MODELS = 12;
export const RECENT_MODELS_KEY = 'vox.recentModels';
export const UI_PREFERENCES_KEY = 'vox.uiPreferences';

export type UiPreferences = Record<UiPreferenceKey, boolean>;

export interface RecentChoice { ref: string; label: string; isDemo: boolean }
export interface RecentGroup { provider: string; label: string; models: RecentChoice[] }

/** Labels of the providers that are not connect providers. */
const OTHER_LABELS: Record<string, string> = { local: 'Local (GGUF)', 'vscode-lm': 'VS Code language models' };

export function recentModels(m: HostMemento): string[] {
  const v = m.get(RECENT_MODELS_KEY);
  return Array.isArray(v) ? v.filter((r): r is string => typeof r === 'string' && r.includes(':')).slice(0, MAX_RECENT_MODELS) : [];
}

/** Puts `ref` first (once), keeping at most MAX_RECENT_MODELS. */
export async function rememberModel(m: HostMemento, ref: string): Promise<void> {
  const next = [ref, ...recentModels(m).filter((r) => r !== ref)].slice(0, MAX_RECENT_MODELS);
  await m.update(RECENT_MODELS_KEY, next);
}

export function providerLabel(kind: string): string {
  return isConnectProvider(kind) ? CONNECT_PROVIDERS[kind].label : (OTHER_LABELS[kind] ?? kind);
}

/**
 * Recent refs grouped by provider: groups in order of their most recent model, models most recent
 * first. `compat:` models are grouped by their named endpoint (`endpoints`, in order; a plain
 * `compat:<model>` is the first's), so the picker shows the endpoint with the model.
 */
export function groupRecent(refs: readonly string[], endpoints: readonly string[] = []): RecentGroup[] {
  const groups = new Map<string, RecentGroup>();
  const list = endpoints.map((name) => ({ name, baseUrl: '' }));
  for (const ref of refs) {
    const kind = ref.slice(0, ref.indexOf(':'));
    let key = kind;
    let groupLabel = providerLabel(kind);
    let label = ref.slice(kind.length + 1);
    if (kind === 'compat' && list.length) {
      const split = splitCompatModel(label, list);
      key = `compat:${split.endpoint!.name}`;
      groupLabel = `${split.endpoint!.name} (OpenAI-compatible)`;
      label = split.model;
    }
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { provider: kind, label: groupLabel, models: [] }));
    const demo = isDemoModel(ref);
    g.models.push({ ref, label: demo ? 'Demo model (offline, writes nonsense)' : label, isDemo: demo });
  }
  return [...groups.values()];
}

export function uiPreferences(m: HostMemento): UiPreferences {
  const v = m.get(UI_PREFERENCES_KEY) as Partial<Record<string, unknown>> | undefined;
  const out = {} as UiPreferences;
  for (const k of UI_PREFERENCE_KEYS) out[k] = v?.[k] === true;
  return out;
}

export async function setUiPreference(m: HostMemento, key: UiPreferenceKey, value: boolean): Promise<void> {
  await m.update(UI_PREFERENCES_KEY, { ...uiPreferences(m), [key]: value });
}
