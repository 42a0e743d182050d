/**
 * The composer's draft in the built webview (headless Chromium, strict CSP, fake host;
 * ./support/page.ts): the text, its @-mention chips and the caret survive the webview being hidden
 * and re-created (VS Code destroys a hidden view's page and keeps its `setState`), a reload, and a
 * restart — where the webview state is gone and the extension host's copy (`draftSave` posts,
 * answered by `drafts`) brings it back; each thread keeps its own draft. A mention that cannot be
 * attached when Send is pressed is an error in the composer: nothing is sent, the chip is marked.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type Posted, type WebviewPage } from './support/browser';

const SETTINGS = { type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null };

describe('chat webview in Chromium: the draft is never lost', function () {
  this.timeout(180_000);
  let w: WebviewPage;
  let page: Page;
  /** What the extension host keeps: the last `draftSave` of each thread key, as chat-view.ts does. */
  const hostCopy = new Map<string, unknown>();

  const area = () => page.locator('.composer vscode-textarea textarea');
  const caret = () => area().evaluate((el) => { const t = el as unknown as { selectionStart: number; selectionEnd: number }; return [t.selectionStart, t.selectionEnd]; });
  const chips = () => page.locator('.composer .chips .chip .label').allInnerTexts();

  /** Keeps the host copy from what the page posted, and answers its `draftsRequest`s from it. */
  async function syncHost(answer: boolean): Promise<Posted[]> {
    const posted = await w.posted();
    for (const m of posted) if (m.type === 'draftSave') {
      if (m.draft === null) hostCopy.delete(m.threadKey as string);
      else hostCopy.set(m.threadKey as string, m.draft);
    }
    if (answer && posted.some((m) => m.type === 'draftsRequest')) {
      await w.host({ type: 'drafts', drafts: [...hostCopy].map(([threadKey, draft]) => ({ threadKey, draft })) });
    }
    return posted;
  }

  async function start(): Promise<void> {
    await page.locator('.composer').waitFor();
    await w.host(SETTINGS);
  }

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-draft', profilePrefix: 'vox-chromium-draft-', viewport: { width: 420, height: 700 } });
    page = w.page;
    await start();
  });
  after(async () => {
    await w?.close();
  });

  it('a draft with an @file chip and the caret survives hide and re-creation of the webview', async () => {
    await area().click();
    await area().pressSequentially('fix @sr');
    const ask = await w.waitPosted('a mention query', (m) => m.type === 'suggestMentions' && m.query === 'sr');
    await w.host({ type: 'result', inReplyTo: ask.requestId, value: { items: [{ kind: 'file', target: 'src/a.ts', label: 'src/a.ts', detail: 'file' }] } });
    await page.locator('#vox-mention-popup [role="option"]').first().waitFor();
    await area().press('Enter');
    await w.eventually('the chip', async () => (await chips()).join() === 'src/a.ts');
    await area().pressSequentially('please');
    await area().evaluate((el) => (el as unknown as { setSelectionRange(a: number, b: number): void }).setSelectionRange(4, 4));
    await area().press('ArrowRight'); // a caret move the page sees (keyup)
    assert.equal(await area().inputValue(), 'fix @src/a.ts please');
    await syncHost(false);
    // VS Code hides the view and destroys its page; the state it kept comes back in the new one.
    await page.evaluate("Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true }); document.dispatchEvent(new Event('visibilitychange'))");
    await page.reload();
    await start();
    await w.eventually('the draft back', async () => (await area().inputValue()) === 'fix @src/a.ts please');
    assert.deepEqual(await chips(), ['src/a.ts'], 'the chip back');
    await w.eventually('the caret back', async () => JSON.stringify(await caret()) === '[5,5]');
  });

  it('a plain reload keeps the draft too (no hide first)', async () => {
    await area().press('End');
    await area().pressSequentially(' now');
    await page.reload();
    await start();
    await w.eventually('the draft back', async () => (await area().inputValue()) === 'fix @src/a.ts please now');
    assert.deepEqual(await chips(), ['src/a.ts']);
  });

  it('after a restart (webview state gone) the extension host\'s copy brings the draft, chips and caret back', async () => {
    await area().click();
    await area().press('End');
    await area().pressSequentially('!');
    await w.eventually('the host copy has the last keystroke', async () => {
      await syncHost(false);
      return (hostCopy.get('') as { text?: string } | undefined)?.text === 'fix @src/a.ts please now!';
    });
    // A restart: the next page starts without the webview state (the old page's last save on unload included).
    await page.addInitScript("if (sessionStorage.getItem('vox-test-restart')) { sessionStorage.removeItem('vox-test-restart'); sessionStorage.removeItem('vox-test-state'); window.__state = undefined; }");
    await page.evaluate("sessionStorage.setItem('vox-test-restart', '1')");
    await page.reload();
    await start();
    await w.waitPosted('the drafts asked of the host', (m) => m.type === 'draftsRequest');
    assert.equal(await area().inputValue(), '', 'nothing from the webview state (it is gone)');
    await syncHost(true);
    await w.eventually('the draft from the host copy', async () => (await area().inputValue()) === 'fix @src/a.ts please now!');
    assert.deepEqual(await chips(), ['src/a.ts']);
    await w.eventually('the caret from the host copy', async () => JSON.stringify(await caret()) === '[25,25]');
  });

  it('each thread keeps its own draft', async () => {
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: 'thread:b' });
    await w.eventually('thread B has no draft', async () => (await area().inputValue()) === '');
    assert.deepEqual(await chips(), []);
    await area().click();
    await area().pressSequentially('draft of B');
    await w.host({ type: 'hostCommand', command: 'newThread' });
    await w.eventually('the new thread\'s draft back', async () => (await area().inputValue()) === 'fix @src/a.ts please now!');
    assert.deepEqual(await chips(), ['src/a.ts']);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: 'thread:b' });
    await w.eventually('B\'s draft back', async () => (await area().inputValue()) === 'draft of B');
  });

  it('a mention that cannot be attached at Send is an error in the composer: nothing is sent, the chip is marked', async () => {
    await w.host({ type: 'hostCommand', command: 'newThread' });
    await w.eventually('the draft with its chip', async () => (await chips()).join() === 'src/a.ts');
    // The engine's estimate says the file is gone.
    await w.eventually('an estimate asked with the chip', async () => (await w.posted()).some((m) => m.type === 'estimateContext' && Array.isArray(m.mentions) && m.mentions.length === 1));
    const est = [...(await w.posted())].reverse().find((m) => m.type === 'estimateContext' && Array.isArray(m.mentions) && m.mentions.length === 1)!;
    await w.host({ type: 'result', inReplyTo: est.requestId, value: {
      tokens: 50, window: 128000, windowSource: 'table', source: 'o200k_base', fits: true, model: 'openai:gpt-4o', parts: { system: 10, history: 0, tools: 10, prompt: 30, mentions: 0 },
      mentions: [{ kind: 'file', target: 'src/a.ts', label: 'src/a.ts', tokens: 0, status: 'warning', warning: 'Not attached: src/a.ts does not exist' }],
    } });
    await page.locator('.composer .chip[data-status="warning"]').waitFor();
    const before = (await w.posted()).filter((m) => m.type === 'sendPrompt').length;
    await area().click();
    await area().press('Enter');
    const error = page.locator('.composer .send-error[role="alert"]');
    await error.waitFor();
    assert.match(await error.innerText(), /src\/a\.ts/);
    assert.equal(await page.locator('.composer .chip[data-blocking="true"]').count(), 1, 'the chip is marked');
    assert.equal((await w.posted()).filter((m) => m.type === 'sendPrompt').length, before, 'nothing was sent');
    assert.equal(await area().inputValue(), 'fix @src/a.ts please now!', 'the draft stays');
    // Removing the chip clears the error and lets the prompt go.
    await page.locator('.composer .chip .remove').click();
    await error.waitFor({ state: 'detached' });
    await area().click();
    await area().press('Enter');
    const sent = await w.waitPosted('the prompt', (m) => m.type === 'sendPrompt');
    assert.equal(sent.mentions, undefined);
    await w.host({ type: 'error', inReplyTo: sent.requestId, domain: 'run', code: 'unknownThread', message: 'no such thread' }); // the draft comes back
    await w.eventually('the draft back', async () => (await area().inputValue()) === 'fix @src/a.ts please now!');
  });

  it('a mention the engine cannot attach when the prompt goes (strictMentions) is the same error: the draft and chips come back, the chip marked', async () => {
    await area().click();
    await area().press('End');
    await area().pressSequentially(' @sr');
    const ask = await w.waitPosted('a mention query', (m) => m.type === 'suggestMentions' && m.query === 'sr' && (m.requestId as string) !== undefined);
    const asks = (await w.posted()).filter((m) => m.type === 'suggestMentions' && m.query === 'sr');
    await w.host({ type: 'result', inReplyTo: asks.at(-1)!.requestId ?? ask.requestId, value: { items: [{ kind: 'file', target: 'src/gone.ts', label: 'src/gone.ts', detail: 'file' }] } });
    await page.locator('#vox-mention-popup [role="option"]').first().waitFor();
    await area().press('Enter');
    await w.eventually('the chip', async () => (await chips()).join() === 'src/gone.ts');
    const count = (await w.posted()).filter((m) => m.type === 'sendPrompt').length;
    const notices = await page.locator('.notices .notice').count();
    await area().press('Enter'); // no estimate has said anything about the chip yet: the engine checks
    await w.eventually('a second send', async () => (await w.posted()).filter((m) => m.type === 'sendPrompt').length === count + 1);
    const sent = (await w.posted()).filter((m) => m.type === 'sendPrompt').at(-1)!;
    assert.equal(sent.strictMentions, true, 'the chat asks the engine to refuse a prompt whose mention cannot be attached');
    await w.host({ type: 'error', inReplyTo: sent.requestId, domain: 'context', code: 'mentionNotAttached', message: 'Not sent: src/gone.ts cannot be attached (File not found: src/gone.ts).',
      details: { mentions: [{ index: 0, label: 'src/gone.ts', warning: 'File not found: src/gone.ts' }] } });
    const error = page.locator('.composer .send-error[role="alert"]');
    await error.waitFor();
    assert.match(await error.innerText(), /src\/gone\.ts/);
    await page.locator('.composer .chip[data-blocking="true"]').waitFor();
    assert.deepEqual(await chips(), ['src/gone.ts'], 'the chip came back');
    assert.match(await area().inputValue(), /@src\/gone\.ts/, 'the draft came back');
    assert.equal(await page.locator('.notices .notice').count(), notices, 'an error in the composer, not a notice');
    assert.deepEqual(w.pageErrors, []);
  });
});
