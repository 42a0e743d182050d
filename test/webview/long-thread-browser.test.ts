/**
 * Long threads in the built chat webview (headless Chromium, strict CSP, fake host): a
 * 2,000-entry thread (./support/long-thread.ts, stored events) opens on its last entries with the
 * DOM bounded (MAX_ROWS_IN_DOM rows), in-thread find (Ctrl+F) reaches a message that is not
 * rendered, scrolls to it and highlights it, next/previous wrap, Esc clears; a branch switch
 * (rewind + another tail, then `thread.branchSwitched` back and forth) keeps the entry at the
 * viewport's top in place; streaming keeps the
 * bottom in view, and after scrolling up the list stays put and offers "Jump to latest".
 * No timing asserts: every wait is a bounded wait for a state. Screenshot:
 * test-results/webview-long-thread-find.png. Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';
import { longThreadEvents, longThreadKeys } from './support/long-thread';

/** What the page-side callbacks below touch (this file is type-checked without the DOM library). */
interface PageElement { scrollTop: number; clientHeight: number; scrollHeight: number; tabIndex: number; focus(): void; getBoundingClientRect(): { top: number; height: number } }
declare const document: { querySelector(selector: string): PageElement | null };
declare const CSS: { highlights: { get(name: string): Iterable<{ toString(): string }> | undefined } };

const T = 'thread:long';
/** Entries of the thread under test. */
const MESSAGES = 2_000;
/** Most rows the virtual list may have in the DOM for a 900 px viewport (viewport + 2 × 800 px overscan, short rows). */
const MAX_ROWS_IN_DOM = 120;

describe('long threads in Chromium: virtualised list and in-thread find', function () {
  this.timeout(180_000);
  let w: WebviewPage;
  let page: Page;
  let lastSeq = 0;
  const keys = longThreadKeys(MESSAGES);

  const row = (key: string) => page.locator(`.vrow[data-vkey="${key}"]`);
  const rowCount = () => page.locator('.vrow').count();
  /** Geometry of the chat scroller. */
  const scrollerState = () => page.evaluate(() => {
    const s = document.querySelector('.scroller')!;
    return { top: s.scrollTop, height: s.clientHeight, scrollHeight: s.scrollHeight };
  });
  const atBottom = async () => {
    const s = await scrollerState();
    return s.scrollHeight - s.top - s.height <= 48;
  };
  /** Where the row's top is relative to the scroller's viewport (px), or null when not rendered. */
  const rowTop = (key: string) => page.evaluate((k) => {
    const el = document.querySelector(`.vrow[data-vkey="${k}"]`);
    const s = document.querySelector('.scroller')!;
    return el ? el.getBoundingClientRect().top - s.getBoundingClientRect().top : null;
  }, key);
  const inViewport = async (key: string) => {
    const t = await rowTop(key);
    const s = await scrollerState();
    return t !== null && t < s.height && t > -((await row(key).boundingBox())?.height ?? 0);
  };
  const currentHighlight = () => page.evaluate(() => {
    const h = CSS.highlights.get('vox-find-current');
    if (!h) return null;
    for (const r of h) return r.toString();
    return null;
  });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-long', profilePrefix: 'vox-chromium-long-', viewport: { width: 480, height: 900 } });
    page = w.page;
  });

  after(async () => {
    await w?.close();
  });

  it(`opens a ${MESSAGES}-entry thread on its last entries with at most ${MAX_ROWS_IN_DOM} rows in the DOM`, async () => {
    const list = await w.waitPosted('listThreads', (m) => m.type === 'listThreads');
    await w.host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: T, title: 'Long thread', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
    await page.locator('button.open', { hasText: 'Long thread' }).click();
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const events = longThreadEvents({ threadId: T, messages: MESSAGES });
    lastSeq = events.length;
    await w.host({ type: 'events', threadId: T, events });
    await row(keys.at(-1)!).waitFor();
    await w.eventually('the last entry in view at the bottom', async () => (await atBottom()) && (await inViewport(keys.at(-1)!)));
    const rows = await rowCount();
    assert.ok(rows > 0 && rows <= MAX_ROWS_IN_DOM, `${rows} rows in the DOM (bound ${MAX_ROWS_IN_DOM})`);
    assert.ok((await page.locator('[data-role]').count()) <= MAX_ROWS_IN_DOM * 2, 'messages in the DOM are bounded too');
    assert.equal(await row(keys[0]!).count(), 0, 'the first entry is not rendered');
    assert.equal(await page.locator('.vlist').getAttribute('data-total'), String(MESSAGES));
    // The content is as tall as the whole thread (estimates + measurements), so the scrollbar is honest.
    assert.ok((await scrollerState()).scrollHeight > 50 * 900, 'the scroll height stands for every entry');
  });

  it('scrolling to the top renders the first entries and keeps the DOM bounded', async () => {
    await page.evaluate(() => { document.querySelector('.scroller')!.scrollTop = 0; });
    await row(keys[0]!).waitFor();
    await w.eventually('the first entry in view', () => inViewport(keys[0]!));
    assert.ok((await rowCount()) <= MAX_ROWS_IN_DOM);
    assert.equal(await row(keys.at(-1)!).count(), 0, 'the last entry left the DOM');
  });

  it('Ctrl+F finds a message that is not rendered, scrolls to it and highlights it; Esc closes', async () => {
    const target = 'msg:m:u700'; // "Question 700: …", far below the top
    assert.equal(await row(target).count(), 0, 'the target is not rendered before the search');
    await page.locator('.scroller').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    const input = page.locator('.find-bar input');
    await input.waitFor();
    await input.fill('question 700:');
    await w.eventually('1/1', async () => (await page.locator('.find-count').innerText()) === '1/1');
    await row(target).waitFor();
    await w.eventually('the match in view', () => inViewport(target));
    await w.eventually('the match highlighted', async () => (await currentHighlight()) === 'Question 700:');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-long-thread-find.png') });
    await input.press('Escape');
    await page.locator('.find-bar').waitFor({ state: 'detached' });
    assert.equal(await currentHighlight(), null, 'Esc clears the highlight');
  });

  it('next and previous walk the matches and wrap around, into off-screen answers', async () => {
    await page.keyboard.press('Control+f');
    const input = page.locator('.find-bar input');
    await input.fill('answer 12'); // Answer 12, Answer 120 … 129: 11 matches
    await w.eventually('1/11', async () => (await page.locator('.find-count').innerText()) === '1/11');
    await w.eventually('the first match highlighted', async () => (await currentHighlight())?.toLowerCase() === 'answer 12');
    await input.press('Shift+Enter'); // wraps back to the last: Answer 129 (run 129)
    await w.eventually('11/11', async () => (await page.locator('.find-count').innerText()) === '11/11');
    await row('run:run:129').waitFor();
    await w.eventually('run 129 in view', () => inViewport('run:run:129'));
    await input.press('Enter'); // wraps forward to the first
    await w.eventually('1/11 again', async () => (await page.locator('.find-count').innerText()) === '1/11');
    await w.eventually('run 12 in view', () => inViewport('run:run:12'));
    await page.locator('.find-next').click();
    await w.eventually('2/11', async () => (await page.locator('.find-count').innerText()) === '2/11');
    await w.eventually('run 120 in view', () => inViewport('run:run:120'));
    await input.fill('no such words anywhere');
    await w.eventually('0/0', async () => (await page.locator('.find-count').innerText()) === '0/0');
    await input.press('Escape');
  });

  it('a branch switch (rewind + another tail of the same size, then switching back and forth) keeps the entry at the top in place', async () => {
    const keep = 'msg:m:u100';
    await page.evaluate(() => { document.querySelector('.scroller')!.scrollTop = 0; });
    await row(keys[0]!).waitFor();
    // Put entry 200 (u100) near the top of the viewport via find, then note where it is.
    await page.keyboard.press('Control+f');
    await page.locator('.find-bar input').fill('question 100:');
    await w.eventually('u100 in view', () => inViewport(keep));
    await page.locator('.find-bar input').press('Escape');
    const before = await rowTop(keep);
    assert.ok(before !== null);
    const half = MESSAGES / 2;
    const tail = longThreadEvents({ threadId: T, messages: half, variant: 'b', fromPair: half / 2, firstSeq: lastSeq + 2, created: false });
    // The tail's first user message continues from the shared prefix's last answer.
    (tail[0] as { parentId: string }).parentId = `m:a${half / 2 - 1}`;
    await w.host({ type: 'events', threadId: T, events: [{ seq: lastSeq + 1, time: Date.now(), threadId: T, type: 'thread.rewound', toMessageId: `m:a${half / 2 - 1}` }, ...tail] });
    lastSeq += 1 + tail.length;
    await w.eventually('the new branch is the list', async () => (await page.locator('.vlist').getAttribute('data-total')) === String(MESSAGES));
    await w.eventually('u100 stays where it was', async () => {
      const after = await rowTop(keep);
      return after !== null && Math.abs(after - before!) <= 2;
    });
    assert.ok((await rowCount()) <= MAX_ROWS_IN_DOM);
    // Switching back to the first branch (its leaf) replaces the entries again; u100 is shared, so it stays put.
    await w.host({ type: 'events', threadId: T, events: [{ seq: ++lastSeq, time: Date.now(), threadId: T, type: 'thread.branchSwitched', toMessageId: `m:a${half - 1}` }] });
    await w.eventually('the first branch is back', async () => (await page.locator('.vrow[data-vkey^="msg:m:b-"]').count()) === 0 && (await row('msg:m:u100').count()) === 1);
    await w.eventually('u100 still where it was', async () => {
      const after = await rowTop(keep);
      return after !== null && Math.abs(after - before!) <= 2;
    });
    assert.ok((await rowCount()) <= MAX_ROWS_IN_DOM);
    // The other branch again: its last entry is the list's end.
    await w.host({ type: 'events', threadId: T, events: [{ seq: ++lastSeq, time: Date.now(), threadId: T, type: 'thread.branchSwitched', toMessageId: `m:b-a${half - 1}` }] });
    await page.evaluate(() => { const s = document.querySelector('.scroller')!; s.scrollTop = s.scrollHeight; });
    await row(`run:run:b-${half - 1}`).waitFor();
  });

  it('streaming keeps the bottom in view; scrolled up, the list stays put and offers Jump to latest', async () => {
    const R = 'run:live';
    await page.evaluate(() => { const s = document.querySelector('.scroller')!; s.scrollTop = s.scrollHeight; });
    await w.eventually('at the bottom', atBottom);
    const ev = (e: Record<string, unknown>) => ({ seq: ++lastSeq, time: Date.now(), threadId: T, ...e });
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'message.added', messageId: 'm:live', parentId: null, role: 'user', content: 'Stream a long answer', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 5000, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:live' }),
    ] });
    await w.waitPosted('subscribeTurn', (m) => m.type === 'subscribeTurn' && m.turnId === R);
    let chunkSeq = 0;
    const chunk = (n: number) => ({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: ++chunkSeq, kind: 'text', data: `Line ${n} of the streamed answer with some words.\n\n` }] });
    for (let n = 0; n < 40; n++) {
      await w.host(chunk(n));
      await w.eventually(`line ${n} shown`, async () => (await row(`run:${R}`).innerText()).includes(`Line ${n} of`));
      await w.eventually(`at the bottom after line ${n}`, atBottom);
    }
    // Scroll up (the live run stays within the overscan, so its text is rendered): new text must
    // not pull the view down, and the pill offers the way back.
    await page.evaluate(() => { const s = document.querySelector('.scroller')!; s.scrollTop = s.scrollHeight - s.clientHeight - 600; });
    const pill = page.locator('button.jump-latest');
    await pill.waitFor();
    const anchor = await page.evaluate(() => document.querySelector('.scroller')!.scrollTop);
    for (let n = 40; n < 60; n++) {
      await w.host(chunk(n));
      await w.eventually(`line ${n} shown`, async () => (await row(`run:${R}`).innerText()).includes(`Line ${n} of`));
    }
    assert.ok(Math.abs((await page.evaluate(() => document.querySelector('.scroller')!.scrollTop)) - anchor) <= 2, 'the view stayed where the user put it');
    assert.equal(await atBottom(), false);
    await pill.click();
    await w.eventually('back at the bottom', atBottom);
    await pill.waitFor({ state: 'detached' });
    await w.host(chunk(60));
    await w.eventually('line 60 shown', async () => (await row(`run:${R}`).innerText()).includes('Line 60 of'));
    await w.eventually('following again', atBottom);
    assert.deepEqual(w.pageErrors, []);
  });
});
