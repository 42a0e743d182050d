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

  it("a page reload while a new thread's first turn streams comes back to that thread, not to an empty new one", async () => {
    const T2 = 'thread:reload-new';
    const ev2 = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T2, ...e });
    await page.locator('vscode-button.new-thread').click();
    await page.locator('.empty h2').waitFor();
    await page.locator('vscode-textarea textarea').fill('A new thread that streams');
    await page.locator('vscode-button.send:not([disabled])').click();
    const send = await w.waitPosted('sendPrompt', (m) => m.type === 'sendPrompt' && m.prompt === 'A new thread that streams');
    assert.equal(send.threadId, null);
    await w.host({ type: 'result', inReplyTo: send.requestId, value: { threadId: T2, runId: 'r9', queued: null } });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T2);
    await w.host({
      type: 'events', threadId: T2, events: [
        { type: 'thread.created', title: 'A new thread that streams' },
        { type: 'message.added', messageId: 'u9', parentId: null, role: 'user', content: 'A new thread that streams', runId: null, status: 'complete' },
        { type: 'run.started', runId: 'r9', ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u9' },
      ].map(ev2),
    });
    await w.waitPosted('subscribeTurn', (m) => m.type === 'subscribeTurn' && m.turnId === 'r9');
    await w.eventually('the run streaming', async () => (await page.locator('article.run footer.run-status').last().getAttribute('data-status')) === 'running');

    await page.reload(); // the page's posted messages start afresh
    await page.locator('.app').waitFor();
    await w.eventually('the page to subscribe the streaming thread again', async () => (await w.posted()).some((m) => m.type === 'subscribeThread' && m.threadId === T2));
    assert.equal(await page.locator('.empty h2').count(), 0, 'the reloaded page shows the empty new-thread state');
  });
});
