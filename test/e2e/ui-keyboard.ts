/**
 * The first two journeys with the keyboard alone, in a real VS Code (code-server + Chromium, own
 * session with a fresh profile on the sample workspace), the model `compat:keys-e2e` on a
 * scripted OpenAI-compatible server on 127.0.0.1. No mouse event is sent: every step is a key
 * press or typed text (the command palette is F1, its rows are picked with Enter). Called by
 * test/e2e/run-e2e.mjs (UI set `keyboard`); each check is one named, counted check:
 *   1. first run: Ctrl+Alt+V (Vox: Focus Chat) puts the caret in the composer; a typed prompt
 *      and Enter send it; the answer shows; Ctrl+Alt+N starts a new thread with the caret in the
 *      composer (the chat's own shortcut: VS Code's binding of the key in a browser is "New
 *      Untitled Text File"); Tab reaches the recent threads' first row, Enter opens it;
 *   2. a real task: a prompt that makes the agent write two files; the approval bar shows and
 *      Alt+Enter approves the first from the composer (its diff opened without taking the
 *      focus); the second is accepted with Alt+Enter in its diff editor (focused from the palette);
 *      both files hold the model's text and the answer shows;
 *   3. screenshots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import * as h from './harness';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { assert, checkScreenshots } from './ui-session';
import { defineUiSet } from './ui-set';

export const KEYBOARD_CHECKS = {
  firstRun: 'keyboard only: Ctrl+Alt+V focuses the composer, Enter sends, the answer shows; Ctrl+Alt+N starts a new thread; Tab and Enter open the first thread from the list',
  realTask: 'keyboard only: the agent\'s write waits in the approval bar, Alt+Enter in the composer approves it; the next one is accepted with Alt+Enter in its diff editor; both files written, the answer shows',
  screenshots: 'keyboard only: screenshots in test-results/',
} as const;

const MODEL = 'compat:keys-e2e';
const FIRST_PROMPT = 'Keyboard: what does src/math.js export?';
const FIRST_ANSWER = 'It exports add and mean.';
const TASK_PROMPT = 'Keyboard: write NOTES.md with one line';
const NOTE = 'Written with the keyboard alone.\n';
const TODO = 'Accepted in its diff with Alt+Enter.\n';
const TASK_ANSWER = 'NOTES.md and TODO.md are written.';
/** Most palette rows walked with ArrowDown to the command's own. */
const MAX_PALETTE_ROWS = 8;
/** Most Tab presses to reach a control before the check says it is not reachable. */
const MAX_TABS = 40;

/** What has the keyboard focus in the chat's frame: the element's tag, classes and text. */
async function focused(view: Frame): Promise<string> {
  return view.evaluate(`(() => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) return '';
    const host = el.getRootNode() instanceof ShadowRoot ? el.getRootNode().host : null;
    const of = (e) => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
    return (host ? of(host) + ' > ' : '') + of(el) + ' ' + (el.textContent || el.value || '').trim().slice(0, 60);
  })()`) as Promise<string>;
}

/** Whether the caret is in the composer's text area. */
async function inComposer(view: Frame): Promise<boolean> {
  return view.evaluate(`(() => {
    const ta = document.querySelector('vscode-textarea');
    const inner = ta && ta.shadowRoot ? ta.shadowRoot.activeElement : null;
    return document.activeElement === ta || (inner && inner.tagName === 'TEXTAREA') || (document.activeElement && document.activeElement.tagName === 'TEXTAREA');
  })()`) as Promise<boolean>;
}

/** Presses Tab until `ok(focused)` (at most MAX_TABS); the error lists what had the focus. */
async function tabTo(p: Page, view: Frame, what: string, ok: (f: string) => boolean): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < MAX_TABS; i++) {
    await p.keyboard.press('Tab');
    const f = await focused(view);
    seen.push(f);
    if (ok(f)) return;
  }
  throw new Error(`${what}: not reached with ${MAX_TABS} Tab presses; the focus went ${seen.join(' → ')}`);
}

/** The command palette with the keyboard: F1, the title typed, Enter on the row (it must be the focused one); again until the command is registered. */
async function palette(p: Page, title: string, timeoutMs = 45_000): Promise<void> {
  const widget = p.locator('.quick-input-widget');
  const focusedRow = () => widget.locator('.quick-input-list .monaco-list-row.focused .label-name').textContent({ timeout: 1_000 }).catch(() => '');
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    // Escape only to close the palette of a failed attempt: in the chat, Escape stops the running turn.
    if (attempt > 0) await p.keyboard.press('Escape');
    await p.keyboard.press('F1');
    await widget.locator('.quick-input-box input').waitFor({ state: 'visible', timeout: 10_000 });
    await p.keyboard.type(title, { delay: 10 });
    // The rows come as the palette filters; a recently used one may be first: ArrowDown to the exact title.
    await widget.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 3_000 }).catch(() => {});
    let found = false;
    for (let i = 0; i < MAX_PALETTE_ROWS && !found; i++) {
      found = await h.waitFor(`"${title}" focused in the palette`, i === 0 ? 3_000 : 500, async () => ((await focusedRow()) ?? '').trim() === title, 100).then(() => true, () => false);
      if (!found) await p.keyboard.press('ArrowDown');
    }
    if (found) break;
    if (Date.now() > deadline) throw new Error(`the palette's focused row for "${title}" is ${JSON.stringify(await focusedRow())} after ${timeoutMs} ms`);
    await h.sleep(1_000); // the extension may not have registered its commands yet
  }
  await p.keyboard.press('Enter');
}

async function messages(view: Frame): Promise<string[]> {
  return view.evaluate(`Array.from(document.querySelectorAll('.message')).map((el) => (el.innerText || '').trim())`) as Promise<string[]>;
}

export const runKeyboardChecks = defineUiSet({
  name: 'keyboard only',
  dir: 'keyboard',
  checks: KEYBOARD_CHECKS,
  state: { sent: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': MODEL, 'vox.compatBaseUrl': fake.baseUrl, 'vox.approval': { read: 'auto', write: 'ask', execute: 'ask' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk, dirs }) => {
    // ---- 1. First run
    await check(KEYBOARD_CHECKS.firstRun, async () => {
      await openWorkbench();
      await palette(p, 'Vox: Focus on Chat View'); // the first time the view is opened
      const view = await sidebar();
      await view.locator('vscode-textarea').waitFor({ timeout: 30_000 });
      await p.keyboard.press('Escape'); // the focus back on the workbench
      await p.keyboard.press('Control+Alt+KeyV');
      await h.waitFor('the caret in the composer after Ctrl+Alt+V', 10_000, () => inComposer(view), 100)
        .catch(async (e: Error) => { throw new Error(`${e.message}; the focus is on ${await focused(view)}`); });
      fk.push(textTurn(FIRST_ANSWER));
      await p.keyboard.type(FIRST_PROMPT, { delay: 5 });
      await p.keyboard.press('Enter');
      await h.waitFor('the answer', 30_000, async () => (await messages(view)).includes(FIRST_ANSWER), 200);
      await shot('e2e-keyboard-answer');

      await p.keyboard.press('Control+Alt+KeyN');
      await h.waitFor('a new thread: no messages, the caret in the composer', 10_000, async () => (await messages(view)).length === 0 && (await inComposer(view)), 100)
        .catch(async (e: Error) => { throw new Error(`${e.message}; messages ${JSON.stringify(await messages(view))}, the focus on ${await focused(view)}`); });

      // The new thread's screen lists the recent threads: Tab to the first one's row, Enter.
      await tabTo(p, view, `the thread "${FIRST_PROMPT}"`, (f) => f.includes('open') && f.includes(FIRST_PROMPT.slice(0, 30)));
      await p.keyboard.press('Enter');
      await h.waitFor('the thread opened with its answer', 10_000, async () => (await messages(view)).includes(FIRST_ANSWER), 100);
      state.sent = true;
    });

    // ---- 2. A real task: approve with Alt+Enter
    await check(KEYBOARD_CHECKS.realTask, async () => {
      requireState('sent');
      const view = await sidebar();
      await p.keyboard.press('Control+Alt+KeyN');
      await h.waitFor('the caret in the composer', 10_000, () => inComposer(view), 100);
      fk.push(
        toolCallTurn([{ name: 'write_file', args: { path: 'NOTES.md', content: NOTE } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'TODO.md', content: TODO } }]),
        textTurn(TASK_ANSWER),
      );
      await p.keyboard.type(TASK_PROMPT, { delay: 5 });
      await p.keyboard.press('Enter');
      await view.locator('.approval-bar').waitFor({ timeout: 30_000 });
      await shot('e2e-keyboard-approval');
      assert(!fs.existsSync(path.join(dirs.workspace, 'NOTES.md')), 'NOTES.md was written before the approval');
      assert(await inComposer(view), `the approval bar took the focus from the composer (${await focused(view)})`);
      await p.keyboard.press('Alt+Enter');
      await h.waitFor('NOTES.md written', 20_000, () => fs.existsSync(path.join(dirs.workspace, 'NOTES.md')), 100);
      assert(fs.readFileSync(path.join(dirs.workspace, 'NOTES.md'), 'utf8') === NOTE, 'NOTES.md does not hold the model\'s text');
      // The second write: approved from its diff editor ("View: Focus Active Editor Group" from the palette), Alt+Enter there.
      const todo = path.join(dirs.workspace, 'TODO.md');
      await h.waitFor('the second approval', 30_000, async () => (await view.locator('.approval-bar').count()) === 1 && (await view.locator('.approval-bar').innerText()).includes('TODO.md'), 200);
      await palette(p, 'View: Focus Active Editor Group');
      await h.waitFor('the diff editor focused', 10_000, async () => (await p.evaluate('document.activeElement && document.activeElement.classList.contains("inputarea")')) === true, 100);
      assert(!fs.existsSync(todo), 'TODO.md was written before the approval');
      await p.keyboard.press('Alt+Enter');
      await h.waitFor('TODO.md written (accepted in its diff)', 20_000, () => fs.existsSync(todo), 100);
      assert(fs.readFileSync(todo, 'utf8') === TODO, 'TODO.md does not hold the model\'s text');
      await h.waitFor('the answer', 30_000, async () => (await messages(view)).includes(TASK_ANSWER), 200);
      assert((await view.locator('.approval-bar').count()) === 0, 'the approval bar is still there');
      await shot('e2e-keyboard-done');
    });

    await o.check(KEYBOARD_CHECKS.screenshots, async () => {
      requireState('sent');
      checkScreenshots(o, shots, ['e2e-keyboard-answer', 'e2e-keyboard-approval', 'e2e-keyboard-done'], []);
    }, p);
  },
});
