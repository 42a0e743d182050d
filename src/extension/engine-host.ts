/**
 * EngineHost: owns the one Engine of this VS Code window. It is created lazily on first use (so
 * activation stays fast), reads models from the `vox.*` settings and API keys from
 * SecretStorage, and is rebuilt when keys or provider settings change. Also hands out the model
 * choices shown in the picker.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Engine } from '../engine/engine';
import { ApprovalPolicy } from '../engine/approvals/approval';
import { DEFAULT_MODEL_REF } from '../engine/providers/resolve';
import { demoModelPath, isDemoModel } from '../engine/model/demo-model';
import type { ModelChoice } from '../engine/session/client-session';
import { VsCodeLmProvider } from './vscode-lm-provider';

export const SECRET_KEYS = { openai: 'vox.openaiApiKey', anthropic: 'vox.anthropicApiKey' } as const;
export type SecretProvider = keyof typeof SECRET_KEYS;

export class EngineHost implements vscode.Disposable {
  private engine: Engine | undefined;
  private starting: Promise<Engine> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the engine was rebuilt or the model changed (views refresh their settings). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly ctx: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    ctx.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('vox.approval') || e.affectsConfiguration('vox.openaiBaseUrl') || e.affectsConfiguration('vox.ollamaBaseUrl') || e.affectsConfiguration('vox.anthropicBaseUrl')) void this.restart();
        else if (e.affectsConfiguration('vox.model')) this.changed.fire();
      }),
      // Files changed by the user (saved, or created/deleted/renamed in the explorer): the next
      // checkpoint must look at the whole tree, not only at the paths the agent reported.
      vscode.workspace.onDidSaveTextDocument(() => this.engine?.checkpoints.noteExternalChange()),
      vscode.workspace.onDidCreateFiles(() => this.engine?.checkpoints.noteExternalChange()),
      vscode.workspace.onDidDeleteFiles(() => this.engine?.checkpoints.noteExternalChange()),
      vscode.workspace.onDidRenameFiles(() => this.engine?.checkpoints.noteExternalChange()),
    );
  }

  get current(): Engine | undefined {
    return this.engine;
  }

  model(): string {
    return vscode.workspace.getConfiguration('vox').get<string>('model') || DEFAULT_MODEL_REF;
  }

  async setModel(ref: string): Promise<void> {
    await vscode.workspace.getConfiguration('vox').update('model', ref, vscode.ConfigurationTarget.Global);
    this.changed.fire();
  }

  modelChoices(): ModelChoice[] {
    const cfg = vscode.workspace.getConfiguration('vox');
    const extra = cfg.get<string[]>('models') ?? [];
    const refs = [DEFAULT_MODEL_REF, ...extra, this.model()];
    const seen = new Set<string>();
    return refs
      .filter((r) => !seen.has(r) && seen.add(r))
      .map((ref) => ({ ref, label: isDemoModel(ref) ? 'Demo model (offline, writes nonsense)' : ref, isDemo: isDemoModel(ref) }));
  }

  demoModelFile(): string {
    return demoModelPath(this.ctx.extensionPath);
  }

  async get(): Promise<Engine> {
    if (this.engine) return this.engine;
    this.starting ??= this.start();
    try {
      return await this.starting;
    } finally {
      this.starting = undefined;
    }
  }

  private async start(): Promise<Engine> {
    const t0 = Date.now();
    const cfg = vscode.workspace.getConfiguration('vox');
    const storage = this.ctx.globalStorageUri.fsPath;
    fs.mkdirSync(storage, { recursive: true });
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? storage;
    let policy: ApprovalPolicy;
    try {
      policy = ApprovalPolicy.fromSettings(cfg.get('approval'));
    } catch (e) {
      this.log.error(`${(e as Error).message} Using the defaults (read: auto, write: ask, execute: ask).`);
      policy = new ApprovalPolicy();
    }
    const engine = new Engine({
      policy,
      dbPath: path.join(storage, 'vox.db'),
      workspaceRoot: fs.realpathSync(root),
      providers: {
        demoModelPath: this.demoModelFile(),
        openaiApiKey: await this.ctx.secrets.get(SECRET_KEYS.openai),
        openaiBaseUrl: cfg.get<string>('openaiBaseUrl') || undefined,
        anthropicApiKey: await this.ctx.secrets.get(SECRET_KEYS.anthropic),
        anthropicBaseUrl: cfg.get<string>('anthropicBaseUrl') || undefined,
        ollamaBaseUrl: cfg.get<string>('ollamaBaseUrl') || undefined,
        extraProviders: { 'vscode-lm': new VsCodeLmProvider() },
      },
    });
    if (engine.recovered.length > 0) this.log.warn(`Marked ${engine.recovered.length} run(s) interrupted by an earlier shutdown; their text was kept.`);
    this.log.info(`Engine started in ${Date.now() - t0} ms (store ${path.join(storage, 'vox.db')}, workspace ${root})`);
    this.engine = engine;
    return engine;
  }

  async hasSecret(provider: SecretProvider): Promise<boolean> {
    return !!(await this.ctx.secrets.get(SECRET_KEYS[provider]));
  }

  async setSecret(provider: SecretProvider, value: string | undefined): Promise<void> {
    if (value) await this.ctx.secrets.store(SECRET_KEYS[provider], value);
    else await this.ctx.secrets.delete(SECRET_KEYS[provider]);
    await this.restart();
  }

  async restart(): Promise<void> {
    const old = this.engine;
    if (old && old.runner.activeCount() > 0) {
      this.log.info(`Settings changed: stopping ${old.runner.activeCount()} running turn(s); their text is kept.`);
    }
    this.engine = undefined;
    await old?.dispose();
    this.changed.fire();
  }

  dispose(): void {
    void this.engine?.dispose();
    this.engine = undefined;
    this.changed.dispose();
  }
}
