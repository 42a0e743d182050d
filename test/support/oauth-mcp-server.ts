/**
 * A real OAuth-protected MCP server for tests (127.0.0.1, random port), built from the official
 * SDK's pieces: `mcpAuthRouter` (metadata, dynamic client registration, authorize, token) over a
 * small in-memory OAuthServerProvider of our own (codes with PKCE challenges, rotating refresh
 * tokens, access tokens a test can expire), and `requireBearerAuth` in front of a stateless
 * streamable-HTTP MCP endpoint at /mcp with one tool, `whoami`. Everything it issued is recorded
 * so a test can look for it elsewhere (files, logs).
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Lifetime the server announces for an access token (a test expires tokens explicitly, never by waiting). */
const ACCESS_TOKEN_TTL_S = 3600;

// express ships without types here (no @types/express); the few calls made are typed locally.
type Handler = (req: unknown, res: unknown, next: (e?: unknown) => void) => void;
interface ExpressApp {
  use(handler: Handler): void;
  use(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
  listen(port: number, host: string, cb: () => void): Server;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express = require('express') as { (): ExpressApp; json(): Handler };

interface CodeGrant { clientId: string; challenge: string; redirectUri: string; scopes: string[] }
interface TokenGrant { clientId: string; scopes: string[]; expired: boolean }

class MemoryOAuthProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly codes = new Map<string, CodeGrant>();
  readonly access = new Map<string, TokenGrant>();
  readonly refresh = new Map<string, { clientId: string; scopes: string[] }>();
  /** Every code and token ever issued (to look for leaks). */
  readonly issued: string[] = [];
  readonly counts = { register: 0, authorize: 0, codeExchange: 0, refresh: 0 };

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: async (id) => this.clients.get(id),
      registerClient: async (client) => {
        this.counts.register++;
        const full = client as OAuthClientInformationFull;
        this.clients.set(full.client_id, full);
        return full;
      },
    };
  }

  private secret(prefix: string): string {
    const s = `${prefix}_${randomBytes(24).toString('hex')}`;
    this.issued.push(s);
    return s;
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: unknown): Promise<void> {
    this.counts.authorize++;
    const code = this.secret('code');
    this.codes.set(code, { clientId: client.client_id, challenge: params.codeChallenge, redirectUri: params.redirectUri, scopes: params.scopes ?? [] });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    (res as { redirect(status: number, url: string): void }).redirect(302, target.href);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    return grant.challenge;
  }

  private tokens(clientId: string, scopes: string[]): OAuthTokens {
    const access_token = this.secret('at');
    const refresh_token = this.secret('rt');
    this.access.set(access_token, { clientId, scopes, expired: false });
    this.refresh.set(refresh_token, { clientId, scopes });
    return { access_token, refresh_token, token_type: 'bearer', expires_in: ACCESS_TOKEN_TTL_S, scope: scopes.join(' ') };
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string): Promise<OAuthTokens> {
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    if (redirectUri !== undefined && redirectUri !== grant.redirectUri) throw new InvalidGrantError('redirect_uri does not match');
    this.codes.delete(code); // one use
    this.counts.codeExchange++;
    return this.tokens(client.client_id, grant.scopes);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const grant = this.refresh.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    this.refresh.delete(refreshToken); // rotated
    this.counts.refresh++;
    return this.tokens(client.client_id, grant.scopes);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.access.get(token);
    if (!grant) throw new InvalidTokenError('unknown access token');
    const now = Math.floor(Date.now() / 1000);
    return { token, clientId: grant.clientId, scopes: grant.scopes, expiresAt: grant.expired ? now - 60 : now + ACCESS_TOKEN_TTL_S };
  }
}

export interface OAuthMcpServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  mcpUrl: string;
  provider: MemoryOAuthProvider;
  /** Marks every access token issued so far as expired (the bearer check then answers 401 invalid_token). */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

export async function startOAuthMcpServer(): Promise<OAuthMcpServer> {
  const app = express();
  const provider = new MemoryOAuthProvider();
  let server: Server | undefined;
  const port = await new Promise<number>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve((server!.address() as AddressInfo).port));
  });
  const origin = `http://127.0.0.1:${port}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(origin), resourceServerUrl: mcpUrl, scopesSupported: ['notes'], resourceName: 'Test notes' }) as Handler);
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) }) as Handler;
  app.post('/mcp', bearer, express.json(), ((req: { auth?: AuthInfo; body: unknown }, res: { on(e: string, f: () => void): void }) => {
    const mcp = new McpServer({ name: 'oauth-notes', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'The OAuth client this call was authorised for.' }, async (extra) => ({ content: [{ type: 'text' as const, text: `client ${extra.authInfo?.clientId ?? '(none)'}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => mcp.close()));
    void mcp.connect(transport).then(() => transport.handleRequest(req as never, res as never, req.body));
  }) as Handler);
  return {
    mcpUrl: mcpUrl.href,
    provider,
    expireAccessTokens: () => {
      for (const g of provider.access.values()) g.expired = true;
    },
    close: () => new Promise<void>((resolve) => {
      server!.closeAllConnections?.();
      server!.close(() => resolve());
    }),
  };
}
