/**
 * "Restore to here" in the built chat webview (headless Chromium, strict CSP, fake host;
 * ./support/browser.ts): a finished turn with a turn-end checkpoint offers it; it asks
 * `previewRestore` first and shows what the restore will do, the files not written by this thread
 * listed apart behind an explicit confirm; only then `restoreCheckpoint` (files) is posted. After
 * the restore an "Undo restore" bar stays until dismissed and posts `undoRestore` for its point.
 */
import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:restore';
const SETTINGS = { type: 'settings', model: 'openai:gpt-e2e', demoNotice: null, models: [{ ref: 'openai:gpt-e2e', label: 'gpt-e2e', isDemo: false }] };
const p = (path: string) => ({ path });
const m = (path: string) => ({ path, status: 'modified' });

describe('chat webview in Chromium: Restore to here and Undo restore', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...e });
  const events = (list: Record<string, unknown>[]) => w.host({ type: 'events', threadId: T, events: list.map(ev) });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-restore', profilePrefix: 'vox-chromium-restore-', viewport: { width: 460, height: 720 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('previews, asks once more for files this thread did not write, then posts restoreCheckpoint', async () => {
    await w.host(SETTINGS);
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await events([
      { type: 'thread.created', title: 'Add a greeting' },
      { type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'Add a greeting', runId: null, status: 'complete' },
      { type: 'run.started', runId: 'r1', ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: 'u1' },
      { type: 'message.added', messageId: 'a1', parentId: 'u1', role: 'assistant', content: 'Done.', runId: 'r1', status: 'complete' },
      { type: 'checkpoint.captured', runId: 'r1', ref: 'refs/vox/checkpoints/t/2', ordinal: 2, trigger: 'turnEnd', toolName: null, changedCount: 1, skippedCount: 0, overBudgetMs: null, rewindTo: 'a1' },
      { type: 'run.ended', runId: 'r1', status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 2 } },
    ]);
    const run = page.locator('article.run').last();
    const restore = run.locator('.message-actions .restore-here');
    await w.eventually('Restore to here on the turn', async () => (await restore.count()) === 1);
    await restore.click();
    const preview = await w.waitPosted('previewRestore', (m) => m.type === 'previewRestore');
    assert.deepEqual({ threadId: preview.threadId, ordinal: preview.ordinal }, { threadId: T, ordinal: 2 });
    await w.host({ type: 'result', inReplyTo: preview.requestId, value: {
      ref: 'refs/vox/checkpoints/t/2', deleted: [p('mine.txt'), p('notes.md'), p('other.ts')], overwritten: [p('app.ts')], recreated: [],
      deletedBy: { thisThread: [p('mine.txt')], otherThreads: [{ ...p('other.ts'), threadId: 'thread:b', title: 'Refactor' }], handMade: [p('notes.md')] },
      confirm: true,
    } });
    const panel = page.locator('.restore-preview');
    await w.eventually('the preview', async () => (await panel.count()) === 1);
    const text = await panel.innerText();
    assert.match(text, /app\.ts/);
    assert.match(text, /mine\.txt/);
    assert.match(text, /not written by this thread/i);
    assert.match(await panel.locator('.not-ours').innerText(), /notes\.md[\s\S]*other\.ts[\s\S]*Refactor/);
    const go = panel.locator('.restore-go');
    assert.equal(await go.evaluate((el) => (el as unknown as { disabled: boolean }).disabled), true, 'deleting files this thread did not write needs the explicit confirm');
    await panel.locator('.restore-confirm').check();
    await go.click();
    const sent = await w.waitPosted('restoreCheckpoint', (m) => m.type === 'restoreCheckpoint');
    assert.deepEqual({ threadId: sent.threadId, ordinal: sent.ordinal, mode: sent.mode }, { threadId: T, ordinal: 2, mode: 'files' });
    await w.host({ type: 'result', inReplyTo: sent.requestId, value: { mode: 'files', rewoundTo: null, files: { restorePoint: 'refs/vox/restore-points/1', changed: [m('app.ts'), m('mine.txt')], preserved: [], tookMs: 5, nested: [] } } });
  });

  it('keeps an Undo restore bar until dismissed; Undo posts undoRestore for the restore point', async () => {
    const bar = page.locator('.restore-undo');
    await w.eventually('the undo bar', async () => (await bar.count()) === 1);
    assert.match(await bar.innerText(), /Restored 2 files/);
    await bar.locator('.undo-restore').click();
    const undo = await w.waitPosted('undoRestore', (m) => m.type === 'undoRestore');
    assert.equal(undo.restorePoint, 'refs/vox/restore-points/1');
    await w.host({ type: 'result', inReplyTo: undo.requestId, value: { undone: 'refs/vox/restore-points/1', files: { restorePoint: 'refs/vox/restore-points/2', changed: [m('app.ts')], preserved: [], tookMs: 3, nested: [] } } });
    await w.eventually('undone', async () => /Restore undone/.test(await bar.innerText()));
    await bar.locator('.dismiss-restore').click();
    await w.eventually('dismissed', async () => (await bar.count()) === 0);
    assert.deepEqual(w.pageErrors, []);
    assert.deepEqual(await page.evaluate('window.__violations'), []);
  });
});
