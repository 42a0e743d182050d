/**
 * Code blocks in the built webview (headless Chromium, the strict CSP of chat-view.ts, fake host;
 * ./support/page.ts): a reply's blocks are highlighted by shiki with Dark+ colours, the grammar
 * chunks fetched are those of the reply's languages only, a block over 2,000 chars is highlighted
 * (deferred) while one over 20,000 never is, an unknown language stays plain, switching VS Code's
 * theme re-highlights with Light+; Copy says "Copied", Insert and Apply post `codeAction` (Apply
 * with the path the fence names); no CSP violation (chunks and token colours pass the policy).
 * Screenshot: test-results/webview-code-blocks.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

/** Where the built webview's lazily loaded chunks are. */
const DIST_CHUNKS = path.resolve(__dirname, '../../dist/webview-chunks');
const T = 'thread:code';
const R = 'run:code';

describe('chat webview in Chromium: code blocks highlighted by shiki, with Copy / Insert / Apply', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  const requested: string[] = [];
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: Date.now(), threadId: T, ...e });

  const deferred = `// a long block\n${Array.from({ length: 120 }, (_, i) => `const value${i} = ${i} * 2;`).join('\n')}`;
  const huge = `[${Array.from({ length: 4_500 }, (_, i) => `${i}, `).join('')}0]`;
  const reply = [
    'Here is the change:',
    '```ts src/app.ts', 'export function add(a: number, b: number): number {', '  return a + b; // sum', '}', '```',
    'And a script:',
    '```python', 'def greet(name):', '    return f"hi {name}"', '```',
    '```js', deferred, '```',
    '```json', huge, '```',
    '```brainfudge', '+++[>+<-]', '```',
  ].join('\n');

  before(async function () {
    w = await openWebviewPage(this, {
      nonce: 'nonce-code', profilePrefix: 'vox-chromium-code-', viewport: { width: 560, height: 900 },
      setup: (p) => p.on('request', (r) => void requested.push(new URL(r.url()).pathname)),
    });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    const area = page.locator('vscode-textarea textarea');
    await area.click();
    await area.pressSequentially('show me code');
    await area.press('Enter');
    const send = await w.waitPosted('the prompt', (m) => m.type === 'sendPrompt');
    await w.host({ type: 'result', inReplyTo: send.requestId, value: { threadId: T, runId: R, queued: null } });
    await w.waitPosted('the thread subscription', (m) => m.type === 'subscribeThread' && m.threadId === T);
    // Before any code block: only esbuild's shared runtime helper chunk (chunk-*), never the highlighter, a grammar or a theme.
    assert.deepEqual(requested.filter((u) => u.includes('/webview-chunks/') && !/\/chunk-[A-Z0-9]+\.js$/.test(u)), [], 'no highlighting code before a block needs it');
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'code' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'show me code', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'm:u' }),
      ev({ type: 'message.added', messageId: 'm:a', parentId: 'm:u', role: 'assistant', content: reply, runId: R, status: 'complete' }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 200 }, stopReason: 'end' }),
    ] });
  });

  after(async () => {
    await w?.close();
  });

  const block = (lang: string) => page.locator(`[data-role="assistant"] .code-block[data-lang="${lang}"]`);
  const colorOf = (lang: string, text: string) => block(lang).locator('code span', { hasText: text }).first().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);

  it('highlights with VS Code\'s Dark+ colours; fetches only the grammars the reply uses', async () => {
    await w.eventually('the ts block highlighted', async () => (await block('ts').locator('code').getAttribute('data-highlighted')) === 'full');
    await w.eventually('the python block highlighted', async () => (await block('python').locator('code').getAttribute('data-highlighted')) === 'full');
    assert.equal(await block('ts').locator('code').innerText(), 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}');
    assert.equal(await colorOf('ts', 'function'), 'rgb(86, 156, 214)', 'Dark+ storage keyword #569CD6');
    assert.equal(await colorOf('ts', '// sum'), 'rgb(106, 153, 85)', 'Dark+ comment #6A9955');
    assert.ok((await block('python').locator('code span').count()) > 3);
    // The js block is over 2,000 chars: highlighted (and its grammar fetched) a moment later.
    await w.eventually('the deferred js block highlighted', async () => (await block('js').locator('code').getAttribute('data-highlighted')) === 'full');
    const chunks = requested.filter((u) => u.includes('/webview-chunks/')).map((u) => path.basename(u));
    // A grammar is its own chunk, or — when other grammars embed it too (javascript) — part of a
    // shared one: the chunk file then holds its definition, `name:"<id>"`.
    const holds = (c: string, lang: string) => c.startsWith(`${lang}-`) || fs.readFileSync(path.join(DIST_CHUNKS, c), 'utf8').includes(`name:"${lang}"`);
    for (const lang of ['typescript', 'python', 'javascript', 'dark-plus']) assert.ok(chunks.some((c) => holds(c, lang)), `${lang} fetched: ${chunks.join(' ')}`);
    for (const lang of ['rust', 'cpp', 'java', 'php', 'go', 'light-plus']) assert.ok(!chunks.some((c) => holds(c, lang)), `${lang} not fetched: ${chunks.join(' ')}`);
  });

  it('a block over 2,000 chars is highlighted (deferred); one over 20,000 and an unknown language stay plain', async () => {
    assert.ok(deferred.length > 2_000 && deferred.length < 20_000 && huge.length > 20_000);
    await w.eventually('the long js block highlighted', async () => (await block('js').locator('code').getAttribute('data-highlighted')) === 'full');
    assert.equal(await block('json').locator('code span').count(), 0, 'over HIGHLIGHT_MAX_CHARS: plain');
    assert.equal(await block('json').locator('code').getAttribute('data-highlighted'), null);
    assert.equal((await block('json').locator('code').innerText()).length, huge.length);
    assert.equal(await block('brainfudge').locator('code span').count(), 0);
    assert.equal(await block('brainfudge').locator('code').innerText(), '+++[>+<-]');
    await block('ts').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(RESULTS, 'webview-code-blocks.png') });
  });

  it('re-highlights with Light+ when VS Code switches to a light theme', async () => {
    await page.evaluate("document.body.classList.replace('vscode-dark', 'vscode-light')");
    await w.eventually('light colours', async () => (await colorOf('ts', 'function')) === 'rgb(0, 0, 255)');
    assert.equal(await block('ts').getAttribute('data-theme'), 'light');
    await page.evaluate("document.body.classList.replace('vscode-light', 'vscode-dark')");
    await w.eventually('dark again', async () => (await colorOf('ts', 'function')) === 'rgb(86, 156, 214)');
  });

  it('Copy says Copied; Insert and Apply post codeAction (Apply with the named path); no CSP violation', async () => {
    const ts = block('ts');
    await ts.locator('button.copy').click();
    await w.eventually('Copied', async () => (await ts.locator('button.copy').innerText()) === 'Copied');
    await ts.locator('button.insert').click();
    const ins = await w.waitPosted('Insert at Cursor', (m) => m.type === 'codeAction' && m.action === 'insertAtCursor');
    assert.equal(ins.code, 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}');
    assert.equal(await ts.locator('button.apply').innerText(), 'Apply to app.ts');
    await ts.locator('button.apply').click();
    const apply = await w.waitPosted('Apply to File', (m) => m.type === 'codeAction' && m.action === 'applyToFile');
    assert.equal(apply.path, 'src/app.ts');
    await block('python').locator('button.apply').click();
    await w.eventually('an unnamed Apply', async () => (await w.posted()).some((m) => m.type === 'codeAction' && m.action === 'applyToFile' && m.path === undefined && String(m.code).startsWith('def greet')));
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
