/**
 * McpManager: Vox's MCP servers as a whole. It loads the config (./config.ts) when first asked
 * (a prompt, a list, a watch), keeps one McpServerConnection per enabled server, registers each
 * connected server's enabled tools in the engine's ToolRegistry (./tools.ts) and removes them
 * when the server stops, fails or is disabled, and answers the protocol's MCP commands: the list
 * view, restart, enable/disable of servers and tools (kept through host.setMcpSettings, or in
 * memory on a host without it), re-reading the config files whenever they change on disk (an
 * engine-owned watch, ../platform/file-watch.ts, so a terminal's write counts as an editor's save)
 * or when asked (reloadConfig), OAuth sign-in through the injected seam, resources (@-mentions)
 * and prompts (slash commands). Listeners hear every change (the `mcpServers` update).
 */
import { QUOTED_ERROR_CHARS, QUOTED_NAME_CHARS, quote } from '../../protocol/wire/quote';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { McpServerListView, McpServerView } from '../../protocol/commands/mcp';
import type { Host, McpSettings } from '../host';
import { watchWorkspaceFiles, type FileWatch } from '../platform/file-watch';
import { redact, rememberSecret } from '../platform/secrets';
import type { ToolRegistry } from '../tools/registry';
import { MCP_CONFIG_FILES, describeTarget, loadMcpConfig, sameSpec, specSecrets, type McpConfig, type McpServerSpec } from './config';
import { DEFAULT_BACKOFF, DEFAULT_TIMEOUTS, McpServerConnection, mapCallError, type McpBackoff, type McpTimeouts } from './connection';
import { McpError } from './errors';
import type { McpOAuthFactory, McpOAuthSession } from './oauth-seam';
import { boundResult, isReadOnly, mcpAgentTool, qualifiedToolName } from './tools';

/** Above this many active MCP tools the model sees the 3 meta-tools (SPEC 3.3), unless the setting says otherwise. */
export const DEFAULT_TOOL_CATALOG_THRESHOLD = 12;
/** Text of one resource read for an @-mention or a client. */
export const MAX_RESOURCE_TEXT_CHARS = 100_000;
/** Longest wait for a sign-in in the browser. */
export const OAUTH_WAIT_MS = 5 * 60_000;
/** Longest a prompt waits for the MCP servers' first start (a slower one joins later turns). */
export const PROMPT_WAIT_MS = 10_000;
/** Quiet time after a settings change before the config is read again. */
export const RELOAD_DEBOUNCE_MS = 250;

export interface McpManagerDeps {
  workspaceRoot: string;
  host: Host;
  tools: ToolRegistry;
  /** The environment `${VAR}` expands from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  timeouts?: Partial<McpTimeouts>;
  backoff?: Partial<McpBackoff>;
  oauth?: McpOAuthFactory;
  /** Watch the config files on disk (default true). */
  watch?: boolean;
}

export class McpManager {
  private readonly conns = new Map<string, McpServerConnection>();
  /** server → its registered tools' removers. */
  private readonly registered = new Map<string, Array<() => void>>();
  /** server → tool → the name the model sees (kept stable across reconnects). */
  private readonly names = new Map<string, Map<string, string>>();
  private readonly listeners = new Set<() => void>();
  private readonly oauthSessions = new Map<string, McpOAuthSession>();
  private config: McpConfig = { servers: [], shadowed: [], configErrors: [] };
  /** Enable/disable choices on a host that cannot persist them. */
  private overlay: Pick<McpSettings, 'disabledServers' | 'disabledTools'> = {};
  private started: Promise<void> | null = null;
  private disposed = false;
  private reloadTimer: NodeJS.Timeout | null = null;
  private readonly stopSettings: () => void;
  private readonly fileWatch: FileWatch | null;
  private readonly timeouts: McpTimeouts;
  private readonly backoff: McpBackoff;

  constructor(private readonly deps: McpManagerDeps) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...deps.timeouts };
    this.backoff = { ...DEFAULT_BACKOFF, ...deps.backoff };
    this.stopSettings = deps.host.onSettingsChange(() => this.scheduleReload());
    // Any write of a config file, by the editor, a terminal or another process (before the first start: nothing to do, it reads them then).
    this.fileWatch = deps.watch === false ? null : watchWorkspaceFiles(deps.workspaceRoot, MCP_CONFIG_FILES.map((f) => f.path), () => this.scheduleReload());
  }

  /** Loads the config and starts the enabled servers, once; resolves when every start has settled. */
  ensureStarted(): Promise<void> {
    this.started ??= this.reload();
    return this.started;
  }

  /** `ensureStarted`, waiting at most `ms` (a prompt's wait). */
  async readyWithin(ms = PROMPT_WAIT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ensureStarted(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  private scheduleReload(): void {
    if (!this.started || this.disposed) return;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.reload();
    }, RELOAD_DEBOUNCE_MS);
    this.reloadTimer.unref?.();
  }

  private settings(): McpSettings {
    const s = this.deps.host.mcpSettings?.() ?? {};
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    return {
      servers: s.servers,
      disabledServers: this.overlay.disabledServers ?? strings(s.disabledServers),
      disabledTools: this.overlay.disabledTools ?? strings(s.disabledTools),
      toolCatalogThreshold: typeof s.toolCatalogThreshold === 'number' && Number.isInteger(s.toolCatalogThreshold) && s.toolCatalogThreshold >= 0 ? s.toolCatalogThreshold : DEFAULT_TOOL_CATALOG_THRESHOLD,
    };
  }

  private serverEnabled(name: string): boolean {
    return !this.settings().disabledServers!.includes(name);
  }

  private toolEnabled(server: string, tool: string): boolean {
    return !this.settings().disabledTools!.includes(`${server}/${tool}`);
  }

  /** Reads the config again: new servers start, removed or changed ones stop (changed ones restart). */
  async reload(): Promise<void> {
    if (this.disposed) return;
    const next = loadMcpConfig(this.deps.workspaceRoot, this.settings().servers, this.deps.env ?? process.env);
    this.config = next;
    // A server's tokens (env, headers, args) are redacted wherever Vox writes text, and kept out of the agent's shells.
    for (const spec of next.servers) for (const v of specSecrets(spec)) rememberSecret(v);
    const wanted = new Map(next.servers.map((s) => [s.name, s]));
    const stops: Promise<void>[] = [];
    for (const [name, conn] of this.conns) {
      const spec = wanted.get(name);
      if (!spec || !sameSpec(spec, conn.spec)) {
        this.conns.delete(name);
        this.unregister(name);
        stops.push(conn.stop());
      }
    }
    await Promise.all(stops);
    const starts: Promise<void>[] = [];
    for (const spec of next.servers) {
      if (this.conns.has(spec.name)) continue;
      const conn = this.connection(spec);
      this.conns.set(spec.name, conn);
      if (this.serverEnabled(spec.name)) starts.push(conn.start());
    }
    this.changed();
    await Promise.all(starts);
  }

  private connection(spec: McpServerSpec): McpServerConnection {
    const conn: McpServerConnection = new McpServerConnection(spec, {
      workspaceRoot: this.deps.workspaceRoot, timeouts: this.timeouts, backoff: this.backoff,
      onChange: () => {
        if (this.conns.get(spec.name) === conn) this.syncTools(conn);
        this.changed();
      },
      ...(this.deps.oauth && spec.transport !== 'stdio' ? { authProvider: () => this.quietProvider(spec) } : {}),
    });
    return conn;
  }

  /** A provider that uses stored tokens but never opens a browser by itself (only authenticate does). */
  private async quietProvider(spec: McpServerSpec): Promise<McpOAuthSession['provider'] | undefined> {
    const secrets = this.deps.host.secretStore;
    if (!this.deps.oauth || !secrets || spec.transport === 'stdio') return undefined;
    await this.oauthSessions.get(spec.name)?.close().catch(() => undefined);
    const session = await this.deps.oauth({ server: spec.name, serverUrl: spec.url, secrets, openUrl: async () => undefined });
    this.oauthSessions.set(spec.name, session);
    return session.provider;
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private unregister(server: string): void {
    for (const remove of this.registered.get(server) ?? []) remove();
    this.registered.delete(server);
  }

  /** The server's enabled tools in the registry while it is connected (kept while it restarts, so a call gets a clear error). */
  private syncTools(conn: McpServerConnection): void {
    const server = conn.spec.name;
    this.unregister(server);
    const offer = conn.status === 'connected' || (conn.status === 'restarting' && conn.tools.length > 0);
    if (!offer || !this.serverEnabled(server)) return;
    const names = this.names.get(server) ?? new Map<string, string>();
    this.names.set(server, names);
    const taken = new Set(this.deps.tools.list().map((t) => t.spec.name));
    for (const n of names.values()) taken.delete(n);
    const removers: Array<() => void> = [];
    for (const tool of conn.tools) {
      if (!this.toolEnabled(server, tool.name)) continue;
      let q = names.get(tool.name);
      if (!q || taken.has(q)) q = qualifiedToolName(server, tool.name, taken);
      names.set(tool.name, q);
      taken.add(q);
      try {
        removers.push(this.deps.tools.register(mcpAgentTool(conn, tool, q) as never));
      } catch {
        // A name taken meanwhile by another capability: that tool is not offered.
      }
    }
    this.registered.set(server, removers);
  }

  private get(name: string): McpServerConnection {
    const conn = this.conns.get(name);
    if (!conn) throw new McpError('unknownServer', `No MCP server named ${JSON.stringify(quote(name, QUOTED_NAME_CHARS))}. Configured: ${[...this.conns.keys()].join(', ') || '(none)'}.`);
    return conn;
  }

  /** How many MCP tools the model is offered now. */
  activeToolCount(): number {
    let n = 0;
    for (const r of this.registered.values()) n += r.length;
    return n;
  }

  view(name: string): McpServerView {
    const conn = this.get(name);
    const spec = conn.spec;
    const enabled = this.serverEnabled(name);
    const names = this.names.get(name);
    return {
      name, source: spec.source, sourcePath: spec.sourcePath, transport: conn.transport, target: redact(describeTarget(spec)),
      enabled, status: enabled ? conn.status : 'disabled', error: conn.error ? redact(conn.error) : null, restarts: conn.restarts,
      tools: conn.tools.map((t) => ({
        name: t.name, qualifiedName: names?.get(t.name) ?? qualifiedToolName(name, t.name, new Set()),
        description: t.description ?? '', readOnly: isReadOnly(t), enabled: this.toolEnabled(name, t.name),
      })),
      prompts: conn.prompts.map((p) => ({ name: p.name, description: p.description ?? null, arguments: (p.arguments ?? []).map((a) => ({ name: a.name, description: a.description ?? null, required: a.required === true })) })),
      resources: conn.resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description ?? null, mimeType: r.mimeType ?? null })),
    };
  }

  list(): McpServerListView {
    const threshold = this.settings().toolCatalogThreshold!;
    const activeTools = this.activeToolCount();
    return {
      servers: [...this.conns.keys()].map((n) => this.view(n)),
      configErrors: [
        ...this.config.configErrors.map((e) => ({ source: e.source, message: redact(e.message) })),
        ...this.config.shadowed.map((s) => ({ source: s.sourcePath, message: `MCP server "${s.name}" is shadowed by the one in ${s.by} and was not started.` })),
      ],
      catalog: { activeTools, threshold, metaMode: activeTools > threshold },
    };
  }

  /** Reads the config files and settings again now (the palette's Refresh, `vox mcp reload`) and returns the list. */
  async reloadConfig(): Promise<McpServerListView> {
    if (!this.started) await this.ensureStarted();
    else await this.reload();
    return this.list();
  }

  async restart(name: string): Promise<McpServerView> {
    await this.ensureStarted();
    await this.reload();
    const conn = this.get(name);
    if (!this.serverEnabled(name)) throw new McpError('disabled', `MCP server ${name} is disabled; enable it first.`);
    await conn.restart();
    return this.view(name);
  }

  private async persist(patch: Pick<McpSettings, 'disabledServers' | 'disabledTools'>): Promise<void> {
    if (this.deps.host.setMcpSettings) {
      await this.deps.host.setMcpSettings(patch);
      // The host's own reading may lag its write: the choice holds here at once.
    }
    this.overlay = { ...this.overlay, ...patch };
  }

  async setServerEnabled(name: string, enabled: boolean): Promise<McpServerView> {
    await this.ensureStarted();
    const conn = this.get(name);
    const set = new Set(this.settings().disabledServers);
    if (enabled) set.delete(name);
    else set.add(name);
    await this.persist({ disabledServers: [...set] });
    if (enabled) {
      if (conn.status === 'stopped' || conn.status === 'failed') await conn.start();
    } else {
      this.unregister(name);
      await conn.stop();
    }
    this.changed();
    return this.view(name);
  }

  async setToolEnabled(name: string, tool: string, enabled: boolean): Promise<McpServerView> {
    await this.ensureStarted();
    const conn = this.get(name);
    if (!conn.tools.some((t) => t.name === tool)) throw new McpError('unknownTool', `MCP server ${name} has no tool named ${JSON.stringify(quote(tool, QUOTED_NAME_CHARS))}.`);
    const key = `${name}/${tool}`;
    const set = new Set(this.settings().disabledTools);
    if (enabled) set.delete(key);
    else set.add(key);
    await this.persist({ disabledTools: [...set] });
    this.syncTools(conn);
    this.changed();
    return this.view(name);
  }

  /** OAuth sign-in (browser), then a fresh connection that uses the tokens. */
  async authenticate(name: string, signal: AbortSignal = AbortSignal.timeout(OAUTH_WAIT_MS)): Promise<McpServerView> {
    await this.ensureStarted();
    const conn = this.get(name);
    const spec = conn.spec;
    if (spec.transport === 'stdio') throw new McpError('authFailed', `MCP server ${name} runs over stdio; there is nothing to sign in to.`);
    const secrets = this.deps.host.secretStore;
    if (!this.deps.oauth || !secrets) throw new McpError('authFailed', 'Signing in to MCP servers is not available in this build.');
    const openExternal = this.deps.host.openExternal;
    if (!openExternal) throw new McpError('authFailed', 'This host cannot open a browser for the sign-in.');
    const session = await this.deps.oauth({ server: name, serverUrl: spec.url, secrets, openUrl: (url) => openExternal.call(this.deps.host, url) });
    try {
      const transport = conn.httpTransportFor(session.provider);
      const probe = new Client({ name: 'vox', version: '0.1.0' });
      let needCode = false;
      try {
        await probe.connect(transport, { timeout: this.timeouts.connectMs });
      } catch (e) {
        if (!(e instanceof UnauthorizedError)) throw mapCallError(e, name, 'the sign-in', this.timeouts.connectMs);
        needCode = true;
      } finally {
        await probe.close().catch(() => undefined);
      }
      if (needCode) {
        const code = await session.waitForCode(signal);
        await transport.finishAuth(code).catch((e: unknown) => {
          throw new McpError('authFailed', `The sign-in to MCP server ${name} failed: ${quote(redact((e as Error).message ?? String(e)), QUOTED_ERROR_CHARS)}`);
        });
      }
    } finally {
      await session.close().catch(() => undefined);
    }
    await conn.restart();
    return this.view(name);
  }

  async readResource(server: string, uri: string): Promise<{ uri: string; mimeType: string | null; text: string; truncated: boolean }> {
    await this.ensureStarted();
    const r = await this.get(server).readResource(uri);
    const first = r.contents[0];
    if (!first) throw new McpError('unknownResource', `MCP server ${server} returned nothing for ${uri}.`);
    const texts = r.contents.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : `[binary ${c.mimeType ?? 'data'}, ${Math.floor((((c as { blob?: string }).blob?.length ?? 0) * 3) / 4)} bytes]`));
    const text = texts.join('\n');
    const bounded = boundResult(text, MAX_RESOURCE_TEXT_CHARS);
    return { uri: first.uri, mimeType: first.mimeType ?? null, text: bounded, truncated: bounded !== text };
  }

  async getPrompt(server: string, name: string, args: unknown): Promise<{ text: string; description: string | null }> {
    await this.ensureStarted();
    const conn = this.get(server);
    const listed = conn.prompts.find((p) => p.name === name);
    if (!listed) throw new McpError('unknownPrompt', `MCP server ${server} has no prompt named ${JSON.stringify(quote(name, QUOTED_NAME_CHARS))}.`);
    const strArgs: Record<string, string> = {};
    if (args !== undefined && args !== null) {
      if (typeof args !== 'object' || Array.isArray(args)) throw new McpError('invalidArguments', 'Prompt arguments must be an object of strings.');
      for (const [k, v] of Object.entries(args)) {
        if (typeof v !== 'string') throw new McpError('invalidArguments', `Prompt argument ${k} must be a string.`);
        strArgs[k] = v;
      }
    }
    const r = await conn.getPrompt(name, strArgs);
    const parts = r.messages.map((m) => {
      const c = m.content;
      if (c.type === 'text') return c.text;
      if (c.type === 'resource' && 'text' in c.resource && typeof c.resource.text === 'string') return c.resource.text;
      return `[${c.type}]`;
    });
    return { text: boundResult(parts.join('\n\n'), MAX_RESOURCE_TEXT_CHARS), description: r.description ?? listed.description ?? null };
  }

  /** Every listed resource of the connected, enabled servers (@-mention suggestions). */
  resources(): Array<{ server: string; uri: string; name: string; description: string | null }> {
    const out: Array<{ server: string; uri: string; name: string; description: string | null }> = [];
    for (const [server, conn] of this.conns) {
      if (!this.serverEnabled(server) || conn.status !== 'connected') continue;
      for (const r of conn.resources) out.push({ server, uri: r.uri, name: r.name, description: r.description ?? null });
    }
    return out;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.stopSettings();
    this.fileWatch?.close();
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    // Stopping first ends a start that is stuck in its handshake (then the first start settles at once).
    const conns = [...this.conns.entries()];
    this.conns.clear();
    for (const [name] of conns) this.unregister(name);
    await Promise.all(conns.map(([, c]) => c.stop()));
    await this.started?.catch(() => undefined);
    await Promise.all([...this.oauthSessions.values()].map((s) => s.close().catch(() => undefined)));
    this.oauthSessions.clear();
    this.listeners.clear();
  }
}
