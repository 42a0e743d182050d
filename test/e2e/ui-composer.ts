/**
 * UI end to end of the composer's prompt history and code blocks in a real VS Code (code-server +
 * Chromium, own session with a fresh profile on the sample workspace), against a scripted
 * OpenAI-wire server (`openai:gpt-e2e`, its key set through "Vox: Set API Key"). Called by
 * test/e2e/run-e2e.mjs (UI set 'composer'); each check is one named, counted check there:
 *   1. two prompts sent, each answered;
 *   2. after "Developer: Reload Window", in a new thread, a typed draft + ArrowUp recalls the
 *      second prompt, ArrowUp again the first (persisted in the engine's history), ArrowDown walks
 *      forward and gives the typed draft back;
 *   3. a reply with a ```ts block is highlighted by shiki (token spans in the workbench theme's
 *      colours: Light+ keyword #0000FF in the suite's light theme, Dark+ #569CD6 in a dark one);
 *      screenshot docs/screenshot-code-blocks.png (README picture);
 *   4. with src/math.js open in an editor, the block's Insert puts the code at the cursor;
 *   5. with every editor closed, Insert shows "No editor to insert into";
 *   6. "Apply to square.ts" (the fence names src/square.ts, which does not exist) opens the diff
 *      tab, asks in a modal dialog, and the file is written only after "Apply";
 *   7. screenshots;
 *   8. Ctrl+F in the chat opens the in-thread find (the list is virtualised, so it searches the
 *      thread's state, not the page): "square" matches in the prompt and the answer, Enter steps
 *      to the next match, Esc closes it;
 *   9. a draft with an @file chip survives hiding the chat (the Explorer takes the side bar, the
 *      webview is destroyed) and showing it again: text, chip and caret;
 *  10. the chat owns the Vox side bar: no Vox Rules view beside it, and the message list takes
 *      most of the view's height.
 */
import type { Frame, Page } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { VOX_WEBVIEW, assert, checkScreenshots, readmePicture } from './ui-session';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorToasts, setApiKey, toast, waitForEditorTab, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const COMPOSER_CHECKS = {
  prompts: 'composer UI: two prompts sent to openai:gpt-e2e, each answered',
  recall: 'composer UI: after Reload Window, in a new thread, ArrowUp recalls the persisted prompts and ArrowDown restores the typed draft',
  highlight: 'composer UI: a reply\'s ts code block is highlighted by shiki (token spans in the colours of VS Code\'s theme, Light+ or Dark+)',
  insert: 'composer UI: the code block\'s Insert puts the code at the cursor of the open editor',
  noEditor: 'composer UI: Insert with no editor open says so clearly',
  apply: 'composer UI: Apply to square.ts opens a diff against the proposal, asks, and writes the file only after "Apply"',
  screenshots: 'composer UI: screenshots in test-results/ and the README picture',
  find: 'composer UI: Ctrl+F in the chat opens find over the thread: matches counted, Enter steps to the next, Esc closes',
  draft: 'composer UI: a draft with an @file chip survives Explorer and back (the webview destroyed and re-created): text, chip and caret',
  room: 'composer UI: the chat owns the Vox side bar (no Vox Rules view there) and its message list has most of the view\'s height',
} as const;

/** The least share of the chat view's height the message list gets with a short thread open (it had 150–170 px of ~700 beside the Rules view). */
const MIN_LIST_SHARE = 0.5;

const MODEL = 'openai:gpt-e2e';
const API_KEY = 'sk-e2e-composer';
const PROMPTS = ['First prompt: what does src/math.js export?', 'Second prompt: and how would you test it?'];
const DRAFT = 'a draft I was typing';
const CODE = 'export function square(x) {\n  return x * x; // squared\n}';
const README = readmePicture('screenshot-code-blocks', 250 * 1024);

async function openFile(p: Page, name: string): Promise<void> {
  const widget = p.locator('.quick-input-widget');
  await p.keyboard.press('Escape');
  await p.keyboard.press('Control+P');
  const input = widget.locator('.quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  await widget.locator('.quick-input-list .monaco-list-row .label-name', { hasText: name.split('/').pop()! }).first().waitFor({ timeout: 20_000 });
  await p.keyboard.press('Enter');
  await p.locator('.part.editor .tab.active', { hasText: name.split('/').pop()! }).first().waitFor({ timeout: 20_000 });
}

export const runComposerChecks = defineUiSet({
  name: 'composer UI',
  dir: 'composer',
  checks: COMPOSER_CHECKS,
  state: { prompts: false, highlighted: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': MODEL, 'vox.models': [MODEL], 'vox.openaiBaseUrl': fake.baseUrl }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, dirs, fake: fk }) => {
    const composer = (v: Frame) => v.locator('vscode-textarea textarea');
    const answered = (v: Frame, text: string) => h.waitFor(`the answer "${text}"`, 30_000, async () => (await v.locator('[data-role="assistant"]').allInnerTexts()).some((t) => t.includes(text)));

    // ---- 1. Two prompts
    await check(COMPOSER_CHECKS.prompts, async () => {
      await openWorkbench();
      await setApiKey(p, 'openai', API_KEY, { listed: 'anthropic' });
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 560);
      const view = await sidebar();
      for (const [i, prompt] of PROMPTS.entries()) {
        fk.push(textTurn([`Answer ${i + 1}`, ' is here.']));
        await composer(view).fill(prompt, { timeout: 10_000 });
        await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
        await answered(view, `Answer ${i + 1} is here.`);
        await h.waitFor('the run to end', 30_000, async () => (await view.locator('vscode-button.send').count()) === 1);
      }
      state.prompts = true;
    });

    // ---- 2. Reload, new thread, ArrowUp / ArrowDown
    await check(COMPOSER_CHECKS.recall, async () => {
      requireState('prompts');
      await p.evaluate('window.__voxBeforeReload = true');
      await h.runCommand(p, 'Developer: Reload Window');
      await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
      await h.waitForWorkbench(p);
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      const view = await sidebar();
      await view.locator('vscode-button.new-thread').click({ timeout: 15_000 });
      await view.locator('section.empty').waitFor({ timeout: 10_000 });
      const area = composer(view);
      await area.click({ timeout: 10_000 });
      await area.pressSequentially(DRAFT);
      const value = () => area.inputValue();
      // The history arrives with the new session: ArrowUp until it does (a press before it is the text box's).
      await h.waitFor('ArrowUp to recall the second prompt', 20_000, async () => {
        if ((await value()) !== PROMPTS[1]) await area.press('ArrowUp');
        return (await value()) === PROMPTS[1];
      }, 300);
      await area.press('ArrowUp');
      await h.waitFor('ArrowUp to recall the first prompt', 5_000, async () => (await value()) === PROMPTS[0]);
      await shot('e2e-composer-recall');
      await area.press('ArrowDown');
      await h.waitFor('ArrowDown to the second prompt', 5_000, async () => (await value()) === PROMPTS[1]);
      await area.press('ArrowDown');
      await h.waitFor('ArrowDown to give the draft back', 5_000, async () => (await value()) === DRAFT);
      const caret = await area.evaluate((el) => { const t = el as unknown as { selectionStart: number; value: string }; return [t.selectionStart, t.value.length]; });
      assert(caret[0] === caret[1], `the caret is at ${caret[0]}, not at the end (${caret[1]})`);
      await area.fill('');
    });

    // ---- 3. A highlighted code block
    await check(COMPOSER_CHECKS.highlight, async () => {
      requireState('prompts');
      const view = await sidebar();
      fk.push(textTurn(['Here is a helper:\n\n```ts src/square.ts\n', `${CODE}\n`, '```\n\nInsert it where you need it.']));
      await composer(view).fill('Write a square function', { timeout: 10_000 });
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await answered(view, 'Insert it where you need it.');
      const code = view.locator('[data-role="assistant"] .code-block[data-lang="ts"] code').last();
      await h.waitFor('shiki to highlight the block', 20_000, async () => (await code.getAttribute('data-highlighted')) === 'full');
      assert((await code.innerText()) === CODE, `the block shows ${JSON.stringify(await code.innerText())}`);
      const colours = await code.locator('span').evaluateAll((els) => els.map((e) => [e.textContent, (e as unknown as { style: { color: string } }).style.color]));
      const kw = colours.find(([t]) => t === 'function');
      const light = await view.locator('body').evaluate((b) => b.classList.contains('vscode-light'));
      const want = light ? 'rgb(0, 0, 255)' : 'rgb(86, 156, 214)'; // Light+ / Dark+ keyword
      assert(kw && String(kw[1]) === want, `"function" is coloured ${JSON.stringify(kw)}, expected ${want} (${light ? 'Light+' : 'Dark+'}); spans: ${JSON.stringify(colours.slice(0, 8))}`);
      assert(new Set(colours.map(([, c]) => c)).size >= 3, `only ${new Set(colours.map(([, c]) => c)).size} colours in the block`);
      await view.locator('[data-role="assistant"] .code-block[data-lang="ts"]').last().scrollIntoViewIfNeeded();
      await shot(README.shot);
      state.highlighted = true;
    });

    // ---- 4. Insert at Cursor into an open editor
    await check(COMPOSER_CHECKS.insert, async () => {
      requireState('highlighted');
      await openFile(p, 'src/math.js');
      const lines = p.locator('.part.editor .monaco-editor .view-lines').first();
      const before = await lines.innerText();
      assert(!before.includes('square'), 'src/math.js already has square');
      const view = await sidebar();
      await view.locator('[data-role="assistant"] .code-block[data-lang="ts"] button.insert').last().click({ timeout: 10_000 });
      await h.waitFor('the code in the editor', 15_000, async () => (await lines.innerText()).replace(/\u00a0/g, ' ').includes('export function square(x) {'));
      const after = (await lines.innerText()).replace(/\u00a0/g, ' ');
      assert(after.startsWith('export function square(x) {'), `the editor starts with ${JSON.stringify(after.slice(0, 80))} (the cursor was at the start)`);
      assert(after.includes('// Small helpers for Vox to read and edit.'), 'the file\'s own text is gone');
      await shot('e2e-composer-inserted');
    });

    // ---- 5. No editor
    await check(COMPOSER_CHECKS.noEditor, async () => {
      requireState('highlighted');
      await h.runCommand(p, 'File: Revert File').catch(() => {}); // math.js has the inserted code, unsaved
      await h.runCommand(p, 'View: Close All Editors');
      await p.locator('.part.editor .tab').first().waitFor({ state: 'detached', timeout: 10_000 });
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      const view = await sidebar();
      await view.locator('[data-role="assistant"] .code-block[data-lang="ts"] button.insert').last().click({ timeout: 10_000 });
      await toast(p, 'No editor to insert into').waitFor({ state: 'visible', timeout: 15_000 });
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
    });

    // ---- 6. Apply to File: diff, confirmation, write
    await check(COMPOSER_CHECKS.apply, async () => {
      requireState('highlighted');
      const file = path.join(dirs.workspace, 'src', 'square.ts');
      assert(!fs.existsSync(file), 'src/square.ts exists before Apply');
      const view = await sidebar();
      const apply = view.locator('[data-role="assistant"] .code-block[data-lang="ts"] button.apply').last();
      assert((await apply.innerText()).trim() === 'Apply to square.ts', `the button says ${JSON.stringify(await apply.innerText())}`);
      await apply.click({ timeout: 10_000 });
      const dialog = p.locator('.monaco-dialog-box').first();
      try {
        await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      } catch {
        throw new Error(`no confirmation dialog after Apply (toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
      }
      const question = (await dialog.innerText()).replace(/\s+/g, ' ');
      assert(question.includes('Apply the proposed content to src/square.ts?'), `the dialog asks ${JSON.stringify(question)}`);
      await waitForEditorTab(p, 'square.ts', 'src/square.ts ↔ proposed by Vox');
      assert(!fs.existsSync(file), 'src/square.ts was written before "Apply" was clicked');
      await shot('e2e-composer-apply-confirm');
      await dialog.getByRole('button', { name: 'Apply', exact: true }).click({ timeout: 5_000 });
      await h.waitFor('src/square.ts written', 15_000, async () => fs.existsSync(file) && fs.readFileSync(file, 'utf8') === `${CODE}\n`, 100);
      await toast(p, 'Applied the code block to src/square.ts').waitFor({ state: 'visible', timeout: 10_000 });
    });

    // ---- 8. Find in the thread (Ctrl+F inside the chat webview, as a user presses it)
    await check(COMPOSER_CHECKS.find, async () => {
      requireState('highlighted');
      const view = await sidebar();
      await composer(view).click({ timeout: 10_000 });
      await p.keyboard.press('Control+f');
      const bar = view.locator('.find-bar');
      await bar.waitFor({ state: 'visible', timeout: 10_000 });
      const count = bar.locator('.find-count');
      // "square": in the prompt "Write a square function" and in the answer's code block.
      await bar.locator('.find-input').fill('square');
      await h.waitFor('find to count its matches', 10_000, async () => /^1\/\d+$/.test((await count.innerText()).trim()));
      const first = (await count.innerText()).trim();
      const total = Number(first.split('/')[1]);
      assert(total >= 2, `find counts ${first}: expected "square" in the prompt and the answer`);
      await bar.locator('.find-input').press('Enter');
      await h.waitFor('Enter to step to match 2', 10_000, async () => (await count.innerText()).trim() === `2/${total}`);
      await bar.locator('.find-input').press('Escape');
      await bar.waitFor({ state: 'detached', timeout: 10_000 });
    });

    // ---- 9. The draft survives hide / show
    await check(COMPOSER_CHECKS.draft, async () => {
      requireState('highlighted');
      let view = await sidebar();
      const area = composer(view);
      await area.click({ timeout: 10_000 });
      await area.fill('');
      await area.pressSequentially('look at @math');
      const row = view.locator('#vox-mention-popup [role="option"]', { hasText: 'math.js' }).first();
      await row.waitFor({ timeout: 20_000 });
      await area.press('Enter');
      const chips = (v: Frame) => v.locator('.composer .chips .chip .label').allInnerTexts();
      await h.waitFor('the @file chip', 10_000, async () => (await chips(view)).join() === 'src/math.js');
      await area.pressSequentially('please');
      await area.press('Home');
      await area.press('ArrowRight');
      const text = await area.inputValue();
      await view.evaluate('window.__voxE2eMark = "before-hide"');
      await h.runCommand(p, 'View: Show Explorer');
      await h.waitFor('the chat webview to be destroyed while hidden', 10_000, async () => view.isDetached() || (await h.findWebviews(p, VOX_WEBVIEW, { within: '.part.sidebar' })).length === 0);
      await h.runCommand(p, 'Vox: Focus on Chat View');
      view = await sidebar();
      assert((await view.evaluate('window.__voxE2eMark ?? null')) === null, 'the chat webview kept its document while hidden: hide/show was not tested');
      await h.waitFor('the draft back', 15_000, async () => (await composer(view).inputValue().catch(() => '')) === text);
      assert((await chips(view)).join() === 'src/math.js', `the chips after show: ${JSON.stringify(await chips(view))}`);
      const caret = await composer(view).evaluate((el) => (el as unknown as { selectionStart: number }).selectionStart);
      assert(caret === 1, `the caret came back at ${caret}, not 1`);
      await shot('e2e-composer-draft-kept');
      // Leave an empty composer for what follows.
      await view.locator('.composer .chip .remove').first().click({ timeout: 5_000 });
      await composer(view).fill('');
    });

    // ---- 10. Room to work: the chat alone in the Vox side bar
    await check(COMPOSER_CHECKS.room, async () => {
      requireState('highlighted');
      const headers = await p.locator('.part.sidebar .pane-header').allInnerTexts();
      assert(!headers.some((t) => /Vox Rules/i.test(t)), `the Vox side bar still has ${JSON.stringify(headers)}`);
      const view = await sidebar();
      const [list, whole] = await view.evaluate(() => {
        const d = (globalThis as unknown as { document: { querySelector(s: string): { clientHeight: number } | null }; innerHeight: number });
        return [d.document.querySelector('.scroller')?.clientHeight ?? 0, d.innerHeight];
      });
      assert(list >= MIN_LIST_SHARE * whole, `the message list is ${list} px of a ${whole} px view (< ${MIN_LIST_SHARE * 100}%)`);
      await shot('e2e-composer-room');
    });

    await o.check(COMPOSER_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-composer-recall', 'e2e-composer-inserted', 'e2e-composer-apply-confirm'], README);
    }, p);
  },
});
