/**
 * UI end to end of Vox as an MCP client in a real VS Code (code-server +
 * Chromium, own session with a fresh profile on the sample workspace plus a `.vscode/mcp.json`
 * naming the stdio MCP server of ./fixtures/mcp-notes-server.mjs as "notes"). Called by
 * test/e2e/run-e2e.mjs (`--set mcp`); each check is one named, counted check there:
 *   1. "Vox: Show MCP Servers" shows the view: `notes` connected over stdio with its 3 tools, the
 *      read-only ones marked, every tool ticked (screenshot docs/screenshot-mcp-servers.png);
 *   2. unticking `add_note` persists it (`vox.mcp.disabledTools` holds `notes/add_note` in the
 *      workspace or user settings) and the row shows 2/3 tools, the checkbox unticked;
 *   3. in the chat, `/` lists the server's prompts as `/mcp.notes.daily` and `/mcp.notes.summarise`
 *      (screenshot docs/screenshot-mcp-slash.png); choosing `summarise` asks for its `topic`
 *      inline and inserts the text the real server expands it to;
 *   4. that text sent: the scripted model calls `mcp__notes__list_notes`, which runs on the real
 *      server (read-only: no approval); its card shows the `notes` badge and the server's notes,
 *      and the next request carries them as the tool result;
 *   5. "Vox: Restart MCP Server" (picked from the palette) restarts it: connected again, the row
 *      counts "1 restart"; "Vox: Disable MCP Server" shows it disabled and its prompts leave the
 *      chat's slash menu; "Vox: Enable MCP Server" connects it again;
 *   6. the row's inline "Open MCP Config File" opens `.vscode/mcp.json`;
 *   7. "Add MCP Server…" (a title action of the view) with no `.vscode/mcp.json` creates it from the
 *      template (JSONC, its example commented out) and opens it;
 *   8. screenshots (with --update-screenshot: both README pictures copied to docs/).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import * as h from './harness';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { SIDEBAR } from './ui-chat-context';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { clickInlineAction, expandRow, treeRow, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const MCP_CHECKS = {
  view: 'mcp UI: "Vox: Show MCP Servers" shows the stdio server of .vscode/mcp.json connected with its tools (read-only ones marked)',
  untick: 'mcp UI: unticking a tool in the MCP Servers view persists to the settings and the server row counts it out',
  slash: 'mcp UI: the composer\'s slash menu lists the server\'s prompts; one with an argument asks for it and inserts the server\'s text',
  toolCall: 'mcp UI: the model calls the MCP tool; it runs on the real server and its card shows the server badge and the result',
  lifecycle: 'mcp UI: Restart from the palette restarts the server (the row counts it); Disable and Enable stop and reconnect it',
  openConfig: 'mcp UI: the server row\'s inline "Open MCP Config File" opens .vscode/mcp.json',
  add: 'mcp UI: "Add MCP Server…" (the view\'s title action) creates .vscode/mcp.json from the template and opens it',
  screenshots: 'mcp UI: screenshots in test-results/ and the README pictures',
} as const;

const SERVER = 'notes';
const FIXTURE = path.join(h.REPO_ROOT, 'test', 'e2e', 'fixtures', 'mcp-notes-server.mjs');
const VIEW_PICTURE = readmePicture('screenshot-mcp-servers', 250 * 1024);
const SLASH_PICTURE = readmePicture('screenshot-mcp-slash', 250 * 1024);

export const runMcpChecks = defineUiSet({
  name: 'mcp UI',
  dir: 'mcp',
  checks: MCP_CHECKS,
  state: { connected: false, expanded: false },
  fake: { responses: [] },
  prepare: ({ dirs }) => {
    fs.mkdirSync(path.join(dirs.workspace, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(dirs.workspace, '.vscode', 'mcp.json'), JSON.stringify({
      // VS Code's format; the command is this Node, so the server needs nothing installed.
      servers: { [SERVER]: { type: 'stdio', command: process.execPath, args: [FIXTURE] } },
    }, null, 2));
  },
  settings: ({ fake }) => ({ 'vox.model': 'compat:mcp-e2e', 'vox.compatBaseUrl': fake.baseUrl }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, dirs, fake: fk }) => {
    const pane = (): Locator => p.locator(`${SIDEBAR} .pane`, { has: p.locator('.pane-header', { hasText: 'MCP Servers' }) });
    const serverRow = () => treeRow(pane(), SERVER);
    const toolRow = (tool: string) => treeRow(pane(), tool);
    const settingsFiles = [path.join(dirs.workspace, '.vscode', 'settings.json'), path.join(dirs.userData, 'User', 'settings.json')];
    const disabledTools = (): string[] => settingsFiles.flatMap((f) => {
      try {
        const v = (JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>)['vox.mcp.disabledTools'];
        return Array.isArray(v) ? v.map(String) : [];
      } catch {
        return [];
      }
    });

    // ---- 1. The view
    await check(MCP_CHECKS.view, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Show MCP Servers', 45_000);
      await widenSideBar(p, 520);
      const row = serverRow();
      await row.waitFor({ timeout: 30_000 });
      let text = '';
      await h.waitFor('the server to connect', 45_000, async () => /connected · stdio · 3 tools/.test((text = (await row.innerText().catch(() => '')).replace(/\s+/g, ' '))), 250);
      await expandRow(row);
      for (const [tool, kind] of [['list_notes', 'read-only'], ['add_note', 'execute'], ['count_notes', 'read-only']] as const) {
        const t = toolRow(tool);
        await t.waitFor({ timeout: 15_000 });
        const line = (await t.innerText()).replace(/\s+/g, ' ');
        assert(line.includes(kind), `the ${tool} row reads ${JSON.stringify(line)} (want ${kind})`);
        const box = t.locator('.custom-view-tree-node-item-checkbox');
        assert((await box.getAttribute('aria-checked')) === 'true', `${tool} is not ticked`);
      }
      const summary = (await pane().innerText()).replace(/\s+/g, ' ');
      assert(summary.includes('2 prompts · 1 resource'), `the view reads ${JSON.stringify(summary.slice(0, 300))} (server row: ${text})`);
      await shot(VIEW_PICTURE.shot);
      await shot('e2e-mcp-view');
      state.connected = true;
    });

    // ---- 2. Untick a tool
    await check(MCP_CHECKS.untick, async () => {
      requireState('connected');
      const box = toolRow('add_note').locator('.custom-view-tree-node-item-checkbox');
      await box.click({ timeout: 10_000 });
      await h.waitFor('vox.mcp.disabledTools to hold notes/add_note', 20_000, async () => disabledTools().includes(`${SERVER}/add_note`), 250);
      await h.waitFor('the server row to count the tool out', 20_000, async () => /2\/3 tools/.test(await serverRow().innerText().catch(() => '')), 250);
      await h.waitFor('the checkbox to show unticked', 10_000, async () => (await toolRow('add_note').locator('.custom-view-tree-node-item-checkbox').getAttribute('aria-checked')) === 'false', 200);
      await p.mouse.move(900, 400); // no checkbox hover left in the next screenshots
      await shot('e2e-mcp-unticked');
    });

    // ---- 3. Prompts in the slash menu
    await check(MCP_CHECKS.slash, async () => {
      requireState('connected');
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      await area.waitFor({ timeout: 30_000 });
      await area.click();
      await area.pressSequentially('/');
      const menu = view.locator('#vox-slash-menu');
      await h.waitFor('the prompts in the slash menu', 20_000, async () => {
        const names = await menu.locator('[role="option"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))).catch(() => [] as (string | null)[]);
        return names.includes(`mcp.${SERVER}.daily`) && names.includes(`mcp.${SERVER}.summarise`);
      }, 250);
      await area.pressSequentially('mcp');
      await shot(SLASH_PICTURE.shot);
      await shot('e2e-mcp-slash');
      await area.pressSequentially(`.${SERVER}.sum`);
      await h.waitFor('one command left', 10_000, async () => (await menu.locator('[role="option"]').count()) === 1, 150);
      await area.press('Enter');
      const form = view.locator('#vox-mcp-prompt-form');
      await form.waitFor({ timeout: 10_000 });
      const topic = form.locator('div.field[data-name="topic"] vscode-textfield input');
      await topic.click();
      await topic.pressSequentially('the launch');
      await shot('e2e-mcp-prompt-form');
      await topic.press('Enter');
      const want = 'Summarise my notes about the launch in three bullet points.';
      await h.waitFor('the expanded prompt in the draft', 20_000, async () => (await area.inputValue()) === want, 200);
      assert((await form.count()) === 0, 'the form is still open');
      state.expanded = true;
    });

    // ---- 4. The expanded prompt sent; the model calls the MCP tool
    await check(MCP_CHECKS.toolCall, async () => {
      requireState('expanded');
      const view = await sidebar();
      const before = fk.requests.length;
      fk.push(toolCallTurn([{ name: `mcp__${SERVER}__list_notes`, args: {} }]), textTurn('Two notes: the launch and the logo.'));
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      const card = view.locator('section.tool', { has: view.locator('.mcp-badge') }).first();
      await card.waitFor({ timeout: 30_000 });
      assert((await card.locator('.mcp-badge').innerText()).trim() === SERVER, 'the card\'s badge is not the server');
      await h.waitFor('the answer', 30_000, async () => (await view.locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes('Two notes'), 200);
      const first = fk.requests[before];
      const sent = (first?.body?.messages as { role: string; content: string }[] | undefined)?.at(-1)?.content ?? '';
      assert(sent.startsWith('Summarise my notes about the launch'), `the model got ${JSON.stringify(sent.slice(0, 120))}`);
      const offered = ((first?.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
      assert(offered.includes(`mcp__${SERVER}__list_notes`) && !offered.includes(`mcp__${SERVER}__add_note`), `offered tools: ${offered.join(', ')}`);
      const result = JSON.stringify(fk.requests[before + 1]?.body?.messages ?? []);
      assert(result.includes('The launch is on Friday.'), 'the tool result of the real server did not reach the model');
      // Room for the thread in the screenshot: the two views below the chat collapse (Show MCP Servers opens it again).
      for (const title of ['Vox Rules', 'MCP Servers']) {
        const header = p.locator(`${SIDEBAR} .pane-header`, { hasText: title }).first();
        if ((await header.getAttribute('aria-expanded').catch(() => null)) === 'true') await header.click({ timeout: 5_000 }).catch(() => {});
      }
      await card.scrollIntoViewIfNeeded().catch(() => {});
      await shot('e2e-mcp-tool-call');
    });

    // ---- 5. Restart, Disable, Enable from the palette
    await check(MCP_CHECKS.lifecycle, async () => {
      requireState('connected');
      await h.runCommand(p, 'Vox: Restart MCP Server', 30_000, { opensQuickInput: true });
      await h.answerQuickInput(p, SERVER);
      await h.runCommand(p, 'Vox: Show MCP Servers', 30_000);
      await h.waitFor('the server connected again, one restart counted', 30_000, async () => /connected · stdio · 2\/3 tools · 1 restart/.test((await serverRow().innerText().catch(() => '')).replace(/\s+/g, ' ')), 250);
      await h.runCommand(p, 'Vox: Disable MCP Server', 30_000, { opensQuickInput: true });
      await h.answerQuickInput(p, SERVER);
      await h.waitFor('the server row to show disabled', 20_000, async () => /disabled · stdio/.test(await serverRow().innerText().catch(() => '')), 250);
      await shot('e2e-mcp-disabled');
      // The chat hears of it (the mcpServers update): the server's prompts leave the slash menu.
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      await area.fill('/', { timeout: 10_000 });
      await area.dispatchEvent('input');
      const names = async () => view.locator('#vox-slash-menu [role="option"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name') ?? ''));
      await h.waitFor('the slash menu without the disabled server\'s prompts', 20_000, async () => {
        const n = await names().catch(() => [] as string[]);
        return n.includes('compact') && !n.some((x) => x.startsWith(`mcp.${SERVER}.`));
      }, 250);
      await area.press('Escape');
      await area.fill('');
      await h.runCommand(p, 'Vox: Enable MCP Server', 30_000, { opensQuickInput: true });
      await h.answerQuickInput(p, SERVER);
      await h.runCommand(p, 'Vox: Show MCP Servers', 30_000);
      await h.waitFor('the server to connect again', 30_000, async () => /connected · stdio/.test(await serverRow().innerText().catch(() => '')), 250);
    });

    // ---- 6. Open Config File
    await check(MCP_CHECKS.openConfig, async () => {
      requireState('connected');
      await clickInlineAction(serverRow(), 'Open MCP Config File');
      const tab = p.locator('.tabs-container .tab.active', { hasText: 'mcp.json' });
      await tab.waitFor({ timeout: 15_000 });
      const editor = p.locator('.editor-instance .monaco-editor .view-lines').first();
      await h.waitFor('the config in the editor', 15_000, async () => (await editor.innerText().catch(() => '')).includes('mcp-notes-server.mjs'), 200);
    });

    // ---- 7. Add MCP Server… with no .vscode/mcp.json
    await check(MCP_CHECKS.add, async () => {
      requireState('connected');
      const config = path.join(dirs.workspace, '.vscode', 'mcp.json');
      const kept = fs.readFileSync(config, 'utf8');
      fs.rmSync(config);
      try {
        await h.runCommand(p, 'Vox: Show MCP Servers', 30_000);
        const header = p.locator(`${SIDEBAR} .pane-header`, { hasText: 'MCP Servers' }).first();
        await header.hover();
        await header.locator('.action-label[aria-label^="Add MCP Server"]').first().click({ timeout: 10_000 });
        await h.waitFor('.vscode/mcp.json to be created', 15_000, async () => fs.existsSync(config), 200);
        const text = fs.readFileSync(config, 'utf8');
        const parsed = JSON.parse(text.replace(/^\s*\/\/.*$/gm, '')) as { servers?: unknown };
        assert(JSON.stringify(parsed) === '{"servers":{}}', `the template is ${JSON.stringify(text.slice(0, 200))}`);
        const tab = p.locator('.tabs-container .tab.active', { hasText: 'mcp.json' });
        await tab.waitFor({ timeout: 15_000 });
        const editor = p.locator('.editor-instance .monaco-editor .view-lines').first();
        await h.waitFor('the template in the editor', 15_000, async () => (await editor.innerText().catch(() => '')).replace(/\u00a0/g, ' ').includes('MCP servers for Vox'), 200);
        await shot('e2e-mcp-add');
      } finally {
        fs.writeFileSync(config, kept);
      }
    });

    await o.check(MCP_CHECKS.screenshots, async () => {
      requireState('connected');
      checkScreenshots(o, shots, ['e2e-mcp-view', 'e2e-mcp-unticked', 'e2e-mcp-slash', 'e2e-mcp-prompt-form', 'e2e-mcp-tool-call', 'e2e-mcp-disabled', 'e2e-mcp-add'], [VIEW_PICTURE, SLASH_PICTURE]);
    }, p);
  },
});
