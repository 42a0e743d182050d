/**
 * A run the repetition guard stopped, in the built chat webview (headless Chromium, strict CSP,
 * fake host; ./support/browser.ts): the partial answer stays, the status line reads "Stopped: the
 * model repeated itself (…)" with the guard's detail — not "Failed: …" — and Retry is offered and
 * posts `retry` for the run. Another failure still reads "Failed: …". Screenshot:
 * test-results/webview-repetition.png (copied to docs/screenshot-guard.png for the README).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';
import { repetitionMessage } from '../../src/protocol/repetition';

const T = 'thread:repetition';
const SETTINGS = { type: 'settings', model: 'openai:gpt-e2e', demoNotice: null, models: [{ ref: 'openai:gpt-e2e', label: 'gpt-e2e', isDemo: false }] };
const SENTENCE = 'Let me check the configuration file again to make sure the defaults are merged correctly. ';

describe('chat webview in Chromium: a run stopped by the repetition guard', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-repetition', profilePrefix: 'vox-chromium-repetition-', viewport: { width: 460, height: 640 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('shows "Stopped: the model repeated itself" with the detail and the partial answer, and Retry posts retry', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const error = repetitionMessage('ngramCycle', 16, 3);
    await events([
      { type: 'thread.created', title: 'Why does the build fail?' },
      { type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Why does the build fail?', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r1', ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u1' },
      { type: 'message.added', messageId: 'a1', parentId: 'u1', role: 'assistant', content: `I looked at \`src/config.ts\`. ${SENTENCE.repeat(3)}Let me check`, runId: 'r1', status: 'failed' },
      { type: 'run.ended', runId: 'r1', status: 'failed', error, usage: { inputTokens: 812, outputTokens: 64 } },
    ]);
    const run = page.locator('article.run').last();
    const status = run.locator('.run-status .error');
    await w.eventually('the repetition stop', async () => (await status.innerText()) === 'Stopped: the model repeated itself (a cycle of 16 tokens, 3 times in a row).');
    assert.equal(await status.getAttribute('class').then((c) => c?.includes('repeated')), true);
    assert.match(await run.locator('.message.assistant').innerText(), /Let me check the configuration file again/);
    const retry = run.locator('.message-actions .rerun.retry');
    await w.eventually('Retry on the stopped run', async () => (await retry.innerText()) === 'Retry');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-repetition.png') });
    await retry.click();
    const sent = await w.waitPosted('retry', (m) => m.type === 'retry');
    assert.deepEqual({ threadId: sent.threadId, runId: sent.runId }, { threadId: T, runId: 'r1' });
  });

  it('another failure still reads "Failed: …"', async () => {
    await events([
      { type: 'message.added', messageId: 'u2', parentId: 'a1', role: 'user', content: 'Again?', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r2', ordinal: 1, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u2' },
      { type: 'run.ended', runId: 'r2', status: 'failed', error: 'the server said no', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    const status = page.locator('article.run').last().locator('.run-status .error');
    await w.eventually('the plain failure', async () => (await status.innerText()) === 'Failed: the server said no');
    assert.equal(await status.getAttribute('class').then((c) => c?.includes('repeated')), false);
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
