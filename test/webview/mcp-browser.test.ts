/**
 * The composer's MCP parts in the built webview (headless Chromium, strict CSP, fake host; the
 * page of ./support/page.ts): the webview lists and watches the MCP servers at start; typing `/`
 * opens the slash menu with /compact and the connected servers' prompts (server badge, "needs
 * arguments"); Enter on a prompt without arguments posts getMcpPrompt and the answer replaces the
 * command; a prompt with arguments opens the inline form (a required field refused empty, the
 * engine's error shown, then the text inserted); an `mcpServers` update adds a prompt to the menu;
 * the @-popup shows the engine's MCP resource row with its server as a badge and sends it as an `mcp` mention;
 * an MCP tool call's card shows its server as a badge (a built-in one none). Screenshots go to
 * test-results/webview-mcp-slash.png and webview-mcp-form.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { mcpServerListView, type McpServerView } from '../../src/protocol/commands/mcp';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:mcp';
const R = 'run:mcp';

function server(over: Partial<McpServerView> = {}): McpServerView {
  return {
    name: 'notes', source: 'vscode', sourcePath: '.vscode/mcp.json', transport: 'stdio', target: 'node notes.mjs', enabled: true, status: 'connected', error: null, restarts: 0,
    tools: [{ name: 'add_note', qualifiedName: 'mcp__notes__add_note', description: 'Adds a note', readOnly: false, enabled: true }],
    prompts: [
      { name: 'daily', description: 'Today’s notes', arguments: [] },
      { name: 'summarise', description: 'Summarise notes on a topic', arguments: [{ name: 'topic', description: 'What about', required: true }, { name: 'style', description: 'short or long', required: false }] },
    ],
    resources: [{ uri: 'notes://all', name: 'All notes', description: 'every note', mimeType: 'text/plain' }],
    ...over,
  };
}
const listOf = (servers: McpServerView[]) => mcpServerListView({ servers, configErrors: [], catalog: { activeTools: 1, threshold: 12, metaMode: false } });

describe('chat webview in Chromium: MCP prompts as slash commands, resources as @-mentions, tool badges', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: Date.now(), threadId: T, ...e });
  const host = (message: unknown) => w.host(message);
  const eventually = (what: string, check: () => Promise<boolean>) => w.eventually(what, check);
  async function lastPosted(type: string, pred: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    let hit: Record<string, unknown> | undefined;
    await eventually(`a posted ${type}`, async () => !!(hit = (await w.posted()).filter((m) => m.type === type && pred(m)).at(-1)));
    return hit!;
  }
  const area = () => page.locator('vscode-textarea textarea');
  const rows = () => page.locator('#vox-slash-menu [role="option"]');
  async function clear(): Promise<void> {
    await area().fill('');
    await area().dispatchEvent('input');
  }

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-mcp', profilePrefix: 'vox-chromium-mcp-', viewport: { width: 460, height: 760 } });
    page = w.page;
    await host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
  });

  after(async () => {
    assert.deepEqual(w?.pageErrors ?? [], [], 'no page errors');
    await w?.close();
  });

  it('lists and watches the servers at start; `/` shows /compact and the prompts of connected servers', async () => {
    const list = await lastPosted('listMcpServers');
    await lastPosted('watchMcpServers');
    await host({ type: 'result', inReplyTo: list.requestId, value: listOf([server(), server({ name: 'broken', status: 'failed', error: 'spawn ENOENT' })]) });
    await area().click();
    await area().pressSequentially('/');
    await eventually('three commands', async () => (await rows().count()) === 3);
    assert.deepEqual(await rows().evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))), ['compact', 'mcp.notes.daily', 'mcp.notes.summarise']);
    assert.equal(await rows().nth(1).locator('.badge').innerText(), 'notes');
    assert.equal(await rows().nth(2).locator('.args').innerText(), 'needs arguments');
    assert.equal(await rows().first().getAttribute('aria-selected'), 'true');
    await area().press('ArrowDown');
    assert.equal(await rows().nth(1).getAttribute('aria-selected'), 'true');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-mcp-slash.png') });
    await area().press('Escape');
    await eventually('the menu closes', async () => (await page.locator('#vox-slash-menu').count()) === 0);
  });

  it('Enter on a prompt without arguments asks the engine and puts its text in place of the command; nothing is sent', async () => {
    await clear();
    await area().pressSequentially('/mcp.notes.d');
    await eventually('one command', async () => (await rows().count()) === 1);
    await area().press('Enter');
    const ask = await lastPosted('getMcpPrompt', (m) => m.name === 'daily');
    assert.equal(ask.server, 'notes');
    assert.equal(ask.arguments, undefined);
    assert.equal(await area().inputValue(), '/mcp.notes.daily');
    await host({ type: 'result', inReplyTo: ask.requestId, value: { text: 'List the notes I wrote today.', description: null } });
    await eventually('the prompt text', async () => (await area().inputValue()) === 'List the notes I wrote today.');
    assert.equal((await w.posted()).filter((m) => m.type === 'sendPrompt').length, 0, 'Enter took the command, it did not send');
  });

  it('a prompt with arguments asks for them inline: a required one refused empty, the engine\'s error shown, then the text inserted', async () => {
    await clear();
    await area().pressSequentially('/mcp.notes.sum');
    await eventually('one command', async () => (await rows().count()) === 1);
    await area().press('Enter');
    const form = page.locator('#vox-mcp-prompt-form');
    await form.waitFor();
    assert.deepEqual(await form.locator('div.field').evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))), ['topic', 'style']);
    assert.equal(await form.locator('div.field[data-name="topic"] .required').count(), 1);
    await form.locator('vscode-button.insert').click();
    await eventually('the required error', async () => (await form.locator('div.field[data-name="topic"] .error').innerText()) === 'required');
    assert.equal((await w.posted()).filter((m) => m.type === 'getMcpPrompt' && m.name === 'summarise').length, 0);
    const topic = form.locator('div.field[data-name="topic"] vscode-textfield input');
    await topic.click();
    await topic.pressSequentially('release');
    await topic.press('Enter');
    const ask = await lastPosted('getMcpPrompt', (m) => m.name === 'summarise');
    assert.deepEqual(ask.arguments, { topic: 'release' });
    await host({ type: 'error', inReplyTo: ask.requestId, domain: 'mcp', code: 'promptFailed', message: 'MCP server notes: the prompt failed' });
    await eventually('the error in the form', async () => (await form.locator('.error[role="alert"]').last().innerText()) === 'MCP server notes: the prompt failed');
    const style = form.locator('div.field[data-name="style"] vscode-textfield input');
    await style.click();
    await style.pressSequentially('short');
    await page.screenshot({ path: path.join(RESULTS, 'webview-mcp-form.png') });
    await form.locator('vscode-button.insert').click();
    const again = await lastPosted('getMcpPrompt', (m) => m.name === 'summarise' && m.requestId !== ask.requestId);
    assert.deepEqual(again.arguments, { topic: 'release', style: 'short' });
    await host({ type: 'result', inReplyTo: again.requestId, value: { text: 'Summarise my notes on release, briefly.', description: null } });
    await eventually('the form closes', async () => (await form.count()) === 0);
    await eventually('the text', async () => (await area().inputValue()) === 'Summarise my notes on release, briefly.');
    assert.equal((await w.posted()).filter((m) => m.type === 'sendPrompt').length, 0, 'Enter in the form inserted the prompt, it did not send the draft');
    assert.equal(await page.locator('[data-role="user"]').count(), 0, 'no message was sent');
  });

  it('an mcpServers update reaches the menu', async () => {
    await host({ type: 'mcpServers', ...listOf([server({ prompts: [...server().prompts, { name: 'weekly', description: 'This week', arguments: [] }] })]) });
    await clear();
    await area().pressSequentially('/mcp.notes.w');
    await eventually('the new prompt', async () => (await rows().count()) === 1 && (await rows().first().getAttribute('data-name')) === 'mcp.notes.weekly');
    await area().press('Escape');
  });

  it('the @-popup lists an MCP resource with its server badge; taking it adds a chip sent as an mcp mention', async () => {
    await clear();
    await area().pressSequentially('read @all');
    const ask = await lastPosted('suggestMentions', (m) => m.query === 'all');
    await host({ type: 'result', inReplyTo: ask.requestId, value: { items: [
      { kind: 'file', target: 'all.txt', label: 'all.txt', detail: 'file' },
      { kind: 'mcp', target: 'notes/notes://all', label: 'notes:All notes', detail: 'MCP resource · every note' },
    ] } });
    const opts = page.locator('#vox-mention-popup [role="option"]');
    await eventually('two rows', async () => (await opts.count()) === 2);
    const mcpRow = page.locator('#vox-mention-popup [role="option"][data-kind="mcp"]');
    assert.equal(await mcpRow.locator('.badge').innerText(), 'notes');
    assert.equal(await mcpRow.locator('.label').innerText(), '@notes:All notes');
    await area().press('ArrowDown');
    await area().press('Enter');
    assert.equal(await area().inputValue(), 'read @notes:All-notes ');
    const est = await lastPosted('estimateContext', (m) => Array.isArray(m.mentions) && (m.mentions as Array<{ kind: string }>).some((x) => x.kind === 'mcp'));
    assert.deepEqual(est.mentions, [{ kind: 'mcp', target: 'notes/notes://all' }]);
  });

  it('an MCP tool call shows its server as a badge; a built-in one has none', async () => {
    await host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await lastPosted('subscribeThread', (m) => m.threadId === T);
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'MCP' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'Add a note', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u' }),
      ev({ type: 'item.started', runId: R, itemId: 'item:m', ordinal: 0, kind: 'toolCall', toolName: 'mcp__notes__add_note', arguments: '{"text":"hi"}' }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:m', status: 'completed', content: 'added', isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'item:b', ordinal: 1, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"a"}' }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:b', status: 'completed', content: 'a', isError: false }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
    ] });
    const badge = page.locator('section.tool[data-call-id="item:m"] .mcp-badge');
    await badge.waitFor();
    assert.equal(await badge.innerText(), 'notes');
    assert.match((await badge.getAttribute('title')) ?? '', /Tool add_note of the MCP server notes/);
    assert.equal(await page.locator('section.tool[data-call-id="item:b"] .mcp-badge').count(), 0);
  });
});
