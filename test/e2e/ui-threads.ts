/**
 * UI end to end of thousands of threads and in-thread find over tool output and plans in a
 * real VS Code (code-server + Chromium, own session with a fresh profile on
 * the sample workspace). Before the session starts, a bundle of THREADS generated threads (the
 * oldest one with a tool call whose result holds a rare word, and a plan) is imported into the
 * profile's database through the engine's importBundle command (the same store the extension
 * opens). Called by test/e2e/run-e2e.mjs (pass 1, UI set `threads`); each check is one named,
 * counted check:
 *   1. the chat view's thread list fills in chunks up to every thread, with a bounded number of
 *      rows in the DOM (virtualised); screenshot (docs/screenshot-threads.png);
 *   2. scrolled to its end, the oldest thread opens; Ctrl+F finds the rare word in its tool
 *      result (1/1, the result opened, the highlight on the word) and a word of its plan card;
 *      screenshot (docs/screenshot-find-tools.png);
 *   3. the view hidden (side bar closed, the webview goes away) and shown again: the list holds
 *      every thread the first time it is looked at (restored, not loaded again);
 *   4. screenshots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { SIDEBAR } from './ui-chat-context';
import { assert, checkScreenshots, EXTENSION_ID, readmePicture } from './ui-session';
import { collapsePane, widenSideBar } from './ui-workbench';
import { startTestEngine } from '../support/test-engine';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, countEvents } from '../../src/engine/bundles/format';
import { defineUiSet } from './ui-set';

export const THREAD_CHECKS = {
  list: 'threads UI: the thread list fills in chunks with every imported thread; the DOM holds a bounded number of rows',
  find: 'threads UI: the oldest thread opens from the end of the list; Ctrl+F finds a word in its tool result (opened, 1/1) and in its plan card',
  reopen: 'threads UI: hidden and shown again, the list holds every thread the first time it is looked at',
  screenshots: 'threads UI: screenshots in test-results/ and the README pictures',
} as const;

/** Threads imported. */
const THREADS = 2_000;
/** Most thread rows the virtualised list may have in the DOM (a 60vh list plus 2 × 800 px overscan). */
const MAX_ROWS_IN_DOM = 150;
const TOOL_WORD = 'zebrafish';
const PLAN_WORD = 'axolotl';
const OLDEST = 'thread:e2e-oldest';
const README_THREADS = readmePicture('screenshot-threads', 250 * 1024);
const README_FIND = readmePicture('screenshot-find-tools', 250 * 1024);

/** A bundle of THREADS short threads; the oldest has a tool call and a plan. */
function bundleOf(now: number): unknown {
  const threads = [];
  for (let i = 0; i < THREADS; i++) {
    const oldest = i === THREADS - 1;
    const id = oldest ? OLDEST : `thread:e2e-${i}`;
    const t = now - (i + 1) * 60_000;
    const u = `m:e2e-${i}-u`;
    const r = `run:e2e-${i}`;
    const events: Record<string, unknown>[] = [
      { type: 'thread.created', threadId: id, title: oldest ? 'The oldest thread: a tool and a plan' : `Imported thread ${i}`, time: t },
      { type: 'message.added', threadId: id, messageId: u, parentId: null, role: 'user', content: oldest ? 'Read the notes and plan the tank' : `Question ${i}`, runId: null, status: 'complete', time: t },
      { type: 'run.started', threadId: id, runId: r, ordinal: 0, provider: 'openai', model: 'gpt-e2e', ownerPid: 1, userMessageId: u, time: t },
    ];
    if (oldest) {
      events.push(
        { type: 'item.started', threadId: id, runId: r, itemId: `${r}:i1`, ordinal: 1, kind: 'toolCall', toolName: 'read_file', arguments: JSON.stringify({ path: 'notes.txt' }), time: t },
        { type: 'item.completed', threadId: id, runId: r, itemId: `${r}:i1`, status: 'completed', content: `notes.txt:\nThe tank holds one ${TOOL_WORD} and two snails.\n`, isError: false, time: t },
        { type: 'plan.submitted', threadId: id, runId: r, planId: 'plan:e2e', title: 'Set up the tank', steps: [{ id: 's1', text: 'Fill the tank' }, { id: 's2', text: `Add the ${PLAN_WORD}` }], time: t },
      );
    }
    events.push(
      { type: 'message.added', threadId: id, messageId: `m:e2e-${i}-a`, parentId: u, role: 'assistant', content: oldest ? 'I read the notes and made a plan.' : `Answer ${i}`, runId: r, status: 'complete', time: t },
      { type: 'run.ended', threadId: id, runId: r, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 }, time: t },
    );
    threads.push({ id, title: events[0]!.title, createdAt: t, updatedAt: t, parentThreadId: null, counts: countEvents(events as never), events, checkpointRefs: [] });
  }
  return { format: BUNDLE_FORMAT, version: BUNDLE_FORMAT_VERSION, exportedAt: now, threads, rules: { workspace: [], user: [] } };
}

/** Imports the generated bundle into the profile's old database (globalStorage, where an older Vox kept it: the extension moves it in at start). */
async function seed(userData: string, workspace: string, scratch: string): Promise<number> {
  const dbPath = path.join(userData, 'User', 'globalStorage', EXTENSION_ID, 'vox.db');
  fs.mkdirSync(path.dirname(dbPath), { recursive: true });
  const file = path.join(scratch, 'threads.bundle.json');
  fs.writeFileSync(file, JSON.stringify(bundleOf(Date.now())));
  const t = startTestEngine({ dir: scratch, workspaceRoot: workspace, config: { dbPath } });
  try {
    const r = await t.client().call('importBundle', { path: file });
    return r.threadsAdded;
  } finally {
    await t.dispose();
  }
}

/** Page-side (the e2e code is type-checked without the DOM library, so page functions are strings). */
const LIST_STATE_FN = `() => {
  const s = document.querySelector('.thread-scroll');
  return { threads: Number(s?.dataset.threads ?? 0), loading: s?.dataset.loading ?? null, rows: document.querySelectorAll('ul.threads > li').length };
}`;
const CURRENT_HIGHLIGHT_FN = `() => { const x = CSS.highlights.get('vox-find-current'); if (!x) return null; for (const r of x) return r.toString(); return null; }`;
/** Cosmetic (screenshot): the empty screen scrolled so the recent threads fill it, the list a little way down. */
const SHOW_LIST_FN = `() => { const e = document.querySelector('section.empty'); if (e) e.scrollTop = e.scrollHeight; const s = document.querySelector('.thread-scroll'); if (s) s.scrollTop = 26 * 700; }`;
const SCROLL_END_FN = `() => { const s = document.querySelector('.thread-scroll'); if (s) s.scrollTop = s.scrollHeight; }`;

const listState = (view: Frame) => view.evaluate(`(${LIST_STATE_FN})()`) as Promise<{ threads: number; loading: string | null; rows: number }>;
const currentHighlight = (view: Frame) => view.evaluate(`(${CURRENT_HIGHLIGHT_FN})()`) as Promise<string | null>;

export const runThreadChecks = defineUiSet({
  name: 'threads UI',
  dir: 'threads',
  checks: THREAD_CHECKS,
  state: { list: false, found: false },
  prepare: async ({ o, dirs }) => {
    const scratch = path.join(o.rootDir, 'threads-scratch');
    fs.mkdirSync(scratch, { recursive: true });
    const added = await seed(dirs.userData, dirs.workspace, scratch);
    assert(added === THREADS, `the bundle import added ${added} threads, expected ${THREADS}`);
  },
  settings: { 'vox.model': 'local:demo' },
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state }) => {
    // ---- 1. The list fills in chunks, virtualised
    await check(THREAD_CHECKS.list, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      await collapsePane(p, 'Vox Rules').catch(() => {}); // cosmetic: the chat gets the side bar's height
      const view = await sidebar();
      await view.locator('ul.threads button.open').first().waitFor({ timeout: 30_000 });
      const seen: number[] = [];
      let last = await listState(view);
      await h.waitFor(`${THREADS} threads in the list`, 60_000, async () => {
        last = await listState(view);
        if (seen[seen.length - 1] !== last.threads) seen.push(last.threads);
        assert(last.rows <= MAX_ROWS_IN_DOM, `${last.rows} rows in the DOM`);
        return last.threads === THREADS && last.loading === 'done';
      }, 20);
      assert(last.rows <= MAX_ROWS_IN_DOM && last.rows > 0, `${last.rows} rows in the DOM for ${THREADS} threads`);
      // (How the pages come — 16, then 200 every 50 ms, one at a time — is proven in
      // test/webview/thread-list-loader.test.ts and thread-list-browser.test.ts; here it may be
      // done before the first look, so no timing is asserted.)
      void seen;
      await view.evaluate(`(${SHOW_LIST_FN})()`);
      await shot('e2e-threads');
      await shot(README_THREADS.shot);
      state.list = true;
    });

    // ---- 2. The oldest thread from the end of the list; find in its tool output and plan
    await check(THREAD_CHECKS.find, async () => {
      requireState('list');
      const view = await sidebar();
      const oldest = view.locator('ul.threads button.open', { hasText: 'The oldest thread' });
      await h.waitFor('the oldest thread rendered at the end of the list', 20_000, async () => {
        await view.evaluate(`(${SCROLL_END_FN})()`);
        return (await oldest.count()) === 1;
      }, 100);
      await oldest.click({ timeout: 10_000 });
      await view.locator('section.tool', { hasText: 'read_file' }).waitFor({ timeout: 20_000 });
      await view.locator('section.plan').waitFor({ timeout: 20_000 });
      assert((await view.locator('details.result[open]').count()) === 0, 'the tool result starts closed');
      await view.locator('vscode-textarea').click({ timeout: 10_000 }); // focus inside the webview, as a user would
      await p.keyboard.press('Control+f');
      const input = view.locator('.find-bar input');
      await input.waitFor({ timeout: 10_000 });
      await input.fill(TOOL_WORD);
      await h.waitFor('1/1 for the tool word', 10_000, async () => (await view.locator('.find-count').innerText()) === '1/1', 50);
      await h.waitFor('the result opened and the word highlighted', 10_000, async () => {
        const hl = await currentHighlight(view);
        return hl?.toLowerCase() === TOOL_WORD && (await view.locator('details.result[open]').count()) === 1;
      }, 50);
      await shot('e2e-find-tools');
      await shot(README_FIND.shot);
      await input.fill(PLAN_WORD);
      await h.waitFor('1/1 for the plan word', 10_000, async () => (await view.locator('.find-count').innerText()) === '1/1', 50);
      await h.waitFor('the plan word highlighted', 10_000, async () =>
        (await currentHighlight(view))?.toLowerCase() === PLAN_WORD, 50);
      await input.press('Escape');
      state.found = true;
    });

    // ---- 3. Hidden and shown again: the whole list at once
    await check(THREAD_CHECKS.reopen, async () => {
      requireState('list');
      await h.runCommand(p, 'View: Close Primary Side Bar');
      await h.waitFor('the chat view gone', 10_000, async () => (await p.locator(`${SIDEBAR} iframe.webview`).count()) === 0 || !(await p.locator(SIDEBAR).isVisible().catch(() => false)), 100);
      await h.runCommand(p, 'Vox: Focus on Chat View', 30_000);
      const view = await sidebar();
      const toggle = view.locator('button.threads-toggle');
      if (await toggle.count()) await toggle.click({ timeout: 10_000 }); // a thread is open: show the list
      await view.locator('.thread-scroll').first().waitFor({ timeout: 20_000 });
      const first = await listState(view);
      assert(first.threads === THREADS, `the list held ${first.threads} threads when first looked at, expected all ${THREADS}`);
    });

    await o.check(THREAD_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-threads', 'e2e-find-tools'], [README_THREADS, README_FIND]);
    });
  },
});
