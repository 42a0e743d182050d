/**
 * McpServerConnection: one configured MCP server, connected with the official SDK's Client —
 * stdio (a child with only the server's own env and a minimal PATH/HOME set, cwd the workspace),
 * streamable HTTP with a fallback to SSE when the server answers 4xx to the streamable POST, or
 * SSE. It owns the server's status, its listed tools / prompts / resources (refreshed on
 * listChanged), the timeouts of connect, list and call, and restarts after a crash with
 * exponential backoff (capped; then `failed`). A hung call ends as McpError('timeout'), a call cut
 * by the process dying as McpError('crashed'); neither ever hangs a turn.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QUOTED_ERROR_CHARS, quote } from '../../protocol/wire/quote';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ErrorCode, McpError as SdkMcpError, type CallToolResult, type Prompt, type Resource, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolError } from '../tools/types';
import { isVoxError } from '../../protocol/wire/vox-error';
import { redact } from '../platform/secrets';
import type { McpServerSpec } from './config';
import { McpError } from './errors';

/** Connecting and the initialize handshake. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** One tools/prompts/resources list request. */
export const LIST_TIMEOUT_MS = 15_000;
/** One tool call (the turn's own signal may end it sooner). */
export const CALL_TIMEOUT_MS = 60_000;
/** First restart delay after a crash; doubled per attempt. */
export const RESTART_BASE_DELAY_MS = 1_000;
/** Longest delay between two restarts. */
export const RESTART_MAX_DELAY_MS = 30_000;
/** Consecutive failed starts or crashes before the server is marked `failed` (the user may restart it). */
export const MAX_RESTART_ATTEMPTS = 5;
/** A connection up this long resets the attempt count (a crash after it starts the backoff again). */
export const STABLE_CONNECTION_MS = 60_000;
/** Largest JSON-RPC message read from a stdio server (a bigger one closes the connection). */
export const MAX_STDIO_MESSAGE_BYTES = 32 * 1024 * 1024;
/** List pages fetched per list (a server paging forever is cut here). */
export const MAX_LIST_PAGES = 20;
/** Longest stderr tail kept for the error text of a failed stdio server. */
export const STDERR_TAIL_CHARS = 2_000;

export type ConnectionStatus = 'starting' | 'connected' | 'restarting' | 'failed' | 'needsAuth' | 'stopped';

export interface McpTimeouts { connectMs: number; listMs: number; callMs: number }
export interface McpBackoff { baseMs: number; maxMs: number; maxAttempts: number }

export const DEFAULT_TIMEOUTS: McpTimeouts = { connectMs: CONNECT_TIMEOUT_MS, listMs: LIST_TIMEOUT_MS, callMs: CALL_TIMEOUT_MS };
export const DEFAULT_BACKOFF: McpBackoff = { baseMs: RESTART_BASE_DELAY_MS, maxMs: RESTART_MAX_DELAY_MS, maxAttempts: MAX_RESTART_ATTEMPTS };

export interface ConnectionDeps {
  workspaceRoot: string;
  timeouts: McpTimeouts;
  backoff: McpBackoff;
  /** Any change of status, lists or counters. */
  onChange(): void;
  /** The OAuth provider for an HTTP server (absent: none; the server's 401 then means `needsAuth`). */
  authProvider?: () => Promise<OAuthClientProvider | undefined>;
}

/** The version Vox announces to servers. */
const CLIENT_INFO = { name: 'vox', version: '0.1.0' };

/** The delay before restart attempt `attempt` (0-based): base · 2^attempt, capped. */
export function restartDelay(attempt: number, b: McpBackoff): number {
  return Math.min(b.maxMs, b.baseMs * 2 ** Math.min(attempt, 30));
}

function httpStatusOf(e: unknown): number | undefined {
  if (e instanceof StreamableHTTPError || e instanceof SseError) return e.code;
  return undefined;
}

function isAuthFailure(e: unknown): boolean {
  return e instanceof UnauthorizedError || httpStatusOf(e) === 401;
}

/** An SDK / transport failure in Vox's words. */
export function mapCallError(e: unknown, server: string, what: string, timeoutMs: number): Error {
  if (e instanceof ToolError || (isVoxError(e) && e.domain === 'mcp')) return e as Error;
  if (e instanceof SdkMcpError) {
    if (e.code === ErrorCode.RequestTimeout) return new McpError('timeout', `MCP server ${server} did not answer ${what} within ${Math.round(timeoutMs / 1000)} s; the call was cancelled.`);
    if (e.code === ErrorCode.ConnectionClosed) return new McpError('crashed', `MCP server ${server} stopped during ${what}; Vox restarts it.`);
    return new McpError('callFailed', `MCP server ${server} refused ${what}: ${quote(redact(e.message), QUOTED_ERROR_CHARS)}`);
  }
  if (isAuthFailure(e)) return new McpError('authRequired', `MCP server ${server} requires sign-in (Vox: authenticate the server).`);
  const status = httpStatusOf(e);
  if (status !== undefined) return new McpError('protocolError', `MCP server ${server} answered HTTP ${status} to ${what}.`);
  return new McpError('protocolError', `MCP server ${server} failed ${what}: ${quote(redact((e as Error)?.message ?? String(e)), QUOTED_ERROR_CHARS)}`);
}

export class McpServerConnection {
  status: ConnectionStatus = 'stopped';
  error: string | null = null;
  restarts = 0;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  resources: Resource[] = [];
  /** The transport in use (http may have fallen back to sse). */
  transport: 'stdio' | 'http' | 'sse';
  private client: Client | null = null;
  private wire: Transport | null = null;
  private stopped = true;
  private attempt = 0;
  private connectedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Bumped per connection: a late close of an old one is ignored. */
  private generation = 0;
  private stderrTail = '';
  private starting: Promise<void> | null = null;
  /** The client of a handshake under way (a stop closes it, so a stuck start ends at once). */
  private handshaking: Client | null = null;
  /** The current HTTP attempt got a 401 somewhere. */
  private saw401 = false;

  constructor(readonly spec: McpServerSpec, private readonly deps: ConnectionDeps) {
    this.transport = spec.transport;
  }

  /** Connects (or waits for the connection under way). Never rejects: a failure is the status. */
  start(): Promise<void> {
    this.stopped = false;
    this.starting ??= this.connect().finally(() => (this.starting = null));
    return this.starting;
  }

  /** Resolves when the current start attempt has settled. */
  async settled(): Promise<void> {
    await this.starting;
  }

  /** Stops and starts again (a user's restart: the attempt count starts over). */
  async restart(): Promise<void> {
    await this.stop();
    this.attempt = 0;
    this.restarts++;
    await this.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.handshaking?.close().catch(() => undefined);
    await this.starting?.catch(() => undefined);
    await this.closeClient();
    this.setStatus('stopped', null);
  }

  private setStatus(status: ConnectionStatus, error: string | null): void {
    this.status = status;
    this.error = error;
    this.deps.onChange();
  }

  private async closeClient(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.wire = null;
    this.generation++;
    if (c) await c.close().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    this.setStatus(this.restarts > 0 && this.status !== 'stopped' ? 'restarting' : 'starting', this.error);
    const gen = ++this.generation;
    try {
      const { client, transport } = await this.open(gen);
      if (this.stopped || gen !== this.generation) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      this.wire = transport;
      this.connectedAt = Date.now();
      await this.refreshAll();
      this.setStatus('connected', null);
    } catch (e) {
      if (gen !== this.generation || this.stopped) return;
      await this.closeClient();
      if (isAuthFailure(e) || (this.saw401 && this.spec.transport !== 'stdio')) {
        this.setStatus('needsAuth', `MCP server ${this.spec.name} requires sign-in.`);
        return;
      }
      const tail = this.stderrTail.trim() ? ` (stderr: ${redact(this.stderrTail.trim()).slice(-500)})` : '';
      const why = e instanceof SdkMcpError && e.code === ErrorCode.ConnectionClosed
        ? `MCP server ${this.spec.name} exited while starting.`
        : mapCallError(e, this.spec.name, 'the connection', this.deps.timeouts.connectMs).message;
      this.scheduleRestart(`${why}${tail}`);
    }
  }

  /** The SDK client on the spec's transport (HTTP falling back to SSE on a 4xx other than 401). */
  private async open(gen: number): Promise<{ client: Client; transport: Transport }> {
    const spec = this.spec;
    const make = (transport: Transport) => this.handshake(transport, gen);
    if (spec.transport === 'stdio') {
      this.stderrTail = '';
      const t = new StdioClientTransport({
        command: spec.command, args: spec.args,
        // The SDK adds only its minimal set (HOME, LOGNAME, PATH, SHELL, TERM, USER): never Vox's provider keys.
        env: spec.env,
        cwd: spec.cwd ?? this.deps.workspaceRoot,
        stderr: 'pipe',
        maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
      });
      t.stderr?.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-STDERR_TAIL_CHARS)));
      this.transport = 'stdio';
      return make(t);
    }
    // Without OAuth first (no loopback listener for servers that need none); after a 401, with it.
    try {
      return await this.openHttp(gen, undefined);
    } catch (e) {
      if (!(this.saw401 || isAuthFailure(e)) || !this.deps.authProvider) throw e;
      const provider = await this.deps.authProvider();
      if (!provider) throw e;
      return await this.openHttp(gen, provider);
    }
  }

  private async openHttp(gen: number, authProvider: OAuthClientProvider | undefined): Promise<{ client: Client; transport: Transport }> {
    const spec = this.spec as Extract<McpServerSpec, { transport: 'http' | 'sse' }>;
    this.saw401 = false;
    // Any 401 on the way (the OAuth discovery may fail after it in many ways) means the server wants a sign-in.
    const watched: typeof fetch = async (input, init) => {
      const r = await fetch(input, init);
      if (r.status === 401) this.saw401 = true;
      return r;
    };
    const opts = { requestInit: { headers: spec.headers }, fetch: watched, ...(authProvider ? { authProvider } : {}) };
    const url = new URL(spec.url);
    if (spec.transport === 'http') {
      try {
        this.transport = 'http';
        return await this.handshake(new StreamableHTTPClientTransport(url, opts), gen);
      } catch (e) {
        const status = httpStatusOf(e);
        if (isAuthFailure(e) || this.saw401 || status === undefined || status < 400 || status >= 500) throw e;
        // SDK guidance: a 4xx to the streamable POST means an older server — try SSE.
      }
    }
    this.transport = 'sse';
    return this.handshake(new SSEClientTransport(url, opts), gen);
  }

  private async handshake(transport: Transport, gen: number): Promise<{ client: Client; transport: Transport }> {
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: {
        tools: { autoRefresh: false, onChanged: () => void this.refreshQuietly(gen, 'tools') },
        prompts: { autoRefresh: false, onChanged: () => void this.refreshQuietly(gen, 'prompts') },
        resources: { autoRefresh: false, onChanged: () => void this.refreshQuietly(gen, 'resources') },
      },
    });
    client.onclose = () => this.onClosed(gen);
    client.onerror = () => undefined; // transport noise; failures surface through calls and close
    this.handshaking = client;
    try {
      if (this.stopped) throw new McpError('notConnected', `MCP server ${this.spec.name} was stopped while starting.`);
      await client.connect(transport, { timeout: this.deps.timeouts.connectMs });
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    } finally {
      this.handshaking = null;
    }
    return { client, transport };
  }

  private onClosed(gen: number): void {
    // A close during the handshake is the handshake's failure (connect handles it).
    if (gen !== this.generation || this.stopped || this.client === null) return;
    this.client = null;
    this.wire = null;
    if (Date.now() - this.connectedAt > STABLE_CONNECTION_MS) this.attempt = 0;
    const tail = this.stderrTail.trim() ? ` (stderr: ${redact(this.stderrTail.trim()).slice(-500)})` : '';
    this.scheduleRestart(`MCP server ${this.spec.name} exited${tail}.`);
  }

  private scheduleRestart(error: string): void {
    if (this.stopped) return;
    if (this.attempt >= this.deps.backoff.maxAttempts) {
      this.setStatus('failed', `${error} Gave up after ${this.attempt} restart attempt(s); restart it by hand.`);
      return;
    }
    const delay = restartDelay(this.attempt++, this.deps.backoff);
    this.setStatus('restarting', error);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.stopped) return;
      this.restarts++;
      void this.start();
    }, delay);
    this.timer.unref?.();
  }

  private async refreshQuietly(gen: number, what: 'tools' | 'prompts' | 'resources'): Promise<void> {
    if (gen !== this.generation || !this.client) return;
    try {
      await this.refresh(what);
      this.deps.onChange();
    } catch {
      // A failed refresh keeps the last lists; a dead server is noticed by its close.
    }
  }

  private async refreshAll(): Promise<void> {
    await this.refresh('tools');
    await this.refresh('prompts').catch(() => (this.prompts = []));
    await this.refresh('resources').catch(() => (this.resources = []));
  }

  private async refresh(what: 'tools' | 'prompts' | 'resources'): Promise<void> {
    const client = this.client;
    if (!client) return;
    const caps = client.getServerCapabilities() ?? {};
    const opts = { timeout: this.deps.timeouts.listMs };
    if (what === 'tools') {
      if (!caps.tools) return void (this.tools = []);
      const out: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const r = await client.listTools(cursor ? { cursor } : {}, opts);
        out.push(...r.tools);
        if (!r.nextCursor) break;
        cursor = r.nextCursor;
      }
      this.tools = out;
    } else if (what === 'prompts') {
      if (!caps.prompts) return void (this.prompts = []);
      this.prompts = (await client.listPrompts({}, opts)).prompts;
    } else {
      if (!caps.resources) return void (this.resources = []);
      this.resources = (await client.listResources({}, opts)).resources;
    }
  }

  private live(what: string): Client {
    if (this.client && this.status === 'connected') return this.client;
    if (this.status === 'needsAuth') throw new McpError('authRequired', `MCP server ${this.spec.name} requires sign-in before ${what}.`);
    if (this.status === 'restarting' || this.status === 'starting') throw new McpError('notConnected', `MCP server ${this.spec.name} is ${this.status}; try again in a moment.`);
    throw new McpError('notConnected', `MCP server ${this.spec.name} is not connected (${this.status}${this.error ? `: ${this.error}` : ''}).`);
  }

  /** One tools/call, bounded by the call timeout and the turn's signal. */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = this.live(`calling ${name}`);
    const timeoutMs = this.deps.timeouts.callMs;
    try {
      return (await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal })) as CallToolResult;
    } catch (e) {
      if (signal.aborted) throw new ToolError('cancelled', 'cancelled');
      const mapped = mapCallError(e, this.spec.name, `the call of ${name}`, timeoutMs);
      this.noteUnreachable(e, client);
      throw mapped;
    }
  }

  /**
   * An HTTP server that cannot be reached any more (refused, reset: no HTTP status, no JSON-RPC
   * error) is gone like a crashed process: reconnect with the same backoff.
   */
  private noteUnreachable(e: unknown, client: Client): void {
    if (this.spec.transport === 'stdio' || this.client !== client || this.stopped) return;
    if (e instanceof SdkMcpError || isVoxError(e) || httpStatusOf(e) !== undefined || isAuthFailure(e)) return;
    this.client = null;
    this.wire = null;
    this.generation++;
    void client.close().catch(() => undefined);
    if (Date.now() - this.connectedAt > STABLE_CONNECTION_MS) this.attempt = 0;
    this.scheduleRestart(`MCP server ${this.spec.name} could not be reached.`);
  }

  async readResource(uri: string, signal?: AbortSignal): Promise<Awaited<ReturnType<Client['readResource']>>> {
    const client = this.live(`reading ${uri}`);
    try {
      return await client.readResource({ uri }, { timeout: this.deps.timeouts.callMs, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw new ToolError('cancelled', 'cancelled');
      throw mapCallError(e, this.spec.name, `reading ${uri}`, this.deps.timeouts.callMs);
    }
  }

  async getPrompt(name: string, args: Record<string, string>): Promise<Awaited<ReturnType<Client['getPrompt']>>> {
    const client = this.live(`expanding the prompt ${name}`);
    try {
      return await client.getPrompt({ name, arguments: args }, { timeout: this.deps.timeouts.callMs });
    } catch (e) {
      throw mapCallError(e, this.spec.name, `the prompt ${name}`, this.deps.timeouts.callMs);
    }
  }

  /** The HTTP transport of the current (failed) attempt, for finishing an OAuth sign-in. */
  httpTransportFor(provider: OAuthClientProvider): StreamableHTTPClientTransport | SSEClientTransport {
    if (this.spec.transport === 'stdio') throw new McpError('authFailed', `MCP server ${this.spec.name} runs over stdio; there is nothing to sign in to.`);
    const opts = { requestInit: { headers: this.spec.headers }, authProvider: provider };
    return this.transport === 'sse' ? new SSEClientTransport(new URL(this.spec.url), opts) : new StreamableHTTPClientTransport(new URL(this.spec.url), opts);
  }
}
