/**
 * What the engine asks of whoever runs it (VS Code, the CLI, a test): settings, secrets, a place
 * for notices, and word of files changed outside the agent. The engine reads settings and
 * secrets when it needs them (a prompt resolves its model then), so a changed key, base URL,
 * approval setting or default model takes effect without rebuilding the engine.
 */
import type { ModelChoice } from '../protocol/commands/settings';
import type { ProviderSecret, ProviderSettings } from './providers/registry';

/** The environment variable of each provider secret (the CLI's keys). */
export const SECRET_ENV: Record<ProviderSecret, string> = {
  openaiApiKey: 'OPENAI_API_KEY', anthropicApiKey: 'ANTHROPIC_API_KEY', openrouterApiKey: 'OPENROUTER_API_KEY', compatApiKey: 'VOX_COMPAT_API_KEY',
};

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
   * The permission settings `{mode?, rules?}` (VS Code: `vox.permissionMode`, `vox.permissionRules`),
   * validated by the engine (../engine/permissions/); undefined for none.
   */
  permissionSettings?(): unknown;
  /**
   * The default sampling settings `{temperature?, topP?, reasoningEffort?}` of runs (VS Code:
   * `vox.sampling.*`), validated by the engine (../engine/branches/sampling.ts); undefined or
   * null values: the provider's default.
   */
  samplingSettings?(): unknown;
  /** Persists the workspace's default permission mode (VS Code: the workspace setting). */
  setPermissionMode?(mode: 'ask' | 'autoEdits' | 'fullAuto'): Promise<void>;
  /** A provider key, or undefined when none is set. Never logged, never stored by the engine. */
  secret(name: ProviderSecret): Promise<string | undefined>;
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
}

/** A Host for processes without an editor: settings fixed at start, keys from the environment. */
export function environmentHost(opts: {
  model: string;
  env?: NodeJS.ProcessEnv;
  notify?: (n: HostNotice) => void;
  modelChoices?: ModelChoice[];
  /** Permission settings `{mode?, rules?}` (the CLI's `--mode`); validated by the engine. */
  permissions?: { mode?: string; rules?: unknown };
  /** Sampling settings `{temperature?, topP?, reasoningEffort?}`; default VOX_TEMPERATURE, VOX_TOP_P, VOX_REASONING_EFFORT. */
  sampling?: unknown;
  memento?: HostMemento;
}): Host {
  const env = opts.env ?? process.env;
  let model = opts.model;
  let permissions: { mode?: string; rules?: unknown } | undefined = opts.permissions;
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
    }),
    secret: async (name) => env[SECRET_ENV[name]] || undefined,
    ...(opts.memento ? { memento: opts.memento } : {}),
    notify: opts.notify ?? ((n) => process.stderr.write(`[vox] ${n.source}: ${n.message}\n`)),
    onExternalChange: () => () => undefined,
    onSettingsChange(l) {
      changed.add(l);
      return () => void changed.delete(l);
    },
  };
}
