/**
 * The "Vox: Usage" tab in Chromium (the built dist/usage.js in its strict-CSP page, a fake host;
 * see ./support/browser.ts): it asks for the report, then draws the daily chart (bars on a canvas,
 * coloured from the theme), the exact figures, spend per model with the reconciliation, per
 * thread (a deleted thread kept, a live one opens), per variant group, the caps and the
 * transactions; the period and the buttons post to the host; a malformed report is an error, not
 * half a page; no CSP violation; axe finds nothing serious. Screenshot: test-results/webview-usage.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';
import { axeViolations, describeFindings } from './support/axe';
import { dailySeries, decodeUsagePayload, reconciliation, costText } from '../../webview/src/usage/data';

const tokens = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output, reasoning: 0 });
const line = (costMicroUsd: number, responses: number, extra: object = {}) => ({
  responses, costMicroUsd, unpricedResponses: 0, tokens: tokens(12_000 * responses, 800 * responses), providerReportedMicroUsd: 0, pricedForReportedMicroUsd: 0, ...extra,
});
const REPORT = {
  balanceMicroUsd: 4_987_300, balanceEnforced: true, todayMicroUsd: 12_700, totalMicroUsd: 31_900,
  byModel: [
    { model: 'openrouter:anthropic/claude-sonnet-4.5', ...line(19_200, 3, { providerReportedMicroUsd: 19_200, pricedForReportedMicroUsd: 18_900 }) },
    { model: 'openai:gpt-4o-mini', ...line(12_700, 5) },
    { model: 'ollama:llama3', ...line(0, 2, { unpricedResponses: 2 }) },
  ],
  byThread: [
    { threadId: 'thread:a', title: 'Fix the flaky test', parentThreadId: null, deleted: false, ...line(19_200, 3) },
    { threadId: 'thread:v1', title: 'Variant 1/2 (openai:gpt-4o-mini): tidy', parentThreadId: 'thread:g', deleted: false, ...line(8_000, 3) },
    { threadId: 'thread:v2', title: 'Variant 2/2 (openai:gpt-4o-mini): tidy', parentThreadId: 'thread:g', deleted: false, ...line(4_700, 2) },
    { threadId: 'thread:gone', title: 'An old question', parentThreadId: null, deleted: true, ...line(0, 2, { unpricedResponses: 2 }) },
  ],
  byFamily: [
    { threadId: 'thread:a', title: 'Fix the flaky test', threads: 1, ...line(19_200, 3) },
    { threadId: 'thread:g', title: 'Variants (2): tidy', threads: 2, ...line(12_700, 5) },
  ],
  daily: [
    { day: '2026-11-28', costMicroUsd: 6_100, responses: 2 },
    { day: '2026-12-01', costMicroUsd: 13_100, responses: 4 },
    { day: '2026-12-03', costMicroUsd: 12_700, responses: 5 },
  ],
  transactions: [
    { id: 3, kind: 'usage', amountMicroUsd: -8_000, balanceAfterMicroUsd: 4_987_300, model: 'openai:gpt-4o-mini', responseId: 'chatcmpl-9', note: null, createdAt: 1_764_770_000_000 },
    { id: 1, kind: 'purchase', amountMicroUsd: 5_000_000, balanceAfterMicroUsd: 5_000_000, model: null, responseId: null, note: 'added in the Usage tab', createdAt: 1_764_500_000_000 },
  ],
  caps: [{ scope: 'daily', threadId: null, capMicroUsd: 2_000_000, action: 'block' }],
};
const PAYLOAD = { type: 'usage', today: '2026-12-03', days: 7, report: REPORT };

describe('the Usage tab: its data, pure', () => {
  it('fills every day of the period, oldest first; checks the payload; reconciles and words costs', () => {
    const s = dailySeries(REPORT.daily, '2026-12-03', 7);
    assert.deepEqual(s.days, ['2026-11-27', '2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03']);
    assert.deepEqual(s.micro, [0, 6_100, 0, 0, 13_100, 0, 12_700]);
    assert.equal(s.x[1]! - s.x[0]!, 86_400);
    assert.equal(dailySeries([], '2026-03-01', 2).days.join(), '2026-02-28,2026-03-01', 'month ends by the calendar');
    assert.ok(!(decodeUsagePayload(PAYLOAD) instanceof Error));
    assert.match(String(decodeUsagePayload({ ...PAYLOAD, report: { ...REPORT, totalMicroUsd: 1.5 } })), /totalMicroUsd/);
    assert.match(String(decodeUsagePayload({ ...PAYLOAD, days: 400 })), /400 days/);
    assert.match(String(decodeUsagePayload({ ...PAYLOAD, today: 'yesterday' })), /not a date/);
    assert.deepEqual(reconciliation({ providerReportedMicroUsd: 19_200, pricedForReportedMicroUsd: 18_900 }), { reported: '$0.019200', card: '$0.018900', delta: '+$0.000300', agrees: false });
    assert.equal(reconciliation({ providerReportedMicroUsd: 0, pricedForReportedMicroUsd: 0 }), null);
    assert.equal(costText({ costMicroUsd: 0, responses: 2, unpricedResponses: 2 }), 'unknown');
    assert.equal(costText({ costMicroUsd: 300, responses: 3, unpricedResponses: 1 }), '$0.000300 + 1 unpriced');
    assert.equal(costText({ costMicroUsd: 0, responses: 0, unpricedResponses: 0 }), '$0.000000');
  });
});

describe('the Usage tab in Chromium', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-usage', profilePrefix: 'vox-chromium-usage-', viewport: { width: 1000, height: 1100 }, entry: 'usage' });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('asks for the report, then draws the chart and every table with exact figures', async () => {
    await w.waitPosted('ready', (m) => m.type === 'ready');
    await w.host(PAYLOAD);
    await page.locator('.today').waitFor();
    assert.equal(await page.locator('.today').innerText(), '$0.012700');
    assert.equal(await page.locator('.balance').innerText(), '$4.987300');
    assert.equal(await page.locator('.period').innerText(), '$0.031900');
    // The chart: a canvas of the box's width, with bar-coloured pixels drawn on it.
    await page.locator('.spend-chart canvas').waitFor();
    const painted = await page.evaluate(`(() => {
      const c = document.querySelector('.spend-chart canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let blue = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === 0x37 && d[i + 1] === 0x94 && d[i + 2] === 0xff) blue++;
      return { width: c.width, blue };
    })()`) as { width: number; blue: number };
    assert.ok(painted.width > 400, `canvas ${painted.width}px wide`);
    assert.ok(painted.blue > 100, `bars in the theme's --vscode-charts-blue (${painted.blue} pixels)`);
    assert.match(await page.locator('.spend-chart .canvas').getAttribute('aria-label') ?? '', /2026-11-27 to 2026-12-03: \$0\.031900/);
    const models = await page.locator('.by-model tbody tr').allInnerTexts();
    assert.equal(models.length, 3);
    assert.match(models[0]!, /claude-sonnet-4\.5[\s\S]*\$0\.019200[\s\S]*\$0\.019200 · \$0\.018900[\s\S]*Δ \+\$0\.000300/);
    assert.match(models[2]!, /ollama:llama3[\s\S]*unknown/);
    assert.match(await page.locator('.by-model tbody tr').nth(1).locator('td').nth(1).getAttribute('title') ?? '', /60,000 uncached input · 0 cache read · 4,000 output/);
    const threads = await page.locator('.by-thread tbody tr').allInnerTexts();
    assert.match(threads[3]!, /An old question \(deleted\)[\s\S]*unknown/);
    assert.equal(await page.locator('.by-family tbody tr').count(), 1, 'a thread with no children is not a group');
    assert.match(await page.locator('.by-family tbody tr').innerText(), /Variants \(2\): tidy\s+2\s+5\s+\$0\.012700/);
    assert.match(await page.locator('.caps').innerText(), /Daily: \$2\.000000 \(refuse the call/);
    const tx = await page.locator('.transactions tbody tr').allInnerTexts();
    assert.match(tx[0]!, /Usage\s+-\$0\.008000\s+\$4\.987300\s+openai:gpt-4o-mini/);
    assert.match(tx[1]!, /Purchase\s+\+\$5\.000000\s+\$5\.000000\s+added in the Usage tab/);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-usage.png'), fullPage: true });
    assert.deepEqual(await page.evaluate('window.__violations'), []);
    assert.deepEqual(w.pageErrors, []);
  });

  it('the period, refresh, a thread, and the two money buttons post to the host', async () => {
    await page.getByRole('button', { name: '30 days' }).click();
    assert.deepEqual(await w.waitPosted('refresh 30', (m) => m.type === 'refresh' && m.days === 30), { type: 'refresh', days: 30 });
    await page.getByRole('button', { name: 'Fix the flaky test' }).click();
    assert.deepEqual(await w.waitPosted('openThread', (m) => m.type === 'openThread'), { type: 'openThread', threadId: 'thread:a' });
    assert.equal(await page.getByRole('button', { name: 'An old question' }).count(), 0, 'a deleted thread cannot be opened');
    await page.getByRole('button', { name: 'Add to balance…' }).click();
    await w.waitPosted('grant', (m) => m.type === 'grant');
    await page.getByRole('button', { name: 'Daily cap…' }).click();
    await w.waitPosted('setDailyCap', (m) => m.type === 'setDailyCap');
  });

  it('axe finds nothing serious', async () => {
    const found = await axeViolations(page, w.origin);
    assert.equal(found.length, 0, describeFindings(found));
  });

  it('a malformed report is an error in words, never half a page', async () => {
    await w.host({ ...PAYLOAD, report: { ...REPORT, byModel: [{ model: 7 }] } });
    await page.locator('.error').waitFor();
    assert.match(await page.locator('.error').innerText(), /cannot be shown: .*byModel/);
    assert.equal(await page.locator('.by-model').count(), 0);
  });
});
