/**
 * UI end to end of search (SPEC 6.4, journey 8) in a real VS Code (code-server + Chromium, own
 * session with a fresh profile on the sample workspace). Before the session starts, the profile's
 * old store (globalStorage/…/vox.db, where an older Vox kept it; the extension moves it to
 * ~/.vox/vox.db when it starts) is seeded through VoxStore with a 400-message thread (the
 * webview tests' long thread) and a short one — the migration's index is built by the projections
 * as they are written. Called by test/e2e/run-e2e.mjs (pass 1, `--set search`):
 *   1. "Vox: Search Threads" searches as you type: "question 37:" lists the message of the long
 *      thread with its snippet (the QuickPick; screenshot, the README picture), and "release"
 *      lists the short thread by its title;
 *   2. picking the message opens the long thread in the sidebar chat and reveals the message: its
 *      row (far from the end, so not rendered when the thread opens) is marked `.vox-revealed`
 *      and lies in the viewport;
 *   3. the thread list's search box finds the same message and opens it the same way;
 *   4. screenshots (docs/screenshot-search.png with --update-screenshot).
 */
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import * as h from './harness';
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import type { VoxEvent } from '../../src/protocol/events';
import { longThreadEvents } from '../webview/support/long-thread';
import { assert, checkScreenshots, EXTENSION_ID, readmePicture } from './ui-session';
import { widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const SEARCH_CHECKS = {
  quickPick: 'search UI: "Vox: Search Threads" lists a message by its text (with snippet) and a thread by its title as you type',
  reveal: 'search UI: picking the message opens its thread and reveals the message in the virtualised list (scrolled to, highlighted)',
  box: 'search UI: the thread list\'s search box finds the message and opens the thread at it',
  screenshots: 'search UI: screenshots in test-results/ and the README picture',
} as const;

/** What the page-side callback below touches (this file is type-checked without the DOM library). */
interface PageElement { getBoundingClientRect(): { top: number; bottom: number } }
declare const document: { querySelector(selector: string): PageElement | null };

const LONG = 'thread:e2e-search-long';
const SHORT = 'thread:e2e-search-short';
const MESSAGES = 400;
const TARGET = 'm:u37';
const README = readmePicture('screenshot-search', 250 * 1024);

const widget = (p: Page) => p.locator('.quick-input-widget');

/** Writes the two threads into the profile's store before VS Code opens it. */
function seed(dbFile: string): void {
  const store = VoxStore.open(dbFile, { schema: STORE_SCHEMAS });
  try {
    const events = longThreadEvents({ threadId: LONG, messages: MESSAGES }).map(({ seq: _s, time: _t, ...e }) => e as unknown as VoxEvent);
    store.append(...events);
    store.append({ type: 'thread.renamed', threadId: LONG, title: 'Parser refactor (long)' });
    store.append(
      { type: 'thread.created', threadId: SHORT, title: 'Release checklist' },
      { type: 'message.added', threadId: SHORT, messageId: 'm:short-1', parentId: null, role: 'user', content: 'What is left before we tag the release?', runId: null, status: 'complete' },
    );
  } finally {
    store.close();
  }
}

export const runSearchChecks = defineUiSet({
  name: 'search UI',
  dir: 'search',
  checks: SEARCH_CHECKS,
  state: { picked: false },
  prepare: ({ dirs }) => {
    seed(path.join(dirs.userData, 'User', 'globalStorage', EXTENSION_ID, 'vox.db'));
  },
  settings: { 'vox.model': 'local:demo' },
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state }) => {
    const row = (label: RegExp) => widget(p).locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
    const revealedInView = async (view: Frame, key: string) => view.evaluate((k) => {
      const el = document.querySelector(`.vrow.vox-revealed[data-vkey="${k}"]`);
      const s = document.querySelector('.scroller');
      if (!el || !s) return false;
      const r = el.getBoundingClientRect();
      const port = s.getBoundingClientRect();
      return r.bottom > port.top && r.top < port.bottom;
    }, key);

    // ---- 1. The QuickPick, live as you type
    await check(SEARCH_CHECKS.quickPick, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      await sidebar();
      await h.runCommand(p, 'Vox: Search Threads', 30_000, { opensQuickInput: true });
      const input = widget(p).locator('.quick-input-box input');
      // The palette's widget is reused: type only once it is the search's own (its placeholder).
      await h.waitFor('the search QuickPick', 20_000, async () => (await input.getAttribute('placeholder').catch(() => null))?.startsWith('Search thread titles') === true);
      await input.pressSequentially('release', { delay: 20 });
      await row(/Release checklist/).waitFor({ timeout: 20_000 });
      assert((await row(/Release checklist/).innerText()).includes('thread title'), 'the title row says "thread title"');
      await input.fill('');
      await input.pressSequentially('question 37:', { delay: 20 });
      const hit = row(/Question 37:/);
      await hit.waitFor({ timeout: 20_000 });
      const text = await hit.innerText();
      assert(text.includes('Parser refactor (long)'), `the message row names its thread: ${JSON.stringify(text)}`);
      assert((await widget(p).locator('.quick-input-list .monaco-list-row', { hasText: /Question 370/ }).count()) === 0, 'a literal match: "37:" is not "370:"');
      await shot(README.shot);
      await shot('e2e-search-quickpick');
      await hit.click();
      state.picked = true;
    });

    // ---- 2. The message revealed
    await check(SEARCH_CHECKS.reveal, async () => {
      requireState('picked');
      const view = await sidebar();
      await view.locator('h1.title', { hasText: 'Parser refactor (long)' }).waitFor({ timeout: 30_000 });
      const key = `msg:${TARGET}`;
      await view.locator(`.vrow.vox-revealed[data-vkey="${key}"]`).waitFor({ timeout: 30_000 });
      await h.waitFor('the revealed message in the viewport', 15_000, () => revealedInView(view, key));
      assert((await view.locator(`.vrow[data-vkey="run:run:${MESSAGES / 2 - 1}"]`).count()) === 0, 'the end of the thread is not rendered: the list moved to the message');
      await shot('e2e-search-revealed');
    });

    // ---- 3. The search box above the thread list
    await check(SEARCH_CHECKS.box, async () => {
      requireState('picked');
      const view = await sidebar();
      await view.locator('button.threads-toggle').click({ timeout: 10_000 });
      const box = view.locator('#vox-thread-panel input.search-input');
      await box.waitFor({ timeout: 10_000 });
      await box.pressSequentially('question 12:', { delay: 20 });
      const hit = view.locator('#vox-thread-panel .search-results button.result[data-message-id="m:u12"]');
      await hit.waitFor({ timeout: 20_000 });
      assert((await hit.locator('mark').first().innerText()).toLowerCase().startsWith('question'), 'the match is marked');
      await shot('e2e-search-box');
      await hit.click();
      await view.locator('.vrow.vox-revealed[data-vkey="msg:m:u12"]').waitFor({ timeout: 30_000 });
      await h.waitFor('the message found from the box in the viewport', 15_000, () => revealedInView(view, 'msg:m:u12'));
    });

    await o.check(SEARCH_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-search-quickpick', 'e2e-search-revealed', 'e2e-search-box'], README);
    }, p);
  },
});
