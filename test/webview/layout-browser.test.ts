/**
 * The chat's layout details in the built webview (headless Chromium, strict CSP, fake host;
 * ./support/page.ts): Edit on a sent prompt puts the caret in its editor, and the banners'
 * text has its full wording as a tooltip and wraps in a narrow view instead of being cut off.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:layout';
const NOTICE = 'The offline demo model is active. It writes nonsense; connect a model for real answers.';

describe('chat webview in Chromium: Edit focus, banners wrap with a tooltip', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });

  before(async function () {
    // Narrow: a side bar dragged thin, where one line cannot hold the banner.
    w = await openWebviewPage(this, { nonce: 'nonce-layout', profilePrefix: 'vox-chromium-layout-', viewport: { width: 230, height: 700 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'local:demo', demoNotice: NOTICE, models: [{ ref: 'local:demo', label: 'Demo model', isDemo: true }] });
  });
  after(async () => {
    await w?.close();
  });

  it('the demo banner\'s text has the full notice as its tooltip and wraps instead of being cut off', async () => {
    const text = page.locator('.demo-banner .text');
    await text.waitFor();
    assert.equal(await text.getAttribute('title'), NOTICE, 'the text itself carries the tooltip');
    const cut = await text.evaluate((el) => el.scrollWidth > el.clientWidth + 1);
    const style = await text.evaluate((el) => { const cs = (globalThis as unknown as { getComputedStyle(e: unknown): { whiteSpace: string } }).getComputedStyle(el); return cs.whiteSpace; });
    assert.notEqual(style, 'nowrap', 'the text may wrap');
    assert.equal(cut, false, 'the banner text is not cut off');
    const box = await text.boundingBox();
    assert.ok(box && box.x + box.width <= 230, `the text stays inside the view (${JSON.stringify(box)})`);
  });

  it('the "approvals elsewhere" banner has a tooltip and wraps', async () => {
    await w.host({ type: 'approvalRequested', callId: 'call:else', threadId: 'thread:other', runId: 'run:else', toolName: 'write_file', argumentsJson: '{"path":"a.txt"}', toolClass: 'write' });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    const span = page.locator('.elsewhere span');
    await span.waitFor();
    assert.match((await span.getAttribute('title')) ?? '', /waits for your approval/);
    assert.equal(await span.evaluate((el) => el.scrollWidth > el.clientWidth + 1), false, 'not cut off');
  });

  it('Edit on a sent prompt focuses its editor', async () => {
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: [
      { type: 'thread.created', title: 'Layout' },
      { type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Name a colour', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r1', ordinal: 0, provider: 'local', model: 'demo', ownerPid: 1, userMessageId: 'u1' },
      { type: 'message.added', messageId: 'a1', parentId: 'u1', role: 'assistant', content: 'Blue.', runId: 'r1', status: 'complete' },
      { type: 'run.ended', runId: 'r1', status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 1 } },
    ].map(ev) });
    await page.locator('.prompt-actions .edit-prompt').click();
    const area = page.locator('.message-editor[data-mode="send"] vscode-textarea textarea');
    await area.waitFor();
    await w.eventually('the editor has the focus', async () => area.evaluate((el) => (el.getRootNode() as unknown as { activeElement: unknown }).activeElement === el && (globalThis as unknown as { document: { activeElement: { closest(s: string): unknown } | null } }).document.activeElement?.closest('.message-editor') != null));
    await page.keyboard.type(' please');
    assert.equal(await area.inputValue(), 'Name a colour please', 'typing goes into the editor');
  });
});
