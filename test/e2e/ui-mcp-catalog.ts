/**
 * End to end of the MCP client's OAuth sign-in (src/engine/mcp/oauth/) in a real browser: Debian
 * Chromium (the pass's browser, a fresh context) is the user's browser that `openUrl` opens. No
 * code-server is needed: the sign-in runs in the engine, and the page the user sees is Vox's
 * loopback page. Against the SDK-built OAuth-protected MCP server of test/support/oauth-mcp-server.ts.
 * Called by test/e2e/run-e2e.mjs (pass 1, set `mcp-catalog`); each check is one named check there:
 *   1. the SDK client gets 401; Chromium opens the authorize URL, follows its redirect to the
 *      loopback listener and shows "Signed in … You can close this tab"; the code comes back,
 *      `finishAuth` stores the tokens (secret store only) and a new connection lists the tools;
 *   2. a forged callback (wrong state) opened in the browser shows "Sign-in refused" and does not
 *      end the sign-in; the real one then does;
 *   3. screenshots (docs/screenshot-mcp-catalog-signin.png with --update-screenshot).
 */
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import * as h from './harness';
import { memorySecretStore } from '../../src/engine/host';
import { createMcpOAuthProvider, type McpOAuthSession } from '../../src/engine/mcp/oauth/provider';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { assert, checkScreenshots, readmePicture, stateGuard, timedOf, type UiCheckOptions } from './ui-session';

export const MCP_CATALOG_CHECKS = {
  signIn: 'mcp sign-in: Chromium follows the authorize redirect to Vox\'s loopback page ("Signed in"), the code comes back, a new connection lists the tools',
  forged: 'mcp sign-in: a forged callback (wrong state) shows "Sign-in refused" in the browser and does not end the sign-in',
  screenshots: 'mcp sign-in: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-mcp-catalog-signin', 150 * 1024);
/** Longest wait for the browser's round trip (the page load, the code). */
const ROUND_TRIP_MS = 20_000;

/** One sign-in whose browser is a page of `context`: `opened` collects the authorize URLs. */
async function browserSession(server: OAuthMcpServer, page: Page, opened: string[]): Promise<McpOAuthSession> {
  return createMcpOAuthProvider({
    server: 'notes', serverUrl: server.mcpUrl, secrets: memorySecretStore(),
    openUrl: async (url) => {
      opened.push(url);
      await page.goto(url, { timeout: ROUND_TRIP_MS, waitUntil: 'load' });
    },
  });
}

async function firstConnect(server: OAuthMcpServer, s: McpOAuthSession): Promise<StreamableHTTPClientTransport> {
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: s.provider });
  const refused = await new Client({ name: 'vox-e2e', version: '0' }).connect(transport).then(() => null, (e: unknown) => e);
  assert(refused instanceof UnauthorizedError, `the first connection should need a sign-in, got ${String(refused)}`);
  return transport;
}

export async function runMcpCatalogChecks(o: UiCheckOptions): Promise<void> {
  const timed = timedOf(o);
  const state = { signedIn: false };
  const requireState = stateGuard(state);
  const shots: Record<string, string> = {};
  let server: OAuthMcpServer | undefined;
  let context: BrowserContext | undefined;
  const sessions: McpOAuthSession[] = [];
  try {
    server = await startOAuthMcpServer();
    context = await o.browser.newContext({ viewport: { width: 760, height: 300 } });
    const page = await context.newPage();
    const srv = server;

    await o.check(MCP_CATALOG_CHECKS.signIn, () => timed(MCP_CATALOG_CHECKS.signIn, async () => {
      const opened: string[] = [];
      const s = await browserSession(srv, page, opened);
      sessions.push(s);
      const transport = await firstConnect(srv, s);
      assert(opened.length === 1, `openUrl was called ${opened.length} times`);
      await page.getByRole('heading', { name: 'Signed in' }).waitFor({ timeout: ROUND_TRIP_MS });
      const text = await page.locator('body').innerText();
      assert(/Vox is signed in to notes\. You can close this tab/.test(text), `the loopback page says: ${text}`);
      assert(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(page.url()), `the browser ended on ${page.url()}`);
      shots['e2e-mcp-catalog-signin'] = await h.screenshot(page, 'e2e-mcp-catalog-signin');
      shots[README.shot] = shots['e2e-mcp-catalog-signin'];
      const code = await s.waitForCode(AbortSignal.timeout(ROUND_TRIP_MS));
      await transport.finishAuth(code);
      const client = new Client({ name: 'vox-e2e', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.mcpUrl), { authProvider: s.provider }));
      const tools = (await client.listTools()).tools.map((t) => t.name);
      await client.close();
      assert(tools.join(',') === 'whoami', `tools after the sign-in: ${tools.join(',')}`);
      state.signedIn = true;
    }), page);

    await o.check(MCP_CATALOG_CHECKS.forged, () => timed(MCP_CATALOG_CHECKS.forged, async () => {
      requireState('signedIn');
      const opened: string[] = [];
      // This sign-in's browser does not come back on its own: the test opens the forged callback first.
      const s = await createMcpOAuthProvider({ server: 'notes', serverUrl: srv.mcpUrl, secrets: memorySecretStore(), openUrl: async (url) => void opened.push(url) });
      sessions.push(s);
      const transport = await firstConnect(srv, s);
      let settled = false;
      const waiting = s.waitForCode(AbortSignal.timeout(4 * ROUND_TRIP_MS)).finally(() => (settled = true));
      const redirect = new URL(opened[0]!).searchParams.get('redirect_uri')!;
      const forged = await page.goto(`${redirect}?code=forged&state=not-the-state`, { timeout: ROUND_TRIP_MS });
      assert(forged?.status() === 400, `the forged callback answered ${forged?.status()}`);
      await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor({ timeout: ROUND_TRIP_MS });
      shots['e2e-mcp-catalog-refused'] = await h.screenshot(page, 'e2e-mcp-catalog-refused');
      assert(!settled, 'the forged callback ended the sign-in');
      await page.goto(opened[0]!, { timeout: ROUND_TRIP_MS });
      await page.getByRole('heading', { name: 'Signed in' }).waitFor({ timeout: ROUND_TRIP_MS });
      const code = await waiting;
      assert(code !== 'forged', 'the forged code was taken');
      await transport.finishAuth(code);
    }), page);

    await o.check(MCP_CATALOG_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-mcp-catalog-signin', 'e2e-mcp-catalog-refused'], README);
    });
  } catch (e) {
    const why = `the mcp sign-in set did not start: ${(e as Error).message}`;
    for (const name of Object.values(MCP_CATALOG_CHECKS)) await o.check(name, () => Promise.reject(new Error(why)));
  } finally {
    for (const s of sessions) await s.close().catch(() => undefined);
    await context?.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
  }
}
