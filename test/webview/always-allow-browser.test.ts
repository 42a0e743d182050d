/**
 * "Always allow…" on the waiting approval's bar in the built webview (headless Chromium, strict
 * CSP, fake host): the control shows the engine's suggested rule text and the scope (this thread
 * / this workspace), is reached with the keyboard, and answers `respondToApproval` with the rule;
 * a call without a safe suggestion (a chained command) offers none.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:aa';
const R = 'run:aa';

describe('chat webview in Chromium: always allow on the approval bar', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const bar = () => page.locator('.approval-bar');
  const waitCall = async (itemId: string, command: string, alwaysAllow: unknown[], ordinal: number) => {
    const args = JSON.stringify({ command });
    await w.host({ type: 'events', threadId: T, events: [ev({ type: 'item.started', runId: R, itemId, ordinal, kind: 'toolCall', toolName: 'run_command', arguments: args })] });
    await w.host({ type: 'approvalRequested', callId: itemId, threadId: T, runId: R, toolName: 'run_command', argumentsJson: args, toolClass: 'execute', alwaysAllow });
  };

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'nonce-aa', profilePrefix: 'vox-chromium-aa-', viewport: { width: 420, height: 560 } });
    page = w.page;
    await w.host({ type: 'settings', model: 'openai:gpt-4o', models: [{ ref: 'openai:gpt-4o', label: 'GPT-4o', isDemo: false }], demoNotice: null });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'AA' }),
      ev({ type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Run the tests', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o', ownerPid: 1, userMessageId: 'u1' }),
    ] });
  });
  after(async () => {
    await w?.close();
  });

  it('shows the suggested rule and the scope, keyboard reachable, and sends the rule with the approval', async () => {
    await waitCall('item:c1', 'npm test -- --grep x', [{ kind: 'commandPrefix', value: 'npm test', label: 'commands starting with "npm test"' }], 0);
    const toggle = bar().locator('.always');
    await toggle.waitFor();
    await toggle.focus();
    await page.keyboard.press('Enter');
    const panel = page.locator('.always-allow');
    await panel.waitFor();
    assert.match(await panel.locator('.rule').innerText(), /npm test/);
    await panel.locator('.scope-workspace').click();
    await panel.locator('.confirm').focus();
    await page.keyboard.press('Enter');
    const sent = await w.waitPosted('respondToApproval', (m) => m.type === 'respondToApproval' && m.callId === 'item:c1');
    assert.deepEqual((sent as { alwaysAllow?: unknown }).alwaysAllow, { kind: 'commandPrefix', value: 'npm test', scope: 'workspace' });
    assert.equal((sent as { decision?: unknown }).decision, 'approved');
    await w.host({ type: 'approvalSettled', callId: 'item:c1', threadId: T, runId: R, decision: 'approved' });
  });

  it('offers no always-allow for a call without a safe suggestion', async () => {
    await waitCall('item:c2', 'echo a && rm b', [], 1);
    await bar().locator('.approve').waitFor();
    assert.equal(await bar().locator('.always').count(), 0);
  });
});
