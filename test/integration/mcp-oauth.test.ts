/**
 * OAuth sign-in of the MCP client (src/engine/mcp/oauth/) against a real OAuth-protected MCP
 * server built with the SDK (../support/oauth-mcp-server.ts): the SDK's streamable-HTTP client
 * transport with Vox's provider gets 401, registers dynamically, "opens the browser" (a fetch of
 * the authorize URL that follows the redirect to the loopback listener), and finishes with the
 * code; tokens live only in the secret store; the refresh token is used once the access token
 * expires; a wrong state is refused; a wait that runs out is `mcp/authFailed`.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { HostSecretStore } from '../../src/engine/host';
import { createMcpOAuthProvider, type McpOAuthSession } from '../../src/engine/mcp/oauth/provider';
import { McpError } from '../../src/engine/mcp/oauth/errors';
import { OAUTH_SECRET_PREFIX } from '../../src/engine/mcp/oauth/secrets';
import { VoxStore } from '../../src/engine/store/store';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** A secret store in memory whose keys and values a test can inspect. */
function inspectableSecrets(): HostSecretStore & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return { values, get: async (k) => values.get(k), set: async (k, v) => void values.set(k, v), delete: async (k) => void values.delete(k) };
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

const isAuthFailed = (e: unknown) => e instanceof McpError && e.domain === 'mcp' && e.code === 'authFailed';

describe('MCP OAuth sign-in (real SDK server with mcpAuthRouter + requireBearerAuth, loopback redirect)', function () {
  this.timeout(20_000);
  let dir: string;
  let server: OAuthMcpServer;
  let secrets: ReturnType<typeof inspectableSecrets>;
  const sessions: McpOAuthSession[] = [];
  const clients: Client[] = [];
  /** Pages the "browser" got back from the loopback listener. */
  let pages: Array<{ status: number; text: string }>;
  let opened: string[];

  /** The test's browser: GET the authorize URL, follow its redirect (to the loopback listener). */
  async function browse(url: string): Promise<void> {
    const r = await fetch(url, { redirect: 'manual' });
    const location = r.headers.get('location');
    assert.equal(r.status, 302, `authorize answered ${r.status}`);
    const back = await fetch(location!);
    pages.push({ status: back.status, text: await back.text() });
  }

  async function session(opts: { browser?: boolean } = {}): Promise<McpOAuthSession> {
    const s = await createMcpOAuthProvider({
      server: 'notes', serverUrl: server.mcpUrl, secrets,
      openUrl: async (url) => {
        opened.push(url);
        if (opts.browser !== false) void browse(url); // the browser comes back on its own
      },
    });
    sessions.push(s);
    return s;
  }

  async function connect(s: McpOAuthSession): Promise<Client> {
    const client = new Client({ name: 'vox-test', version: '0.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: s.provider }));
    return client;
  }

  /** 401 → registration → browser → loopback → finishAuth; then a new connection. */
  async function signIn(s: McpOAuthSession): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: s.provider });
    const first = new Client({ name: 'vox-test', version: '0.0.0' });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    const code = await s.waitForCode(AbortSignal.timeout(10_000));
    await transport.finishAuth(code);
    await first.close();
    return connect(s);
  }

  beforeEach(async () => {
    dir = makeTmpDir();
    server = await startOAuthMcpServer();
    secrets = inspectableSecrets();
    pages = [];
    opened = [];
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    for (const s of sessions.splice(0)) await s.close();
    await server.close();
    removeTmpDir(dir);
  });

  it('signs in: 401, dynamic registration, browser → loopback, finishAuth, a new connection lists and calls tools', async () => {
    const s = await session();
    const client = await signIn(s);
    assert.equal(opened.length, 1);
    const authorize = new URL(opened[0]!);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.match(authorize.searchParams.get('redirect_uri')!, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.ok(authorize.searchParams.get('state')!.length >= 40, 'a random state is sent');
    assert.deepEqual(pages.map((p) => p.status), [200]);
    assert.match(pages[0]!.text, /You can close this tab/);
    assert.deepEqual(server.provider.counts, { register: 1, authorize: 1, codeExchange: 1, refresh: 0 });
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t) => t.name), ['whoami']);
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    const clientId = [...server.provider.clients.keys()][0]!;
    assert.deepEqual(who.content, [{ type: 'text', text: `client ${clientId}` }]);
  });

  it('keeps registration and tokens only in the secret store, under vox.mcp.oauth.<server>.*; a new session reuses them', async () => {
    // A real store file in the temp dir stands for the rest of Vox's state on disk.
    const store = VoxStore.open(path.join(dir, 'vox.db'));
    try {
      await signIn(await session());
      const keys = [...secrets.values.keys()].sort();
      assert.deepEqual(keys, ['client', 'discovery', 'redirectPort', 'tokens'].map((p) => `${OAUTH_SECRET_PREFIX}.notes.${p}`), 'the spent PKCE verifier is gone');
      const stored = [...secrets.values.values()].join('\n');
      const liveTokens = [...server.provider.access.keys(), ...server.provider.refresh.keys()];
      assert.equal(liveTokens.length, 2);
      for (const t of liveTokens) assert.ok(stored.includes(t), 'the tokens are in the secret store');
      for (const f of filesUnder(dir)) {
        const bytes = fs.readFileSync(f).toString('latin1');
        for (const t of server.provider.issued) assert.ok(!bytes.includes(t), `${path.basename(f)} must not hold ${t.slice(0, 5)}…`);
      }
    } finally {
      store.close();
    }
    for (const s of sessions.splice(0)) await s.close();
    // Same secrets, next start: the same redirect port is taken again and the tokens work without a browser.
    const again = await session({ browser: false });
    const client = await connect(again);
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['whoami']);
    assert.equal(opened.length, 1, 'no second sign-in');
    assert.equal(server.provider.counts.register, 1);
  });

  it('a taken redirect port: stored tokens still work; the next sign-in registers again for the new port', async () => {
    await signIn(await session());
    const port = Number(new URL(opened[0]!).searchParams.get('redirect_uri')!.match(/:(\d+)\//)![1]);
    for (const c of clients.splice(0)) await c.close();
    for (const s of sessions.splice(0)) await s.close();
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', () => resolve()));
    try {
      const s = await session();
      // The access token still works (tokens are not bound to a redirect port) …
      assert.deepEqual((await (await connect(s)).listTools()).tools.map((t) => t.name), ['whoami']);
      assert.equal(opened.length, 1);
      // … but a new sign-in needs a registration for the new redirect URI; the old client's refresh token is not tried.
      server.expireAccessTokens();
      const client = await signIn(s);
      assert.equal(server.provider.counts.refresh, 0);
      assert.notEqual(new URL(opened[1]!).searchParams.get('redirect_uri'), new URL(opened[0]!).searchParams.get('redirect_uri'));
      assert.equal(server.provider.counts.register, 2);
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['whoami']);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it('uses the refresh token once the access token has expired (no browser)', async () => {
    const client = await signIn(await session());
    const before = secrets.values.get(`${OAUTH_SECRET_PREFIX}.notes.tokens`);
    server.expireAccessTokens();
    // A new connection (the first request answers 401 invalid_token) refreshes and retries.
    const fresh = await connect(sessions[0]!);
    assert.deepEqual((await fresh.callTool({ name: 'whoami', arguments: {} })).isError ?? false, false);
    assert.equal(server.provider.counts.refresh, 1);
    assert.equal(server.provider.counts.authorize, 1, 'no new authorization');
    assert.equal(opened.length, 1);
    const after = secrets.values.get(`${OAUTH_SECRET_PREFIX}.notes.tokens`);
    assert.notEqual(after, before, 'the rotated tokens are saved');
    assert.ok(after!.includes([...server.provider.access.keys()].at(-1)!));
    await client.close();
  });

  it('refuses a callback with a wrong or missing state, and still takes the right one', async () => {
    const s = await session({ browser: false });
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: s.provider });
    await assert.rejects(new Client({ name: 't', version: '0' }).connect(transport), UnauthorizedError);
    const authorize = new URL(opened[0]!);
    const redirect = authorize.searchParams.get('redirect_uri')!;
    const forged = await fetch(`${redirect}?code=forged&state=not-the-state`);
    assert.equal(forged.status, 400);
    assert.match(await forged.text(), /state does not match/);
    assert.equal((await fetch(`${redirect}?code=forged`)).status, 400);
    assert.equal((await fetch(redirect.replace('/callback', '/other'))).status, 404);
    await browse(opened[0]!);
    const code = await s.waitForCode(AbortSignal.timeout(10_000));
    assert.notEqual(code, 'forged');
    await transport.finishAuth(code);
    assert.deepEqual((await connect(s).then((c) => c.listTools())).tools.map((t) => t.name), ['whoami']);
    // The state is single use: replaying the good callback is refused.
    assert.equal((await fetch(`${redirect}?code=${code}&state=${authorize.searchParams.get('state')}`)).status, 400);
  });

  it('a wait that runs out, is cancelled, closed or refused by the server is mcp/authFailed', async () => {
    const s = await session({ browser: false });
    await assert.rejects(s.waitForCode(AbortSignal.timeout(50)), (e: unknown) => isAuthFailed(e) && /timed out/.test((e as Error).message));
    const ac = new AbortController();
    const cancelled = s.waitForCode(ac.signal);
    ac.abort();
    await assert.rejects(cancelled, (e: unknown) => isAuthFailed(e) && /cancelled/.test((e as Error).message));
    // The authorization server says no (?error=access_denied with the right state).
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: s.provider });
    await assert.rejects(new Client({ name: 't', version: '0' }).connect(transport), UnauthorizedError);
    const authorize = new URL(opened[0]!);
    const denied = await fetch(`${authorize.searchParams.get('redirect_uri')}?error=access_denied&state=${encodeURIComponent(authorize.searchParams.get('state')!)}`);
    assert.equal(denied.status, 400);
    await assert.rejects(s.waitForCode(AbortSignal.timeout(10_000)), (e: unknown) => isAuthFailed(e) && /access_denied/.test((e as Error).message));
    const pending = s.waitForCode(AbortSignal.timeout(10_000));
    await s.close();
    await assert.rejects(pending, isAuthFailed);
  });

  it('refuses a bad server name or URL with mcp/invalidConfig', async () => {
    const bad = (server: string, serverUrl: string) => createMcpOAuthProvider({ server, serverUrl, secrets, openUrl: async () => undefined });
    const invalidConfig = (e: unknown) => e instanceof McpError && e.code === 'invalidConfig';
    await assert.rejects(bad('', 'http://127.0.0.1:1/mcp'), invalidConfig);
    await assert.rejects(bad('x', 'not a url'), invalidConfig);
    await assert.rejects(bad('x', 'file:///etc/passwd'), invalidConfig);
  });
});
