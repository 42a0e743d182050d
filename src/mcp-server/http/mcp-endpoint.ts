/**
 * The `/mcp` endpoint: a request is admitted only with `Authorization: DPoP <token>` and a DPoP
 * proof signed by the key the token is bound to (RFC 9449 §7), else 401 with a WWW-Authenticate
 * challenge naming the resource metadata (RFC 9728 §5.1). Admitted requests go to the SDK's
 * StreamableHTTPServerTransport, one stateful session per Mcp-Session-Id, each bound to the
 * client, DPoP key and grant of the token that opened it, with its own McpServer from serverFor.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { DPOP_ALGS, verifyDpopProof } from './dpop';
import { isMcpServerError } from './errors';
import { busyAnswer, type JtiReplayStore } from './replay-store';
import type { BoundToken, McpGrant, TokenTable } from './tokens';

/** Most MCP sessions open at once (all clients together); more are refused with 503 until one closes or idles out. */
export const MAX_MCP_SESSIONS = 32;
/** A session unused this long (ms) is closed when room is needed for a new one. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

export type ServerFor = (grant: McpGrant, clientName: string) => McpServer;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  clientId: string;
  jkt: string;
  lastUsed: number;
}

/** A JSON-RPC error answer with no request id (the transport's shape), as an HTTP response. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

const isInitialize = (body: unknown) => !!body && typeof body === 'object' && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';

export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private closed = false;
  constructor(
    private readonly deps: { tokens: TokenTable; replay: JtiReplayStore; now: () => number; serverFor: ServerFor },
  ) {}

  get sessionCount(): number {
    return this.sessions.size;
  }

  private challenge(origin: string, error?: { code: string; description: string }): Record<string, string> {
    const parts = [`algs="${DPOP_ALGS.join(' ')}"`, `resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`];
    if (error) parts.unshift(`error="${error.code}"`, `error_description="${error.description.replace(/["\\]/g, '')}"`);
    return { 'WWW-Authenticate': `DPoP ${parts.join(', ')}` };
  }

  /** The token record when the request carries a valid DPoP-bound token and proof; otherwise answers 401 and returns undefined. */
  authenticate(req: IncomingMessage, res: ServerResponse, origin: string, url: string): BoundToken | undefined {
    const auth = req.headers.authorization;
    const deny = (code: string | undefined, description: string) => {
      sendJsonRpcError(res, 401, -32001, `Unauthorized: ${description}`, this.challenge(origin, code ? { code, description } : undefined));
      return undefined;
    };
    if (!auth) return deny(undefined, 'a DPoP-bound access token is required');
    const m = /^DPoP ([A-Za-z0-9._~+/-]+=*)$/.exec(auth);
    if (!m) return deny('invalid_token', 'use the DPoP authorization scheme with a DPoP-bound token');
    const token = this.deps.tokens.accessToken(m[1]!);
    if (!token) return deny('invalid_token', 'unknown or expired access token');
    const header = req.headers.dpop;
    try {
      const proof = verifyDpopProof(Array.isArray(header) ? undefined : header, { method: req.method ?? '', url, accessToken: m[1]!, now: this.deps.now(), replay: this.deps.replay });
      if (proof.jkt !== token.jkt) return deny('invalid_dpop_proof', 'the proof key is not the key the token is bound to');
    } catch (e) {
      // A full store or a key over its rate: not the client's proof at fault, so no 401 (which would make it sign in again).
      const busy = busyAnswer(e);
      if (busy) return void sendJsonRpcError(res, busy.status, -32000, busy.message, { 'Retry-After': String(busy.retryAfterS) });
      return deny('invalid_dpop_proof', isMcpServerError(e) ? e.message : 'invalid DPoP proof');
    }
    return token;
  }

  /** One authenticated request: to its session, or opening one (initialize without Mcp-Session-Id). */
  async handle(req: IncomingMessage, res: ServerResponse, token: BoundToken, body: unknown): Promise<void> {
    // JSON-RPC 2.0 §6: an empty batch is an invalid request (the SDK would answer 202).
    if (Array.isArray(body) && body.length === 0) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: empty batch');
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const s = this.sessions.get(sid);
      // A session of another client (or key) is answered as unknown: ids are not a capability.
      if (!s || s.clientId !== token.clientId || s.jkt !== token.jkt) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      s.lastUsed = this.deps.now();
      return s.transport.handleRequest(req, res, body);
    }
    if (sid !== undefined) return sendJsonRpcError(res, 400, -32600, 'Bad Request: one Mcp-Session-Id header');
    if (req.method !== 'POST' || !isInitialize(body)) return sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    if (!this.roomForSession()) return sendJsonRpcError(res, 503, -32000, 'Too many MCP sessions; close one and retry', { 'Retry-After': '5' });
    await this.open(req, res, token, body);
  }

  private roomForSession(): boolean {
    if (this.sessions.size < MAX_MCP_SESSIONS) return true;
    const now = this.deps.now();
    for (const [id, s] of this.sessions) if (now - s.lastUsed > MCP_SESSION_IDLE_MS) this.drop(id);
    return this.sessions.size < MAX_MCP_SESSIONS;
  }

  private async open(req: IncomingMessage, res: ServerResponse, token: BoundToken, body: unknown): Promise<void> {
    const server = this.deps.serverFor(token.grant, token.clientName);
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        if (this.closed) return;
        session = { transport, server, clientId: token.clientId, jkt: token.jkt, lastUsed: this.deps.now() };
        this.sessions.set(id, session);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && this.sessions.get(id)?.transport === transport) this.sessions.delete(id);
    };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      // The initialize was refused by the transport (bad params): nothing must linger.
      if (!session) await Promise.allSettled([transport.close(), server.close()]);
    }
  }

  private drop(id: string): void {
    const s = this.sessions.get(id);
    this.sessions.delete(id);
    if (s) void Promise.allSettled([s.transport.close(), s.server.close()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.flatMap((s) => [s.transport.close(), s.server.close()]));
  }
}
