/**
 * In-thread find while a run streams, in the built chat webview (headless Chromium, strict CSP,
 * fake host): with the second of two matches selected, chunks that add more matches grow the
 * counter (2/2 → 2/3 → 2/4) while the selection and its highlight stay on the same occurrence;
 * a tool call's result (closed in its card) is found and opened. No timing asserts: every wait is
 * a bounded wait for a state. Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

declare const CSS: { highlights: { get(name: string): Iterable<{ toString(): string; startContainer: { parentElement: { closest(s: string): { getAttribute(n: string): string | null } | null } | null } }> | undefined } };

const T = 'thread:find-stream';
const R = 'run:find-stream';

describe('find while streaming in Chromium', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  let chunkSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: Date.now(), threadId: T, ...e });
  const chunk = (kind: string, data: string) => ({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: ++chunkSeq, kind, data }] });
  const count = () => page.locator('.find-count').innerText();
  /** The current highlight's text and the row (data-vkey) it is in. */
  const current = () => page.evaluate(() => {
    const h = CSS.highlights.get('vox-find-current');
    if (!h) return null;
    for (const r of h) return { text: r.toString(), row: r.startContainer.parentElement?.closest('[data-vkey]')?.getAttribute('data-vkey') ?? null };
    return null;
  });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-find', profilePrefix: 'vox-chromium-find-', viewport: { width: 480, height: 900 } });
    page = w.page;
    const list = await w.waitPosted('listThreads', (m) => m.type === 'listThreads');
    await w.host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: T, title: 'Streaming', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
    await page.locator('button.open', { hasText: 'Streaming' }).click();
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread');
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Streaming' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'Find the needle in this prompt', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u' }),
    ] });
    await w.waitPosted('subscribeTurn', (m) => m.type === 'subscribeTurn' && m.turnId === R);
    await w.host(chunk('text', 'A first needle in the answer. '));
    await page.locator('article.run', { hasText: 'A first needle' }).waitFor();
  });

  after(async () => {
    await w?.close();
  });

  it('new matches streaming in grow the counter; the selected occurrence and its highlight stay put', async () => {
    await page.locator('vscode-textarea').click();
    await page.keyboard.press('Control+f');
    await page.locator('.find-bar input').fill('needle');
    await w.eventually('1/2', async () => (await count()) === '1/2');
    await page.locator('.find-next').click();
    await w.eventually('2/2, in the run', async () => (await count()) === '2/2' && (await current())?.row === `run:${R}`);
    for (let n = 3; n <= 5; n++) {
      await w.host(chunk('text', `Needle number ${n} streams in. `));
      await w.eventually(`2/${n}`, async () => (await count()) === `2/${n}`);
      await w.eventually('the highlight is back on the first needle of the answer', async () => {
        const c = await current();
        return c !== null && c.row === `run:${R}` && c.text.toLowerCase() === 'needle';
      });
    }
    // The highlighted occurrence is still the first of the run (occurrence 0): the text before it did not change.
    // Read once the last delta's re-render has settled (a range of the text node it replaced is collapsed onto its element).
    let firstInRun = null as string | null;
    await w.eventually('the current highlight on a text node', async () => {
      firstInRun = await page.evaluate(() => {
        const h = CSS.highlights.get('vox-find-current');
        if (!h) return null;
        for (const r of h) {
          const range = r as unknown as { startOffset: number; startContainer: { data?: string } };
          return typeof range.startContainer.data === 'string' ? range.startContainer.data.slice(0, range.startOffset) : null;
        }
        return null;
      });
      return firstInRun !== null;
    });
    assert.ok(firstInRun !== null && !firstInRun.toLowerCase().includes('needle'), `the highlight moved past the first needle: ${JSON.stringify(firstInRun)}`);
  });

  it('a tool result (closed in its card) is found and opened', async () => {
    await w.host(chunk('toolCall', JSON.stringify({ itemId: 'i1', callId: 'c1', name: 'read_file', arguments: '{"path":"notes.txt"}' })));
    await w.host(chunk('toolResult', JSON.stringify({ itemId: 'i1', callId: 'c1', status: 'completed', content: 'the word zebrafish is here', changedPaths: [] })));
    await page.locator('section.tool details.result').waitFor();
    assert.equal(await page.locator('section.tool details.result[open]').count(), 0);
    await page.locator('.find-bar input').fill('zebrafish');
    await w.eventually('1/1', async () => (await count()) === '1/1');
    await w.eventually('the result opened with the word highlighted', async () => (await page.locator('section.tool details.result[open]').count()) === 1 && (await current())?.text === 'zebrafish');
    assert.deepEqual(w.pageErrors, []);
  });
});
