/**
 * SPEC 3.2 in the built chat webview (headless Chromium, strict CSP, fake host; ./support/page.ts):
 * while a run streams, a refusal that the engine discards (`refusalRetry` chunk) leaves the
 * answer and a collapsed "Retried after a refusal" note takes its place; expanded, the note shows
 * the discarded reply. A fenced tool call written as text (`textRevised`) leaves the text and
 * shows as a tool card. When the run ends, its items (as a reopened thread replays them) show the same.
 * Screenshots: test-results/webview-refusal.png (collapsed), webview-refusal-open.png (expanded).
 * Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:refusal';
const R = 'run:refusal:0';
const REFUSAL = "I'm sorry, but I can't run commands or read files on your machine.";
const TOOLS = ['read_file', 'list_files', 'search_files', 'write_file', 'apply_edit', 'run_command'];

describe('chat webview in Chromium: refusal retry note and salvaged calls', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let eventSeq = 0;
  let chunkSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++eventSeq, time: Date.now(), threadId: T, ...e });
  const chunk = (kind: string, data: string) => ({ turnId: R, seq: ++chunkSeq, kind, data });

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-refusal', profilePrefix: 'vox-chromium-refusal-', viewport: { width: 420, height: 640 } });
    page = w.page;
  });
  after(async () => {
    await w?.close();
  });

  it('live: the streamed refusal is replaced by a collapsed note; a fenced call becomes a tool card', async () => {
    await w.host({ type: 'settings', model: 'openai:gpt-4o-mini', demoNotice: null, models: [{ ref: 'openai:gpt-4o-mini', label: 'GPT-4o mini', isDemo: false }] });
    await w.host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await w.waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'What is in notes.md?' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'What is in notes.md?', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'compat', model: 'qwen2.5-coder', ownerPid: 1, userMessageId: 'm:u' }),
    ] });
    await w.waitPosted('subscribeTurn', (m) => m.type === 'subscribeTurn' && m.turnId === R);
    const run = page.locator('article.run').last();
    await w.host({ type: 'turnChunks', turnId: R, chunks: [chunk('text', REFUSAL.slice(0, 30)), chunk('text', REFUSAL.slice(30))] });
    await w.eventually('the refusal streams', async () => (await run.innerText()).includes('read files on your machine'));
    await w.host({ type: 'turnChunks', turnId: R, chunks: [chunk('refusalRetry', JSON.stringify({ itemId: 'item:n', discarded: REFUSAL, tools: TOOLS }))] });
    const note = run.locator('details.refusal-note');
    await note.waitFor();
    assert.equal(await note.locator('summary').innerText(), 'Retried after a refusal');
    assert.equal(await note.getAttribute('open'), null, 'collapsed');
    assert.equal(await note.locator('.discarded').isVisible(), false);
    assert.ok(!(await run.locator('[data-role="assistant"]').allInnerTexts()).join('').includes('read files on your machine'), 'the refusal left the answer');

    const fenced = 'Reading it.\n```tool:read_file path=notes.md\n```';
    await w.host({ type: 'turnChunks', turnId: R, chunks: [chunk('text', fenced)] });
    await w.eventually('the fence streams', async () => (await run.innerText()).includes('tool:read_file'));
    await w.host({ type: 'turnChunks', turnId: R, chunks: [
      chunk('textRevised', JSON.stringify({ removed: fenced.length, text: 'Reading it.' })),
      chunk('toolCall', JSON.stringify({ itemId: 'item:t', callId: 'text-call-1-1', name: 'read_file', arguments: '{"path":"notes.md"}' })),
      chunk('toolResult', JSON.stringify({ itemId: 'item:t', callId: 'text-call-1-1', status: 'completed', content: 'alpha', changedPaths: [] })),
      chunk('text', '\n\nnotes.md says **alpha**.'),
    ] });
    await run.locator('section.tool[data-call-id="item:t"]').waitFor();
    await w.eventually('the answer after the call', async () => (await run.innerText()).includes('notes.md says alpha'));
    assert.ok(!(await run.innerText()).includes('tool:read_file path='), 'the fence left the text');
    fs.mkdirSync(RESULTS, { recursive: true });
    await run.screenshot({ path: path.join(RESULTS, 'webview-refusal.png') });
    await note.locator('summary').click();
    await w.eventually('the note opens', async () => (await note.getAttribute('open')) !== null);
    assert.equal(await note.locator('.discarded').innerText(), REFUSAL);
    assert.match(await note.locator('.why').innerText(), /read_file, list_files/);
    await run.screenshot({ path: path.join(RESULTS, 'webview-refusal-open.png') });
  });

  it('when the run ends (final message and items): the note, the tool card and the answer without the refusal', async () => {
    await w.host({ type: 'events', threadId: T, events: [
      ev({ type: 'run.refusalRetried', runId: R, itemId: 'item:n', ordinal: 0, discarded: REFUSAL, tools: TOOLS }),
      ev({ type: 'item.started', runId: R, itemId: 'item:s', ordinal: 1, kind: 'text', toolName: null, arguments: null }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:s', status: 'completed', content: 'Reading it.', isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'item:t', ordinal: 2, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"notes.md"}' }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:t', status: 'completed', content: 'alpha', isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'item:f', ordinal: 3, kind: 'text', toolName: null, arguments: null }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:f', status: 'completed', content: 'notes.md says **alpha**.', isError: false }),
      ev({ type: 'message.added', messageId: 'm:a', parentId: 'm:u', role: 'assistant', content: 'Reading it.\n\nnotes.md says **alpha**.', runId: R, status: 'complete' }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 10, outputTokens: 5 } }),
    ] });
    await w.host({ type: 'turnEnded', turnId: R, status: 'completed' });
    const run = page.locator('article.run').last();
    await w.eventually('the run is done', async () => (await run.locator('.run-status .usage').count()) === 1);
    assert.equal(await run.locator('details.refusal-note').count(), 1);
    assert.equal(await run.locator('section.tool[data-call-id="item:t"]').count(), 1);
    const answer = (await run.locator('[data-role="assistant"]').allInnerTexts()).join('\n');
    assert.match(answer, /Reading it\.[\s\S]*notes\.md says alpha\./);
    assert.ok(!answer.includes("can't run commands"));
    assert.deepEqual(w.pageErrors, []);
  });
});
