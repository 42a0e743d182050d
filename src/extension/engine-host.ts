/**
 * EngineHost: owns the one Engine of this VS Code window and is its `Host` — it answers the
 * engine's questions from the `vox.*` settings and SecretStorage (read when asked, so a new key,
 * base URL, approval setting or default model applies to the next prompt without a restart),
 * sends its notices to the Vox log (warnings and errors also as notifications), and tells it when
 * the user changed files. The engine is created lazily on first use, so activation stays fast:
 * even its code (the store, git plumbing, tools, agent loop) is only evaluated then, through a
 * dynamic import that esbuild keeps as a lazy initialiser inside dist/extension.js.
 * Views and palette commands reach the engine only through `client()`, a protocol client with the
 * owner grant; each chat webview gets its own session (`connect`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { VsCodeMentionSources } from './mention-sources';
import { EngineClient, inProcessTransport } from '../client/engine-client';
import type { Engine } from '../engine/engine';
import type { Host, HostMemento, HostNotice, HostSecretStore, McpSettings, RulesSettings } from '../engine/host';
import { migrateCompatSetting } from '../engine/host';
import { DEFAULT_MODEL_REF, type FixedProviderSecret, type ProviderSecret, type ProviderSettings } from '../engine/providers/registry';
import { demoModelPath, isDemoModel } from '../engine/model/demo-model';
import { ownerGrant } from '../protocol/commands/grants';
import type { ModelChoice } from '../protocol/commands/settings';
import type { EngineUpdate } from '../protocol/updates';
import { vscodeLmFactory } from './vscode-lm-provider';

export const SECRET_KEYS = { openai: 'vox.openaiApiKey', anthropic: 'vox.anthropicApiKey', openrouter: 'vox.openrouterApiKey', compat: 'vox.compatApiKey' } as const;
export type SecretProvider = keyof typeof SECRET_KEYS;
const SECRET_OF: Record<FixedProviderSecret, SecretProvider> = { openaiApiKey: 'openai', anthropicApiKey: 'anthropic', openrouterApiKey: 'openrouter', compatApiKey: 'compat' };

/** `compat:<endpoint>/<model>` shown as `<model> · <endpoint>` (the palette's model picker); other refs as they are. */
function endpointLabel(ref: string): string {
  const m = /^compat:([A-Za-z0-9][A-Za-z0-9._:-]*)\/(.+)$/.exec(ref);
  const names = (vscode.workspace.getConfiguration('vox').get<{ name?: unknown }[]>('compatEndpoints') ?? []).map((e) => e?.name);
  return m && names.includes(m[1]) ? `${m[2]} · ${m[1]}` : ref;
}

/** The SecretStorage key of a provider secret; a named endpoint's is `vox.compatApiKey.<name>`. */
function secretStorageKey(name: ProviderSecret): string {
  return name.startsWith('compatApiKey:') ? `${SECRET_KEYS.compat}.${name.slice('compatApiKey:'.length)}` : SECRET_KEYS[SECRET_OF[name as FixedProviderSecret]];
}
/** Most kinds of warning shown as notifications per window (the rest, and repeats, go to the log only). */
const MAX_WARNING_NOTIFICATIONS = 20;

export class EngineHost implements Host, vscode.Disposable {
  private engine: Engine | undefined;
  private starting: Promise<Engine> | undefined;
  private shared: EngineClient | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly externalChange = new vscode.EventEmitter<void>();
  private readonly warned = new Set<string>();
  /** Fires when the default model or the offered models may have changed. */
  readonly onDidChange = this.changed.event;
  /** Diagnostics, terminal output and the selection for @-mentions (./mention-sources.ts). */
  readonly mentionSources = new VsCodeMentionSources();
  private readonly started = new vscode.EventEmitter<void>();
  /** Fires once the engine has started (views that must not start it themselves wait for this). */
  readonly onDidStart = this.started.event;

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    const external = () => this.externalChange.fire();
    ctx.subscriptions.push(
      this.mentionSources,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('vox.model') || e.affectsConfiguration('vox.models')) this.changed.fire();
        // The chat's mode bar shows the workspace's permission mode and rules: tell the views.
        else if (e.affectsConfiguration('vox.permissionMode') || e.affectsConfiguration('vox.permissionRules')) this.changed.fire();
        // Rules and the system prompt's addition: the engine reloads its rules (rules/service.ts).
        else if (e.affectsConfiguration('vox.rules') || e.affectsConfiguration('vox.readPeerRuleFiles') || e.affectsConfiguration('vox.systemPrompt')) this.changed.fire();
        // MCP servers, disabled servers/tools, the catalog threshold: the engine reads its MCP config again (mcp/manager.ts).
        else if (e.affectsConfiguration('vox.mcp')) this.changed.fire();
      }),
      // Files changed by the user (saved, or created/deleted/renamed in the explorer): the next
      // checkpoint must look at the whole tree, not only at the paths the agent reported.
      vscode.workspace.onDidSaveTextDocument(external),
      vscode.workspace.onDidCreateFiles(external),
      vscode.workspace.onDidDeleteFiles(external),
      vscode.workspace.onDidRenameFiles(external),
    );
  }

  // ---- Host (what the engine asks) ------------------------------------------------------------

  model(): string {
    return vscode.workspace.getConfiguration('vox').get<string>('model') || DEFAULT_MODEL_REF;
  }

  async setModel(ref: string): Promise<void> {
    await vscode.workspace.getConfiguration('vox').update('model', ref, vscode.ConfigurationTarget.Global);
    this.changed.fire();
  }

  modelChoices(): ModelChoice[] {
    const extra = vscode.workspace.getConfiguration('vox').get<string[]>('models') ?? [];
    const refs = [DEFAULT_MODEL_REF, ...extra, this.model()];
    const seen = new Set<string>();
    return refs
      .filter((r) => !seen.has(r) && seen.add(r))
      .map((ref) => ({ ref, label: isDemoModel(ref) ? 'Demo model (offline, writes nonsense)' : endpointLabel(ref), isDemo: isDemoModel(ref) }));
  }

  approvalSettings(): unknown {
    return vscode.workspace.getConfiguration('vox').get('approval');
  }

  permissionSettings(): unknown {
    const cfg = vscode.workspace.getConfiguration('vox');
    return { mode: cfg.get('permissionMode'), rules: cfg.get('permissionRules'), protectedPaths: cfg.get('protectedPaths') };
  }

  /** `vox.sampling.*`: the default temperature, top_p and reasoning effort of runs (validated by the engine). */
  samplingSettings(): unknown {
    const cfg = vscode.workspace.getConfiguration('vox.sampling');
    return { temperature: cfg.get('temperature'), topP: cfg.get('topP'), reasoningEffort: cfg.get('reasoningEffort') };
  }

  /** Only on the user's explicit "make this the default": `workspace` writes .vscode/settings.json (without a folder open, the user's settings). */
  async setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto', target: 'workspace' | 'user'): Promise<void> {
    const where = target === 'workspace' && vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    await vscode.workspace.getConfiguration('vox').update('permissionMode', mode, where);
  }

  rulesSettings(): RulesSettings {
    const cfg = vscode.workspace.getConfiguration('vox');
    return { rules: cfg.get('rules'), readPeerFiles: cfg.get<boolean>('readPeerRuleFiles') !== false, systemPromptAppend: cfg.get<string>('systemPrompt.append') ?? '' };
  }

  /** User rules are the user's (global) `vox.rules`. */
  async setUserRules(rules: unknown[]): Promise<void> {
    await vscode.workspace.getConfiguration('vox').update('rules', rules, vscode.ConfigurationTarget.Global);
  }

  /** Engine secrets (MCP OAuth tokens, the MCP server's key) in SecretStorage, under a `vox.engine.` prefix. */
  readonly secretStore: HostSecretStore = {
    get: async (key) => (await this.ctx.secrets.get(`vox.engine.${key}`)) || undefined,
    set: async (key, value) => this.ctx.secrets.store(`vox.engine.${key}`, value),
    delete: async (key) => this.ctx.secrets.delete(`vox.engine.${key}`),
  };

  mcpSettings(): McpSettings {
    const cfg = vscode.workspace.getConfiguration('vox.mcp');
    return {
      servers: cfg.get('servers'),
      disabledServers: cfg.get<string[]>('disabledServers') ?? [],
      disabledTools: cfg.get<string[]>('disabledTools') ?? [],
      toolCatalogThreshold: cfg.get<number>('toolCatalogThreshold'),
    };
  }

  /** MCP choices are the workspace's (without a folder open, the user's). */
  async setMcpSettings(patch: Partial<McpSettings>): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('vox.mcp');
    const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    for (const [key, value] of Object.entries(patch)) await cfg.update(key, value, target);
  }

  /** Opens a URL in the browser (an MCP server's OAuth sign-in). */
  async openExternal(url: string): Promise<void> {
    await vscode.env.openExternal(vscode.Uri.parse(url, true));
  }

  providerSettings(): ProviderSettings {
    const cfg = vscode.workspace.getConfiguration('vox');
    const get = (k: Exclude<keyof ProviderSettings, 'compatEndpoints'>) => cfg.get<string>(k) || undefined;
    return {
      openaiBaseUrl: get('openaiBaseUrl'), anthropicBaseUrl: get('anthropicBaseUrl'), ollamaBaseUrl: get('ollamaBaseUrl'),
      openrouterBaseUrl: get('openrouterBaseUrl'), lmstudioBaseUrl: get('lmstudioBaseUrl'), compatBaseUrl: get('compatBaseUrl'),
      compatEndpoints: cfg.get<unknown>('compatEndpoints'),
    };
  }

  /** Recent models and kept UI choices, in globalState (per user, every workspace); a change re-sends the settings. */
  readonly memento: HostMemento = {
    get: (key) => this.ctx.globalState.get(key),
    update: async (key, value) => {
      await this.ctx.globalState.update(key, value);
      this.changed.fire();
    },
  };

  async secret(name: ProviderSecret): Promise<string | undefined> {
    return (await this.ctx.secrets.get(secretStorageKey(name))) || undefined;
  }

  /**
   * The older single `vox.compatBaseUrl` moved, once, into `vox.compatEndpoints` (named by its
   * host, its key moved to the endpoint's SecretStorage entry); answers the endpoint's name.
   */
  async migrateSettings(): Promise<string | undefined> {
    const cfg = () => vscode.workspace.getConfiguration('vox');
    const moved = await migrateCompatSetting({
      settings: () => this.providerSettings(),
      writeEndpoints: (list) => Promise.resolve(cfg().update('compatEndpoints', list, vscode.ConfigurationTarget.Global)),
      clearLegacyBaseUrl: async () => {
        for (const target of [vscode.ConfigurationTarget.Global, vscode.ConfigurationTarget.Workspace]) {
          if (target === vscode.ConfigurationTarget.Workspace && !vscode.workspace.workspaceFolders?.length) continue;
          await cfg().update('compatBaseUrl', undefined, target);
        }
      },
      getSecret: (name) => this.secret(name),
      setSecret: (name, value) => this.setProviderSecret(name, value),
      deleteSecret: (name) => this.setProviderSecret(name, undefined),
    });
    return moved?.name;
  }

  /** The named OpenAI-compatible endpoints are the user's (global) `vox.compatEndpoints`. */
  async setCompatEndpoints(list: unknown[]): Promise<void> {
    await vscode.workspace.getConfiguration('vox').update('compatEndpoints', list, vscode.ConfigurationTarget.Global);
  }

  /** Stores (or, with undefined, deletes) any provider secret, a named endpoint's key included. */
  async setProviderSecret(name: ProviderSecret, value: string | undefined): Promise<void> {
    if (value) await this.ctx.secrets.store(secretStorageKey(name), value);
    else await this.ctx.secrets.delete(secretStorageKey(name));
    this.changed.fire();
  }

  notify(n: HostNotice): void {
    const line = `${n.source}: ${n.message}`;
    if (n.level === 'info') return this.log.info(line);
    if (n.level === 'warning') {
      this.log.warn(line);
      // One notification per kind: "Checkpoint 7 took 2300 ms" and "Checkpoint 9 took 2600 ms" are one kind.
      const kind = `${n.source}:${n.message.replace(/\d+/g, '#')}`;
      if (!this.warned.has(kind) && this.warned.size < MAX_WARNING_NOTIFICATIONS) {
        this.warned.add(kind);
        void vscode.window.showWarningMessage(`Vox: ${n.message}`);
      }
      return;
    }
    this.log.error(line);
    if (n.source !== 'protocol') void vscode.window.showErrorMessage(`Vox: ${n.message}`);
  }

  onExternalChange(listener: () => void): () => void {
    const d = this.externalChange.event(listener);
    return () => d.dispose();
  }

  onSettingsChange(listener: () => void): () => void {
    const d = this.changed.event(listener);
    return () => d.dispose();
  }

  // ---- for the extension ----------------------------------------------------------------------

  demoModelFile(): string {
    return demoModelPath(this.ctx.extensionPath);
  }

  /** The engine, started on first use. */
  async get(): Promise<Engine> {
    if (this.engine) return this.engine;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** The protocol client the views and palette commands share (owner grant). */
  async client(): Promise<EngineClient> {
    const engine = await this.get();
    this.shared ??= new EngineClient(inProcessTransport((sink) => engine.connect(sink, ownerGrant('VS Code'))), 'vsc');
    return this.shared;
  }

  /** A session of its own for one chat webview. */
  async connect(sink: (u: EngineUpdate) => void): Promise<ReturnType<Engine['connect']>> {
    return (await this.get()).connect(sink, ownerGrant('VS Code chat'));
  }

  private async start(): Promise<Engine> {
    const t0 = Date.now();
    const storage = this.ctx.globalStorageUri.fsPath;
    fs.mkdirSync(storage, { recursive: true });
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? storage;
    const { createEngine, findRipgrep, voxDatabasePath, withHomeDatabase } = await import('../engine/engine');
    // VS Code ships ripgrep under its app root; rg on PATH otherwise. Without one, search and listing ignore .gitignore.
    const ripgrepPath = findRipgrep({ appRoot: vscode.env.appRoot });
    // One database for every window and the CLI ($VOX_HOME, else ~/.vox); the one older Vox kept in globalStorage moves in once.
    const { value: engine, moves } = withHomeDatabase({ dbPath: voxDatabasePath(), legacyFiles: [path.join(storage, 'vox.db')] }, (dbPath) =>
      createEngine(
        {
          dbPath, workspaceRoot: fs.realpathSync(root), demoModelPath: this.demoModelFile(), providers: [vscodeLmFactory],
          ...(ripgrepPath ? { ripgrepPath } : {}),
        },
        this,
      ),
    );
    for (const m of moves) {
      if (m.outcome === 'keptBoth' || m.outcome === 'inUse' || m.outcome === 'failed') this.notify({ level: 'warning', source: 'store', message: m.message });
      else this.log.info(`Database: ${m.message}`);
    }
    this.log.info(
      `Engine started in ${Date.now() - t0} ms (database ${voxDatabasePath()}, shared with the vox CLI; workspace ${root}, ` +
        `ripgrep ${ripgrepPath ?? 'not found: search and listing do not apply .gitignore'})`,
    );
    this.log.info(`SQLite driver: ${engine.sqlite.reason}`);
    this.engine = engine;
    this.started.fire();
    return engine;
  }

  async hasSecret(provider: SecretProvider): Promise<boolean> {
    return !!(await this.ctx.secrets.get(SECRET_KEYS[provider]));
  }

  /** Stores (or, with undefined, deletes) a key; the next prompt that needs it reads it. */
  async setSecret(provider: SecretProvider, value: string | undefined): Promise<void> {
    if (value) await this.ctx.secrets.store(SECRET_KEYS[provider], value);
    else await this.ctx.secrets.delete(SECRET_KEYS[provider]);
    this.changed.fire();
  }

  dispose(): void {
    this.shared?.close();
    void this.engine?.dispose();
    this.engine = undefined;
    this.changed.dispose();
    this.started.dispose();
    this.externalChange.dispose();
  }
}
