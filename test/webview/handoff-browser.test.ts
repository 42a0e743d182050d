/**
 * The context handoff note in the built chat webview (headless Chromium, strict CSP, fake host;
 * see ./support/page.ts): a run whose request carried a `<context_handoff>` shows "Context
 * handed off from <model>: N turns verbatim, M compacted, K left out" above its answer — live,
 * while the run streams, and after a reload, when the thread's events are replayed at once.
 * Screenshot: test-results/webview-handoff.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:handoff';
const R0 = 'run:handoff:0';
const R1 = 'run:handoff:1';

describe('chat webview in Chromium: context handoff note', function () {
  this.timeout(120_000);
  let w: WebviewPage | undefined;
  let page: Page;
  let eventSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++eventSeq, time: Date.now(), threadId: T, ...e });
  const handoff = {
    type: 'handoff.built', runId: R1, strategy: 'deltaSinceTargetLastSeen', sourceModel: 'openai:gpt-4o', coveredFrom: 0, coveredTo: 0,
    turnsVerbatim: 1, turnsCompacted: 0, turnsOmitted: 0, checkpoints: 0, manualChars: 0, manualCharsOmitted: 0, tokens: 412, bytes: 1630,
  };
  const first = () => [
    ev({ type: 'thread.created', title: 'Bundler' }),
    ev({ type: 'message.added', messageId: 'm:u0', parentId: null, role: 'user', content: 'Which bundler does the build use?', runId: null, status: 'complete' }),
    ev({ type: 'run.started', runId: R0, ordinal: 0, provider: 'openai', model: 'openai:gpt-4o', ownerPid: 1, userMessageId: 'm:u0' }),
    ev({ type: 'message.added', messageId: 'm:a0', parentId: 'm:u0', role: 'assistant', content: 'It uses **esbuild** (esbuild.mjs).', runId: R0, status: 'complete' }),
    ev({ type: 'run.ended', runId: R0, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 8 } }),
    ev({ type: 'message.added', messageId: 'm:u1', parentId: 'm:a0', role: 'user', content: 'Now switch it to a watch mode.', runId: null, status: 'complete' }),
    ev({ type: 'run.started', runId: R1, ordinal: 1, provider: 'anthropic', model: 'anthropic:claude-sonnet-4', ownerPid: 1, userMessageId: 'm:u1' }),
  ];

  async function open(suite: Mocha.Context): Promise<WebviewPage> {
    const p = await openWebviewPage(suite, { nonce: 'nonce-handoff', profilePrefix: 'vox-chromium-handoff-', viewport: { width: 460, height: 520 } });
    await p.host({ type: 'settings', model: 'anthropic:claude-sonnet-4', models: [{ ref: 'anthropic:claude-sonnet-4', label: 'Claude Sonnet 4', isDemo: false }], demoNotice: null });
    await p.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await p.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    return p;
  }
  afterEach(async () => {
    await w?.close();
    w = undefined;
  });

  const note = () => page.locator('article.run .handoff-note');

  it('live: the note appears above the running turn when handoff.built arrives, and stays', async function () {
    w = await open(this);
    page = w.page;
    await w.host({ type: 'events', threadId: T, events: first() });
    await w.eventually('the second run', async () => (await page.locator('article.run').count()) === 2);
    assert.equal(await note().count(), 0, 'no note before the handoff is built');
    await w.host({ type: 'events', threadId: T, events: [ev(handoff)] });
    await w.eventually('the note', async () => (await note().count()) === 1);
    assert.equal((await note().locator('summary').innerText()).trim(), 'Context handed off from openai:gpt-4o: 1 turn verbatim, 0 compacted, 0 left out');
    // It belongs to the second run, above its blocks.
    assert.equal(await page.locator('article.run').nth(0).locator('.handoff-note').count(), 0);
    assert.equal(await page.locator('article.run').nth(1).locator('.handoff-note').count(), 1);
    assert.equal(await note().getAttribute('role'), 'note');
    assert.match((await note().locator('summary').getAttribute('title')) ?? '', /Strategy deltaSinceTargetLastSeen; covered_runs 0\.\.0; 412 tokens, 1,630 bytes\./);
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'message.added', messageId: 'm:a1', parentId: 'm:u1', role: 'assistant', content: 'Added `--watch` to the build script.', runId: R1, status: 'complete' }),
      ev({ type: 'run.ended', runId: R1, status: 'completed', error: null, usage: { inputTokens: 500, outputTokens: 20 } }),
    ] });
    await w.eventually('the answer', async () => (await page.locator('article.run').nth(1).innerText()).includes('Added'));
    assert.equal(await note().count(), 1, 'the note stays after the run ends');
    await note().locator('summary').click();
    await w.eventually('the details open', async () => (await note().getAttribute('open')) !== null);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-handoff.png') });
    assert.deepEqual(w.pageErrors, []);
  });

  it('after a reload: the replayed events render the note; one that left turns out says so', async function () {
    w = await open(this);
    page = w.page;
    await w.host({ type: 'events', threadId: T, events: [...first(), ev({ ...handoff, turnsVerbatim: 3, turnsCompacted: 118, turnsOmitted: 379, coveredTo: 499 })] });
    await w.eventually('the note', async () => (await note().count()) === 1);
    assert.equal((await note().locator('summary').innerText()).trim(), 'Context handed off from openai:gpt-4o: 3 turns verbatim, 118 compacted, 379 left out');
  });
});
