/**
 * The built chat webview (dist/webview.js + dist/webview.css) in headless Chromium, under the
 * strict CSP the extension host uses (script-src by nonce, no inline styles), with a FAKE host:
 * `acquireVsCodeApi` is injected before the bundle runs and records what the webview posts;
 * engine updates are delivered as window messages. Checks streaming order, sanitising, approvals,
 * Stop, the demo banner, forward compatibility, the composer keys, reload, and saves screenshots
 * to test-results/ (webview.png, webview-approval.png, webview-empty.png). Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';


const T = 'thread:browser';
const R = 'run:browser';

describe('chat webview in Chromium (fake host)', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let pageErrors: string[] = [];
  const dialogs: string[] = [];
  let eventSeq = 0;
  let chunkSeq = 0;
  /** CSP reports the sanitiser's inert parse of inline handlers causes (blocked, never run). */
  let expectedViolations: string[] = [];

  const ev = (e: Record<string, unknown>) => ({ seq: ++eventSeq, time: Date.now(), threadId: T, ...e });
  const chunk = (kind: string, data: string) => ({ turnId: R, seq: ++chunkSeq, kind, data });
  const host = (message: unknown) => w.host(message);
  const posted = () => w.posted();
  const waitPosted = (what: string, pred: (m: Record<string, unknown>) => boolean) => w.waitPosted(what, pred);
  const eventually = (what: string, check: () => Promise<boolean>) => w.eventually(what, check);
  const lastAnswer = () => page.locator('[data-role="assistant"]').last();

  before(async function () {
    w = await openWebviewPage(this, {
      nonce: 'test-nonce-123', profilePrefix: 'vox-chromium-', viewport: { width: 420, height: 900 },
      setup: (p) => p.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      }),
    });
    page = w.page;
    pageErrors = w.pageErrors;
  });

  after(async () => {
    await w?.close();
  });

  it('asks the host for settings and the thread list at start', async () => {
    await waitPosted('getSettings', (m) => m.type === 'getSettings');
    await waitPosted('listThreads', (m) => m.type === 'listThreads');
  });

  it('shows the demo banner (short, wrapping) while demoNotice is set; Connect posts hostAction; the picker posts setModel', async () => {
    await host({
      type: 'settings', model: 'local:demo', demoNotice: 'The offline demo model is active. It writes nonsense.',
      models: [{ ref: 'local:demo', label: 'Demo model', isDemo: true }, { ref: 'openai:gpt-4o-mini', label: 'GPT-4o mini', isDemo: false }],
    });
    const banner = page.locator('.demo-banner');
    await banner.waitFor();
    assert.match(await banner.innerText(), /writes nonsense/);
    const box = await banner.boundingBox();
    assert.ok(box && box.height < 64, `the banner is short: its text wraps to at most two lines (${box?.height} px high)`);
    await banner.locator('button[data-action="connectModel"]').click();
    await waitPosted('hostAction connectModel', (m) => m.type === 'hostAction' && m.action === 'connectModel');
    await banner.locator('button[data-action="connectModel"]').press('Enter'); // keyboard works too
    await page.locator('select.select').selectOption('openai:gpt-4o-mini');
    await waitPosted('setModel', (m) => m.type === 'setModel' && m.model === 'openai:gpt-4o-mini');
    assert.equal(await page.locator('select.select').inputValue(), 'local:demo', 'the picker shows the engine\'s model until it confirms');
    await host({ type: 'settings', model: 'openai:gpt-4o-mini', demoNotice: 'The offline demo model is active. It writes nonsense.',
      models: [{ ref: 'local:demo', label: 'Demo model', isDemo: true }, { ref: 'openai:gpt-4o-mini', label: 'GPT-4o mini', isDemo: false }] });
    await eventually('the confirmed model', async () => (await page.locator('select.select').inputValue()) === 'openai:gpt-4o-mini');
  });

  it('the picker groups recent models by provider and offers Connect a model…', async () => {
    await host({
      type: 'settings', model: 'openai:gpt-4.1', demoNotice: null,
      models: [{ ref: 'local:demo', label: 'Demo model', isDemo: true }, { ref: 'openai:gpt-4.1', label: 'openai:gpt-4.1', isDemo: false }],
      recent: [
        { provider: 'openai', label: 'OpenAI', models: [{ ref: 'openai:gpt-4.1', label: 'gpt-4.1', isDemo: false }, { ref: 'openai:gpt-4o-mini', label: 'gpt-4o-mini', isDemo: false }] },
        { provider: 'ollama', label: 'Ollama', models: [{ ref: 'ollama:qwen2.5-coder', label: 'qwen2.5-coder', isDemo: false }] },
      ],
    });
    await eventually('the grouped picker', async () => (await page.locator('select.select optgroup').count()) === 3);
    const groups = await page.locator('select.select optgroup').evaluateAll((els) =>
      els.map((g) => ({ label: g.getAttribute('label'), options: [...g.querySelectorAll('option')].map((o) => o.getAttribute('value')) })));
    assert.deepEqual(groups, [
      { label: 'OpenAI', options: ['openai:gpt-4.1', 'openai:gpt-4o-mini'] },
      { label: 'Ollama', options: ['ollama:qwen2.5-coder'] },
      { label: 'Other models', options: ['local:demo'] },
    ]);
    assert.equal(await page.locator('select.select').inputValue(), 'openai:gpt-4.1');
    await page.locator('select.select').selectOption({ label: 'Connect a model…' });
    await waitPosted('hostAction connectModel from the picker', (m) => m.type === 'hostAction' && m.action === 'connectModel');
    assert.equal(await page.locator('select.select').inputValue(), 'openai:gpt-4.1', 'Connect a model… is not a model choice');
  });

  it('dismissing the demo banner posts setUiPreference and hides it; settings with it dismissed keep it hidden', async () => {
    const demo = { type: 'settings', model: 'local:demo', demoNotice: 'The offline demo model is active. It writes nonsense.', models: [{ ref: 'local:demo', label: 'Demo model', isDemo: true }] };
    await host({ ...demo, ui: { demoBannerDismissed: false, threadListCollapsed: false } });
    const banner = page.locator('.demo-banner');
    await banner.waitFor();
    await banner.locator('button.dismiss').click();
    await waitPosted('setUiPreference', (m) => m.type === 'setUiPreference' && m.key === 'demoBannerDismissed' && m.value === true);
    await banner.waitFor({ state: 'detached' });
    // What the host answers after a reload: the choice it kept.
    await host({ ...demo, ui: { demoBannerDismissed: true, threadListCollapsed: false } });
    await page.locator('.model-row select').waitFor();
    assert.equal(await banner.count(), 0, 'the dismissed banner stays hidden');
    await host({ ...demo, ui: { demoBannerDismissed: false, threadListCollapsed: false } });
    await banner.waitFor();
    // The empty state's thread list folds away the same way (and comes back from the kept choice).
    await page.locator('#vox-recent-threads').waitFor();
    await page.locator('button.recent-toggle').click();
    await waitPosted('setUiPreference threadListCollapsed', (m) => m.type === 'setUiPreference' && m.key === 'threadListCollapsed' && m.value === true);
    await page.locator('#vox-recent-threads').waitFor({ state: 'detached' });
    await host({ ...demo, ui: { demoBannerDismissed: false, threadListCollapsed: false } });
    await page.locator('#vox-recent-threads').waitFor();
  });

  it('lists threads and opens one, subscribing from seq 0', async () => {
    const list = await waitPosted('listThreads', (m) => m.type === 'listThreads');
    await host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [
      { id: T, title: 'Fix the failing test', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 },
      { id: 'thread:old', title: 'Older thread', createdAt: 1, updatedAt: 1, lastSeq: 0 },
    ] } });
    assert.equal(await page.locator('.empty h2').innerText(), 'Ask Vox', 'empty state while no thread is open');
    await page.locator('.empty button.open', { hasText: 'Older thread' }).waitFor();
    await page.locator('button.open', { hasText: 'Fix the failing test' }).click();
    await waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T && m.afterSeq === 0);
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Fix the failing test' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'Make the failing test pass', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u' }),
    ] });
    await waitPosted('subscribeTurn', (m) => m.type === 'subscribeTurn' && m.turnId === R && m.afterSeq === 0);
    assert.match(await page.locator('[data-role="user"]').innerText(), /Make the failing test pass/);
  });

  it('renders tokens streamed as batched chunks, in order', async () => {
    // Each batch, and what must be visible once it is in (an unclosed `**` shows literally until it closes).
    const batches: [string[], string][] = [
      [['Let me ', 'look'], 'Let me look'],
      [[' at **the'], 'Let me look at **the'],
      [[' test**', ' first.\n\n```ts\nconst answer = 42;\n'], 'Let me look at the test first.'],
      [['// done\n```\n'], '// done'],
    ];
    for (const [batch, visible] of batches) {
      await host({ type: 'turnChunks', turnId: R, chunks: batch.map((d) => chunk('text', d)) });
      await eventually(`"${visible}" is shown`, async () => (await lastAnswer().innerText()).includes(visible));
    }
    await eventually('the code block', async () => (await page.locator('.code-block code').last().innerText()).includes('const answer = 42;'));
    // Highlighted by shiki while and after it streamed (throttled passes); the last pass covers the whole block.
    const code = page.locator('.code-block code').last();
    await eventually('the streamed block fully highlighted', async () => (await code.getAttribute('data-highlighted')) === 'full');
    assert.equal(await code.locator('span', { hasText: 'const' }).first().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color), 'rgb(86, 156, 214)');
    assert.equal(await page.locator('[data-role="assistant"] strong').first().innerText(), 'the test');
  });

  it('sanitises model output: a <script> or onerror= payload stays inert', async () => {
    const payload = 'Careful: <img src=x onerror=alert(1)> <script>alert(2)</script> <a href="javascript:alert(3)">a</a> '
      + '[b](javascript:alert(4)) <iframe src="javascript:alert(5)"></iframe> <svg onload=alert(6)></svg> <b onmouseover=alert(7)>SAFE-MARKER</b>';
    assert.deepEqual(await page.evaluate('window.__violations'), [], 'no CSP violation before the payload');
    await host({ type: 'turnChunks', turnId: R, chunks: [chunk('text', payload.slice(0, 40)), chunk('text', payload.slice(40))] });
    await eventually('the marker', async () => (await lastAnswer().innerText()).includes('SAFE-MARKER'));
    await page.waitForTimeout(300); // give a surviving handler time to fire
    for (const sel of ['#app script', '#app [onerror]', '#app [onload]', '#app [onmouseover]', '#app iframe', '#app a[href^="javascript:"]']) {
      assert.equal(await page.locator(sel).count(), 0, `no ${sel}`);
    }
    assert.deepEqual(await page.evaluate('window.__alerts'), []);
    assert.deepEqual(dialogs, []);
    // Chromium reports `script-src-attr` when DOMPurify parses the handlers in its inert document;
    // the CSP blocks them there too. Nothing else may be reported.
    expectedViolations = (await page.evaluate('window.__violations')) as string[];
    assert.ok(expectedViolations.every((v) => v.startsWith('script-src-attr inline ')), JSON.stringify(expectedViolations));
  });

  it('an approval request shows Approve/Deny on its tool call; Approve posts respondToApproval with its callId', async () => {
    const itemId = 'item:write-1';
    const args = JSON.stringify({ path: 'src/sum.ts', content: 'export const sum = (a: number, b: number) => a + b;\n' });
    await host({ type: 'events', threadId: T, events: [ev({ type: 'item.started', runId: R, itemId, ordinal: 1, kind: 'toolCall', toolName: 'write_file', arguments: args })] });
    await host({ type: 'approvalRequested', callId: itemId, threadId: T, runId: R, toolName: 'write_file', argumentsJson: args, toolClass: 'write' });
    const tool = page.locator(`section.tool[data-call-id="${itemId}"]`);
    await tool.locator('vscode-button.approve').waitFor();
    assert.match(await tool.locator('.args pre').innerText(), /"path": "src\/sum.ts"/); // pretty-printed
    await host({ type: 'turnChunks', turnId: R, chunks: [chunk('toolCall', JSON.stringify({ itemId, callId: 'call_1', name: 'write_file', arguments: args }))] });
    assert.equal(await page.locator('section.tool').count(), 1, 'the chunk does not duplicate the tool call');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-approval.png') });
    await tool.locator('vscode-button.approve').click();
    const sent = await waitPosted('respondToApproval', (m) => m.type === 'respondToApproval');
    assert.equal(sent.callId, itemId);
    assert.equal(sent.decision, 'approved');
    await host({ type: 'result', inReplyTo: sent.requestId, value: {} });
    await tool.locator('vscode-button.approve').waitFor({ state: 'detached' });
    await host({ type: 'turnChunks', turnId: R, chunks: [chunk('toolResult', JSON.stringify({ itemId, callId: 'call_1', status: 'completed', content: 'Created src/sum.ts (52 bytes).', changedPaths: ['src/sum.ts'] }))] });
    await host({ type: 'events', threadId: T, events: [ev({ type: 'item.completed', runId: R, itemId, status: 'completed', content: 'Created src/sum.ts (52 bytes).', isError: false })] });
    await eventually('tool done', async () => (await tool.locator('.badge').innerText()) === 'done');
    assert.match(await tool.locator('.paths').innerText(), /src\/sum.ts/);
  });

  it('ignores unknown and broken updates and keeps streaming', async () => {
    await host({ type: 'hologram', from: 'a newer engine' });
    await host({ type: 'turnChunks', turnId: 42 });
    await host({ type: 'events', threadId: T, events: [ev({ type: 'checkpoint.created', runId: R, checkpointId: 'cp:1' })] });
    await host('not an object');
    await host({ type: 'turnChunks', turnId: R, chunks: [chunk('reasoning', 'The sum function is missing.'), chunk('text', 'Wrote the **sum** function.')] });
    await eventually('text after the noise', async () => (await lastAnswer().innerText()).includes('Wrote the sum function.'));
    assert.equal(await page.locator('details.reasoning').count(), 1);
  });

  it('Stop posts cancelRun for the active run', async () => {
    await page.locator('vscode-button.stop').click();
    await waitPosted('cancelRun', (m) => m.type === 'cancelRun' && m.runId === R);
  });

  it('while a run is active: Enter queues, Ctrl+Enter steers, Escape stops; the queue strip edits, reorders (keyboard and drag), steers and cancels', async () => {
    const area = page.locator('vscode-textarea textarea');
    const sends = async () => (await posted()).filter((m) => m.type === 'sendPrompt');
    const before = (await sends()).length;
    await area.click();
    await area.pressSequentially('queued one');
    await area.press('Enter');
    await eventually('a queued sendPrompt', async () => (await sends()).length === before + 1);
    const queued = (await sends())[before]!;
    assert.deepEqual([queued.prompt, queued.ifBusy, queued.steer], ['queued one', 'queue', undefined]);
    await host({ type: 'result', inReplyTo: queued.requestId, value: { threadId: T, runId: null, queued: { entryId: 'q1', position: 0 } } });
    await area.pressSequentially('steer now');
    await area.press('Control+Enter');
    await eventually('a steering sendPrompt', async () => (await sends()).length === before + 2);
    const steer = (await sends())[before + 1]!;
    assert.deepEqual([steer.prompt, steer.steer], ['steer now', true]);
    await host({ type: 'result', inReplyTo: steer.requestId, value: { threadId: T, runId: null, queued: { entryId: 'q2', position: 1 } } });
    const cancels = (await posted()).filter((m) => m.type === 'cancelRun').length;
    await area.press('Escape');
    await eventually('Escape posts cancelRun', async () => (await posted()).filter((m) => m.type === 'cancelRun').length === cancels + 1);

    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'queue.added', entryId: 'q1', prompt: 'queued one', model: null, ownerPid: 1, ownerStartedAt: null }),
      ev({ type: 'queue.added', entryId: 'q2', prompt: 'steer now', model: null, ownerPid: 1, ownerStartedAt: null }),
      ev({ type: 'queue.steerRequested', entryId: 'q2' }),
      ev({ type: 'queue.added', entryId: 'q3', prompt: 'from the terminal', model: 'openai:gpt-4o-mini', ownerPid: 4242, ownerStartedAt: null }),
    ] });
    const rows = page.locator('section.queue li.row');
    await eventually('three queued rows', async () => (await rows.count()) === 3);
    assert.equal(await rows.nth(1).locator('.badge').innerText(), 'steering');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-queue.png'), fullPage: true });

    const q3 = page.locator('li.row[data-entry="q3"]');
    await q3.focus();
    await q3.press('Alt+ArrowUp');
    await waitPosted('moveQueued by keyboard', (m) => m.type === 'moveQueued' && m.entryId === 'q3' && m.toIndex === 1);
    await page.dragAndDrop('li.row[data-entry="q1"]', 'li.row[data-entry="q3"]');
    await waitPosted('moveQueued by drag', (m) => m.type === 'moveQueued' && m.entryId === 'q1' && m.toIndex === 2);
    await page.locator('li.row[data-entry="q1"]').getByRole('button', { name: 'Edit' }).click();
    const edit = page.locator('li.row[data-entry="q1"] textarea.edit');
    await edit.fill('queued one, edited');
    await edit.press('Enter');
    await waitPosted('editQueued', (m) => m.type === 'editQueued' && m.entryId === 'q1' && m.prompt === 'queued one, edited');
    await q3.getByRole('button', { name: 'Steer the running turn with this prompt' }).click();
    await waitPosted('steerQueued', (m) => m.type === 'steerQueued' && m.entryId === 'q3');
    await q3.focus();
    await q3.press('Delete');
    await waitPosted('cancelQueued', (m) => m.type === 'cancelQueued' && m.entryId === 'q3');
    await host({ type: 'events', threadId: T, events: ['q1', 'q2', 'q3'].map((entryId) => ev({ type: 'queue.removed', entryId, reason: 'cancelled', runId: null })) });
    await eventually('the strip goes away when nothing waits', async () => (await page.locator('section.queue').count()) === 0);
  });

  it('a rate-limited run shows a countdown with Resume now, Snooze and Don\'t auto-resume, which post their commands', async () => {
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'run.waitingRateLimit', runId: R, resetAtMs: Date.now() + 95_000, source: 'provider', attempt: 0, message: 'OpenAI-compatible request failed: 429 Rate limit reached', autoResume: true, snoozedUntilMs: null, usageSoFar: { inputTokens: 1, outputTokens: 1 } }),
    ] });
    const wait = page.locator('.wait');
    await eventually('the countdown', async () => /resuming in 1m 3\ds/.test(await wait.innerText()));
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-rate-limit.png'), fullPage: true });
    await wait.getByRole('button', { name: "Don't auto-resume" }).click();
    await waitPosted('setAutoResume', (m) => m.type === 'setAutoResume' && m.runId === R && m.autoResume === false);
    await host({ type: 'events', threadId: T, events: [ev({ type: 'run.rateLimitChanged', runId: R, autoResume: false, snoozedUntilMs: null, resumeRequested: false })] });
    await eventually('auto-resume off is shown', async () => /waiting for you to resume/.test(await wait.innerText()));
    await wait.getByRole('button', { name: 'Snooze 5 min' }).click();
    await waitPosted('snoozeRun', (m) => m.type === 'snoozeRun' && m.runId === R && m.forMs === 300_000);
    await wait.getByRole('button', { name: 'Resume now' }).click();
    await waitPosted('resumeRun', (m) => m.type === 'resumeRun' && m.runId === R);
    await host({ type: 'events', threadId: T, events: [ev({ type: 'run.resumed', runId: R, by: 'user' })] });
    await eventually('the wait is gone once resumed', async () => (await wait.count()) === 0);
  });

  it('the final message replaces the streamed text: shown once, still interleaved with the tool call', async () => {
    const step1 = 'Let me look at **the test** first.\n\n```ts\nconst answer = 42;\n// done\n```\nThe payload was removed.';
    const step2 = 'Wrote the **sum** function. All tests pass.';
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'item.started', runId: R, itemId: 'item:t0', ordinal: 0, kind: 'text', toolName: null, arguments: null }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:t0', status: 'completed', content: step1, isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'item:t2', ordinal: 2, kind: 'text', toolName: null, arguments: null }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:t2', status: 'completed', content: step2, isError: false }),
      ev({ type: 'message.added', messageId: 'm:a', parentId: 'm:u', role: 'assistant', content: `${step1}\n\n${step2}`, runId: R, status: 'complete' }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1200, outputTokens: 85 } }),
    ] });
    await host({ type: 'turnEnded', turnId: R, status: 'completed' });
    await eventually('the final text', async () => (await page.locator('article.run').innerText()).includes('All tests pass.'));
    const all = await page.locator('article.run').innerText();
    assert.equal(all.split('Wrote the sum function.').length - 1, 1, 'final text shown once');
    assert.equal(all.split('Let me look at the test first.').length - 1, 1, 'first step shown once');
    assert.equal(all.split('const answer = 42;').length - 1, 1, 'code shown once');
    assert.ok(!all.includes('SAFE-MARKER'), 'the streamed text was replaced by the final message');
    const order: string[] = [];
    for (const el of await page.locator('article.run > *').all()) {
      order.push((await el.getAttribute('data-role')) ?? (await el.getAttribute('class'))?.split(' ')[0] ?? '?');
    }
    // The prompt's row (Edit, ‹ › when forked) first and the answer's (Regenerate, Edit) last: ./branches-browser.test.ts.
    assert.deepEqual(order, ['prompt-actions', 'assistant', 'tool', 'reasoning', 'assistant', 'run-status', 'message-actions']);
    assert.equal(await page.locator('vscode-button.stop').count(), 0);
    await page.locator('vscode-button.send').waitFor();
    assert.match(await page.locator('.run-status .usage').innerText(), /1200 in/);
  });

  it('composer: Shift+Enter inserts a newline, Enter sends', async () => {
    const area = page.locator('vscode-textarea textarea');
    const earlier = (await posted()).filter((m) => m.type === 'sendPrompt').length;
    await area.click();
    await area.pressSequentially('line one');
    await area.press('Shift+Enter');
    await area.pressSequentially('line two');
    assert.equal((await posted()).filter((m) => m.type === 'sendPrompt').length, earlier);
    await area.press('Enter');
    const sent = await waitPosted('sendPrompt', (m) => m.type === 'sendPrompt' && m.prompt === 'line one\nline two');
    assert.equal(sent.prompt, 'line one\nline two');
    assert.equal(sent.threadId, T);
    await eventually('the composer clears', async () => (await area.inputValue()) === '');
  });

  it('thread list: rename (Enter saves) and delete (after confirming) post their commands', async () => {
    await page.locator('button.threads-toggle').click();
    const row = page.locator('#vox-thread-panel li.vrow', { hasText: 'Older thread' });
    await row.getByRole('button', { name: 'Rename Older thread' }).click();
    const input = page.locator('#vox-thread-panel input.rename');
    await input.fill('Renamed thread');
    await input.press('Enter');
    await waitPosted('renameThread', (m) => m.type === 'renameThread' && m.threadId === 'thread:old' && m.title === 'Renamed thread');
    const renamed = page.locator('#vox-thread-panel li.vrow', { hasText: 'Renamed thread' });
    await renamed.getByRole('button', { name: 'Delete Renamed thread' }).click();
    assert.equal((await posted()).filter((m) => m.type === 'deleteThread').length, 0, 'nothing deleted before confirming');
    await renamed.getByRole('button', { name: 'Delete', exact: true }).click();
    await waitPosted('deleteThread', (m) => m.type === 'deleteThread' && m.threadId === 'thread:old');
    await page.locator('button.threads-toggle').click();
  });

  it('the thread list comes in chunks: after a page with a cursor the next page is asked for on its own, and shows', async () => {
    await page.locator('button.threads-toggle').click();
    const first = (await posted()).filter((m) => m.type === 'listThreads').at(-1)!;
    await host({ type: 'result', inReplyTo: first.requestId, value: { nextCursor: '1:thread:z', threads: [
      { id: T, title: 'Fix the failing test', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 },
    ] } });
    const more = await waitPosted('listThreads after the cursor', (m) => m.type === 'listThreads' && m.before === '1:thread:z');
    assert.equal(more.limit, 200, 'later pages are the largest page');
    await host({ type: 'result', inReplyTo: more.requestId, value: { nextCursor: null, threads: [{ id: 'thread:paged', title: 'From the second page', createdAt: 1, updatedAt: 0, lastSeq: 0 }] } });
    await page.locator('#vox-thread-panel li.vrow', { hasText: 'From the second page' }).waitFor();
    await eventually('the list says it is complete', async () => (await page.locator('#vox-thread-panel .thread-scroll').getAttribute('data-loading')) === 'done');
    await page.locator('button.threads-toggle').click();
  });

  it('an approval of another thread shows as a notice that opens it, never as Approve buttons in this thread', async () => {
    await host({ type: 'approvalRequested', callId: 'item:other', threadId: 'thread:paged', runId: 'run:other', toolName: 'run_command', argumentsJson: '{"command":"npm test"}', toolClass: 'execute' });
    const notice = page.locator('.elsewhere');
    await notice.waitFor();
    assert.match(await notice.innerText(), /A tool call waits for your approval in “From the second page”/);
    assert.equal(await page.locator('vscode-button.approve').count(), 0, 'nothing to approve in the open thread');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-approval-elsewhere.png') });
    await host({ type: 'approvalSettled', callId: 'item:other', threadId: 'thread:paged', runId: 'run:other', decision: 'denied' });
    await notice.waitFor({ state: 'detached' });
  });

  it('runs under the strict CSP without violations or page errors; screenshot', async () => {
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'message.added', messageId: 'm:u2', parentId: 'm:a', role: 'user', content: 'line one\nline two', runId: null, status: 'complete' }),
    ] });
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview.png'), fullPage: true });
    assert.deepEqual(await page.evaluate('window.__violations'), expectedViolations, 'no CSP violation besides the blocked payload handlers');
    assert.deepEqual(pageErrors, []);
    assert.ok(fs.statSync(path.join(RESULTS, 'webview.png')).size > 10_000);
  });

  it('saves the thread with its seqs; a reload restores it at once and resubscribes from those seqs', async () => {
    const saved = (await page.evaluate('window.__state')) as { threadId: string; threadJson: string };
    assert.equal(saved.threadId, T);
    const snapshot = JSON.parse(saved.threadJson) as { lastEventSeq: number; runs: Record<string, { lastChunkSeq: number }> };
    assert.equal(snapshot.lastEventSeq, eventSeq);
    assert.equal(snapshot.runs[R]!.lastChunkSeq, chunkSeq);
    await page.reload();
    await page.locator('.app').waitFor();
    await eventually('the restored thread', async () => (await page.locator('article.run').innerText()).includes('All tests pass.'));
    const sub = await waitPosted('subscribeThread', (m) => m.type === 'subscribeThread');
    assert.deepEqual([sub.threadId, sub.afterSeq], [T, eventSeq]);
    assert.equal((await posted()).filter((m) => m.type === 'subscribeTurn').length, 0, 'the ended turn is not re-streamed');
    assert.equal((await page.locator('article.run').innerText()).split('Wrote the sum function.').length - 1, 1);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });

  it('New opens the empty state and focuses the composer', async () => {
    await page.locator('vscode-button.new-thread').click();
    await page.locator('.empty h2').waitFor();
    assert.equal(await page.evaluate('document.activeElement && document.activeElement.tagName'), 'VSCODE-TEXTAREA');
    await page.screenshot({ path: path.join(RESULTS, 'webview-empty.png') });
    await eventually('the state forgets the thread', async () => ((await page.evaluate('window.__state')) as { threadId: string | null }).threadId === null);
    assert.deepEqual(pageErrors, []);
  });
  it('background work of a run is listed with its status; settling shows in the status line', async () => {
    // After the reload and "New": answer the page's thread list, then open the thread again (a fresh view of it, from seq 0).
    const list = (await posted()).filter((m) => m.type === 'listThreads').at(-1)!;
    await host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [{ id: T, title: 'Fix the failing test', createdAt: 1, updatedAt: Date.now(), lastSeq: 0 }] } });
    const subscribes = (await posted()).filter((m) => m.type === 'subscribeThread').length;
    await page.locator('.empty button.open', { hasText: 'Fix the failing test' }).click();
    await eventually('subscribed again from seq 0', async () => (await posted()).filter((m) => m.type === 'subscribeThread' && m.threadId === T && m.afterSeq === 0).length > 0 && (await posted()).filter((m) => m.type === 'subscribeThread').length > subscribes);
    const R2 = 'run:browser-bg';
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Fix the failing test' }),
      ev({ type: 'message.added', messageId: 'm:u-bg', parentId: null, role: 'user', content: 'Count the files with a helper', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R2, ordinal: 1, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u-bg' }),
      ev({ type: 'background.started', runId: R2, handle: 'bg:1', kind: 'subagent', title: 'Count the files', awaited: true, childThreadId: 'thread:kid1' }),
      ev({ type: 'background.started', runId: R2, handle: 'bg:2', kind: 'command', title: 'npm run build', awaited: false, childThreadId: null }),
      ev({ type: 'run.settling', runId: R2, handles: ['bg:1'] }),
    ] });
    const run = page.locator(`article.run`).last();
    const rows = run.locator('ul.background li.bg');
    await eventually('two background rows', async () => (await rows.count()) === 2);
    await eventually('settling in the status line', async () => /Waiting for background work/.test(await run.locator('.run-status').innerText()));
    assert.equal(await rows.nth(0).getByRole('button', { name: "Open the subagent's thread: Count the files" }).count(), 1);
    await host({ type: 'events', threadId: T, events: [ev({ type: 'background.ended', runId: R2, handle: 'bg:1', status: 'completed', result: '3 files' })] });
    await eventually('the subagent completed', async () => (await rows.nth(0).locator('.bg-status').innerText()) === 'completed');
    assert.match(await rows.nth(1).innerText(), /not awaited/);
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'message.added', messageId: 'm:a-bg', parentId: 'm:u-bg', role: 'assistant', content: 'The helper counted 3 files.', runId: R2, status: 'complete' }),
      ev({ type: 'run.ended', runId: R2, status: 'completed', error: null, usage: { inputTokens: 5, outputTokens: 5 } }),
    ] });
    await eventually('the run ended', async () => (await run.locator('.run-status .working').count()) === 0);
  });

  it('subagent threads are nested under their parent in the thread list, with their status', async () => {
    // A run ending reloads the thread list: answer that request with a parent that has subagents.
    const before = (await posted()).filter((m) => m.type === 'listThreads').length;
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'run.started', runId: 'run:browser-kids', ordinal: 2, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u-bg' }),
      ev({ type: 'run.ended', runId: 'run:browser-kids', status: 'cancelled', error: null, usage: { inputTokens: 0, outputTokens: 0 } }),
    ] });
    await eventually('a fresh listThreads', async () => (await posted()).filter((m) => m.type === 'listThreads').length > before);
    await page.locator('button.threads-toggle').click();
    const list = (await posted()).filter((m) => m.type === 'listThreads').at(-1)!;
    await host({ type: 'result', inReplyTo: list.requestId, value: { nextCursor: null, threads: [
      { id: T, title: 'Fix the failing test', createdAt: 1, updatedAt: Date.now(), lastSeq: 0, parentThreadId: null, childCount: 2 },
    ] } });
    const toggle = page.locator('#vox-thread-panel button.subagents');
    await eventually('the subagents toggle', async () => (await toggle.innerText()).includes('2 subagents'));
    await toggle.click();
    const ask = await waitPosted('listChildThreads', (m) => m.type === 'listChildThreads' && m.threadId === T);
    await host({ type: 'result', inReplyTo: ask.requestId, value: { threads: [
      { id: 'thread:kid1', title: 'Count the files', createdAt: 2, updatedAt: 2, lastSeq: 0, parentThreadId: T, childCount: 0, status: 'completed' },
      { id: 'thread:kid2', title: 'Run the audit', createdAt: 3, updatedAt: 3, lastSeq: 0, parentThreadId: T, childCount: 0, status: 'running' },
    ] } });
    const kids = page.locator('#vox-thread-panel ul.children li');
    await eventually('two nested rows', async () => (await kids.count()) === 2);
    assert.deepEqual(await kids.locator('.status').allInnerTexts(), ['completed', 'running']);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-subagents.png'), fullPage: true });
    await page.locator('button.threads-toggle').click();
  });

  it('a command\'s output streams into its tool call as a terminal shows it: a progress bar updates in place, colours render', async () => {
    const R3 = 'run:browser-term';
    const item = 'item:term:0';
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'message.added', messageId: 'm:u-term', parentId: null, role: 'user', content: 'Install the dependencies', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R3, ordinal: 3, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u-term' }),
    ] });
    await waitPosted('subscribeTurn R3', (m) => m.type === 'subscribeTurn' && m.turnId === R3);
    let seq = 0;
    const frame = (live: string[], frozen: string[] = [], reset = false) => ({
      turnId: R3, seq: ++seq, kind: 'commandOutput',
      data: JSON.stringify({ itemId: item, update: { commandId: item, seq, reset, firstFrozen: 0, frozenFrom: 0, frozen, shift: 0, liveFrom: 0, live } }),
    });
    await host({ type: 'turnChunks', turnId: R3, chunks: [
      { turnId: R3, seq: ++seq, kind: 'toolCall', data: JSON.stringify({ itemId: item, callId: 'c-term', name: 'run_command', arguments: '{"command":"npm install"}' }) },
      frame(['added  10%'], [], true),
    ] });
    const term = page.locator(`section.tool[data-call-id="${item}"] .terminal`);
    await eventually('the first frame', async () => (await term.innerText()).trim() === 'added  10%');
    await host({ type: 'turnChunks', turnId: R3, chunks: [frame(['added  55%'])] });
    await eventually('the bar updated in place', async () => (await term.innerText()).trim() === 'added  55%');
    await host({ type: 'turnChunks', turnId: R3, chunks: [frame(['added 100%', '\u001b[0;1;31mERR!\u001b[0m peer dependency missing'])] });
    await eventually('the last frame', async () => (await term.locator('.line').count()) === 2);
    assert.deepEqual((await term.locator('.line').allInnerTexts()).map((x) => x.trim()), ['added 100%', 'ERR! peer dependency missing']);
    const err = term.locator('.line').nth(1).locator('span').first();
    assert.equal(await err.innerText(), 'ERR!');
    assert.match((await err.getAttribute('class')) ?? '', /bold/);
    assert.match((await err.getAttribute('style')) ?? '', /--vscode-terminal-ansiRed/);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-terminal.png'), fullPage: true });
    const violations = (await page.evaluate('window.__violations')) as string[];
    assert.deepEqual(violations.filter((v) => v.startsWith('style-src')), [], 'colours are set through the CSSOM: no style-src violation');
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'run.ended', runId: R3, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
    ] });
  });

});
