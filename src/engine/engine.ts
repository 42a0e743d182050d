/**
 * The composition root. `createEngine(config, host)` builds the core services — store (with the
 * modules' schemas), streams, providers, tools, approvals, permissions, plans, rules, the hook
 * bus — installs the capability modules of ./modules.ts on them in dependency order (their
 * stages, tools, services and command handlers), then the agent runner, the run registry,
 * checkpoints, the queue and variants; `dispose()` takes everything down in reverse. The VS Code
 * extension and the CLI both build one; clients then `connect` (a protocol session with a grant)
 * and never touch a service directly.
 */
import { ApprovalGate, ApprovalPolicy } from './approvals/approval';
import { AgentRunner } from './agent/runner';
import { HookBus } from './agent/hooks';
import { registerBuiltinTools } from './tools/builtins';
import { ToolRegistry } from './tools/registry';
import { ProviderRegistry, type ProviderFactory } from './providers/registry';
import { registerBuiltinProviders } from './providers/builtins';
import { VoxStore } from './store/store';
import { canonicalWorkspace } from './store/workspace-reads';
import { driverChoice } from './store/driver';
import { TurnStreamRegistry } from './stream/turn-stream-registry';
import { CheckpointService } from './checkpoints/service';
import { installCheckpointHooks } from './checkpoints/hooks';
import { installRepetitionGuard } from './guards/install';
import { ReviewService } from './review/service';
import { RunRegistry } from './runs/registry';
import { ThreadRunQueue, type DrainPolicy } from './runs/queue';
import { RateLimitWaits, systemClock, type EngineClock } from './runs/rate-limit';
import { BackgroundWork } from './runs/background';
import { startChildTurn } from './runs/start-turn';
import { CommandOutputHub } from './terminal/hub';
import { VariantPool } from './variants/pool';
import { migrateVoxExclude } from './worktrees/worktrees';
import { ContextService } from './context/service';
import { memoryMemento, type Host } from './host';
import { SECRET_ENV_NAMES, SECRET_ENV_PREFIXES, redact, rememberSecret } from './platform/secrets';
import { startRedactionPass } from './store/redaction-pass';
import { PermissionService } from './permissions/service';
import { PlanService } from './plans/service';
import { parseSampling } from './branches/sampling';
import { RulesService } from './rules/service';
import { MODULES, STORE_SCHEMAS } from './modules';
import { handlerTable, installOrder, ModuleError, type EngineModule, type ModuleContext } from './module';
import { COMMANDS, type CommandSpec } from '../protocol/commands/index';
import { McpManager } from './mcp/manager';
import type { McpOAuthFactory } from './mcp/oauth-seam';
import { createMcpOAuthProvider } from './mcp/oauth/provider';
import type { McpBackoff, McpTimeouts } from './mcp/connection';

/** The host's methods bound to it, so a wrapper may replace one of them. */
function bindHost(h: Host): Host {
  return {
    model: () => h.model(), setModel: (r) => h.setModel(r), modelChoices: () => h.modelChoices(), approvalSettings: () => h.approvalSettings(),
    providerSettings: () => h.providerSettings(), permissionSettings: () => h.permissionSettings?.(), samplingSettings: () => h.samplingSettings?.(),
    ...(h.setPermissionMode ? { setPermissionMode: (m: 'ask' | 'autoEdits' | 'fullAuto', t: 'workspace' | 'user') => h.setPermissionMode!(m, t) } : {}),
    secret: (n) => h.secret(n), notify: (n) => h.notify(n),
    ...(h.setProviderSecret ? { setProviderSecret: (n: Parameters<Host['secret']>[0], v: string | undefined) => h.setProviderSecret!(n, v) } : {}),
    ...(h.setCompatEndpoints ? { setCompatEndpoints: (l: unknown[]) => h.setCompatEndpoints!(l) } : {}),
    onExternalChange: (l) => h.onExternalChange(l), onSettingsChange: (l) => h.onSettingsChange(l),
    ...(h.mentionSources ? { mentionSources: h.mentionSources } : {}),
    ...(h.rulesSettings ? { rulesSettings: () => h.rulesSettings!() } : {}),
    ...(h.setUserRules ? { setUserRules: (r: unknown[]) => h.setUserRules!(r) } : {}),
    ...(h.secretStore ? { secretStore: h.secretStore } : {}),
    ...(h.mcpSettings ? { mcpSettings: () => h.mcpSettings!() } : {}),
    ...(h.setMcpSettings ? { setMcpSettings: (p: Parameters<NonNullable<Host['setMcpSettings']>>[0]) => h.setMcpSettings!(p) } : {}),
    memento: h.memento ?? memoryMemento(),
    ...(h.openExternal ? { openExternal: (url: string) => h.openExternal!(url) } : {}),
  };
}
import type { EngineServices } from './services';
import { ClientSession } from './session/client-session';
import type { Grant } from '../protocol/commands/grants';
import type { EngineUpdate } from '../protocol/updates';

/** Where the hosts find ripgrep for `EngineConfig.ripgrepPath` (VS Code's bundled one from its app root; rg on PATH). */
export { findRipgrep } from './tools/ripgrep';
export { voxHome, voxDatabasePath, VOX_HOME_ENV } from './platform/vox-home';
export { withHomeDatabase, type DatabaseMove } from './store/home-database';

export interface EngineConfig {
  dbPath: string;
  /** Canonical workspace root: where tools act and checkpoints are taken. */
  workspaceRoot: string;
  /** The generated demo model (`local:demo`). */
  demoModelPath: string;
  /** CPU threads for in-process llama.cpp (default 1). */
  localThreads?: number;
  /** Checkpoints before file-changing tools and at turn end (default on). Manual captures work either way. */
  autoCheckpoints?: boolean;
  /** Providers the host adds (VS Code: `vscode-lm`); registered before the built-ins. */
  providers?: ProviderFactory[];
  systemPrompt?: string;
  /** Open the database read-only (it cannot be written): reading commands work, writing ones fail with `store/readOnly`. */
  readOnly?: boolean;
  /** A ripgrep binary for the search and listing tools (VS Code's bundled one; rg on PATH for the CLI). */
  ripgrepPath?: string;
  /**
   * Which queued prompts this engine starts when their thread frees up (runs/queue.ts): `all`
   * (VS Code: its own, and those whose process is gone) or `own` (the CLI: only what it queued).
   */
  queuePolicy?: DrainPolicy;
  /** The clock rate-limit waits run on (tests inject a manual one). */
  clock?: EngineClock;
  /** Jitter source of rate-limit backoff (tests fix it). */
  random?: () => number;
  /** MCP client timeouts and restart backoff (tests shorten them; defaults in mcp/connection.ts). */
  mcp?: { timeouts?: Partial<McpTimeouts>; backoff?: Partial<McpBackoff>; env?: Readonly<Record<string, string | undefined>> };
  /** OAuth sign-in of HTTP MCP servers; default mcp/oauth/provider.ts (tests may pass their own). */
  mcpOAuth?: McpOAuthFactory;
}

export class Engine {
  /** Run ids found interrupted (owner process gone) when the engine opened the store. */
  readonly recovered: string[];
  readonly workspaceRoot: string;
  /** The SQLite driver the store runs on, and why (for the host's log). */
  readonly sqlite: { name: string; reason: string };
  private readonly sessions = new Set<ClientSession>();
  private disposing: Promise<void> | null = null;

  constructor(
    private readonly services: EngineServices,
    /** Teardown steps in install order; run in reverse. */
    private readonly teardown: Array<{ name: string; dispose: () => void | Promise<void> }>,
    recovered: string[],
  ) {
    this.recovered = recovered;
    this.workspaceRoot = services.workspaceRoot;
    this.sqlite = driverChoice() ?? { name: services.store.db.driver, reason: services.store.db.driver };
  }

  /** A protocol session for one client, holding `grant`. Updates go to `sink`. */
  connect(sink: (u: EngineUpdate) => void, grant: Grant): ClientSession {
    const session = new ClientSession(this.services, sink, grant, () => this.sessions.delete(session));
    this.sessions.add(session);
    return session;
  }

  /** Closes every session, then disposes the modules in reverse order (waits for running turns to end). */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      for (const s of [...this.sessions]) s.dispose();
      for (const step of [...this.teardown].reverse()) {
        try {
          await step.dispose();
        } catch (e) {
          this.services.host.notify({ level: 'error', source: 'engine', message: `shutting down ${step.name} failed: ${(e as Error).message}` });
        }
      }
    })();
    return this.disposing;
  }
}

export function createEngine(config: EngineConfig, host: Host): Engine {
  return assembleEngine(config, host).engine;
}

/**
 * `createEngine`, also returning the services it wired. For tests of the wiring itself (a capability
 * observed inside the agent loop); clients never get the services.
 */
export function assembleEngine(config: EngineConfig, givenHost: Host, extraModules: readonly EngineModule[] = []): { engine: Engine; services: EngineServices } {
  // Keys in this process's environment (the CLI's) and every key the host hands out are redacted
  // wherever text is stored or shown, and kept out of child processes (platform/secrets.ts).
  for (const name of SECRET_ENV_NAMES) rememberSecret(process.env[name]);
  for (const [k, v] of Object.entries(process.env)) if (SECRET_ENV_PREFIXES.some((p) => k.startsWith(p))) rememberSecret(v);
  const host: Host = { ...bindHost(givenHost), notify: (n) => givenHost.notify({ ...n, message: redact(n.message) }) };
  const teardown: Array<{ name: string; dispose: () => void | Promise<void> }> = [];
  const install = (name: string, dispose: () => void | Promise<void>) => teardown.push({ name, dispose });

  const modules = [...MODULES, ...extraModules];
  const store = VoxStore.open(config.dbPath, { ...(config.readOnly ? { readonly: true } : {}), workspace: canonicalWorkspace(config.workspaceRoot), schema: [...STORE_SCHEMAS, ...extraModules.flatMap((m) => (m.schema ? [m.schema] : []))] });
  install('store', () => store.close());
  const recovered = config.readOnly ? [] : store.recoverInterrupted();
  if (recovered.length > 0) host.notify({ level: 'warning', source: 'runs', message: `Marked ${recovered.length} run(s) interrupted by an earlier shutdown; their text was kept.` });

  const streams = new TurnStreamRegistry({
    persist: (c) => store.persistChunk(c),
    loadAfter: (turnId, afterSeq) => store.chunksAfter(turnId, afterSeq),
  });

  const providers = new ProviderRegistry({
    secret: async (n) => {
      const value = await host.secret(n);
      rememberSecret(value);
      return value;
    },
    settings: () => host.providerSettings(),
  });
  for (const f of config.providers ?? []) providers.register(f);
  registerBuiltinProviders(providers, { demoModelPath: config.demoModelPath, ...(config.localThreads ? { localThreads: config.localThreads } : {}) });
  install('providers', () => providers.dispose());

  const tools = new ToolRegistry();
  registerBuiltinTools(tools);
  // MCP servers (mcp/): started on first need (a prompt, a list); their tools join `tools` while connected.
  const mcp = new McpManager({
    workspaceRoot: config.workspaceRoot, host, tools, ...(config.mcp?.timeouts ? { timeouts: config.mcp.timeouts } : {}),
    ...(config.mcp?.backoff ? { backoff: config.mcp.backoff } : {}), ...(config.mcp?.env ? { env: config.mcp.env } : {}), oauth: config.mcpOAuth ?? createMcpOAuthProvider,
  });
  install('mcp servers', () => mcp.dispose());

  const gate = new ApprovalGate();
  install('approvals', () => gate.cancelAll());
  const policy = () => {
    try {
      return ApprovalPolicy.fromSettings(host.approvalSettings());
    } catch (e) {
      host.notify({ level: 'error', source: 'approvals', message: `${(e as Error).message} Using the defaults (read: auto, write: ask, execute: ask).` });
      return new ApprovalPolicy();
    }
  };

  // Permission modes and rules (settings and .vox/permissions.json), Plan / Act and plans.
  const permissions = new PermissionService({ workspaceRoot: config.workspaceRoot, host, store, policy });
  install('permissions', () => permissions.dispose());
  const plans = new PlanService(store);
  // Rules and the system prompt's $variables (SPEC 6.1, 6.2): the runner and the context meter share its system prompt.
  const rules = new RulesService({ workspaceRoot: config.workspaceRoot, host, plans, systemPrompt: config.systemPrompt });
  install('rules', () => rules.dispose());

  const hooks = new HookBus((e, hook, stage) => host.notify({ level: 'error', source: 'hooks', message: `${hook} (${stage}) failed: ${(e as Error).message ?? String(e)}` }));
  // A turn's calls are decided by the permissions it started with (./permissions/turn-snapshot.ts).
  install('permission snapshots', permissions.installTurnHooks(hooks));
  const terminals = new CommandOutputHub();
  // The capability modules: their stages on the bus, their tools, their services and handlers (./modules.ts).
  let installed: ReturnType<typeof installModules>;
  try {
    installed = installModules(modules, { host, store, tools, hooks, workspaceRoot: config.workspaceRoot, services: { providers, streams, plans, rules, permissions, mcp } }, install);
  } catch (e) {
    // A module list that does not fit (a missing dependency, a command without a handler): what was built so far is taken down.
    for (const step of [...teardown].reverse()) {
      void Promise.resolve().then(step.dispose).catch((err: unknown) => host.notify({ level: 'error', source: 'engine', message: `shutting down ${step.name} failed: ${(err as Error).message}` }));
    }
    throw e;
  }
  const runner = new AgentRunner({
    store, streams, tools, policy, gate, terminals,
    permissions: (threadId, call) => permissions.decide(threadId, call),
    ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}),
    toolEnv: config.ripgrepPath ? { ripgrepPath: config.ripgrepPath } : {},
  });
  const waits = new RateLimitWaits({ store, clock: config.clock ?? systemClock });
  // Subagents are runs of the registry in child threads; the registry gives each run its background work.
  let runsRef: RunRegistry | null = null;
  const background = new BackgroundWork({
    store,
    startChild: async (req) => {
      if (!runsRef) throw new Error('the run registry is not ready');
      // The same turn start as every other (runs/start-turn.ts): a child thread under its parent, in its parent's limits.
      const h = await startChildTurn({
        store, runs: runsRef, resolveModel: (ref) => providers.resolve(ref), defaultModel: () => host.model(),
        limitsOf: (parentThreadId, parentRunId) => permissions.childLimits(parentThreadId, parentRunId),
      }, req);
      return { ...h, peek: () => streams.accumulated(h.runId)?.text ?? '' };
    },
  });
  // The default sampling settings of runs (posture, SPEC 6.3), read per run; a bad setting is reported and the providers' defaults used.
  const sampling = () => {
    try {
      return parseSampling(host.samplingSettings?.());
    } catch (e) {
      host.notify({ level: 'error', source: 'runs', message: `${(e as Error).message} Using the providers' defaults.` });
      return {};
    }
  };
  const runs = new RunRegistry({
    store, streams, runner, hooks, waits, background, sampling, workspaceRoot: config.workspaceRoot, ...(config.random ? { random: config.random } : {}),
  });
  runsRef = runs;
  if (!config.readOnly) background.recoverInterrupted();
  // Text written before the current secret rule set is redacted in the background (./store/redaction-pass.ts).
  if (!config.readOnly) {
    install('redaction pass', startRedactionPass(store.db, store.schema.redactable, {
      onDone: (changed) => { if (changed > 0) host.notify({ level: 'info', source: 'engine', message: `Redacted ${changed} stored values that held credentials (written before the current secret rules).` }); },
      onError: (e) => host.notify({ level: 'error', source: 'engine', message: `Redacting stored credentials stopped: ${(e as Error).message ?? String(e)} (it goes on at the next start).` }),
    }));
  }

  const checkpoints = new CheckpointService(store, config.workspaceRoot);
  const stopNotices = checkpoints.onNotice((n) => host.notify({ ...n, source: 'checkpoints' }));
  const stopExternal = host.onExternalChange(() => checkpoints.noteExternalChange());
  // A restore a killed process (VS Code, a `vox` command) left half-done is finished now, and said so.
  void checkpoints.finishInterrupted();
  // The repetition guard on every run's stream (SPEC 3.1, ./guards/): a looping model is stopped.
  install('repetition guard', installRepetitionGuard(hooks));
  const uninstallHooks = config.autoCheckpoints === false ? () => undefined : installCheckpointHooks(hooks, checkpoints, gate);
  install('checkpoints', async () => {
    uninstallHooks();
    stopExternal();
    // After the background work: what it finishes (an interrupted restore) is still said.
    await checkpoints.settle();
    stopNotices();
  });
  // Torn down before checkpoints: a run stopped at shutdown still gets its turn-end checkpoint.
  install('runs', () => runs.dispose());
  install('background work', () => background.dispose());

  const queue = new ThreadRunQueue({
    store, runs, policy: config.queuePolicy ?? 'all',
    resolveModel: (ref) => providers.resolve(ref),
    defaultModel: () => host.model(),
    rulesFor: (threadId) => rules.storedPreparer(threadId),
    onError: (e, threadId) => host.notify({ level: 'error', source: 'runs', message: `A queued prompt in thread ${threadId} could not start: ${(e as Error).message ?? String(e)}` }),
  });
  install('queue', () => queue.dispose());
  if (!config.readOnly) queue.drainAll();
  // Runs that waited for a rate limit when their process went away go on here — in VS Code (which
  // drains everything); a CLI engine takes one over only when asked (`vox runs resume`).
  if (!config.readOnly && (config.queuePolicy ?? 'all') === 'all') {
    void runs.resumeOrphans((ref) => providers.resolve(ref)).catch((e: unknown) =>
      host.notify({ level: 'error', source: 'runs', message: `A run waiting for a rate limit could not be resumed: ${(e as Error).message ?? String(e)}` }));
  }

  const variants = new VariantPool({ store, runs, resolveModel: (ref) => providers.resolve(ref) });
  // The earlier Vox hid all of `.vox/` from git; only `.vox/worktrees/` stays excluded (worktrees/exclude.ts).
  if (!config.readOnly) {
    void migrateVoxExclude(config.workspaceRoot).catch((e: unknown) =>
      host.notify({ level: 'warning', source: 'worktrees', message: `Vox could not update .git/info/exclude: ${(e as Error).message}` }));
  }
  install('variants', () => variants.cancelAll());

  const review = new ReviewService({ store, checkpoints });
  const context = new ContextService({ workspaceRoot: config.workspaceRoot, ripgrepPath: config.ripgrepPath, store, providers, tools, host, systemPrompt: config.systemPrompt, plans, systemPromptFor: (threadId) => rules.systemPrompt(threadId), manualRules: () => rules.manualRules(),
    rulesFor: async (draft, paths, threadId) => rules.prepare(draft, paths, threadId, paths),
    // @-mentions of MCP resources: the popup starts the servers if nothing did yet (their resources show once connected).
    mcp: { resources: () => (void mcp.ensureStarted(), mcp.resources()), read: (server, uri) => mcp.readResource(server, uri) },
  });

  const services: EngineServices = {
    workspaceRoot: config.workspaceRoot, host, store, streams, providers, tools, hooks, gate, policy, runs, queue, waits, checkpoints, variants, review, context, permissions, plans, rules, mcp,
    modules: installed.services, handlers: installed.handlers, commands: installed.commands,
  };
  return { engine: new Engine(services, teardown, recovered), services };
}

/**
 * Installs `modules` in dependency order on the core's services: each one's tools join the
 * registry, its `install` runs (stages, services), and its handlers join the command table,
 * which must then hold exactly one handler for every command of the protocol.
 */
export function installModules(
  modules: readonly EngineModule[], ctx: Omit<ModuleContext, 'onDispose' | 'services'> & { services: Record<string, unknown> },
  onDispose: (name: string, dispose: () => void | Promise<void>) => void,
): { services: Record<string, unknown>; handlers: EngineServices['handlers']; commands: EngineServices['commands'] } {
  const services: Record<string, unknown> = { ...ctx.services };
  const ordered = installOrder(modules);
  for (const m of ordered) {
    for (const tool of m.tools ?? []) ctx.tools.register(tool);
    const provided = m.install?.({ ...ctx, services, onDispose: (name, d) => onDispose(`${m.name}: ${name}`, d) });
    if (provided) Object.assign(services, provided);
  }
  const table = handlerTable(ordered);
  const commands = new Map<string, CommandSpec>(Object.entries(COMMANDS) as [string, CommandSpec][]);
  for (const m of ordered) {
    for (const [type, spec] of Object.entries(m.commands ?? {})) {
      if (commands.has(type)) throw new ModuleError(`module ${m.name} declares ${type}, which is declared already`);
      commands.set(type, spec);
    }
  }
  const missing = [...commands.keys()].filter((type) => !table.has(type));
  const unknown = [...table.keys()].filter((type) => !commands.has(type));
  if (missing.length > 0 || unknown.length > 0) {
    throw new ModuleError(`the modules' handlers do not match the protocol: ${missing.length > 0 ? `no handler for ${missing.join(', ')}` : ''}${missing.length > 0 && unknown.length > 0 ? '; ' : ''}${unknown.length > 0 ? `handlers of no command: ${unknown.join(', ')}` : ''}`);
  }
  return { services, commands, handlers: new Map([...table].map(([type, e]) => [type, e.handler])) as EngineServices['handlers'] };
}
