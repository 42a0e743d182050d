/**
 * Vox's MCP server over streamable HTTP (SPEC 5.2): node:http bound to 127.0.0.1 only, the Host
 * header checked against DNS rebinding (only 127.0.0.1:<port> / localhost:<port>), cross-site
 * browser origins refused, bodies bounded, and the routes of one origin: the OAuth 2.1
 * authorisation server (oauth.ts) and the DPoP-protected `/mcp` endpoint (mcp-endpoint.ts).
 * Which McpServer a session gets is injected (`serverFor(grant, clientName)`), so this module
 * knows nothing of the tools themselves. Any unexpected failure answers a generic JSON error.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostSecretStore } from '../../engine/host';
import { loadClientKey } from './client-id';
import { McpServerError } from './errors';
import { GrantMemory, type ChooseGrant } from './grants';
import { McpEndpoint, sendJsonRpcError, type ServerFor } from './mcp-endpoint';
import { OAuthEndpoints, type HttpAnswer } from './oauth';
import { JtiReplayStore, type ReplayLimits } from './replay-store';
import { TokenTable } from './tokens';

/** Largest body accepted on `/mcp` (bytes); larger ones get 413 without being buffered. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;
/** Largest body accepted on the OAuth endpoints (bytes). */
export const MAX_OAUTH_BODY_BYTES = 16 * 1024;
/** Deepest JSON nesting accepted on `/mcp` (arrays/objects); deeper bodies are refused before parsing. */
export const MAX_JSON_DEPTH = 64;
/** After a 413, how much more of the body is read and dropped before the connection is cut. */
export const MAX_DRAIN_BYTES = 8 * 1024 * 1024;
/** Requests without a body or headers in this long (ms) are dropped. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** The only host the server binds to. */
export const MCP_HTTP_HOST = '127.0.0.1';

export interface VoxMcpHttpOptions {
  host: typeof MCP_HTTP_HOST;
  /** 0: any free port. */
  port: number;
  secrets: HostSecretStore;
  serverFor: ServerFor;
  chooseGrant: ChooseGrant;
  /** Clock in ms (tests inject one to age DPoP proofs and tokens). */
  now?: () => number;
  /** The DPoP jti store's limits (./replay-store.ts); absent: DPOP_JTI_STORE_MAX and DPOP_KEY_MAX_LIVE. Tests shrink them. */
  replayLimits?: Partial<ReplayLimits>;
  /** Told of unexpected failures (the client only sees a generic "Internal error"); e.g. the extension's log. */
  onError?: (e: unknown) => void;
}

export interface VoxMcpHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly rpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const refuse = () => {
      tooLarge = true;
      chunks.length = 0;
      reject(new BodyError(413, -32000, `Payload Too Large: at most ${limit} bytes`));
    };
    if (Number(req.headers['content-length'] ?? '0') > limit) refuse();
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Answered already; the rest is read and dropped so the client sees the 413, up to MAX_DRAIN_BYTES.
      if (size > MAX_DRAIN_BYTES) return void req.destroy();
      if (tooLarge) return;
      if (size > limit) return refuse();
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => reject(new BodyError(400, -32700, 'Parse error: the body could not be read')));
  });
}

/** Nesting depth of JSON text (brackets outside strings); stops counting past `max`. */
function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonBody(buf: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new BodyError(400, -32700, 'Parse error: the body is not valid UTF-8');
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new BodyError(400, -32600, `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError(400, -32700, 'Parse error: Invalid JSON');
  }
}

const mediaType = (req: http.IncomingMessage) => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

function send(res: http.ServerResponse, a: HttpAnswer): void {
  const headers: Record<string, string> = { ...a.headers };
  if (a.body !== undefined) headers['Content-Type'] = 'application/json';
  res.writeHead(a.status, headers);
  res.end(a.body === undefined ? undefined : JSON.stringify(a.body));
}

const oauthFail = (status: number, error: string, description: string): HttpAnswer => ({ status, body: { error, error_description: description } });

/** Loopback origins a browser-based client may call from (anything else is a cross-site page). */
function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
  } catch {
    return false;
  }
}

export async function startVoxMcpHttpServer(opts: VoxMcpHttpOptions): Promise<VoxMcpHttpServer> {
  if (opts.host !== MCP_HTTP_HOST) throw new McpServerError('bindFailed', `Vox's MCP server binds to ${MCP_HTTP_HOST} only`);
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65_535) throw new McpServerError('bindFailed', `invalid port ${String(opts.port)}`);
  const now = opts.now ?? Date.now;
  const key = await loadClientKey(opts.secrets);
  const tokens = new TokenTable(now);
  const replay = new JtiReplayStore(opts.replayLimits);
  const oauth = new OAuthEndpoints({ key, grants: new GrantMemory(opts.secrets, opts.chooseGrant), tokens, replay, now });
  const mcp = new McpEndpoint({ tokens, replay, now, serverFor: opts.serverFor });
  let port = opts.port;

  const route = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const host = req.headers.host;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return send(res, oauthFail(421, 'invalid_request', 'Host not allowed'));
    if (!originAllowed(req.headers.origin)) return send(res, oauthFail(403, 'invalid_request', 'Origin not allowed'));
    const origin = `http://${host}`;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', origin);
    } catch {
      return send(res, oauthFail(400, 'invalid_request', 'bad request target'));
    }
    const method = req.method ?? '';
    const path = url.pathname;
    if (path === '/mcp') {
      if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') return sendJsonRpcError(res, 405, -32000, 'Method not allowed.', { Allow: 'GET, POST, DELETE' });
      const token = mcp.authenticate(req, res, origin, `${origin}${path}`);
      if (!token) {
        req.resume();
        return;
      }
      let body: unknown;
      if (method === 'POST') {
        if (mediaType(req) !== 'application/json') {
          req.resume();
          return sendJsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
        }
        body = parseJsonBody(await readBody(req, MAX_MCP_BODY_BYTES));
      }
      return mcp.handle(req, res, token, body);
    }
    if (method === 'GET' && (path === '/.well-known/oauth-protected-resource' || path === '/.well-known/oauth-protected-resource/mcp')) return send(res, oauth.protectedResource(origin));
    if (method === 'GET' && path === '/.well-known/oauth-authorization-server') return send(res, oauth.authorizationServer(origin));
    if (method === 'GET' && path === '/authorize') return send(res, await oauth.authorize(origin, url.searchParams));
    if (method === 'POST' && path === '/register') {
      if (mediaType(req) !== 'application/json') return send(res, oauthFail(415, 'invalid_client_metadata', 'Content-Type must be application/json'));
      let body: unknown;
      try {
        body = parseJsonBody(await readBody(req, MAX_OAUTH_BODY_BYTES));
      } catch {
        return send(res, oauthFail(400, 'invalid_client_metadata', 'the body is not a JSON object'));
      }
      return send(res, oauth.register(body));
    }
    if (method === 'POST' && path === '/token') {
      if (mediaType(req) !== 'application/x-www-form-urlencoded') return send(res, oauthFail(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded'));
      const form = new URLSearchParams((await readBody(req, MAX_OAUTH_BODY_BYTES)).toString('utf8'));
      const dpop = req.headers.dpop;
      return send(res, oauth.token(origin, form, Array.isArray(dpop) ? undefined : dpop));
    }
    req.resume();
    return send(res, oauthFail(404, 'not_found', 'no such endpoint'));
  };

  const server = http.createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) return void res.end();
      if (e instanceof BodyError) {
        if (req.url?.startsWith('/mcp')) return sendJsonRpcError(res, e.status, e.rpcCode, e.message, {});
        return send(res, oauthFail(e.status, 'invalid_request', e.message));
      }
      // Never the error's text: it may carry paths or library internals. The host's log gets it.
      opts.onError?.(e);
      if (req.url?.startsWith('/mcp')) return sendJsonRpcError(res, 500, -32603, 'Internal error');
      return send(res, oauthFail(500, 'server_error', 'internal error'));
    });
  });
  // Requests node:http refuses before any handler runs (oversized or malformed headers) get a
  // JSON-RPC error body too, instead of node's empty 400/431.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: tooLarge ? 'Request header fields too large' : 'Bad Request' }, id: null });
    socket.end(`HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolve, reject) => {
    const fail = (e: NodeJS.ErrnoException) => reject(new McpServerError('bindFailed', `cannot listen on ${MCP_HTTP_HOST}:${opts.port} (${e.code ?? 'error'})`));
    server.once('error', fail);
    server.listen(opts.port, MCP_HTTP_HOST, () => {
      server.off('error', fail);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${MCP_HTTP_HOST}:${port}/mcp`,
    port,
    close: () =>
      (closing ??= (async () => {
        await mcp.close();
        tokens.clear();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
}
