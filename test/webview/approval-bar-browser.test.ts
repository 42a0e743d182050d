/**
 * The waiting approval's sticky bar in the built webview (headless Chromium, strict CSP, fake
 * host; ./support/page.ts): while a tool call of the open thread waits, a bar above the composer
 * names it with Approve / Deny and their keybindings (the ones package.json declares for the
 * chat's focus; VS Code sends them to the view as `approveWaiting` / `denyWaiting` host
 * commands), clicking it scrolls the card into view; with two waiting it says "1 of 2" and walks
 * them; answered, it is gone. A protected write shows the engine's reason on the bar and the card, and no Always allow.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:bar';
const R = 'run:bar';
type Keybinding = { command: string; key: string; mac?: string; when?: string };
const MANIFEST = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { contributes: { keybindings: Keybinding[] } };

describe('chat webview in Chromium: the sticky bar of a waiting approval', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });
  const bar = () => page.locator('.approval-bar');
  const waitCall = async (itemId: string, toolName: string, args: Record<string, unknown>, toolClass: string, ordinal: number) => {
    await events([{ type: 'item.started', runId: R, itemId, ordinal, kind: 'toolCall', toolName, arguments: JSON.stringify(args) }]);
    await w.host({ type: 'approvalRequested', callId: itemId, threadId: T, runId: R, toolName, argumentsJson: JSON.stringify(args), toolClass });
  };

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-bar', profilePrefix: 'vox-chromium-bar-', viewport: { width: 420, height: 560 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const long = Array.from({ length: 60 }, (_, i) => `Line ${i} of a long answer.`).join('\n\n');
    await events([
      { type: 'thread.created', title: 'Bar' },
      { type: 'message.added', messageId: 'u0', parentId: null, role: 'user', content: 'Tell me a lot', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r0', ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'u0' },
      { type: 'message.added', messageId: 'a0', parentId: 'u0', role: 'assistant', content: long, runId: 'r0', status: 'complete' },
      { type: 'run.ended', runId: 'r0', status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'message.added', messageId: 'u1', parentId: 'a0', role: 'user', content: 'Write the files', runId: null, status: 'complete' },
      { type: 'run.started', runId: R, ordinal: 1, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'u1' },
    ]);
  });
  after(async () => {
    await w?.close();
  });

  it('package.json binds Approve and Deny to keys in the chat\'s focus', () => {
    for (const command of ['vox.approveWaiting', 'vox.denyWaiting']) {
      const k = MANIFEST.contributes.keybindings.find((b) => b.command === command);
      assert.ok(k, `${command} has a keybinding`);
      assert.match(k.when ?? '', /focusedView == vox\.chatView/);
      assert.match(k.when ?? '', /activeWebviewPanelId == vox\.chatPanel/);
    }
  });

  it('a waiting call shows the bar with its actions and keybindings; Approve on the bar answers it; answered, the bar is gone', async () => {
    assert.equal(await bar().count(), 0, 'no bar while nothing waits');
    await waitCall('item:w1', 'write_file', { path: 'src/a.ts', content: 'a' }, 'write', 1);
    await bar().waitFor();
    const text = await bar().innerText();
    assert.match(text, /write_file/);
    assert.match(text, /src\/a\.ts/);
    const approveKey = MANIFEST.contributes.keybindings.find((b) => b.command === 'vox.approveWaiting')!.key;
    const denyKey = MANIFEST.contributes.keybindings.find((b) => b.command === 'vox.denyWaiting')!.key;
    const label = (k: string) => k.split('+').map((p) => p[0]!.toUpperCase() + p.slice(1)).join('+');
    assert.equal(await bar().locator('.approve kbd').innerText(), label(approveKey));
    assert.equal(await bar().locator('.deny kbd').innerText(), label(denyKey));
    // The composer stays below the bar, both in the view.
    const [b, c] = [await bar().boundingBox(), await page.locator('.composer').boundingBox()];
    assert.ok(b && c && b.y + b.height <= c.y + 1 && c.y + c.height <= 561, `bar ${JSON.stringify(b)} above composer ${JSON.stringify(c)}`);
    await bar().locator('.approve').click();
    const sent = await w.waitPosted('respondToApproval', (m) => m.type === 'respondToApproval' && m.callId === 'item:w1');
    assert.equal(sent.decision, 'approved');
    await w.host({ type: 'result', inReplyTo: sent.requestId, value: {} });
    await bar().waitFor({ state: 'detached' });
  });

  it('clicking the bar scrolls the waiting card into view', async () => {
    await waitCall('item:w2', 'write_file', { path: 'src/b.ts', content: 'b' }, 'write', 2);
    await bar().waitFor();
    const scroller = page.locator('.scroller');
    await scroller.evaluate((el) => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); });
    const card = page.locator('section.tool[data-call-id="item:w2"]');
    const inView = async () => {
      if ((await card.count()) === 0) return false; // not rendered: the list is virtualised
      const [s, k] = [await scroller.boundingBox(), await card.boundingBox()];
      return !!s && !!k && k.y >= s.y - 1 && k.y + Math.min(k.height, 40) <= s.y + s.height + 1;
    };
    await page.waitForTimeout(100);
    assert.equal(await inView(), false, 'scrolled away from the card');
    await bar().locator('.show').click();
    await w.eventually('the card in view', inView);
  });

  it('two waiting: the bar says 1 of 2 and walks them; the host\'s keybinding commands answer the one shown', async () => {
    await waitCall('item:x3', 'run_command', { command: 'npm test' }, 'execute', 3);
    await w.eventually('1 of 2', async () => /1 of 2/.test(await bar().locator('.count').innerText()));
    assert.match(await bar().innerText(), /src\/b\.ts/);
    await bar().locator('.next').click();
    await w.eventually('2 of 2', async () => /2 of 2/.test(await bar().locator('.count').innerText()));
    assert.match(await bar().innerText(), /npm test/);
    await w.host({ type: 'hostCommand', command: 'denyWaiting' }); // what the Deny keybinding sends the focused chat
    const denied = await w.waitPosted('the shown one denied', (m) => m.type === 'respondToApproval' && m.callId === 'item:x3');
    assert.equal(denied.decision, 'denied');
    await w.host({ type: 'result', inReplyTo: denied.requestId, value: {} });
    await w.eventually('one left', async () => (await bar().locator('.count').count()) === 0 && /src\/b\.ts/.test(await bar().innerText()));
    await w.host({ type: 'hostCommand', command: 'approveWaiting' });
    const approved = await w.waitPosted('the last one approved', (m) => m.type === 'respondToApproval' && m.callId === 'item:w2');
    assert.equal(approved.decision, 'approved');
    await w.host({ type: 'result', inReplyTo: approved.requestId, value: {} });
    await bar().waitFor({ state: 'detached' });
    assert.deepEqual(w.pageErrors, []);
  });

  it('a protected write: the bar and the card say why it is asked in every mode, and offer no Always allow', async () => {
    const reason = "Protected path: .vox/permissions.json — Vox's own configuration (permission rules, rules, MCP servers). Writes to protected paths are asked in every mode; no allow rule covers them.";
    const args = { path: '.vox/permissions.json', content: '{}' };
    await events([{
      type: 'item.started', runId: R, itemId: 'item:p4', ordinal: 4, kind: 'toolCall', toolName: 'write_file', arguments: JSON.stringify(args),
      permission: { decision: 'ask', source: 'protected', rule: null, reason },
    }]);
    await w.host({ type: 'approvalRequested', callId: 'item:p4', threadId: T, runId: R, toolName: 'write_file', argumentsJson: JSON.stringify(args), toolClass: 'write', reason, protectedPath: true, alwaysAllow: [] });
    await bar().waitFor();
    assert.equal(await bar().locator('.protected').innerText(), reason);
    assert.equal(await bar().locator('.always').count(), 0);
    const card = page.locator('section.tool[data-call-id="item:p4"]');
    await w.eventually('the card says why', async () => (await card.locator('.permission.protected').count()) === 1);
    assert.equal(await card.locator('.permission').innerText(), reason);
    assert.match(await card.locator('.question').innerText(), /protected file/);
    await bar().locator('.approve').click();
    const sent = await w.waitPosted('the protected write approved', (m) => m.type === 'respondToApproval' && m.callId === 'item:p4');
    await w.host({ type: 'result', inReplyTo: sent.requestId, value: {} });
    await bar().waitFor({ state: 'detached' });
    assert.equal(await card.locator('.permission.protected').innerText(), reason, 'the reason stays on the card');
    assert.deepEqual(w.pageErrors, []);
  });
});
