/**
 * What the engine asks of whoever runs it (VS Code, the CLI, a test): settings, secrets, a place
 * for notices, and word of files changed outside the agent. The engine reads settings and
 * secrets when it needs them (a prompt resolves its model then), so a changed key, base URL,
 * approval setting or default model takes effect without rebuilding the engine. Also the one
 * settings migration a host runs at start (`migrateCompatSetting`).
 */
import type { ModelChoice } from '../protocol/commands/settings';
import type { CompatEndpointSecret, FixedProviderSecret, ProviderSecret, ProviderSettings } from './providers/registry';
import { compatEndpoints, compatKeyEnvName, compatSecretName, legacyEndpoint, type CompatEndpoint } from './providers/compat-endpoints';

/** The environment variable of each provider secret (the CLI's keys). */
export const SECRET_ENV: Record<FixedProviderSecret, string> = {
  openaiApiKey: 'OPENAI_API_KEY', anthropicApiKey: 'ANTHROPIC_API_KEY', openrouterApiKey: 'OPENROUTER_API_KEY', compatApiKey: 'VOX_COMPAT_API_KEY',
};

/** The environment variable of a secret: the fixed ones, or a named endpoint's `VOX_COMPAT_API_KEY_<NAME>`. */
export function secretEnvName(name: ProviderSecret): string {
  return name.startsWith('compatApiKey:') ? compatKeyEnvName(name.slice('compatApiKey:'.length)) : SECRET_ENV[name as FixedProviderSecret];
}

/** `VOX_COMPAT_ENDPOINTS` (`name=url,name=url`; a bare url is named by its host) as raw endpoints. */
export function parseEndpointsEnv(text: string): { name?: string; baseUrl: string }[] {
  return text.split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const eq = item.indexOf('=');
    return eq > 0 && !item.slice(0, eq).includes('/') ? { name: item.slice(0, eq).trim(), baseUrl: item.slice(eq + 1).trim() } : { baseUrl: item };
  });
}

/**
 * Small durable values of the user's (VS Code: the extension's globalState): the recent models
 * and UI choices such as a dismissed banner. Not in SQLite: they are per-user preferences like
 * `vox.model`, not workspace history, and need no schema.
 */
export interface HostMemento {
  get(key: string): unknown;
  update(key: string, value: unknown): Promise<void>;
}

/** A memento in memory (tests, and hosts that keep nothing). */
export function memoryMemento(): HostMemento {
  const values = new Map<string, unknown>();
  return { get: (k) => values.get(k), update: async (k, v) => void values.set(k, v) };
}

export interface HostNotice {
  level: 'info' | 'warning' | 'error';
  /** Which part of the engine speaks ("checkpoints", "runs", …). */
  source: string;
  message: string;
}

/**
 * What only the editor knows, for @-mentions (../engine/context/): VS Code supplies each; a host
 * without one (the CLI) leaves it out, and a mention of it is then a visible warning.
 */
export interface MentionSources {
  /** The workspace diagnostics, one per line (`path:line:col severity source: message`); '' when there are none. */
  problems?(): Promise<string>;
  /** The active terminal's recent output (null: no terminal, or its shell integration reported nothing yet). */
  terminal?(): Promise<{ name: string; text: string } | null>;
  /** The active editor's selection (null: nothing selected). `path` is workspace-relative where it can be. */
  selection?(): Promise<{ path: string; startLine: number; endLine: number; text: string } | null>;
}

export interface Host {
  /** The default model ref (VS Code: the `vox.model` setting). */
  model(): string;
  /** Persists a new default model. */
  setModel(ref: string): Promise<void>;
  /** Models offered in pickers (the default and recent/extra ones). */
  modelChoices(): ModelChoice[];
  /** The raw approval settings (`vox.approval`), validated by the engine; undefined for the defaults. */
  approvalSettings(): unknown;
  /** Provider endpoints. */
  providerSettings(): ProviderSettings;
  /**
   * The permission settings `{mode?, rules?, protectedPaths?}` (VS Code: `vox.permissionMode`,
   * `vox.permissionRules`, `vox.protectedPaths`), validated by the engine (../engine/permissions/); undefined for none.
   */
  permissionSettings?(): unknown;
  /**
   * The default sampling settings `{temperature?, topP?, reasoningEffort?}` of runs (VS Code:
   * `vox.sampling.*`), validated by the engine (../engine/branches/sampling.ts); undefined or
   * null values: the provider's default.
   */
  samplingSettings?(): unknown;
  /** Persists the default permission mode: the workspace's (VS Code: .vscode/settings.json) or the user's settings. */
  setPermissionMode?(mode: 'ask' | 'autoEdits' | 'fullAuto', target: 'workspace' | 'user'): Promise<void>;
  /** A provider key, or undefined when none is set. Never logged, never stored by the engine. */
  secret(name: ProviderSecret): Promise<string | undefined>;
  /** Stores, or with undefined deletes, a provider key (VS Code: SecretStorage); absent: this host's keys cannot be changed (the CLI's environment). */
  setProviderSecret?(name: ProviderSecret, value: string | undefined): Promise<void>;
  /**
   * Persists the named OpenAI-compatible endpoints (VS Code: the global `vox.compatEndpoints`),
   * entries as the settings hold them; absent: this host cannot change them (the CLI's
   * `VOX_COMPAT_ENDPOINTS`).
   */
  setCompatEndpoints?(list: unknown[]): Promise<void>;
  /** Notices for the user or the log (checkpoint failures, over-budget captures, recovered runs). */
  notify(notice: HostNotice): void;
  /** Calls `listener` whenever files may have changed outside the agent (the user saved one). */
  onExternalChange(listener: () => void): () => void;
  /** Calls `listener` when `model()` or `modelChoices()` may have changed. */
  onSettingsChange(listener: () => void): () => void;
  /** Editor facts @-mentions attach (diagnostics, terminal output, the selection); absent outside an editor. */
  mentionSources?: MentionSources;
  /** Durable small values (recent models, UI choices); the engine keeps them in memory when absent. */
  memento?: HostMemento;
  /**
   * Rule settings (VS Code: `vox.rules`, `vox.readPeerRuleFiles`, `vox.systemPrompt.append`),
   * validated by the engine (../engine/rules/); undefined: no user rules, peer files read.
   */
  rulesSettings?(): RulesSettings | undefined;
  /** Persists the user rules (VS Code: the global `vox.rules`); absent: this host keeps none. */
  setUserRules?(rules: unknown[]): Promise<void>;
  /**
   * Secrets the engine keeps for itself (MCP: OAuth tokens of servers Vox signs in to, the key of
   * Vox's own MCP server's client ids). VS Code: SecretStorage; the CLI: memory. Never logged,
   * never stored elsewhere. Absent: nothing is kept across restarts.
   */
  secretStore?: HostSecretStore;
  /**
   * MCP client settings (VS Code: `vox.mcp.servers`, `vox.mcp.disabledServers`, `vox.mcp.disabledTools`,
   * `vox.mcp.toolCatalogThreshold`), validated by the engine (../engine/mcp/); undefined: the defaults.
   */
  mcpSettings?(): McpSettings | undefined;
  /** Persists MCP settings (VS Code: the workspace settings); absent: changes last until restart. */
  setMcpSettings?(patch: Partial<McpSettings>): Promise<void>;
  /** Opens a URL in the user's browser (VS Code: vscode.env.openExternal), e.g. an MCP server's OAuth sign-in; absent: cannot. */
  openExternal?(url: string): Promise<void>;
}

/** A small key → string store for engine secrets (keys are namespaced by the caller, e.g. `vox.mcp.oauth.<server>`). */
export interface HostSecretStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** A secret store in memory (tests, the CLI). */
export function memorySecretStore(): HostSecretStore {
  const values = new Map<string, string>();
  return {
    get: async (k) => values.get(k),
    set: async (k, v) => void values.set(k, v),
    delete: async (k) => void values.delete(k),
  };
}

export interface McpSettings {
  /** Raw server definitions `{name: {command, args, env} | {type: 'http'|'sse', url, headers}}` (same shape as .mcp.json's mcpServers). */
  servers?: unknown;
  /** Names of servers the user disabled. */
  disabledServers?: string[];
  /** `server/tool` of tools the user disabled. */
  disabledTools?: string[];
  /** Above this many active MCP tools the model sees the 3 meta-tools (SPEC 3.3; default 12). */
  toolCatalogThreshold?: number;
}

export interface RulesSettings {
  /** The raw `vox.rules` array ({name, attach, body, description?, paths?, enabled?}). */
  rules?: unknown;
  /** Read CLAUDE.md, AGENTS.md and .clinerules as always rules (default true). */
  readPeerFiles?: boolean;
  /** Text added after the system prompt ($variables resolved). */
  systemPromptAppend?: string;
}

/** A Host for processes without an editor: settings fixed at start, keys from the environment. */
export function environmentHost(opts: {
  model: string;
  env?: NodeJS.ProcessEnv;
  notify?: (n: HostNotice) => void;
  modelChoices?: ModelChoice[];
  /** Permission settings `{mode?, rules?, protectedPaths?}` (the CLI's `--mode`, $VOX_PROTECTED_PATHS); validated by the engine. */
  permissions?: { mode?: string; rules?: unknown; protectedPaths?: unknown };
  /** Sampling settings `{temperature?, topP?, reasoningEffort?}`; default VOX_TEMPERATURE, VOX_TOP_P, VOX_REASONING_EFFORT. */
  sampling?: unknown;
  memento?: HostMemento;
  /** Rule settings (the CLI: none by default; tests pass user rules). */
  rules?: RulesSettings;
  /** MCP settings (tests; the CLI reads only the workspace's config files). */
  mcp?: McpSettings;
  secretStore?: HostSecretStore;
}): Host {
  const env = opts.env ?? process.env;
  let model = opts.model;
  let permissions: { mode?: string; rules?: unknown; protectedPaths?: unknown } | undefined = opts.permissions;
  const changed = new Set<() => void>();
  return {
    model: () => model,
    async setModel(ref) {
      model = ref;
      for (const l of [...changed]) l();
    },
    modelChoices: () => opts.modelChoices ?? [{ ref: model, label: model, isDemo: model === 'local:demo' }],
    approvalSettings: () => undefined,
    permissionSettings: () => permissions,
    samplingSettings: () => opts.sampling ?? {
      ...(env.VOX_TEMPERATURE ? { temperature: env.VOX_TEMPERATURE } : {}),
      ...(env.VOX_TOP_P ? { topP: env.VOX_TOP_P } : {}),
      ...(env.VOX_REASONING_EFFORT ? { reasoningEffort: env.VOX_REASONING_EFFORT } : {}),
    },
    async setPermissionMode(mode) {
      permissions = { ...permissions, mode };
    },
    providerSettings: () => ({
      openaiBaseUrl: env.OPENAI_BASE_URL, anthropicBaseUrl: env.ANTHROPIC_BASE_URL, ollamaBaseUrl: env.OLLAMA_BASE_URL,
      openrouterBaseUrl: env.OPENROUTER_BASE_URL, lmstudioBaseUrl: env.LMSTUDIO_BASE_URL, compatBaseUrl: env.VOX_COMPAT_BASE_URL,
      ...(env.VOX_COMPAT_ENDPOINTS ? { compatEndpoints: parseEndpointsEnv(env.VOX_COMPAT_ENDPOINTS) } : {}),
    }),
    secret: async (name) => env[secretEnvName(name)] || undefined,
    ...(opts.memento ? { memento: opts.memento } : {}),
    ...(opts.rules ? { rulesSettings: () => opts.rules } : {}),
    secretStore: opts.secretStore ?? memorySecretStore(),
    ...(opts.mcp ? { mcpSettings: () => opts.mcp } : {}),
    notify: opts.notify ?? ((n) => process.stderr.write(`[vox] ${n.source}: ${n.message}\n`)),
    onExternalChange: () => () => undefined,
    onSettingsChange(l) {
      changed.add(l);
      return () => void changed.delete(l);
    },
  };
}

/** Where the editor keeps the settings and keys the migration moves. */
export interface CompatSettingsStore {
  settings(): ProviderSettings;
  writeEndpoints(list: CompatEndpoint[]): Promise<void>;
  clearLegacyBaseUrl(): Promise<void>;
  getSecret(name: 'compatApiKey' | CompatEndpointSecret): Promise<string | undefined>;
  setSecret(name: CompatEndpointSecret, value: string): Promise<void>;
  deleteSecret(name: 'compatApiKey'): Promise<void>;
}

/**
 * Moves the older single `compatBaseUrl` into the endpoint list, once: an endpoint named by its
 * host (first, so plain `compat:<model>` refs keep their server), its key copied to the
 * endpoint's secret before the old one goes, then the old setting cleared. Answers the endpoint
 * migrated, or undefined when there was nothing to move.
 */
export async function migrateCompatSetting(store: CompatSettingsStore): Promise<CompatEndpoint | undefined> {
  const settings = store.settings();
  const legacy = legacyEndpoint(settings);
  if (!legacy) return undefined;
  const current = compatEndpoints({ compatEndpoints: settings.compatEndpoints });
  const same = current.find((e) => e.baseUrl === legacy.baseUrl);
  const target = same ?? { name: current.some((e) => e.name === legacy.name) ? `${legacy.name}-1` : legacy.name, baseUrl: legacy.baseUrl };
  if (!same) await store.writeEndpoints([target, ...current]);
  const key = await store.getSecret('compatApiKey');
  if (key && !(await store.getSecret(compatSecretName(target.name)))) await store.setSecret(compatSecretName(target.name), key);
  if (key) await store.deleteSecret('compatApiKey');
  await store.clearLegacyBaseUrl();
  return target;
}
