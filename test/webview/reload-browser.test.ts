/**
 * A run whose window (or process) went away mid-turn, in the built chat webview (headless
 * Chromium, strict CSP, fake host; ./support/browser.ts): a run ended `interrupted` with cause
 * `ownerEnded` keeps its partial answer, its status line reads "Stopped by a reload…" — not
 * "Interrupted: …" — and Retry posts `retry` for the run. An interruption of no known cause still
 * reads "Interrupted: …".
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:reload';
const SETTINGS = { type: 'settings', model: 'openai:gpt-e2e', demoNotice: null, models: [{ ref: 'openai:gpt-e2e', label: 'gpt-e2e', isDemo: false }] };
import { OWNER_ENDED_ERROR as ENGINE_ERROR } from '../../src/protocol/events';

describe('chat webview in Chromium: a run stopped by a reload', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-reload', profilePrefix: 'vox-chromium-reload-', viewport: { width: 460, height: 640 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('shows "Stopped by a reload" with the partial answer, and Retry posts retry for the run', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await events([
      { type: 'thread.created', title: 'Stream a long answer' },
      { type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Stream a long answer', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r1', ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u1' },
      { type: 'message.added', messageId: 'r1:partial', parentId: 'u1', role: 'assistant', content: 'The first half of the answer', runId: 'r1', status: 'interrupted' },
      { type: 'run.ended', runId: 'r1', status: 'interrupted', error: ENGINE_ERROR, cause: 'ownerEnded', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    const run = page.locator('article.run').last();
    const footer = run.locator('footer.run-status');
    await w.eventually('the reload stop', async () => (await footer.getAttribute('data-status')) === 'interrupted' && (await footer.innerText()).includes('Stopped by a reload'));
    const text = await footer.innerText();
    assert.ok(!text.includes('Interrupted'), `the footer reads ${JSON.stringify(text)}`);
    assert.ok(!text.includes(ENGINE_ERROR), `the footer repeats the engine's text: ${JSON.stringify(text)}`);
    assert.match(await run.locator('.message.assistant').innerText(), /The first half of the answer/);
    const retry = run.locator('.message-actions .rerun.retry');
    await w.eventually('Retry on the stopped run', async () => (await retry.innerText()) === 'Retry');
    await retry.click();
    const sent = await w.waitPosted('retry', (m) => m.type === 'retry');
    assert.deepEqual({ threadId: sent.threadId, runId: sent.runId }, { threadId: T, runId: 'r1' });
  });

  it('an interruption of no known cause still reads "Interrupted: …"', async () => {
    await events([
      { type: 'message.added', messageId: 'u2', parentId: 'r1:partial', role: 'user', content: 'Again?', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r2', ordinal: 1, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u2' },
      { type: 'run.ended', runId: 'r2', status: 'interrupted', error: 'the tool host went away', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    const status = page.locator('article.run').last().locator('.run-status .error');
    await w.eventually('the plain interruption', async () => (await status.innerText()) === 'Interrupted: the tool host went away');
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
