/**
 * The composer's context UI in the built webview (headless Chromium, strict CSP, fake host; the
 * page of ./support/page.ts): typing `@` opens the mention popup with what the host suggests,
 * Enter adds a chip (sized by the estimate, removable), a missing file's chip shows its warning,
 * the context meter shows "N / window" and turns red when the prompt does not fit, Send then asks
 * to confirm; a sent user message renders its markdown (a code fence as a code block) with its
 * chips; a reply stopped at the output limit shows the notice and Continue. Screenshots go to
 * test-results/webview-mentions.png and webview-output-limit.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { formatContext } from '../../src/protocol/mentions';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:ctx';
const R = 'run:ctx';

describe('chat webview in Chromium: @-mentions, chips, context meter, output limit', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let pageErrors: string[] = [];
  let seq = 0;
  let sentPrompt = '';
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: Date.now(), threadId: T, ...e });
  async function lastPosted(type: string, pred: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    let hit: Record<string, unknown> | undefined;
    await eventually(`a posted ${type}`, async () => !!(hit = (await posted()).filter((m) => m.type === type && pred(m)).at(-1)));
    return hit!;
  }
  const estimate = (over: Record<string, unknown>) => ({
    tokens: 1234, window: 128_000, windowSource: 'table', source: 'o200k_base', fits: true, model: 'openai:gpt-4o',
    parts: { system: 50, history: 0, tools: 900, prompt: 5, mentions: 0 }, mentions: [], ...over,
  });
  const host = (message: unknown) => w.host(message);
  const posted = () => w.posted();
  const eventually = (what: string, check: () => Promise<boolean>) => w.eventually(what, check);

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-ctx', profilePrefix: 'vox-chromium-ctx-', viewport: { width: 420, height: 760 } });
    page = w.page;
    pageErrors = w.pageErrors;
    await host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
  });

  after(async () => {
    await w?.close();
  });

  it('shows the context meter from the estimate', async () => {
    const est = await lastPosted('estimateContext');
    await host({ type: 'result', inReplyTo: est.requestId, value: estimate({}) });
    await eventually('the meter', async () => (await page.locator('.meter .figure').innerText()) === '1.2k / 128k');
  });

  it('typing @ lists suggestions; Enter adds a chip with its size; a missing file shows its warning; × removes', async () => {
    const area = page.locator('vscode-textarea textarea');
    await area.click();
    await area.pressSequentially('explain @ap');
    const ask = await lastPosted('suggestMentions', (m) => m.query === 'ap');
    await host({ type: 'result', inReplyTo: ask.requestId, value: { items: [
      { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', detail: 'file' },
      { kind: 'folder', target: 'src/app', label: 'src/app/', detail: 'folder' },
    ] } });
    const rows = page.locator('#vox-mention-popup [role="option"]');
    await eventually('two suggestions', async () => (await rows.count()) === 2);
    assert.equal(await rows.first().getAttribute('aria-selected'), 'true');
    await area.press('Enter');
    await eventually('the popup closes', async () => (await page.locator('#vox-mention-popup').count()) === 0);
    assert.equal(await area.inputValue(), 'explain @src/app.ts ');
    assert.equal((await posted()).filter((m) => m.type === 'sendPrompt').length, 0, 'Enter took the suggestion, it did not send');
    const chip = page.locator('.composer .chip').first();
    await eventually('a chip', async () => (await chip.innerText()).includes('src/app.ts'));
    const est = await lastPosted('estimateContext', (m) => Array.isArray(m.mentions) && (m.mentions as unknown[]).length === 1);
    await host({ type: 'result', inReplyTo: est.requestId, value: estimate({ tokens: 1479, mentions: [{ kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 245, status: 'ok', warning: null }] }) });
    await eventually('the chip size', async () => (await chip.locator('.tokens').innerText()) === '245');
    // A second mention typed by hand for a file that is gone: the estimate marks it.
    await area.pressSequentially('@gone');
    const ask2 = await lastPosted('suggestMentions', (m) => m.query === 'gone');
    await host({ type: 'result', inReplyTo: ask2.requestId, value: { items: [{ kind: 'file', target: 'gone.ts', label: 'gone.ts', detail: 'file' }] } });
    await eventually('one suggestion', async () => (await rows.count()) === 1);
    await rows.first().dispatchEvent('mousedown');
    const est2 = await lastPosted('estimateContext', (m) => Array.isArray(m.mentions) && (m.mentions as unknown[]).length === 2);
    await host({ type: 'result', inReplyTo: est2.requestId, value: estimate({ tokens: 1479, mentions: [
      { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 245, status: 'ok', warning: null },
      { kind: 'file', target: 'gone.ts', label: 'gone.ts', tokens: 0, status: 'warning', warning: 'File not found: gone.ts' },
    ] }) });
    const warned = page.locator('.composer .chip[data-status="warning"]');
    await eventually('the warning chip', async () => (await warned.innerText()).includes('File not found: gone.ts'));
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-mentions.png') });
    await warned.locator('button.remove').click();
    await eventually('one chip left', async () => (await page.locator('.composer .chip').count()) === 1);
  });

  it('a prompt that does not fit: the meter turns red and Send asks to confirm; Send anyway sends it with its mentions', async () => {
    const area = page.locator('vscode-textarea textarea');
    await area.pressSequentially(' x');
    const est = await lastPosted('estimateContext', (m) => typeof m.draft === 'string' && (m.draft as string).endsWith(' x'));
    await host({ type: 'result', inReplyTo: est.requestId, value: estimate({ tokens: 205_431, fits: false, mentions: [{ kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 204_000, status: 'ok', warning: null }] }) });
    await eventually('the red meter', async () => (await page.locator('.meter').getAttribute('data-level')) === 'over');
    assert.equal(await page.locator('.meter .figure').innerText(), '205k / 128k');
    await page.locator('vscode-button.send').click();
    await eventually('the confirmation', async () => (await page.locator('.overflow').innerText()).includes('205k tokens'));
    assert.equal((await posted()).filter((m) => m.type === 'sendPrompt').length, 0);
    await page.locator('vscode-button.send-anyway').click();
    const send = await lastPosted('sendPrompt');
    assert.deepEqual(send.mentions, [{ kind: 'file', target: 'src/app.ts' }]);
    assert.match(send.prompt as string, /^explain @src\/app\.ts/);
    sentPrompt = send.prompt as string;
    await host({ type: 'result', inReplyTo: send.requestId, value: { threadId: T, runId: R, queued: null } });
  });

  it('the user message renders its markdown (code fence as a code block) and its chips, not the raw context block', async () => {
    const content = formatContext('Why does this fail?\n\n```ts\nconst x: number = "a";\n```', [
      { chip: { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 7, status: 'ok', warning: null }, text: 'export const app = 1;' },
      { chip: { kind: 'file', target: 'gone.ts', label: 'gone.ts', tokens: 0, status: 'warning', warning: 'File not found: gone.ts' }, text: '' },
    ]);
    await lastPosted('subscribeThread', (m) => m.threadId === T);
    const R2 = 'run:ctx2';
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'ctx' }),
      // The prompt just sent comes back with its context block (the engine wrote it).
      ev({ type: 'message.added', messageId: 'm:u0', parentId: null, role: 'user', content: formatContext(sentPrompt, [{ chip: { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 7, status: 'ok', warning: null }, text: 'export const app = 1;' }]), runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u0' }),
      ev({ type: 'message.added', messageId: 'm:a0', parentId: 'm:u0', role: 'assistant', content: 'It exports app.', runId: R, status: 'complete' }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1479, outputTokens: 5 }, stopReason: 'end' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: 'm:a0', role: 'user', content, runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R2, ordinal: 1, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u' }),
      ev({ type: 'message.added', messageId: 'm:a', parentId: 'm:u', role: 'assistant', content: 'Because the string is not a number and the reply goes on and on until it is cut mid-', runId: R2, status: 'complete' }),
      ev({ type: 'run.ended', runId: R2, status: 'completed', error: null, usage: { inputTokens: 1479, outputTokens: 4096 }, stopReason: 'length' }),
    ] });
    const user = page.locator('[data-role="user"]').last();
    await eventually('the user message', async () => (await user.innerText()).includes('Why does this fail?'));
    assert.equal(await user.locator('.code-block code').innerText(), 'const x: number = "a";');
    assert.ok(!(await user.innerText()).includes('vox-context'), 'the context block is not shown as text');
    assert.ok(!(await user.innerText()).includes('export const app'), 'the attached file is a chip, not text');
    assert.equal(await user.locator('.chip').count(), 2);
    assert.match(await user.locator('.chip[data-status="warning"]').innerText(), /File not found: gone.ts/);
  });

  it('a reply stopped at the output-token limit says so; Continue sends the continuation prompt', async () => {
    const note = page.locator('.output-limit');
    assert.equal(await note.count(), 1, 'only the run that hit the limit shows the notice');
    await eventually('the notice', async () => (await note.innerText()).includes('Stopped at the output-token limit'));
    await page.screenshot({ path: path.join(RESULTS, 'webview-output-limit.png') });
    await note.locator('vscode-button.continue').click();
    const send = await lastPosted('sendPrompt', (m) => typeof m.prompt === 'string' && (m.prompt as string).startsWith('Your last reply stopped at the output-token limit'));
    assert.equal(send.threadId, T);
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
