/**
 * Compaction in the built chat webview (headless Chromium, strict CSP, fake host; see
 * ./support/page.ts): `thread.compacted` shows "Context compacted up to here" below the last
 * compacted answer with the prompts above still rendered, the note opens to the summary (text,
 * never markup), Compact up to here posts `compactThread` with the answer's id, and `/compact`
 * typed as the whole prompt posts `compactThread` instead of `sendPrompt`.
 * Screenshot: test-results/webview-compaction.png.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:compact';
const SETTINGS = { type: 'settings', model: 'openai:gpt-e2e', demoNotice: null, models: [{ ref: 'openai:gpt-e2e', label: 'gpt-e2e', isDemo: false }] };
const SUMMARY = '## Goal\nSpans on tokens <img src=x onerror="window.__pwned=1">\n\n## Decisions\n- offsets\n\n## Files touched\n- src/lexer.ts\n\n## Open items\nNone.';

describe('chat webview in Chromium: compaction', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-compact', profilePrefix: 'vox-chromium-compact-', viewport: { width: 460, height: 900 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('shows the note below the last compacted answer, the prompts above still there; it opens to the summary as text', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const turn = (i: number, parent: string | null) => [
      { type: 'message.added', messageId: `u${i}`, parentId: parent, role: 'user', content: `Prompt number ${i}`, runId: null, status: 'complete' },
      { type: 'run.started', runId: `r${i}`, ordinal: i, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: `u${i}` },
      { type: 'message.added', messageId: `a${i}`, parentId: `u${i}`, role: 'assistant', content: `Answer number ${i}`, runId: `r${i}`, status: 'complete' },
      { type: 'run.ended', runId: `r${i}`, status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 4 } },
    ];
    await events([{ type: 'thread.created', title: 'Compaction' }, ...turn(0, null), ...turn(1, 'a0'), ...turn(2, 'a1')]);
    await w.eventually('three runs', async () => (await page.locator('article.run').count()) === 3);
    assert.equal(await page.locator('details.compaction-note').count(), 0);
    await events([{
      type: 'thread.compacted', compactionId: 'cmp:1', mode: 'upTo', trigger: 'manual', fromMessageId: 'u0', upToMessageId: 'a1', compactMessageIndex: 3, coveredMessages: 4,
      summary: SUMMARY, model: 'openai:gpt-e2e', usage: { inputTokens: 10, outputTokens: 5 }, supersedes: [], runId: null,
    }]);
    const note = page.locator('details.compaction-note');
    await w.eventually('the note', async () => (await note.count()) === 1);
    assert.equal((await note.locator('summary').innerText()).trim(), 'Context compacted up to here · 4 messages summarised by openai:gpt-e2e');
    // Below the second answer, above the third prompt.
    const order = (await page.evaluate(`(() => {
      const n = document.querySelector('details.compaction-note');
      return [...document.querySelectorAll('.message.user')].map((p) => (p.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING ? 'before' : 'after'));
    })()`)) as string[];
    assert.deepEqual(order, ['before', 'before', 'after']);
    const prompts = await page.locator('.message.user').allInnerTexts();
    assert.ok(['Prompt number 0', 'Prompt number 1'].every((p) => prompts.some((x) => x.includes(p))), JSON.stringify(prompts));
    await note.locator('summary').click();
    await w.eventually('the summary', async () => (await note.locator('.summary-text').innerText()).includes('## Decisions'));
    assert.equal(await note.locator('img').count(), 0, 'the summary is text, not markup');
    assert.equal(await page.evaluate('window.__pwned'), undefined);
    await page.screenshot({ path: path.join(RESULTS, 'webview-compaction.png') });
  });

  it('Compact up to here posts compactThread with the answer; /compact posts compactThread, not a prompt', async () => {
    await page.locator('article.run').nth(2).locator('.compact-up-to').click();
    const up = await w.waitPosted('compactThread upTo', (m) => m.type === 'compactThread' && m.mode === 'upTo');
    assert.deepEqual([up.threadId, up.messageId], [T, 'a2']);
    await w.host({ type: 'result', inReplyTo: up.requestId, value: {
      compactionId: 'cmp:2', mode: 'upTo', trigger: 'manual', fromMessageId: 'u0', upToMessageId: 'a2', compactMessageIndex: 5, coveredMessages: 6,
      summary: SUMMARY, model: 'openai:gpt-e2e', usage: { inputTokens: 1, outputTokens: 1 }, supersedes: ['cmp:1'], runId: null,
    } });
    const area = page.locator('vscode-textarea textarea');
    await area.fill('/compact');
    await area.press('Enter');
    const full = await w.waitPosted('compactThread full', (m) => m.type === 'compactThread' && m.mode === 'full');
    assert.equal(full.threadId, T);
    assert.equal((await w.posted()).filter((m) => m.type === 'sendPrompt').length, 0, 'no prompt was sent');
    assert.equal(await area.inputValue(), '');
  });
});
