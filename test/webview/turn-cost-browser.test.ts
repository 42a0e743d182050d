/**
 * Turn costs in the built chat webview (headless Chromium, strict CSP, fake host; see
 * ./support/page.ts): the webview asks `getThreadCosts` when the thread opens and once more after
 * runs end; answered, each answer with a receipt shows its cost under it — `$0.001200`,
 * `$0.003300 + 1 unpriced`, `cost unknown` — with the tokens by class, model, price card and
 * source in its hover (and in hidden text for screen readers), the local model's run shows
 * nothing, and the header shows the thread's total with its tooltip; a thread that spent nothing
 * shows no total. No serious axe findings in the costs. Screenshot: test-results/webview-turn-cost.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type Posted, type WebviewPage } from './support/browser';
import { axeViolations, describeFindings } from './support/axe';

const T = 'thread:turn-cost';
const T2 = 'thread:local-only';
const SETTINGS = {
  type: 'settings', model: 'openai:gpt-4o-mini', demoNotice: null,
  models: [{ ref: 'openai:gpt-4o-mini', label: 'gpt-4o-mini', isDemo: false }, { ref: 'local:demo', label: 'Vox demo', isDemo: true }],
};
const tokens = (over: Record<string, number>) => ({ input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0, reasoning: 0, ...over });
const card = { id: 'gpt-4o-mini', source: 'bundled', version: '2026-01-15', fetchedAt: '2026-01-15T00:00:00Z' };
/** r1 priced, r2 the local demo model (no receipt), r3 two responses of which one unpriced, r4 unpriced only. */
const COSTS = {
  threadId: T, costMicroUsd: 4_500, unpricedResponses: 2, responses: 5,
  runs: [
    { runId: 'r1', responses: 1, costMicroUsd: 1_200, unpricedResponses: 0, tokens: tokens({ input: 1_000, cacheRead: 4_000, cacheWrite5m: 2_000, cacheWrite1h: 500, output: 300, reasoning: 120 }), models: ['openai:gpt-4o-mini'], sources: ['priced'], cards: [card], premiums: [] },
    { runId: 'r3', responses: 3, costMicroUsd: 3_300, unpricedResponses: 1, tokens: tokens({ input: 900, output: 90 }), models: ['openai:gpt-4o-mini', 'openai:mystery'], sources: ['providerReported', 'unpriced'], cards: [card], premiums: [] },
    { runId: 'r4', responses: 1, costMicroUsd: 0, unpricedResponses: 1, tokens: tokens({ input: 10, output: 5 }), models: ['openai:mystery'], sources: ['unpriced'], cards: [], premiums: [] },
  ],
};

describe('chat webview in Chromium: what each turn cost', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (threadId: string, e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId, ...e });
  const turn = (threadId: string, n: number, provider: string, model: string) => [
    { type: 'message.added', messageId: `u${n}`, parentId: n === 1 ? null : `a${n - 1}`, role: 'user', content: `Question ${n}`, runId: null, status: 'complete' },
    { type: 'run.started', runId: `r${n}`, ordinal: n - 1, provider, model, ownerPid: 1, userMessageId: `u${n}` },
    { type: 'message.added', messageId: `a${n}`, parentId: `u${n}`, role: 'assistant', content: `Answer ${n}.`, runId: `r${n}`, status: 'complete' },
    { type: 'run.ended', runId: `r${n}`, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 5 } },
  ].map((e) => ev(threadId, e));
  const costRequests = async (threadId: string): Promise<Posted[]> => (await w.posted()).filter((m) => m.type === 'getThreadCosts' && m.threadId === threadId);
  const runAt = (i: number) => page.locator('article.run').nth(i);

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-turn-cost', profilePrefix: 'vox-chromium-turn-cost-', viewport: { width: 460, height: 900 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('asks getThreadCosts when the thread opens, and once more after its runs end', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    const first = await w.waitPosted('getThreadCosts on open', (m) => m.type === 'getThreadCosts' && m.threadId === T);
    await w.host({
      type: 'events', threadId: T,
      events: [
        ev(T, { type: 'thread.created', title: 'Costs' }),
        ...turn(T, 1, 'openai', 'gpt-4o-mini'), ...turn(T, 2, 'local', 'demo'), ...turn(T, 3, 'openai', 'gpt-4o-mini'), ...turn(T, 4, 'openai', 'mystery'),
      ],
    });
    await w.eventually('four answers', async () => (await page.locator('article.run').count()) === 4);
    assert.equal((await costRequests(T)).length, 1, 'the runs that ended wait for the request in flight');
    await w.host({ type: 'result', inReplyTo: first.requestId, value: COSTS });
    await w.eventually('one follow-up request', async () => (await costRequests(T)).length === 2);
    await w.host({ type: 'result', inReplyTo: (await costRequests(T))[1]!.requestId, value: COSTS });
  });

  it('shows each cost under its answer, with tokens, model, card and source on hover; the local run shows nothing', async () => {
    const cost = (i: number) => runAt(i).locator('.turn-cost .turn-cost-label');
    await w.eventually('the first cost', async () => (await cost(0).innerText()) === '$0.001200');
    assert.equal(await cost(2).innerText(), '$0.003300 + 1 unpriced');
    assert.equal(await cost(3).innerText(), 'cost unknown');
    assert.equal(await runAt(1).locator('.turn-cost').count(), 0, 'the local demo model\'s run has no receipt: nothing shown');

    const hover = (await runAt(0).locator('.turn-cost').getAttribute('title')) ?? '';
    assert.deepEqual(hover.split('\n'), [
      '$0.001200 for 1 response',
      'Tokens:',
      '  uncached input: 1,000',
      '  cache read: 4,000',
      '  cache write 5 min: 2,000',
      '  cache write 1 h: 500',
      '  output: 300, of which reasoning 120',
      'Model: openai:gpt-4o-mini',
      'Price card: gpt-4o-mini (bundled, version 2026-01-15)',
      'Source: priced by card',
    ]);
    const spoken = await runAt(0).locator('.turn-cost .vox-visually-hidden').textContent();
    assert.ok(spoken?.startsWith('Cost of this turn: $0.001200 for 1 response'), `hidden text: ${spoken}`);
    assert.match(spoken ?? '', /cache write 1 h: 500/);
    const mixed = (await runAt(2).locator('.turn-cost').getAttribute('title')) ?? '';
    assert.match(mixed, /^\$0\.003300 \+ 1 unpriced for 3 responses \(1 with no price\)\n/);
    assert.match(mixed, /\nModels: openai:gpt-4o-mini, openai:mystery\n/);
    assert.match(mixed, /\nSource: reported by the provider; no price card$/);
    assert.match((await runAt(3).locator('.turn-cost').getAttribute('title')) ?? '', /\nPrice card: none\nSource: no price card$/);
    // Under the answer: after its text and status line, before its actions.
    const order = await runAt(0).evaluate((el) => [...el.querySelectorAll('.message.assistant, .run-status, .turn-cost, .message-actions')].map((e) => e.className.split(' ')[0]));
    assert.deepEqual(order, ['message', 'run-status', 'turn-cost', 'message-actions']);
  });

  it('shows the thread\'s total in the header, with its tooltip', async () => {
    const total = page.locator('header.toolbar .thread-cost');
    await total.waitFor();
    assert.equal(await total.locator('[aria-hidden="true"]').innerText(), '$0.004500 + 2 unpriced');
    assert.equal(await total.getAttribute('title'), 'This thread has spent $0.004500, 5 responses (2 responses with no price card, not counted)');
    assert.equal(await total.locator('.vox-visually-hidden').textContent(), 'This thread has spent $0.004500, 5 responses (2 responses with no price card, not counted)');
    const found = await axeViolations(page, w.origin, 'header.toolbar');
    assert.deepEqual(found.map((f) => f.id), [], describeFindings(found));
    const inRuns = await axeViolations(page, w.origin, 'article.run');
    assert.deepEqual(inRuns.map((f) => f.id), [], describeFindings(inRuns));
    await runAt(0).locator('.turn-cost').hover();
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-turn-cost.png') });
  });

  it('a thread of a local model only spent nothing: no total, no cost under its answer', async () => {
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T2 });
    const ask = await w.waitPosted('getThreadCosts of the other thread', (m) => m.type === 'getThreadCosts' && m.threadId === T2);
    await w.eventually('the old total gone', async () => (await page.locator('.thread-cost').count()) === 0);
    await w.host({ type: 'events', threadId: T2, events: [ev(T2, { type: 'thread.created', title: 'Offline' }), ...turn(T2, 1, 'local', 'demo')] });
    await w.host({ type: 'result', inReplyTo: ask.requestId, value: { threadId: T2, costMicroUsd: 0, unpricedResponses: 0, responses: 0, runs: [] } });
    await w.eventually('the follow-up request', async () => (await costRequests(T2)).length === 2);
    await w.host({ type: 'result', inReplyTo: (await costRequests(T2))[1]!.requestId, value: { threadId: T2, costMicroUsd: 0, unpricedResponses: 0, responses: 0, runs: [] } });
    await w.eventually('the local answer', async () => (await page.locator('article.run .message.assistant').innerText()) === 'Answer 1.');
    await w.eventually('the local run\'s usage line', async () => (await page.locator('article.run .run-status .usage').count()) === 1);
    assert.equal(await page.locator('.turn-cost').count(), 0);
    assert.equal(await page.locator('.thread-cost').count(), 0);
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
