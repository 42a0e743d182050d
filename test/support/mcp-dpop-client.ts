/**
 * Test-side OAuth + DPoP for Vox's MCP HTTP server, written independently of the server: proofs
 * are signed with jose, the SDK client runs the OAuth flow through an OAuthClientProvider of our
 * own, and a custom `fetch` adds the DPoP header (the SDK does not do DPoP itself) and turns its
 * `Bearer` into `DPoP`. Also a raw register → authorize → token sequence for low-level tests,
 * and a tiny McpServer factory with two tools that report the grant they run under.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export class DpopSigner {
  private constructor(
    readonly alg: string,
    private readonly priv: CryptoKey,
    readonly jwk: JWK,
    /** Seconds since the epoch put in `iat` (tests shift it to make stale proofs). */
    public clock: () => number = () => Math.floor(Date.now() / 1000),
  ) {}
  static async create(alg: 'ES256' | 'EdDSA' | 'RS256' = 'ES256'): Promise<DpopSigner> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined });
    return new DpopSigner(alg, privateKey, await exportJWK(publicKey));
  }
  proof(method: string, url: string, accessToken?: string, over: { claims?: Record<string, unknown>; header?: Record<string, unknown> } = {}): Promise<string> {
    const u = new URL(url);
    const claims: Record<string, unknown> = { jti: randomUUID(), htm: method, htu: `${u.origin}${u.pathname}`, iat: this.clock(), ...over.claims };
    if (accessToken !== undefined) claims.ath = createHash('sha256').update(accessToken).digest('base64url');
    return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: this.alg, jwk: this.jwk, ...over.header } as never).sign(this.priv);
  }
}

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** fetch that adds a DPoP proof to token requests and to every request carrying the SDK's access token. */
export function dpopFetch(signer: DpopSigner, seen?: { requests: string[] }): FetchLike {
  return async (url, init = {}) => {
    const href = url.toString();
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const auth = headers.get('authorization');
    if (auth?.startsWith('Bearer ')) {
      const token = auth.slice('Bearer '.length);
      headers.set('authorization', `DPoP ${token}`);
      headers.set('dpop', await signer.proof(method, href, token));
    } else if (method === 'POST' && new URL(href).pathname === '/token') {
      headers.set('dpop', await signer.proof(method, href));
    }
    seen?.requests.push(`${method} ${new URL(href).pathname}`);
    return fetch(url, { ...init, headers });
  };
}

/** The user agent's part of /authorize: follows no redirect, reads the code (or error) off the Location. */
export async function followAuthorize(url: string | URL): Promise<{ code?: string; error?: string; state?: string | null; status: number; location?: string }> {
  const r = await fetch(url, { redirect: 'manual' });
  const location = r.headers.get('location') ?? undefined;
  if (r.status !== 302 || !location) {
    const body = (await r.json().catch(() => ({}))) as { error?: string };
    return { status: r.status, error: body.error };
  }
  const back = new URL(location);
  return { status: r.status, location, code: back.searchParams.get('code') ?? undefined, error: back.searchParams.get('error') ?? undefined, state: back.searchParams.get('state') };
}

export class TestOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  code: string | undefined;
  authError: string | undefined;
  constructor(
    readonly name: string,
    readonly redirect = 'http://127.0.0.1:9/callback',
  ) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(i: OAuthClientInformationMixed) {
    this.info = i;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  async redirectToAuthorization(url: URL) {
    const r = await followAuthorize(url);
    this.code = r.code;
    this.authError = r.error;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Connects the official SDK client through the whole OAuth flow (401 → discovery → register → authorize → token → reconnect). */
export async function connectWithOAuth(url: string, provider: TestOAuthProvider, signer: DpopSigner, seen?: { requests: string[] }): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const make = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: dpopFetch(signer, seen) });
  if (!provider.saved) {
    const first = make();
    const c = new Client({ name: provider.name, version: '1.0.0' });
    try {
      await c.connect(first);
      return { client: c, transport: first };
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
    }
    if (!provider.code) throw new Error(`authorization failed: ${provider.authError ?? 'no code'}`);
    await first.finishAuth(provider.code);
  }
  const transport = make();
  const client = new Client({ name: provider.name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

export interface RawTokens {
  clientId: string;
  accessToken: string;
  refreshToken: string;
  tokenType: string;
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** register → authorize (PKCE S256) → token, by hand. */
export async function rawSignIn(origin: string, signer: DpopSigner, name = 'raw client', redirect = 'http://127.0.0.1:9/cb'): Promise<RawTokens> {
  const reg = (await (await fetch(`${origin}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: name, redirect_uris: [redirect] }) })).json()) as { client_id: string };
  const { verifier, challenge } = pkce();
  const q = new URLSearchParams({ response_type: 'code', client_id: reg.client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', state: 's1' });
  const a = await followAuthorize(`${origin}/authorize?${q}`);
  if (!a.code) throw new Error(`authorize: ${a.error ?? a.status}`);
  const t = await tokenRequest(origin, signer, { grant_type: 'authorization_code', code: a.code, code_verifier: verifier, client_id: reg.client_id, redirect_uri: redirect });
  if (t.status !== 200) throw new Error(`token: ${JSON.stringify(t.body)}`);
  const b = t.body as { access_token: string; refresh_token: string; token_type: string };
  return { clientId: reg.client_id, accessToken: b.access_token, refreshToken: b.refresh_token, tokenType: b.token_type };
}

export async function tokenRequest(origin: string, signer: DpopSigner | undefined, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (signer) headers.dpop = await signer.proof('POST', `${origin}/token`);
  const r = await fetch(`${origin}/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

export { pkce };

/** A small McpServer of our own (the real one is src/mcp-server/server.ts): `echo` and `grant` report who runs them under which grant. */
export function testServerFor(grant: string, clientName: string): McpServer {
  const s = new McpServer({ name: 'vox-test', version: '1.0.0' });
  s.registerTool('echo', { description: 'echoes text', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: `${grant}|${clientName}|${text}` }] }));
  s.registerTool('grant', { description: 'the grant of this session', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: grant }] }));
  return s;
}
