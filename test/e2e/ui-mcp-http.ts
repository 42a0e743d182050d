/**
 * UI end to end of Vox's MCP server over HTTP in a real VS Code (code-server +
 * Chromium, own session): the extension host listens on 127.0.0.1 and this process plays the
 * MCP client (OAuth with DPoP proofs made by jose).
 * Called by test/e2e/run-e2e.mjs (pass 1, set `mcphttp`); each check is one named check there:
 *   1. "Vox: Show MCP Server Address" with the server off (the default) offers Enable; after it,
 *      it shows the 127.0.0.1 URL and the `claude mcp add` line (Claude Code over stdio: it sends Bearer, the server needs DPoP);
 *   2. a client's first sign-in opens the grant prompt (read only / default / full access /
 *      refuse; screenshot, the README picture); "Read only" → a code → a DPoP-bound token that
 *      /mcp lets through (and a 401 without the proof);
 *   3. the same client signing in again is not asked (the grant is remembered);
 *   4. another client refused in the prompt gets access_denied;
 *   5. unticking `vox.mcpServer.enabled` in the Settings editor stops the server (the port refuses connections);
 *   6. screenshots (docs/screenshot-mcp-http.png with --update-screenshot).
 */
import type { Page } from 'playwright-core';
import * as h from './harness';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { exactly, toast } from './ui-workbench';
import { DpopSigner, followAuthorize, pkce, tokenRequest } from '../support/mcp-dpop-client';
import { defineUiSet } from './ui-set';

export const MCP_HTTP_CHECKS = {
  address: 'MCP server UI: "Vox: Show MCP Server Address" offers to enable the server, then shows the 127.0.0.1 URL and the claude mcp add command',
  prompt: 'MCP server UI: a client\'s first sign-in shows the grant prompt; "Read only" gives it a DPoP-bound token /mcp accepts',
  remembered: 'MCP server UI: the same client signing in again is not asked (grant remembered)',
  refuse: 'MCP server UI: a client refused in the prompt gets access_denied',
  disable: 'MCP server UI: unticking vox.mcpServer.enabled in the Settings editor stops the server',
  screenshots: 'MCP server UI: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-mcp-http', 250 * 1024);
const REDIRECT = 'http://127.0.0.1:9/callback';
const widget = (p: Page) => p.locator('.quick-input-widget');

async function register(origin: string, name: string): Promise<string> {
  const r = await fetch(`${origin}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT] }) });
  const body = (await r.json()) as { client_id?: string };
  assert(r.status === 201 && body.client_id, `register answered ${r.status} ${JSON.stringify(body)}`);
  return body.client_id;
}

function authorizeUrl(origin: string, clientId: string, challenge: string): string {
  return `${origin}/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'e2e' })}`;
}

async function promptShown(p: Page, clientName: string): Promise<void> {
  await widget(p).locator('.quick-input-title', { hasText: `"${clientName}" wants to connect` }).first().waitFor({ timeout: 30_000 });
  for (const row of ['Read only', 'Default', 'Full access', 'Refuse']) await widget(p).locator('.quick-input-list .label-name', { hasText: exactly(row) }).first().waitFor({ timeout: 10_000 });
}

export const runMcpHttpChecks = defineUiSet({
  name: 'MCP server UI',
  dir: 'mcphttp',
  checks: MCP_HTTP_CHECKS,
  state: { address: false, signedIn: false },
  settings: { 'vox.model': 'local:demo' },
  run: async ({ o, page: p, shots, shot, openWorkbench, check, requireState, state }) => {
    let url = '';
    let origin = '';
    const signer = await DpopSigner.create();
    let clientId = '';

    await check(MCP_HTTP_CHECKS.address, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Show MCP Server Address', 60_000);
      // Off by default: the command offers to turn it on (a real settings update).
      const off = toast(p, "Vox's MCP server is off");
      await off.waitFor({ state: 'visible', timeout: 30_000 });
      await off.locator('.monaco-button', { hasText: 'Enable' }).first().click({ timeout: 10_000 });
      const t = toast(p, 'Vox MCP server: http://127.0.0.1:');
      await t.waitFor({ state: 'visible', timeout: 60_000 });
      const text = (await t.innerText()).replace(/\s+/g, ' ');
      const m = /Vox MCP server: (http:\/\/127\.0\.0\.1:\d+\/mcp) \(copied\)/.exec(text);
      assert(m, `the toast says ${JSON.stringify(text)}`);
      url = m[1]!;
      origin = new URL(url).origin;
      assert(text.includes('claude mcp add vox -- vox mcp serve --stdio --grant readOnly'), `no claude mcp add line in ${JSON.stringify(text)}`);
      const meta = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as { issuer?: string };
      assert(meta.issuer === origin, `metadata issuer ${meta.issuer}`);
      await shot('e2e-mcp-http-address');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      state.address = true;
    });

    await check(MCP_HTTP_CHECKS.prompt, async () => {
      requireState('address');
      clientId = await register(origin, 'E2E Agent');
      const { verifier, challenge } = pkce();
      const pending = followAuthorize(authorizeUrl(origin, clientId, challenge));
      await promptShown(p, 'E2E Agent');
      await shot(README.shot);
      await shot('e2e-mcp-http-prompt');
      await h.answerQuickInput(p, 'Read only');
      const a = await pending;
      assert(a.code && a.state === 'e2e', `authorize answered ${JSON.stringify(a)}`);
      const t = await tokenRequest(origin, signer, { grant_type: 'authorization_code', code: a.code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
      assert(t.status === 200 && t.body.token_type === 'DPoP', `token answered ${t.status} ${JSON.stringify(t.body)}`);
      const token = String(t.body.access_token);
      const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${token}` };
      const bare = await fetch(url, { method: 'POST', headers, body: init });
      assert(bare.status === 401 && /invalid_dpop_proof/.test(bare.headers.get('www-authenticate') ?? ''), `without a proof /mcp answered ${bare.status}`);
      const proven = await fetch(url, { method: 'POST', headers: { ...headers, dpop: await signer.proof('POST', url, token) }, body: init });
      // Past authentication: the session's McpServer answers (the tool set's merge decides what).
      assert(proven.status !== 401 && !proven.headers.get('www-authenticate'), `with the proof /mcp answered ${proven.status} ${await proven.text()}`);
      state.signedIn = true;
    });

    await check(MCP_HTTP_CHECKS.remembered, async () => {
      requireState('signedIn');
      const a = await followAuthorize(authorizeUrl(origin, clientId, pkce().challenge));
      assert(a.code, `the second authorize answered ${JSON.stringify(a)}`);
      assert((await widget(p).locator('.quick-input-title', { hasText: 'wants to connect' }).count()) === 0 || !(await widget(p).isVisible()), 'a grant prompt opened again');
    });

    await check(MCP_HTTP_CHECKS.refuse, async () => {
      requireState('address');
      const other = await register(origin, 'Unwanted Agent');
      const pending = followAuthorize(authorizeUrl(origin, other, pkce().challenge));
      await promptShown(p, 'Unwanted Agent');
      await h.answerQuickInput(p, 'Refuse');
      const a = await pending;
      assert(a.error === 'access_denied' && !a.code, `authorize answered ${JSON.stringify(a)}`);
    });

    await check(MCP_HTTP_CHECKS.disable, async () => {
      requireState('address');
      await h.runCommand(p, 'Preferences: Open Settings (UI)', 30_000);
      const editor = p.locator('.settings-editor');
      await editor.waitFor({ state: 'visible', timeout: 20_000 });
      await editor.locator('.settings-header .suggest-input-container').first().click({ timeout: 10_000 });
      await p.keyboard.type('vox.mcpServer.enabled');
      const item = editor.locator('.setting-item-bool', { hasText: 'Run Vox\'s own MCP server' }).first();
      await item.waitFor({ state: 'visible', timeout: 20_000 });
      const box = item.locator('.setting-value-checkbox').first();
      assert((await box.getAttribute('aria-checked')) === 'true', 'the setting is not shown as on');
      await box.click({ timeout: 10_000 });
      await h.waitFor('the MCP server to stop', 30_000, async () => {
        try {
          await fetch(`${origin}/.well-known/oauth-authorization-server`);
          return false;
        } catch {
          return true;
        }
      }, 250);
      await shot('e2e-mcp-http-disabled');
    });

    await o.check(MCP_HTTP_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-mcp-http-address', 'e2e-mcp-http-prompt', 'e2e-mcp-http-disabled'], README);
    }, p);
  },
});
