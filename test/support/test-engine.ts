/**
 * A real engine for tests: `createEngine` on a real SQLite file with a Host whose settings,
 * secrets and notices live in memory, and protocol clients of it (in process, like the VS Code
 * views and the CLI). Use `session(out)` to drive raw messages and see every update.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineClient, inProcessTransport } from '../../src/client/engine-client';
import { assembleEngine, type Engine, type EngineConfig } from '../../src/engine/engine';
import type { EngineModule } from '../../src/engine/module';
import { memorySecretStore, type Host, type HostNotice, type McpSettings, type MentionSources, type RulesSettings } from '../../src/engine/host';
import type { ProviderSecret, ProviderSettings } from '../../src/engine/providers/registry';
import { ownerGrant, type Grant } from '../../src/protocol/commands/grants';
import type { ModelChoice } from '../../src/protocol/commands/settings';
import type { EngineUpdate } from '../../src/protocol/updates';

export class TestHost implements Host {
  readonly notices: HostNotice[] = [];
  modelRef: string;
  secrets: Partial<Record<ProviderSecret, string>>;
  endpoints: ProviderSettings;
  approval: unknown;
  choices: ModelChoice[] | undefined;
  /** The permission settings `{mode?, rules?, protectedPaths?}` (VS Code: vox.permissionMode / vox.permissionRules / vox.protectedPaths). */
  permissions: { mode?: string; rules?: unknown; protectedPaths?: unknown } | undefined;
  /** Editor facts for @-mentions (@problems, @terminal, @selection); tests set what they need. */
  mentionSources?: MentionSources;
  /** The sampling settings `{temperature?, topP?, reasoningEffort?}` (VS Code: vox.sampling.*). */
  sampling: unknown;
  /** Rule settings (VS Code: vox.rules, vox.readPeerRuleFiles, vox.systemPrompt.append). */
  rules: RulesSettings | undefined;
  /** MCP client settings (VS Code: vox.mcp.*); `setMcpSettings` writes here. */
  mcp: McpSettings | undefined;
  readonly secretStore = memorySecretStore();
  private readonly external = new Set<() => void>();
  private readonly settingsListeners = new Set<() => void>();

  constructor(opts: { model?: string; secrets?: Partial<Record<ProviderSecret, string>>; providerSettings?: ProviderSettings; approval?: unknown; modelChoices?: ModelChoice[] } = {}) {
    this.modelRef = opts.model ?? 'local:demo';
    this.secrets = opts.secrets ?? {};
    this.endpoints = opts.providerSettings ?? {};
    this.approval = opts.approval;
    this.choices = opts.modelChoices;
  }

  model(): string {
    return this.modelRef;
  }
  async setModel(ref: string): Promise<void> {
    this.modelRef = ref;
    for (const l of [...this.settingsListeners]) l();
  }
  modelChoices(): ModelChoice[] {
    return this.choices ?? [{ ref: this.modelRef, label: this.modelRef, isDemo: this.modelRef === 'local:demo' }];
  }
  approvalSettings(): unknown {
    return this.approval;
  }
  permissionSettings(): unknown {
    return this.permissions;
  }
  samplingSettings(): unknown {
    return this.sampling;
  }
  async setPermissionMode(mode: 'ask' | 'autoEdits' | 'fullAuto'): Promise<void> {
    this.permissions = { ...this.permissions, mode };
  }
  providerSettings(): ProviderSettings {
    return this.endpoints;
  }
  async secret(name: ProviderSecret): Promise<string | undefined> {
    return this.secrets[name];
  }
  async setProviderSecret(name: ProviderSecret, value: string | undefined): Promise<void> {
    if (value) this.secrets[name] = value;
    else delete this.secrets[name];
  }
  /** Writes `compatEndpoints` (VS Code: the global vox.compatEndpoints). */
  async setCompatEndpoints(list: unknown[]): Promise<void> {
    this.endpoints = { ...this.endpoints, compatEndpoints: list };
    for (const l of [...this.settingsListeners]) l();
  }
  notify(n: HostNotice): void {
    this.notices.push(n);
  }
  onExternalChange(l: () => void): () => void {
    this.external.add(l);
    return () => void this.external.delete(l);
  }
  onSettingsChange(l: () => void): () => void {
    this.settingsListeners.add(l);
    return () => void this.settingsListeners.delete(l);
  }
  rulesSettings(): RulesSettings | undefined {
    return this.rules;
  }
  async setUserRules(rules: unknown[]): Promise<void> {
    this.rules = { ...this.rules, rules };
    for (const l of [...this.settingsListeners]) l();
  }
  mcpSettings(): McpSettings | undefined {
    return this.mcp;
  }
  async setMcpSettings(patch: Partial<McpSettings>): Promise<void> {
    this.mcp = { ...this.mcp, ...patch };
    for (const l of [...this.settingsListeners]) l();
  }
  /** As if the user saved a file in the editor. */
  fireExternalChange(): void {
    for (const l of [...this.external]) l();
  }
}

export interface TestEngine {
  engine: Engine;
  host: TestHost;
  dbPath: string;
  /** A typed protocol client (owner grant unless given). */
  client(grant?: Grant): EngineClient;
  /** A raw protocol session whose updates are pushed into `out`. */
  session(out: EngineUpdate[], grant?: Grant): ReturnType<Engine['connect']>;
  dispose(): Promise<void>;
}

/** An engine on `<dir>/vox.db` acting in `workspaceRoot` (default `dir`). */
/** `modules`: capability modules a test adds beside the engine's own (src/engine/modules.ts). */
export function startTestEngine(opts: { dir: string; workspaceRoot?: string; host?: TestHost; config?: Partial<EngineConfig>; modules?: EngineModule[] }): TestEngine {
  const host = opts.host ?? new TestHost();
  const dbPath = opts.config?.dbPath ?? path.join(opts.dir, 'vox.db');
  const { engine } = assembleEngine(
    { dbPath, workspaceRoot: fs.realpathSync(opts.workspaceRoot ?? opts.dir), demoModelPath: path.resolve(__dirname, '../../models/vox-demo.gguf'), ...opts.config },
    host,
    opts.modules ?? [],
  );
  const clients: EngineClient[] = [];
  return {
    engine,
    host,
    dbPath,
    client(grant = ownerGrant('test')) {
      const c = new EngineClient(inProcessTransport((sink) => engine.connect(sink, grant)), `t${clients.length}-`);
      clients.push(c);
      return c;
    },
    session(out, grant = ownerGrant('test')) {
      return engine.connect((u) => out.push(u), grant);
    },
    async dispose() {
      for (const c of clients) c.close();
      await engine.dispose();
    },
  };
}
