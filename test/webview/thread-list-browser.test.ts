/**
 * The thread list with 5,000 threads in the built chat webview (headless Chromium, strict CSP, fake
 * host that pages the list as the engine does): the first rows show after the first page of 16;
 * the rest arrive in pages of 200, each asked for only after the previous answer (never two at a
 * time); the list is virtualised (a bounded number of rows in the DOM), scrolling to the end shows
 * the oldest thread, a click opens it; after a reload (VS Code re-creating the webview) the whole
 * list shows again from the saved state, before any page is answered. No timing asserts: every
 * wait is a bounded wait for a state. Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type Posted, type WebviewPage } from './support/browser';

interface PageElement { scrollTop: number; scrollHeight: number; clientHeight: number; dataset: Record<string, string> }
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): { length: number } };

const N = 5_000;
/** Most rows the virtual list may have in the DOM (a 900 px window: the recent list's ≤ 60vh scroller + 2 × 800 px overscan of ~26 px rows). */
const MAX_ROWS_IN_DOM = 120;

const threads = Array.from({ length: N }, (_, i) => ({ id: `t${i}`, title: `Thread number ${i}`, createdAt: 1_000_000 - i, updatedAt: 1_700_000_000_000 - i * 60_000, lastSeq: 1 }));

function pageOf(limit: number, before?: string) {
  const start = before === undefined ? 0 : threads.findIndex((t) => t.id === before) + 1;
  const rows = threads.slice(start, start + limit);
  return { threads: rows, nextCursor: start + limit < N ? rows[rows.length - 1]!.id : null };
}

describe(`thread list in Chromium: ${N} threads, chunked and virtualised`, function () {
  this.timeout(180_000);
  let w: WebviewPage;
  let page: Page;
  let answered = 0;

  /** Answers every listThreads posted so far that has no answer yet; returns how many were waiting. */
  async function answerLists(): Promise<number> {
    const lists = (await w.posted()).filter((m) => m.type === 'listThreads');
    const waiting = lists.slice(answered);
    for (const m of waiting) {
      await w.host({ type: 'result', inReplyTo: m.requestId, value: pageOf(m.limit as number, m.before as string | undefined) });
      answered++;
    }
    return waiting.length;
  }

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-threads', profilePrefix: 'vox-chromium-threads-', viewport: { width: 480, height: 900 } });
    page = w.page;
  });

  after(async () => {
    await w?.close();
  });

  it('shows the first 16 at once, then pages of 200, one request at a time', async () => {
    const first = await w.waitPosted('listThreads', (m) => m.type === 'listThreads');
    assert.equal(first.limit, 16);
    assert.equal(first.before, undefined);
    await answerLists();
    await page.locator('ul.threads button.open', { hasText: 'Thread number 0' }).waitFor();
    let lists: Posted[] = [];
    // Answer as they come; never more than one waits.
    await w.eventually('the whole list loaded', async () => {
      lists = (await w.posted()).filter((m) => m.type === 'listThreads');
      assert.ok(lists.length - answered <= 1, `${lists.length - answered} list requests at once`);
      await answerLists();
      return (await page.locator('.thread-scroll').getAttribute('data-threads')) === String(N) && (await page.locator('.thread-scroll').getAttribute('data-loading')) === 'done';
    }).catch(async (e) => {
      // Loading 5,000 takes ~25 round trips; the bounded wait is per step, so go on polling for a while.
      for (let i = 0; i < 200; i++) {
        await answerLists();
        if ((await page.locator('.thread-scroll').getAttribute('data-loading')) === 'done') return;
        await page.waitForTimeout(50);
      }
      throw e;
    });
    lists = (await w.posted()).filter((m) => m.type === 'listThreads');
    assert.equal(lists.length, 1 + Math.ceil((N - 16) / 200));
    assert.ok(lists.slice(1).every((m) => m.limit === 200 && typeof m.before === 'string'));
  });

  it(`keeps at most ${MAX_ROWS_IN_DOM} rows in the DOM; scrolling to the end shows the oldest thread, which opens`, async () => {
    const count = () => page.evaluate(() => document.querySelectorAll('ul.threads > li').length);
    assert.ok((await count()) <= MAX_ROWS_IN_DOM, `${await count()} rows in the DOM`);
    assert.equal(await page.locator('ul.threads').getAttribute('data-total'), String(N));
    await page.evaluate(() => { const s = document.querySelector('.thread-scroll')!; s.scrollTop = s.scrollHeight; });
    const last = page.locator('ul.threads button.open', { hasText: `Thread number ${N - 1}` });
    await w.eventually('the oldest thread rendered', async () => {
      await page.evaluate(() => { const s = document.querySelector('.thread-scroll')!; s.scrollTop = s.scrollHeight; });
      return (await last.count()) === 1;
    });
    assert.ok((await count()) <= MAX_ROWS_IN_DOM, `${await count()} rows in the DOM at the end`);
    await page.locator('ul.threads button.open', { hasText: 'Thread number 0' }).waitFor({ state: 'detached' });
    await last.click();
    const sub = await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread');
    assert.equal(sub.threadId, `t${N - 1}`);
    assert.deepEqual(w.pageErrors, []);
  });

  it('after a reload the whole list is back at once from the saved state', async () => {
    // Back to the empty screen with its list, then "re-create the webview".
    await page.locator('vscode-button.new-thread').click();
    await page.evaluate('window.__posted.length = 0');
    answered = 0;
    await page.reload();
    await page.locator('.app').waitFor();
    await page.locator('ul.threads button.open').first().waitFor();
    assert.equal(await page.locator('.thread-scroll').getAttribute('data-threads'), String(N), 'every row, before any answer');
    const lists = (await w.posted()).filter((m) => m.type === 'listThreads');
    assert.equal(lists.length, 1, 'the re-validating pass has only just asked for its first page');
    await answerLists();
    assert.equal(await page.locator('.thread-scroll').getAttribute('data-threads'), String(N), 'its first page did not shorten the list');
  });
});
