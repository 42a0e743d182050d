/**
 * @rule autocomplete in the built webview (headless Chromium, strict CSP, fake host): typing `@sty`
 * offers the manual rule (with a "rule" badge) beside files; Enter inserts `@style ` and adds no
 * chip (the engine strips the token and attaches the rule); the prompt is sent with the token; the
 * engine's answer shows the attached rules and its warnings under the composer.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

describe('chat webview in Chromium: @rule autocomplete', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-rules', profilePrefix: 'vox-chromium-rules-', viewport: { width: 420, height: 640 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
  });
  after(async () => {
    await w?.close();
  });

  async function lastPosted(type: string, pred: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    let hit: Record<string, unknown> | undefined;
    await w.eventually(`a posted ${type}`, async () => !!(hit = (await w.posted()).filter((m) => m.type === type && pred(m)).at(-1)));
    return hit!;
  }

  it('offers the rule, inserts @name without a chip, sends it, and shows the rules and warnings the engine answered', async () => {
    const area = page.locator('vscode-textarea textarea');
    await area.click();
    await area.pressSequentially('fix the header @sty');
    const ask = await lastPosted('suggestMentions', (m) => m.query === 'sty');
    await w.host({ type: 'result', inReplyTo: ask.requestId, value: { items: [
      { kind: 'rule', target: 'style', label: 'style', detail: 'rule · House style' },
      { kind: 'file', target: 'stylesheet.css', label: 'stylesheet.css', detail: 'file' },
    ] } });
    const rows = page.locator('#vox-mention-popup [role="option"]');
    await w.eventually('two suggestions', async () => (await rows.count()) === 2);
    assert.equal(await rows.first().getAttribute('data-kind'), 'rule');
    assert.equal(await rows.first().locator('.badge').innerText(), 'rule');
    assert.match(await rows.first().innerText(), /@style[\s\S]*rule · House style/);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-rules-popup.png') });
    await area.press('Enter');
    await w.eventually('the popup closes', async () => (await page.locator('#vox-mention-popup').count()) === 0);
    assert.equal(await area.inputValue(), 'fix the header @style ');
    assert.equal(await page.locator('.composer .chip').count(), 0, 'a rule is no chip');
    await area.pressSequentially('and @ghost');
    await area.press('Escape');
    await page.locator('vscode-button.send').click();
    const send = await lastPosted('sendPrompt');
    assert.equal(send.prompt, 'fix the header @style and @ghost');
    assert.equal(send.mentions, undefined);
    await w.host({ type: 'result', inReplyTo: send.requestId, value: { threadId: 'thread:r', runId: 'run:r', queued: null, rules: ['style'], warnings: ['@ghost is neither a rule nor a known mention'] } });
    const note = page.locator('.rules-note');
    await w.eventually('the rules note', async () => (await note.count()) === 1 && (await note.innerText()).includes('style'));
    assert.match(await note.locator('.warning').innerText(), /@ghost is neither a rule nor a known mention/);
    await note.locator('vscode-button.dismiss').click();
    await w.eventually('dismissed', async () => (await note.count()) === 0);
  });
});
