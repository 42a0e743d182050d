/**
 * Connecting a model: list a provider's models from its own API, test a model with the
 * smallest real request, and the UI choices kept with the settings (a dismissed demo banner, a
 * collapsed thread list). Failures are `connect/*` errors naming the provider and host:port
 * (engine/connect/). Owner only: they spend the user's keys and reach the network.
 */
import { arrayOf, bool, literal, nullable, num, object, optional, refine, str, type Infer } from '../wire/validators';
import { MAX_NAME_CHARS, modelRef, nonEmpty } from './common';
import { defineCommand } from './define';
import { settingsView } from './settings';

/** Providers whose models can be listed over HTTP (VS Code language models are listed by the extension). */
export const CONNECT_PROVIDER_IDS = ['openai', 'anthropic', 'openrouter', 'ollama', 'lmstudio', 'compat'] as const;
export type ConnectProviderId = (typeof CONNECT_PROVIDER_IDS)[number];

/** UI choices that must outlive a window reload. */
export const UI_PREFERENCE_KEYS = ['demoBannerDismissed', 'threadListCollapsed'] as const;
export type UiPreferenceKey = (typeof UI_PREFERENCE_KEYS)[number];

/** Longest API key accepted for a configuration under test (real keys are a few hundred characters). */
export const MAX_API_KEY_CHARS = 4_096;
/**
 * A key to test instead of the saved one: the connect flow tests a configuration before it saves
 * anything. Empty: test without a key. Never stored or echoed; the engine remembers it for redaction.
 */
const candidateKey = refine(str, (s) => s.length <= MAX_API_KEY_CHARS, `string of at most ${MAX_API_KEY_CHARS} characters`);

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

/** A named OpenAI-compatible endpoint (its key is in the host's secrets, never here). */
export const compatEndpointView = object({ name: str, baseUrl: str });
export type CompatEndpointView = Infer<typeof compatEndpointView>;

/** The default model moved off an endpoint that was removed or renamed (`was` → `now`); null when it did not change. */
export const modelChangeView = nullable(object({ was: str, now: str }));
export type ModelChangeView = Infer<typeof modelChangeView>;

export const endpointEditView = object({
  /** The endpoint removed, or the endpoint under its new name. */
  endpoint: compatEndpointView,
  /** The endpoints after the change, in order. */
  endpoints: arrayOf(compatEndpointView),
  model: modelChangeView,
});
export type EndpointEditView = Infer<typeof endpointEditView>;

export const modelCommands = {
  listModels: defineCommand('listModels', {
    readOnly: true,
    summary: "A provider's models, from its API (base URL: the given one, else the provider's setting, else its default; key: the given one, else the saved one).",
    requires: ['owner'],
    params: { provider: literal(...CONNECT_PROVIDER_IDS), baseUrl: optional(nonEmpty(MAX_NAME_CHARS)), apiKey: optional(candidateKey) },
    result: modelListView,
  }),
  testModel: defineCommand('testModel', {
    readOnly: true,
    summary: 'Sends the smallest real request to a provider:model and answers how long it took (failures name host:port and the cause).',
    requires: ['owner'],
    params: { ref: modelRef, baseUrl: optional(nonEmpty(MAX_NAME_CHARS)), apiKey: optional(candidateKey) },
    result: connectionTestView,
  }),
  checkCompatEndpoint: defineCommand('checkCompatEndpoint', {
    readOnly: true,
    summary: 'Checks a new OpenAI-compatible endpoint before anything is saved: its base URL (a scheme, http or https, no credentials) and its name (default: the host[:port]; not one another endpoint has, `replacing` excepted); answers it normalized.',
    requires: ['owner'],
    params: { baseUrl: str, name: optional(str), replacing: optional(nonEmpty(MAX_NAME_CHARS)) },
    result: compatEndpointView,
  }),
  listCompatEndpoints: defineCommand('listCompatEndpoints', {
    readOnly: true,
    summary: 'The named OpenAI-compatible endpoints, in order (the first serves plain compat:<model> refs).',
    requires: ['owner'],
    params: {},
    result: object({ endpoints: arrayOf(compatEndpointView) }),
  }),
  removeCompatEndpoint: defineCommand('removeCompatEndpoint', {
    summary: "Removes a named OpenAI-compatible endpoint: its entry in the settings, its key in the host's secrets, its recent models; a default model on it falls back to the most recent model elsewhere (else the demo model), answered as `model`.",
    requires: ['owner'],
    params: { name: str },
    result: endpointEditView,
  }),
  renameCompatEndpoint: defineCommand('renameCompatEndpoint', {
    summary: "Renames a named OpenAI-compatible endpoint in place (its order kept): its key moves to the new name's secret, the default and recent models `compat:<old>/<model>` become `compat:<new>/<model>`.",
    requires: ['owner'],
    params: { name: str, newName: str },
    result: endpointEditView,
  }),
  setUiPreference: defineCommand('setUiPreference', {
    readOnly: true,
    summary: 'Keeps a UI choice (the demo banner dismissed, the thread list collapsed) across reloads; answers the new settings.',
    requires: ['owner'],
    params: { key: literal(...UI_PREFERENCE_KEYS), value: bool },
    result: settingsView,
  }),
};
