/**
 * The OAuth 2.1 authorisation server of Vox's MCP server, on the same loopback origin as `/mcp`:
 * metadata (RFC 9728 protected resource, RFC 8414 authorisation server), stateless dynamic client
 * registration (RFC 7591, client-id.ts), `/authorize` (PKCE S256 only, the user's grant choice on
 * a client's first connection) and `/token` (authorization_code, refresh_token) issuing DPoP-bound
 * access tokens (RFC 9449 §5). Each handler answers an HttpAnswer; errors are the RFC 6749 JSON
 * error objects, never library text.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { issueClientId, registrationFrom, verifyClientId, type ClientRegistration } from './client-id';
import { DPOP_ALGS, verifyDpopProof } from './dpop';
import { isMcpServerError } from './errors';
import { busyAnswer, type JtiReplayStore } from './replay-store';
import type { GrantMemory } from './grants';
import type { TokenTable } from './tokens';

/** PKCE code verifier (RFC 7636 §4.1): 43..128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** A S256 code challenge: base64url of a SHA-256 digest, 43 characters. */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** Longest `state` echoed back to the client. */
export const MAX_STATE_CHARS = 1_024;

export interface HttpAnswer {
  status: number;
  headers?: Record<string, string>;
  /** JSON body (absent: none). */
  body?: unknown;
}

export interface OAuthContext {
  key: Uint8Array;
  grants: GrantMemory;
  tokens: TokenTable;
  replay: JtiReplayStore;
  now: () => number;
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const oauthError = (status: number, error: string, description: string, headers?: Record<string, string>): HttpAnswer => ({
  status,
  headers: { ...NO_STORE, ...headers },
  body: { error, error_description: description },
});

export const mcpResourceUrl = (origin: string) => `${origin}/mcp`;

export class OAuthEndpoints {
  constructor(private readonly ctx: OAuthContext) {}

  protectedResource(origin: string): HttpAnswer {
    return {
      status: 200,
      body: {
        resource: mcpResourceUrl(origin),
        authorization_servers: [origin],
        bearer_methods_supported: ['header'],
        resource_name: 'Vox',
        dpop_signing_alg_values_supported: [...DPOP_ALGS],
        dpop_bound_access_tokens_required: true,
      },
    };
  }

  authorizationServer(origin: string): HttpAnswer {
    return {
      status: 200,
      body: {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        dpop_signing_alg_values_supported: [...DPOP_ALGS],
        authorization_response_iss_parameter_supported: true,
      },
    };
  }

  register(body: unknown): HttpAnswer {
    const issuedAt = Math.floor(this.ctx.now() / 1000);
    let reg: ClientRegistration;
    try {
      reg = registrationFrom(body, issuedAt);
    } catch (e) {
      const msg = isMcpServerError(e) ? e.message : 'invalid registration';
      return oauthError(400, /redirect_uris/.test(msg) ? 'invalid_redirect_uri' : 'invalid_client_metadata', msg);
    }
    return {
      status: 201,
      headers: NO_STORE,
      body: {
        client_id: issueClientId(this.ctx.key, reg),
        client_id_issued_at: issuedAt,
        client_name: reg.client_name,
        redirect_uris: reg.redirect_uris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    };
  }

  private client(clientId: unknown): ClientRegistration | undefined {
    try {
      return verifyClientId(this.ctx.key, clientId);
    } catch {
      return undefined;
    }
  }

  async authorize(origin: string, q: URLSearchParams): Promise<HttpAnswer> {
    const clientId = q.get('client_id');
    const client = this.client(clientId);
    if (!client || !clientId) return oauthError(400, 'invalid_client', 'unknown or forged client_id');
    const redirectUri = q.get('redirect_uri') ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0]! : '');
    if (!client.redirect_uris.includes(redirectUri)) return oauthError(400, 'invalid_request', 'redirect_uri is not one the client registered');
    const state = q.get('state');
    const back = (params: Record<string, string>): HttpAnswer => {
      const u = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      if (state !== null && state.length <= MAX_STATE_CHARS) u.searchParams.set('state', state);
      u.searchParams.set('iss', origin);
      return { status: 302, headers: { ...NO_STORE, Location: u.toString() } };
    };
    if (state !== null && state.length > MAX_STATE_CHARS) return back({ error: 'invalid_request', error_description: 'state too long' });
    if (q.get('response_type') !== 'code') return back({ error: 'unsupported_response_type', error_description: 'only response_type=code' });
    const challenge = q.get('code_challenge');
    if (q.get('code_challenge_method') !== 'S256' || !challenge || !CODE_CHALLENGE.test(challenge)) {
      return back({ error: 'invalid_request', error_description: 'PKCE with code_challenge_method=S256 is required' });
    }
    const resource = q.get('resource');
    if (resource !== null && resource !== mcpResourceUrl(origin)) return back({ error: 'invalid_target', error_description: 'unknown resource' });
    const grant = await this.ctx.grants.grantFor(clientId, { clientName: client.client_name, redirectUri });
    if (grant === 'busy') return back({ error: 'temporarily_unavailable', error_description: 'other clients are waiting for the user; retry later' });
    if (grant === null) return back({ error: 'access_denied', error_description: 'the user refused this client' });
    const code = this.ctx.tokens.issueCode({ clientId, clientName: client.client_name, grant }, redirectUri, challenge);
    return back({ code });
  }

  token(origin: string, form: URLSearchParams, dpop: string | undefined): HttpAnswer {
    const clientId = form.get('client_id');
    const client = this.client(clientId);
    if (!client || !clientId) return oauthError(401, 'invalid_client', 'unknown or forged client_id');
    const resource = form.get('resource');
    if (resource !== null && resource !== mcpResourceUrl(origin)) return oauthError(400, 'invalid_target', 'unknown resource');
    let jkt: string;
    try {
      jkt = verifyDpopProof(dpop, { method: 'POST', url: `${origin}/token`, now: this.ctx.now(), replay: this.ctx.replay }).jkt;
    } catch (e) {
      const busy = busyAnswer(e);
      if (busy) return oauthError(busy.status, 'temporarily_unavailable', busy.message, { 'Retry-After': String(busy.retryAfterS) });
      return oauthError(400, 'invalid_dpop_proof', isMcpServerError(e) ? e.message : 'invalid DPoP proof');
    }
    const type = form.get('grant_type');
    if (type === 'authorization_code') {
      const code = this.ctx.tokens.takeCode(form.get('code') ?? '');
      if (!code || code.clientId !== clientId) return oauthError(400, 'invalid_grant', 'unknown, used or expired authorization code');
      if ((form.get('redirect_uri') ?? code.redirectUri) !== code.redirectUri) return oauthError(400, 'invalid_grant', 'redirect_uri differs from the authorization request');
      const verifier = form.get('code_verifier') ?? '';
      if (!CODE_VERIFIER.test(verifier)) return oauthError(400, 'invalid_grant', 'code_verifier missing or malformed');
      const got = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
      const want = Buffer.from(code.codeChallenge);
      if (got.length !== want.length || !timingSafeEqual(got, want)) return oauthError(400, 'invalid_grant', 'code_verifier does not match the code_challenge');
      return this.issued(code, jkt);
    }
    if (type === 'refresh_token') {
      const old = this.ctx.tokens.takeRefresh(form.get('refresh_token') ?? '');
      if (!old || old.clientId !== clientId) return oauthError(400, 'invalid_grant', 'unknown, used or expired refresh token');
      if (old.jkt !== jkt) return oauthError(400, 'invalid_grant', 'the refresh token is bound to another DPoP key');
      return this.issued(old, jkt);
    }
    return oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }

  private issued(subject: { clientId: string; clientName: string; grant: 'readOnly' | 'default' | 'fullAccess' }, jkt: string): HttpAnswer {
    const t = this.ctx.tokens.issueTokens(subject, jkt);
    return {
      status: 200,
      headers: NO_STORE,
      body: { access_token: t.accessToken, token_type: 'DPoP', expires_in: t.expiresIn, refresh_token: t.refreshToken },
    };
  }
}
