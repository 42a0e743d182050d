/**
 * Search in the built chat webview (headless Chromium, strict CSP, fake host): the search box
 * above the thread list posts `searchThreads` as the user types (debounced: one request for the
 * typed word), shows the answer's titles and message snippets with the match marked, and a click
 * opens the thread and reveals the message — the virtualised list scrolls to an entry that was
 * not rendered and marks it `.vox-revealed`; the host's `openThread` with `messageId` (the
 * "Vox: Search Threads" QuickPick) does the same for an answer inside a run. No timing asserts. Screenshot: test-results/webview-search.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';
import { longThreadEvents } from './support/long-thread';

interface PageElement { getBoundingClientRect(): { top: number; bottom: number } }
declare const document: { querySelector(selector: string): PageElement | null };

const T = 'thread:long';
const MESSAGES = 600;

describe('search in Chromium: the search box and revealing a message', function () {
  this.timeout(180_000);
  let w: WebviewPage;
  let page: Page;

  const inViewport = (key: string) => page.evaluate((k) => {
    const el = document.querySelector(`.vrow[data-vkey="${k}"]`);
    const s = document.querySelector('.scroller')!;
    if (!el) return false;
    const r = el.getBoundingClientRect();
    const p = s.getBoundingClientRect();
    return r.bottom > p.top && r.top < p.bottom;
  }, key);

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-search', profilePrefix: 'vox-chromium-search-', viewport: { width: 480, height: 900 } });
    page = w.page;
    const list = await w.waitPosted('listThreads', (m) => m.type === 'listThreads');
    await w.host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: T, title: 'Long thread', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
  });

  after(async () => {
    await w?.close();
  });

  it('typing searches per pause, not per keystroke; results show the match; a click reveals the message', async () => {
    const box = page.locator('input.search-input').first();
    await box.pressSequentially('questio', { delay: 5 });
    const first = await w.waitPosted('searchThreads', (m) => m.type === 'searchThreads' && m.query === 'questio');
    await box.pressSequentially('n 3', { delay: 5 });
    const second = await w.waitPosted('searchThreads', (m) => m.type === 'searchThreads' && m.query === 'question 3');
    const asked = (await w.posted()).filter((m) => m.type === 'searchThreads').map((m) => String(m.query));
    assert.ok(asked.length < 'question 3'.length, `debounced: not one request per keystroke (${asked.join(' | ')})`);
    assert.ok(asked.every((q) => 'question 3'.startsWith(q)));
    await w.host({
      type: 'result', inReplyTo: second.requestId, value: {
        titles: [{ threadId: T, title: 'Long thread', updatedAt: Date.now(), score: 0.9, tier: 'partialWords' }],
        messages: [{ threadId: T, threadTitle: 'Long thread', messageId: 'm:u3', itemId: null, source: 'message', snippet: 'Question 3: why does the parser…', ranges: [{ start: 0, end: 10 }], score: 0.95 }],
      },
    });
    // The older query's answer arrives late (SearchRequests drops it; ./thread-search.test.ts).
    await w.host({ type: 'result', inReplyTo: first.requestId, value: { titles: [], messages: [] } });
    const hit = page.locator('.search-results button.result[data-message-id="m:u3"]');
    await hit.waitFor();
    assert.equal(await hit.locator('mark').innerText(), 'Question 3');
    assert.equal(await page.locator('.search-results li').count(), 2);
    assert.equal(await page.locator('.search-results li').first().locator('[data-message-id="m:u3"]').count(), 1, 'the message (0.95) ranks above the title (0.9)');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-search.png') });

    await hit.click();
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: longThreadEvents({ threadId: T, messages: MESSAGES }) });
    const target = page.locator('.vrow.vox-revealed');
    await target.waitFor();
    assert.equal(await target.getAttribute('data-vkey'), 'msg:m:u3');
    await w.eventually('the revealed message in view', () => inViewport('msg:m:u3'));
    assert.equal(await page.locator(`.vrow[data-vkey="run:run:${MESSAGES / 2 - 1}"]`).count(), 0, 'the end of the thread is not rendered: the list moved to the message');
    assert.deepEqual(w.pageErrors, []);
  });

  it("the host's openThread with a messageId reveals an answer inside a run (the QuickPick's pick)", async () => {
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T, messageId: 'm:a250' });
    await w.eventually('the run of answer a250 is revealed', async () => (await page.locator('.vrow.vox-revealed').getAttribute('data-vkey')) === 'run:run:250');
    await w.eventually('in view', () => inViewport('run:run:250'));
    assert.equal(await page.locator('.vox-revealed').count(), 1, 'one highlight at a time');
    assert.deepEqual(w.pageErrors, []);
  });

  it('the revealed message stays where it was placed when rows above it change height and a banner shrinks the scroller', async () => {
    // What a slow machine does after the placement: rows measured late, a banner shown above the list.
    const placed = (k: string) => page.evaluate(`(() => {
      const el = document.querySelector('.vrow[data-vkey="${k}"]');
      const s = document.querySelector('.scroller');
      if (!el) return Infinity;
      const r = el.getBoundingClientRect();
      const p = s.getBoundingClientRect();
      const want = r.height >= p.height ? p.top : p.top + (p.height - r.height) / 2;
      return Math.abs(r.top - want);
    })()`) as Promise<number>;
    await w.eventually('the run of answer a250 placed', async () => (await placed('run:run:250')) <= 3);
    await page.evaluate(`(() => {
      const target = document.querySelector('.vrow[data-vkey="run:run:250"]');
      // Every rendered row above the target loses its content (a big shift up without correction).
      for (const row of document.querySelectorAll('.vrow')) {
        if (row.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_FOLLOWING) for (const c of row.children) c.style.display = 'none';
      }
      const scroller = document.querySelector('.scroller');
      const banner = document.createElement('div');
      banner.style.height = '160px';
      scroller.parentElement.insertBefore(banner, scroller);
    })()`);
    await w.eventually('the revealed run back at its place', async () => (await placed('run:run:250')) <= 3);
    assert.equal(await page.locator('.vox-revealed').getAttribute('data-vkey'), 'run:run:250');
    assert.deepEqual(w.pageErrors, []);
  });
});
