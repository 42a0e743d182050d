/**
 * The thread list follows threads changed elsewhere (another window, a `vox chat` in a terminal,
 * both on the one shared database), in the built chat webview (headless Chromium, strict CSP,
 * fake host): the webview asks for `watchThreads` at start; a `threadChanged` update for a new
 * thread re-reads the list's first page and the new row shows; one that cannot change the list
 * (a checkpoint) asks for nothing. No timing asserts: every wait is a bounded wait for a state.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

const row = (id: string, title: string, updatedAt: number) => ({ id, title, createdAt: updatedAt, updatedAt, lastSeq: 1 });

describe('thread list in Chromium: follows threads changed in other processes', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-threads-live', profilePrefix: 'vox-chromium-threads-live-', viewport: { width: 480, height: 900 } });
    page = w.page;
  });

  after(async () => {
    await w?.close();
  });

  it('a thread created elsewhere shows in the list after its threadChanged update', async () => {
    const first = await w.waitPosted('listThreads', (m) => m.type === 'listThreads');
    await w.waitPosted('watchThreads', (m) => m.type === 'watchThreads');
    await w.host({ type: 'result', inReplyTo: first.requestId, value: { nextCursor: null, threads: [row('thread:window', 'In the window', 1_700_000_000_000)] } });
    await page.locator('ul.threads button.open', { hasText: 'In the window' }).waitFor();
    const lists = async () => (await w.posted()).filter((m) => m.type === 'listThreads');
    const before = (await lists()).length;

    // A checkpoint elsewhere cannot change the list: then a thread created in a terminal, with its run.
    await w.host({ type: 'threadChanged', threadId: 'thread:window', eventType: 'checkpoint.created', seq: 2 });
    await w.host({ type: 'threadChanged', threadId: 'thread:cli', eventType: 'thread.created', seq: 3 });
    await w.host({ type: 'threadChanged', threadId: 'thread:cli', eventType: 'run.started', seq: 4 });
    const again = await w.waitPosted('listThreads again', (m) => m.type === 'listThreads' && m.requestId !== first.requestId);
    await w.host({ type: 'result', inReplyTo: again.requestId, value: { nextCursor: null, threads: [row('thread:cli', 'From the terminal', 1_700_000_100_000), row('thread:window', 'In the window', 1_700_000_000_000)] } });
    await page.locator('ul.threads button.open', { hasText: 'From the terminal' }).waitFor();
    const titles = await page.locator('ul.threads button.open').allInnerTexts();
    assert.ok(titles[0]!.includes('From the terminal') && titles[1]!.includes('In the window'), `the list reads ${JSON.stringify(titles)}`);
    assert.ok((await lists()).length > before);
    assert.deepEqual(w.pageErrors, []);
  });
});
