/**
 * The conversation tree in the built webviews (headless Chromium, strict CSP, fake host; see
 * ./support/page.ts). The chat (dist/webview.js): a regenerated prompt shows ‹ 2/2 ›, ‹ posts
 * switchBranch and the other answer shows when thread.branchSwitched comes back, Regenerate (same
 * posture, and with another model from the dropdown) posts regenerate, Retry posts retry on a
 * failed run, an answer edited in place posts editMessage and shows "edited" on message.edited,
 * a prompt edited with Enter posts editMessage, "Compare branches" asks the host for the tab,
 * and a restore's note opens the branch it left. The compare tab (dist/compare.js): shared
 * messages collapsed, one column per branch, the final answers' diff coloured, markdown inert.
 * Screenshots: test-results/webview-branches.png, test-results/webview-compare.png.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, RESULTS, ROOT, openWebviewPage, type WebviewPage } from './support/browser';
import { FAKE_HOST_SCRIPT, THEME_CSS } from './support/page';

const T = 'thread:branches';
const SETTINGS = {
  type: 'settings', model: 'openai:gpt-e2e', demoNotice: null,
  models: [{ ref: 'openai:gpt-e2e', label: 'gpt-e2e', isDemo: false }, { ref: 'local:demo', label: 'Vox demo', isDemo: true }],
};

describe('chat webview in Chromium: branches, regenerate, edit', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });
  const answerText = () => page.locator('article.run .message.assistant').last().innerText();

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-branches', profilePrefix: 'vox-chromium-branches-', viewport: { width: 460, height: 900 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('a regenerated prompt shows ‹ 2/2 ›; ‹ posts switchBranch and the other answer shows when the head moves', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const posture = { provider: 'openai', model: 'gpt-e2e', reasoningEffort: null, webSearch: false, temperature: 0.2, topP: null, rules: [], mentions: [] };
    await events([
      { type: 'thread.created', title: 'Branches' },
      { type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Name a colour', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r1', ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u1', posture },
      { type: 'message.added', messageId: 'a1', parentId: 'u1', role: 'assistant', content: 'Blue, **like the sea**.', runId: 'r1', status: 'complete' },
      { type: 'run.ended', runId: 'r1', status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'message.added', messageId: 'u2', parentId: null, role: 'user', content: 'Name a colour', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r2', ordinal: 1, provider: 'local', model: 'demo', ownerPid: 1, userMessageId: 'u2' },
      { type: 'message.added', messageId: 'a2', parentId: 'u2', role: 'assistant', content: 'Green.', runId: 'r2', status: 'complete' },
      { type: 'run.ended', runId: 'r2', status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 1 } },
    ]);
    const position = page.locator('.prompt-actions .branch-switcher .position');
    await w.eventually('the switcher at 2/2', async () => (await position.innerText()) === '2/2');
    assert.equal(await answerText(), 'Green.');
    assert.equal(await page.locator('.message.user').count(), 1, 'only the open branch\'s prompt');
    assert.equal(await page.locator('.prompt-actions .next').isDisabled(), true);
    await page.locator('.prompt-actions .prev').click();
    const sw = await w.waitPosted('switchBranch', (m) => m.type === 'switchBranch');
    assert.deepEqual([sw.threadId, sw.toMessageId], [T, 'u1']);
    await events([{ type: 'thread.branchSwitched', toMessageId: 'a1' }]);
    await w.eventually('the first answer', async () => (await answerText()) === 'Blue, like the sea.');
    assert.equal(await position.innerText(), '1/2');
    const rerun = page.locator('.message-actions .rerun');
    assert.match((await rerun.getAttribute('title')) ?? '', /same posture: openai:gpt-e2e · temperature 0\.2/);
  });

  it('Regenerate posts regenerate (same posture, or the model picked in the dropdown)', async () => {
    await page.locator('.message-actions .rerun').click();
    const same = await w.waitPosted('regenerate', (m) => m.type === 'regenerate' && m.model === undefined);
    assert.deepEqual([same.threadId, same.runId], [T, 'r1']);
    await page.locator('.message-actions select.rerun-model').selectOption('local:demo');
    const other = await w.waitPosted('regenerate with a model', (m) => m.type === 'regenerate' && m.model === 'local:demo');
    assert.equal(other.runId, 'r1');
    assert.equal(await page.locator('.message-actions select.rerun-model').inputValue(), '', 'the dropdown goes back to its label');
  });

  it('an answer edited in place posts editMessage; message.edited shows the new text and "edited"', async () => {
    await page.locator('.message-actions .edit-answer').click();
    const area = page.locator('.message-editor[data-mode="save"] vscode-textarea textarea');
    await area.fill('Blue, like the sky.');
    await area.press('Control+Enter');
    const edit = await w.waitPosted('editMessage of the answer', (m) => m.type === 'editMessage' && m.messageId === 'a1');
    assert.equal(edit.content, 'Blue, like the sky.');
    await page.locator('.message-editor').waitFor({ state: 'detached' });
    await events([{ type: 'message.edited', messageId: 'a1', content: 'Blue, like the sky.' }]);
    await w.eventually('the edited answer', async () => (await answerText()) === 'Blue, like the sky.');
    await page.locator('.message-actions .edited').waitFor();
  });

  it('a prompt edited with Enter posts editMessage (a new branch); Escape cancels an edit', async () => {
    await page.locator('.prompt-actions .edit-prompt').click();
    const area = page.locator('.message-editor[data-mode="send"] vscode-textarea textarea');
    assert.equal(await area.inputValue(), 'Name a colour');
    await area.press('Escape');
    await page.locator('.message-editor').waitFor({ state: 'detached' });
    await page.locator('.prompt-actions .edit-prompt').click();
    await area.fill('Name a warm colour');
    await area.press('Enter');
    const edit = await w.waitPosted('editMessage of the prompt', (m) => m.type === 'editMessage' && m.messageId === 'u1');
    assert.equal(edit.content, 'Name a warm colour');
  });

  it('"Compare branches" asks the host for the compare tab of this thread', async () => {
    await page.locator('.prompt-actions .compare').click();
    const action = await w.waitPosted('the compare host action', (m) => m.type === 'hostAction');
    assert.deepEqual(action, { type: 'hostAction', action: 'compareBranches', threadId: T });
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-branches.png') });
  });

  it('Retry on a failed run posts retry; a restore\'s note opens the branch it left', async () => {
    await events([
      { type: 'message.added', messageId: 'u3', parentId: 'a1', role: 'user', content: 'And another?', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r3', ordinal: 2, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u3' },
      { type: 'run.ended', runId: 'r3', status: 'failed', error: 'the server said no', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    const retry = page.locator('article.run').last().locator('.message-actions .rerun.retry');
    await w.eventually('Retry on the failed run', async () => (await retry.innerText()) === 'Retry');
    await retry.click();
    const sent = await w.waitPosted('retry', (m) => m.type === 'retry');
    assert.equal(sent.runId, 'r3');
    await events([{ type: 'thread.rewound', toMessageId: 'a1' }]);
    const note = page.locator('.rewound');
    await w.eventually('the note', async () => /1 later message is kept as a branch/.test(await note.innerText()));
    await note.locator('.open-rewound').click();
    const sw = await w.waitPosted('switchBranch to the restored-away branch', (m) => m.type === 'switchBranch' && m.toMessageId === 'u3');
    assert.equal(sw.threadId, T);
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});

/** The compare tab's page as src/extension/compare/compare-panel.ts writes it (strict CSP, nonce). */
function compareHtml(origin: string, nonce: string): string {
  const csp = ["default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src ${origin}`, `img-src ${origin} data:`, `font-src ${origin}`].join('; ');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<link rel="stylesheet" href="${origin}/theme.css"><link rel="stylesheet" href="${origin}/dist/compare.css"><title>Compare</title></head>
<body><div id="app"></div><script nonce="${nonce}" src="${origin}/dist/compare.js"></script></body></html>`;
}

const msg = (id: string, parentId: string | null, role: 'user' | 'assistant', content: string, extra: Record<string, unknown> = {}) =>
  ({ id, threadId: T, parentId, role, content, runId: role === 'assistant' ? `run:${id}` : null, status: 'complete', createdAt: 1_700_000_000_000, ...extra });

describe('compare tab in Chromium', function () {
  this.timeout(120_000);
  let context: BrowserContext | undefined;
  let server: http.Server | undefined;
  let userDataDir = '';
  let page: Page;
  const pageErrors: string[] = [];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      if (process.env.CI) throw new Error(`${CHROMIUM} is missing in CI`);
      this.skip();
    }
    const build = spawnSync(process.execPath, ['esbuild.mjs', '--only=compare'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, `compare build failed:\n${build.stdout}\n${build.stderr}`);
    let origin = '';
    server = http.createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(compareHtml(origin, 'nonce-compare'));
      else if (url === '/theme.css') res.writeHead(200, { 'content-type': 'text/css' }).end(THEME_CSS);
      else if (url === '/dist/compare.js' || url === '/dist/compare.css') {
        res.writeHead(200, { 'content-type': url.endsWith('.js') ? 'text/javascript' : 'text/css' }).end(fs.readFileSync(path.join(ROOT, url)));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-chromium-compare-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1000, height: 760 }, colorScheme: 'dark',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(5_000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.addInitScript(FAKE_HOST_SCRIPT);
    await page.goto(`${origin}/`);
  });
  after(async () => {
    await context?.close();
    if (server) await new Promise((r) => server!.close(r));
    if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  });

  it('asks for its data; shows the shared messages collapsed, a column per branch and the coloured diff; markdown stays inert', async () => {
    const readyPosted = async () => ((await page.evaluate('window.__posted')) as { type: string }[]).some((m) => m.type === 'ready');
    for (let i = 0; i < 100 && !(await readyPosted()); i++) await page.waitForTimeout(20);
    assert.equal(await readyPosted(), true, 'the page asked for its data');
    const payload = {
      type: 'compare', threadTitle: 'Colours',
      branches: [
        { branchId: 'main', name: 'main', leafId: 'a1', forkMessageId: null, length: 4, updatedAt: 2, active: true },
        { branchId: 'main-q0-1', name: 'name-colour', leafId: 'a2', forkMessageId: 'q0', length: 4, updatedAt: 3, active: false },
      ],
      data: {
        divergence: { index: 2, messageId: 'q0' },
        shared: [msg('p0', null, 'user', 'Hi'), msg('q0', 'p0', 'assistant', 'Hello!')],
        columns: [
          { leafId: 'a1', branchId: 'main', name: 'main', messages: [msg('u1', 'q0', 'user', 'Name a colour'), msg('a1', 'u1', 'assistant', 'Blue, **like the sea**.\n\n<img src=x onerror="alert(1)">')] },
          { leafId: 'a2', branchId: 'main-q0-1', name: 'name-colour', messages: [msg('u2', 'q0', 'user', 'Name a colour'), msg('a2', 'u2', 'assistant', 'Green, like grass.', { editedAt: 1_700_000_000_500 })] },
        ],
        finalDiffs: [{ leafId: 'a2', against: 'a1', diff: '--- main\n+++ name-colour\n@@ -1 +1 @@\n-Blue, **like the sea**.\n+Green, like grass.\n' }],
      },
    };
    await page.evaluate(`window.postMessage(${JSON.stringify(payload)}, '*')`);
    await page.locator('.columns .column').nth(1).waitFor();
    assert.equal(await page.locator('.columns.cols-2 .column').count(), 2);
    assert.deepEqual(await page.locator('.column h2').allInnerTexts(), ['main (open)', 'name-colour']);
    assert.equal(await page.locator('details.shared').getAttribute('open'), null, 'shared messages start collapsed');
    assert.equal(await page.locator('details.shared .cmp-message').first().isVisible(), false);
    await page.locator('details.shared summary').click();
    assert.equal(await page.locator('details.shared .cmp-message').first().isVisible(), true);
    assert.equal(await page.locator('.column').nth(0).locator('.cmp-message.assistant strong').innerText(), 'like the sea');
    assert.match(await page.locator('.column').nth(1).locator('.cmp-message.assistant .who').innerText(), /edited/);
    assert.deepEqual(await page.locator('.diff-text .add').allInnerTexts(), ['+Green, like grass.']);
    assert.deepEqual(await page.locator('.diff-text .del').allInnerTexts(), ['-Blue, **like the sea**.']);
    assert.equal(await page.locator('.column img[onerror]').count(), 0, 'event handlers are stripped');
    await page.waitForTimeout(100);
    assert.deepEqual(await page.evaluate('window.__alerts'), []);
    // As in the chat: Chromium reports `script-src-attr` when DOMPurify parses the handler in its inert document (blocked there too); nothing else.
    const violations = (await page.evaluate('window.__violations')) as string[];
    assert.ok(violations.every((v) => v.startsWith('script-src-attr inline ')), JSON.stringify(violations));
    assert.deepEqual(pageErrors, []);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-compare.png') });
  });

  it('a broken payload shows an error instead of half a page', async () => {
    await page.evaluate(`window.postMessage(${JSON.stringify({ type: 'compare', threadTitle: 'x', branches: [], data: { divergence: 1 } })}, '*')`);
    await page.locator('.error').waitFor();
    assert.match(await page.locator('.error').innerText(), /cannot be shown/);
  });
});
