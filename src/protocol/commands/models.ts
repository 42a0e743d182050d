/**
 * Connecting a model: list a provider's models from its own API, test a model with the
 * smallest real request, and the UI choices kept with the settings (a dismissed demo banner, a
 * collapsed thread list). Failures are `connect/*` errors naming the provider and host:port
 * (engine/connect/). Owner only: they spend the user's keys and reach the network.
 */
import { arrayOf, bool, literal, num, object, optional, str, type Infer } from '../wire/validators';
import { MAX_NAME_CHARS, modelRef, nonEmpty } from './common';
import { defineCommand } from './define';
import { settingsView } from './settings';

/** Providers whose models can be listed over HTTP (VS Code language models are listed by the extension). */
export const CONNECT_PROVIDER_IDS = ['openai', 'anthropic', 'openrouter', 'ollama', 'lmstudio', 'compat'] as const;
export type ConnectProviderId = (typeof CONNECT_PROVIDER_IDS)[number];

/** UI choices that must outlive a window reload. */
export const UI_PREFERENCE_KEYS = ['demoBannerDismissed', 'threadListCollapsed'] as const;
export type UiPreferenceKey = (typeof UI_PREFERENCE_KEYS)[number];

export const listedModel = object({ id: str, label: optional(str), contextWindow: optional(num) });
export type ListedModelView = Infer<typeof listedModel>;

export const modelListView = object({
  provider: literal(...CONNECT_PROVIDER_IDS),
  label: str,
  baseUrl: str,
  /** `host:port` the list came from. */
  endpoint: str,
  models: arrayOf(listedModel),
});
export type ModelListView = Infer<typeof modelListView>;

export const connectionTestView = object({
  ref: str,
  provider: literal(...CONNECT_PROVIDER_IDS),
  endpoint: str,
  latencyMs: num,
  /** The first characters of the model's answer. */
  reply: str,
});
export type ConnectionTestView = Infer<typeof connectionTestView>;

export const modelCommands = {
  listModels: defineCommand('listModels', {
    readOnly: true,
    summary: "A provider's models, from its API (base URL: the given one, else the provider's setting, else its default).",
    requires: ['owner'],
    params: { provider: literal(...CONNECT_PROVIDER_IDS), baseUrl: optional(nonEmpty(MAX_NAME_CHARS)) },
    result: modelListView,
  }),
  testModel: defineCommand('testModel', {
    readOnly: true,
    summary: 'Sends the smallest real request to a provider:model and answers how long it took (failures name host:port and the cause).',
    requires: ['owner'],
    params: { ref: modelRef, baseUrl: optional(nonEmpty(MAX_NAME_CHARS)) },
    result: connectionTestView,
  }),
  setUiPreference: defineCommand('setUiPreference', {
    readOnly: true,
    summary: 'Keeps a UI choice (the demo banner dismissed, the thread list collapsed) across reloads; answers the new settings.',
    requires: ['owner'],
    params: { key: literal(...UI_PREFERENCE_KEYS), value: bool },
    result: settingsView,
  }),
};
