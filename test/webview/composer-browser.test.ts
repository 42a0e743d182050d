/**
 * The composer's prompt recall in the built webview (headless Chromium, strict CSP, fake host;
 * ./support/page.ts), pressing real keys: the webview asks the engine for its prompt history,
 * ArrowUp on the first line of a typed draft stashes it and walks back, ArrowDown walks forward and
 * gives the draft back exactly with the caret at its end; ArrowUp on the second line moves the
 * caret only; with the mention popup open the arrows move its selection, not the history.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

describe('chat webview in Chromium: prompt recall with ArrowUp / ArrowDown', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-recall', profilePrefix: 'vox-chromium-recall-', viewport: { width: 420, height: 700 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    const asks = (await w.posted()).filter((m) => m.type === 'listPromptHistory');
    assert.ok(asks.length >= 1, 'the webview asked for the prompt history');
    for (const ask of asks) {
      await w.host({ type: 'result', inReplyTo: ask.requestId, value: { prompts: [
        { prompt: 'the oldest one', threadId: 'thread:a', at: 1 },
        { prompt: 'explain @src/app.ts', threadId: 'thread:b', at: 2 },
      ] } });
    }
  });

  after(async () => {
    await w?.close();
  });

  const caret = () => page.locator('vscode-textarea textarea').evaluate((el) => { const t = el as unknown as { selectionStart: number; selectionEnd: number }; return [t.selectionStart, t.selectionEnd]; });

  it('ArrowUp on the first line stashes the typed draft and walks back; ArrowDown walks forward and restores it, caret at the end', async () => {
    const area = page.locator('vscode-textarea textarea');
    await area.click();
    await area.pressSequentially('my draft');
    await area.press('Shift+Enter');
    await area.pressSequentially('second line');
    await area.press('ArrowUp'); // on the second line: the caret moves up, nothing is recalled
    assert.equal(await area.inputValue(), 'my draft\nsecond line');
    await area.press('ArrowUp'); // now on the first line: recall
    await w.eventually('the newest prompt', async () => (await area.inputValue()) === 'explain @src/app.ts');
    assert.equal((await page.locator('#vox-mention-popup').count()), 0, 'a recalled @token opens no popup');
    await area.press('ArrowUp');
    await w.eventually('the oldest prompt', async () => (await area.inputValue()) === 'the oldest one');
    await area.press('ArrowUp');
    assert.equal(await area.inputValue(), 'the oldest one', 'nothing older');
    await area.press('ArrowDown');
    await w.eventually('forward again', async () => (await area.inputValue()) === 'explain @src/app.ts');
    await area.press('ArrowDown');
    await w.eventually('the stash back', async () => (await area.inputValue()) === 'my draft\nsecond line');
    assert.deepEqual(await caret(), [20, 20], 'caret at the end of the restored draft');
    assert.equal((await w.posted()).filter((m) => m.type === 'sendPrompt').length, 0);
  });

  it('a recalled prompt, edited and sent, is the newest; with the mention popup open the arrows are the popup\'s', async () => {
    const area = page.locator('vscode-textarea textarea');
    await area.fill('');
    await area.press('ArrowUp');
    await w.eventually('recalled', async () => (await area.inputValue()) === 'explain @src/app.ts');
    await area.press('End');
    await area.pressSequentially(' again');
    await area.press('Enter');
    const sent = await w.waitPosted('the edited prompt sent', (m) => m.type === 'sendPrompt');
    assert.equal(sent.prompt, 'explain @src/app.ts again');
    await w.eventually('the composer cleared', async () => (await area.inputValue()) === '');
    await area.pressSequentially('look at @sr');
    const ask = await w.waitPosted('a mention query', (m) => m.type === 'suggestMentions' && m.query === 'sr');
    await w.host({ type: 'result', inReplyTo: ask.requestId, value: { items: [
      { kind: 'file', target: 'src/a.ts', label: 'src/a.ts', detail: 'file' },
      { kind: 'file', target: 'src/b.ts', label: 'src/b.ts', detail: 'file' },
    ] } });
    const rows = page.locator('#vox-mention-popup [role="option"]');
    await w.eventually('two suggestions', async () => (await rows.count()) === 2);
    await area.press('ArrowDown');
    await w.eventually('the second row selected', async () => (await rows.nth(1).getAttribute('aria-selected')) === 'true');
    await area.press('ArrowUp');
    await w.eventually('the first row selected', async () => (await rows.nth(0).getAttribute('aria-selected')) === 'true');
    assert.equal(await area.inputValue(), 'look at @sr', 'the draft was not replaced by a recalled prompt');
    await area.press('Escape');
    await area.press('ArrowUp');
    await w.eventually('the sent prompt is the newest', async () => (await area.inputValue()) === 'explain @src/app.ts again');
    assert.deepEqual(w.pageErrors, []);
  });
});
