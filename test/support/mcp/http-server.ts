/**
 * HTTP MCP servers for Vox's tests on 127.0.0.1 (real sockets, the SDK's server transports, the
 * tools of ./tools.mjs): `streamable` (stateless streamable HTTP), `sseOnly` (an older server:
 * the streamable POST gets 405, the SSE transport works — the client must fall back), and
 * `unauthorized` (every request 401 with a WWW-Authenticate header, as an OAuth-protected server).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
// @ts-expect-error plain .mjs module shared with the stdio server
import { buildServer } from './tools.mjs';

export type McpHttpMode = 'streamable' | 'sseOnly' | 'unauthorized';

export interface McpHttpServer {
  url: string;
  /** Requests seen, by `METHOD path`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startMcpHttpServer(mode: McpHttpMode): Promise<McpHttpServer> {
  const requests: string[] = [];
  const sse = new Map<string, SSEServerTransport>();
  const srv = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(`${req.method} ${path}`);
    void (async () => {
      if (mode === 'unauthorized') {
        res.writeHead(401, { 'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"', 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      if (mode === 'streamable' && path === '/mcp') {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        const server = buildServer({ name: 'vox-test-http', inProcess: true });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res);
        return;
      }
      if (mode === 'sseOnly' && path === '/mcp' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sse.set(transport.sessionId, transport);
        res.on('close', () => sse.delete(transport.sessionId));
        await buildServer({ name: 'vox-test-sse', inProcess: true }).connect(transport);
        return;
      }
      if (mode === 'sseOnly' && path === '/messages' && req.method === 'POST') {
        const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
        const t = sse.get(id);
        if (!t) return void res.writeHead(404).end();
        await t.handlePostMessage(req, res);
        return;
      }
      res.writeHead(mode === 'sseOnly' && path === '/mcp' ? 405 : 404).end();
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () => new Promise<void>((r) => {
      srv.closeAllConnections();
      srv.close(() => r());
    }),
  };
}
