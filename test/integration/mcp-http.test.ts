/**
 * Vox's MCP server over HTTP (src/mcp-server/http/) on a real loopback port: the official SDK
 * client goes through the whole OAuth 2.1 flow (discovery, stateless registration, PKCE,
 * DPoP-bound tokens made with jose) and calls tools; the grant prompt is asked once per client
 * and a refusal is access_denied; each DPoP and token misuse is refused with 401.
 */
import { strict as assert } from 'node:assert';
import { memorySecretStore, type HostSecretStore } from '../../src/engine/host';
import { startVoxMcpHttpServer, type VoxMcpHttpServer } from '../../src/mcp-server/http/server';
import type { McpGrant } from '../../src/mcp-server/http/tokens';
import { CLIENT_KEY_SECRET } from '../../src/mcp-server/http/client-id';
import { MAX_MCP_SESSIONS } from '../../src/mcp-server/http/mcp-endpoint';
import { DpopSigner, TestOAuthProvider, connectWithOAuth, followAuthorize, pkce, rawSignIn, testServerFor, tokenRequest } from '../support/mcp-dpop-client';

const text = (r: unknown) => ((r as { content: { text: string }[] }).content[0]!.text);

describe('MCP server over HTTP: OAuth 2.1 + DPoP', function () {
  this.timeout(30_000);
  let server: VoxMcpHttpServer;
  let origin: string;
  let secrets: HostSecretStore;
  let asked: { clientName: string; redirectUri: string }[];
  let answer: McpGrant | null;

  beforeEach(async () => {
    secrets = memorySecretStore();
    asked = [];
    answer = 'readOnly';
    server = await startVoxMcpHttpServer({
      host: '127.0.0.1',
      port: 0,
      secrets,
      serverFor: testServerFor,
      chooseGrant: async (c) => {
        asked.push(c);
        return answer;
      },
    });
    origin = new URL(server.url).origin;
  });
  afterEach(() => server.close());

  it('the SDK client signs in (401 → metadata → register → authorize → DPoP token), lists tools and calls one under the chosen grant', async () => {
    const signer = await DpopSigner.create('ES256');
    const provider = new TestOAuthProvider('Test Agent');
    const seen = { requests: [] as string[] };
    const { client } = await connectWithOAuth(server.url, provider, signer, seen);
    assert.deepEqual(asked, [{ clientName: 'Test Agent', redirectUri: provider.redirect }]);
    assert.equal(provider.saved?.token_type, 'DPoP');
    assert.match(String(provider.info?.client_id), /^vox_[0-9a-f]+\.[0-9a-f]{64}$/);
    for (const step of ['GET /.well-known/oauth-authorization-server', 'POST /register', 'POST /token', 'POST /mcp']) assert.ok(seen.requests.includes(step), `${step} in ${seen.requests.join(', ')}`);
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['echo', 'grant']);
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'readOnly|Test Agent|hi');
    assert.equal(text(await client.callTool({ name: 'grant', arguments: {} })), 'readOnly');
    await client.close();
    assert.ok(await secrets.get(CLIENT_KEY_SECRET), 'the MAC key is in the secret store');
  });

  it('remembers the grant per client id: the second sign-in of the same client does not ask again; another client is asked', async () => {
    answer = 'fullAccess';
    const signer = await DpopSigner.create('EdDSA');
    const provider = new TestOAuthProvider('Agent One');
    const first = await connectWithOAuth(server.url, provider, signer);
    await first.client.close();
    provider.saved = undefined;
    answer = null; // would refuse if asked
    const again = await connectWithOAuth(server.url, provider, signer);
    assert.equal(text(await again.client.callTool({ name: 'grant', arguments: {} })), 'fullAccess');
    await again.client.close();
    assert.equal(asked.length, 1);
    answer = 'default';
    const other = await connectWithOAuth(server.url, new TestOAuthProvider('Agent Two'), await DpopSigner.create('RS256'));
    assert.equal(text(await other.client.callTool({ name: 'grant', arguments: {} })), 'default');
    await other.client.close();
    assert.equal(asked.length, 2);
  });

  it('a refused grant (chooseGrant → null) redirects with error=access_denied and issues no code; nothing is remembered', async () => {
    answer = null;
    const provider = new TestOAuthProvider('Refused Agent');
    await assert.rejects(connectWithOAuth(server.url, provider, await DpopSigner.create()), /access_denied/);
    assert.equal(provider.code, undefined);
    assert.equal(provider.authError, 'access_denied');
    answer = 'readOnly';
    const { client } = await connectWithOAuth(server.url, new TestOAuthProvider('Refused Agent'), await DpopSigner.create());
    await client.close();
    assert.equal(asked.length, 2, 'asked again after a refusal');
  });

  it('metadata: protected resource (RFC 9728) and authorisation server (RFC 8414) with DPoP algs and PKCE S256 only', async () => {
    const pr = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    assert.equal(pr.resource, server.url);
    assert.deepEqual(pr.authorization_servers, [origin]);
    assert.equal(pr.dpop_bound_access_tokens_required, true);
    const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(as.issuer, origin);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.dpop_signing_alg_values_supported, ['ES256', 'ES384', 'EdDSA', 'RS256']);
    assert.equal(as.registration_endpoint, `${origin}/register`);
  });

  async function mcpPost(headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) {
    const r = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
    return { status: r.status, www: r.headers.get('www-authenticate') ?? '', session: r.headers.get('mcp-session-id'), body: (await r.text()) };
  }

  it('/mcp without a token answers 401 with a DPoP challenge naming the resource metadata; a Bearer token or a token without proof is refused', async () => {
    const none = await mcpPost({});
    assert.equal(none.status, 401);
    assert.match(none.www, /^DPoP /);
    assert.ok(none.www.includes(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`));
    const signer = await DpopSigner.create();
    const t = await rawSignIn(origin, signer);
    assert.equal(t.tokenType, 'DPoP');
    const bearer = await mcpPost({ authorization: `Bearer ${t.accessToken}`, dpop: await signer.proof('POST', server.url, t.accessToken) });
    assert.equal(bearer.status, 401);
    assert.match(bearer.www, /error="invalid_token"/);
    const noProof = await mcpPost({ authorization: `DPoP ${t.accessToken}` });
    assert.equal(noProof.status, 401);
    assert.match(noProof.www, /error="invalid_dpop_proof"/);
    const ok = await mcpPost({ authorization: `DPoP ${t.accessToken}`, dpop: await signer.proof('POST', server.url, t.accessToken) });
    assert.equal(ok.status, 200, ok.body);
    assert.ok(ok.session);
  });

  it('refuses at /mcp: a replayed proof, wrong htm, wrong htu, stale iat, bad signature, wrong typ, a missing ath, and client B proving client A’s token', async () => {
    const a = await DpopSigner.create();
    const b = await DpopSigner.create();
    const ta = await rawSignIn(origin, a, 'Client A');
    await rawSignIn(origin, b, 'Client B');
    const auth = { authorization: `DPoP ${ta.accessToken}` };
    const good = await a.proof('POST', server.url, ta.accessToken);
    assert.equal((await mcpPost({ ...auth, dpop: good })).status, 200);
    const cases: [string, string][] = [
      ['replayed jti', good],
      ['wrong htm', await a.proof('GET', server.url, ta.accessToken)],
      ['wrong htu', await a.proof('POST', `${origin}/token`, ta.accessToken)],
      ['stale iat', await a.proof('POST', server.url, ta.accessToken, { claims: { iat: Math.floor(Date.now() / 1000) - 301 } })],
      ['wrong typ', await a.proof('POST', server.url, ta.accessToken, { header: { typ: 'JWT' } })],
      ['no ath', await a.proof('POST', server.url)],
      ['key of client B', await b.proof('POST', server.url, ta.accessToken)],
      ['bad signature (B signs, A’s jwk in the header)', await b.proof('POST', server.url, ta.accessToken, { header: { jwk: a.jwk } })],
    ];
    for (const [what, dpop] of cases) {
      const r = await mcpPost({ ...auth, dpop });
      assert.equal(r.status, 401, what);
      assert.match(r.www, /error="invalid_dpop_proof"/, what);
      assert.doesNotMatch(r.body, /at \w+ \(|node_modules|\/work\//, what);
    }
  });

  it('a session is bound to its client: client B cannot use client A’s Mcp-Session-Id', async () => {
    const a = await DpopSigner.create();
    const b = await DpopSigner.create();
    const ta = await rawSignIn(origin, a, 'A');
    const tb = await rawSignIn(origin, b, 'B');
    const open = await mcpPost({ authorization: `DPoP ${ta.accessToken}`, dpop: await a.proof('POST', server.url, ta.accessToken) });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const headers = (t: string, s: DpopSigner) => async () => ({ authorization: `DPoP ${t}`, dpop: await s.proof('POST', server.url, t), 'mcp-session-id': open.session!, 'mcp-protocol-version': '2025-06-18' });
    const asB = await mcpPost(await headers(tb.accessToken, b)(), list);
    assert.equal(asB.status, 404);
    const asA = await mcpPost(await headers(ta.accessToken, a)(), list);
    assert.equal(asA.status, 200, asA.body);
    assert.match(asA.body, /"echo"/);
  });

  it(`at most ${MAX_MCP_SESSIONS} sessions are open at once (503 JSON-RPC error beyond), and a closed one frees its place`, async () => {
    const signer = await DpopSigner.create();
    const t = await rawSignIn(origin, signer);
    const auth = async () => ({ authorization: `DPoP ${t.accessToken}`, dpop: await signer.proof('POST', server.url, t.accessToken) });
    const sessions: string[] = [];
    for (let i = 0; i < MAX_MCP_SESSIONS; i++) {
      const r = await mcpPost(await auth());
      assert.equal(r.status, 200, r.body);
      sessions.push(r.session!);
    }
    const full = await mcpPost(await auth());
    assert.equal(full.status, 503);
    assert.match(JSON.parse(full.body).error.message, /Too many MCP sessions/);
    const del = await fetch(server.url, { method: 'DELETE', headers: { authorization: `DPoP ${t.accessToken}`, dpop: await signer.proof('DELETE', server.url, t.accessToken), 'mcp-session-id': sessions[0]!, 'mcp-protocol-version': '2025-06-18' } });
    assert.equal(del.status, 200);
    assert.equal((await mcpPost(await auth())).status, 200, 'room again after a DELETE');
  });

  it('a forged client id is refused at /authorize and /token (invalid_client); PKCE S256 is required; codes are single-use and bound to the verifier', async () => {
    const signer = await DpopSigner.create();
    const reg = (await (await fetch(`${origin}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'P', redirect_uris: ['http://127.0.0.1:9/cb'] }) })).json()) as { client_id: string };
    const forged = reg.client_id.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    const { verifier, challenge } = pkce();
    const q = (over: Record<string, string>) => `${origin}/authorize?${new URLSearchParams({ response_type: 'code', client_id: reg.client_id, redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: challenge, code_challenge_method: 'S256', ...over })}`;
    assert.deepEqual(await followAuthorize(q({ client_id: forged })), { status: 400, error: 'invalid_client' });
    assert.equal((await followAuthorize(q({ redirect_uri: 'http://127.0.0.1:9/other' }))).status, 400, 'unregistered redirect_uri: no redirect');
    assert.equal((await followAuthorize(q({ code_challenge_method: 'plain' }))).error, 'invalid_request');
    const noPkce = new URL(q({}));
    noPkce.searchParams.delete('code_challenge');
    assert.equal((await followAuthorize(noPkce)).error, 'invalid_request');
    const ok = await followAuthorize(q({ state: 'xyz' }));
    assert.equal(ok.state, 'xyz');
    assert.ok(ok.code);
    const form = { grant_type: 'authorization_code', code: ok.code!, code_verifier: verifier, client_id: reg.client_id, redirect_uri: 'http://127.0.0.1:9/cb' };
    assert.equal((await tokenRequest(origin, signer, { ...form, client_id: forged })).body.error, 'invalid_client');
    assert.equal((await tokenRequest(origin, undefined, form)).body.error, 'invalid_dpop_proof', 'the token request needs a DPoP proof');
    const ok2 = await followAuthorize(q({}));
    assert.equal((await tokenRequest(origin, signer, { ...form, code: ok2.code!, code_verifier: pkce().verifier })).body.error, 'invalid_grant', 'wrong verifier');
    assert.equal((await tokenRequest(origin, signer, { ...form, code: ok2.code! })).body.error, 'invalid_grant', 'the code was used up by the failed attempt');
    const ok3 = await followAuthorize(q({}));
    const t = await tokenRequest(origin, signer, { ...form, code: ok3.code! });
    assert.equal(t.status, 200);
    assert.equal(t.body.token_type, 'DPoP');
    assert.equal((await tokenRequest(origin, signer, { ...form, code: ok3.code! })).body.error, 'invalid_grant', 'a code is single-use');
  });

  it('refresh tokens rotate and stay bound to the DPoP key that got them', async () => {
    const signer = await DpopSigner.create();
    const t = await rawSignIn(origin, signer);
    const thief = await DpopSigner.create();
    assert.equal((await tokenRequest(origin, thief, { grant_type: 'refresh_token', refresh_token: t.refreshToken, client_id: t.clientId })).body.error, 'invalid_grant');
    const t2 = await rawSignIn(origin, signer);
    const r = await tokenRequest(origin, signer, { grant_type: 'refresh_token', refresh_token: t2.refreshToken, client_id: t2.clientId });
    assert.equal(r.status, 200);
    assert.notEqual(r.body.refresh_token, t2.refreshToken);
    assert.equal((await tokenRequest(origin, signer, { grant_type: 'refresh_token', refresh_token: t2.refreshToken, client_id: t2.clientId })).body.error, 'invalid_grant', 'rotated away');
    const fresh = String(r.body.access_token);
    assert.equal((await mcpPost({ authorization: `DPoP ${fresh}`, dpop: await signer.proof('POST', server.url, fresh) })).status, 200);
  });

  it('DNS rebinding and cross-site pages are refused: a foreign Host (421) or Origin (403); binding anywhere but 127.0.0.1 is refused', async () => {
    const http = await import('node:http');
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: server.port, path: '/.well-known/oauth-authorization-server', headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    assert.equal(await status({ host: `evil.example:${server.port}` }), 421);
    assert.equal(await status({ host: `127.0.0.1:${server.port + 1}` }), 421);
    assert.equal(await status({ host: `localhost:${server.port}` }), 200);
    assert.equal(await status({ host: `127.0.0.1:${server.port}`, origin: 'https://evil.example' }), 403);
    await assert.rejects(startVoxMcpHttpServer({ host: '0.0.0.0' as '127.0.0.1', port: 0, secrets, serverFor: testServerFor, chooseGrant: async () => null }), (e: Error & { code?: string }) => e.code === 'bindFailed');
    await assert.rejects(startVoxMcpHttpServer({ host: '127.0.0.1', port: server.port, secrets, serverFor: testServerFor, chooseGrant: async () => null }), (e: Error & { code?: string }) => e.code === 'bindFailed' && /EADDRINUSE/.test(e.message));
  });
});

describe('MCP server over HTTP: unexpected failures', () => {
  it('a session factory that throws answers a generic JSON-RPC "Internal error" (no message, no stack) and tells onError', async () => {
    const seen: unknown[] = [];
    const server = await startVoxMcpHttpServer({
      host: '127.0.0.1',
      port: 0,
      secrets: memorySecretStore(),
      serverFor: () => {
        throw new Error('secret detail at /work/x.ts:1');
      },
      chooseGrant: async () => 'readOnly',
      onError: (e) => seen.push(e),
    });
    try {
      const signer = await DpopSigner.create();
      const t = await rawSignIn(new URL(server.url).origin, signer);
      const r = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${t.accessToken}`, dpop: await signer.proof('POST', server.url, t.accessToken) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }),
      });
      assert.equal(r.status, 500);
      assert.deepEqual(await r.json(), { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
      assert.equal(seen.length, 1);
      assert.match(String((seen[0] as Error).message), /secret detail/);
    } finally {
      await server.close();
    }
  });
});

describe('MCP server over HTTP: the clock (injected now)', () => {
  it('a proof older than 300 s by the server’s clock is refused, and an access token expires after its TTL', async () => {
    let now = Date.now();
    const server = await startVoxMcpHttpServer({ host: '127.0.0.1', port: 0, secrets: memorySecretStore(), serverFor: testServerFor, chooseGrant: async () => 'readOnly', now: () => now });
    try {
      const origin = new URL(server.url).origin;
      const signer = await DpopSigner.create();
      signer.clock = () => Math.floor(now / 1000);
      const t = await rawSignIn(origin, signer);
      const post = async (dpop: string) =>
        (await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${t.accessToken}`, dpop }, body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}' })).headers.get('www-authenticate');
      const made = await signer.proof('POST', server.url, t.accessToken);
      now += 301_000;
      assert.match(String(await post(made)), /invalid_dpop_proof/);
      assert.equal(await post(await signer.proof('POST', server.url, t.accessToken)), null, 'a fresh proof at +301 s: the 600 s token is still valid');
      now += 300_000;
      assert.match(String(await post(await signer.proof('POST', server.url, t.accessToken))), /error="invalid_token"/, 'at +601 s the access token has expired');
    } finally {
      await server.close();
    }
  });
});
