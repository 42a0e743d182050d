/**
 * Edit review in the real VS Code, in the chat UI session after the command
 * output check (write approval "ask", the sample git workspace): two named, counted checks.
 *   1. The scripted model calls write_file on src/math.js changing two distant lines. While the
 *      call waits for approval, a diff editor opens by itself, titled "math.js (Vox write_file —
 *      waiting for approval)", with the file now on the left and the proposed content on the
 *      right; screenshot test-results/e2e-review-diff.png (the README picture,
 *      docs/screenshot-review.png with --update-screenshot). "Accept Edit" in the diff's title
 *      bar approves it: the file on disk is the proposed content byte for byte, the diff closes,
 *      the turn completes.
 *   2. "Vox: Review Changes" from the palette offers the threads with changes (this one first),
 *      then lists src/math.js; choosing it opens its diff
 *      (before the turn ↔ now) and the hunk picker; "Undo hunk 1" puts the first changed line
 *      back: the file is exactly the original with only the second change, byte for byte.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import * as h from './harness';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { assert, uiDirs } from './ui-session';
import { exactly, waitForEditorTab } from './ui-workbench';

export const REVIEW_CHECKS = {
  reviewDiff: 'review UI: a waiting write_file opens a diff editor (file ↔ proposed), "Accept Edit" in its title bar writes exactly the proposed content',
  reviewHunk: 'review UI: "Vox: Review Changes" → src/math.js → "Undo hunk 1" puts the first change back, the file is exact',
} as const;

/** The README picture of the review (the diff of a waiting edit). */
export const REVIEW_DOCS_SCREENSHOT = path.join(h.REPO_ROOT, 'docs', 'screenshot-review.png');
/** Largest README picture accepted. */
const REVIEW_README_MAX_BYTES = 300 * 1024;

const PROMPT = 'Review: make math.js clearer';
const FILE = path.join('src', 'math.js');
const ANSWER = 'I changed two lines of math.js.';
const CHANGE_1: [string, string] = ['// Small helpers for Vox to read and edit.', '// Small helpers, reviewed in the diff editor.'];
const CHANGE_2: [string, string] = ['  if (values.length === 0) return NaN;', '  if (values.length === 0) return Number.NaN;'];

/**
 * Waits for the open diff editor to show every one of `texts` (old and new lines). The side bar
 * is wide here, so VS Code may render the diff inline (deleted lines as view zones of the
 * modified editor) instead of side by side: the whole diff editor's text is read.
 */
async function waitForDiffShowing(p: import('playwright-core').Page, texts: string[], what: string): Promise<void> {
  const diff = p.locator('.part.editor .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible', timeout: 20_000 });
  let shown = '';
  await h.waitFor(what, 20_000, async () => {
    shown = (await diff.innerText({ timeout: 2_000 }).catch(() => '')).replace(/\u00a0/g, ' ');
    return texts.every((t) => shown.includes(t));
  }, 200).catch(() => {
    throw new Error(`the diff editor shows ${JSON.stringify(shown)}, expected ${what}: ${JSON.stringify(texts)}`);
  });
}

/** The editor title bar's action `label` of the active editor group. */
function titleAction(p: import('playwright-core').Page, label: string): import('playwright-core').Locator {
  return p.locator(`.part.editor .editor-group-container.active .action-label[aria-label^="${label}"]`).first();
}

export async function runReviewChecks(c: ChatContext, names = REVIEW_CHECKS): Promise<void> {
  const { o, timed, page: p, requireState, sidebar, scripted, send } = c;
  const file = path.join(uiDirs(o, 'chat').workspace, FILE);
  let original = '';
  let proposed = '';
  let accepted = false;
  await o.check(names.reviewDiff, () =>
    timed(names.reviewDiff, async () => {
      requireState('view', 'model');
      original = fs.readFileSync(file, 'latin1');
      assert(original.includes(CHANGE_1[0]) && original.includes(CHANGE_2[0]), `the sample ${FILE} lacks the lines this check changes`);
      proposed = original.replace(CHANGE_1[0], CHANGE_1[1]).replace(CHANGE_2[0], CHANGE_2[1]);
      await h.runCommand(p, 'View: Close All Editors').catch(() => {});
      return scripted([toolCallTurn([{ name: 'write_file', args: { path: 'src/math.js', content: proposed } }]), textTurn(words(ANSWER), { eventDelayMs: 10 })], async () => {
        const view = await sidebar();
        await send(view, PROMPT);
        await waitForEditorTab(p, 'math.js (Vox write_file', 'math.js (Vox write_file — waiting for approval)');
        await waitForDiffShowing(p, [CHANGE_1[0], CHANGE_1[1], CHANGE_2[0], CHANGE_2[1]], 'the file now ↔ the proposed content');
        assert(fs.readFileSync(file, 'latin1') === original, 'the file changed before the edit was accepted');
        const shot = await h.screenshot(p, `${o.shotPrefix ?? ''}e2e-review-diff`);
        const size = fs.statSync(shot).size;
        assert(size <= REVIEW_README_MAX_BYTES, `the review screenshot is ${size} bytes (at most ${REVIEW_README_MAX_BYTES})`);
        if (o.updateDocsScreenshot) fs.copyFileSync(shot, REVIEW_DOCS_SCREENSHOT);
        await titleAction(p, 'Accept Edit').click({ timeout: 10_000 });
        await h.waitFor(`${FILE} to hold the proposed content`, 15_000, async () => fs.readFileSync(file, 'latin1') === proposed, 100);
        const samples = await watch(view, 'the turn to end', 20_000, (s) => s.status !== null && s.status !== 'running');
        assert(samples[samples.length - 1]!.status === 'completed', `the run ended ${samples[samples.length - 1]!.status}`);
        await h.waitFor('the waiting-edit diff to close', 10_000, async () => (await p.locator('.part.editor .tab', { hasText: 'waiting for approval' }).count()) === 0, 100);
        accepted = true;
      });
    }), p);

  await o.check(names.reviewHunk, () =>
    timed(names.reviewHunk, async () => {
      assert(accepted, `not run: an earlier step failed (${names.reviewDiff})`);
      const widget = p.locator('.quick-input-widget');
      const row = (text: string) => widget.locator('.quick-input-list .monaco-list-row', { has: p.locator('.label-name', { hasText: text }) }).first();
      await h.runCommand(p, 'Vox: Review Changes', 30_000, { opensQuickInput: true });
      // Earlier threads of this session changed files too: the thread picker comes first, this thread on top.
      await row(PROMPT).waitFor({ timeout: 15_000 });
      const first = (await widget.locator('.quick-input-list .monaco-list-row .label-name').first().innerText()).trim();
      assert(first === PROMPT, `the thread picker lists "${first}" first, expected the latest thread "${PROMPT}"`);
      await h.answerQuickInput(p, PROMPT);
      await row('src/math.js').waitFor({ timeout: 15_000 });
      await h.answerQuickInput(p, 'math.js');
      await waitForEditorTab(p, 'math.js (before the turn', 'src/math.js (before the turn ↔ now)');
      await waitForDiffShowing(p, [CHANGE_1[0], CHANGE_1[1], CHANGE_2[1]], 'before the turn ↔ now');
      await row('Undo hunk 1').waitFor({ timeout: 15_000 });
      await row('Undo hunk 2').waitFor({ timeout: 5_000 });
      await h.answerQuickInput(p, 'Undo hunk 1');
      const expected = original.replace(CHANGE_2[0], CHANGE_2[1]);
      await h.waitFor(`${FILE} with hunk 1 undone`, 15_000, async () => fs.readFileSync(file, 'latin1') === expected, 100).catch(() => {
        throw new Error(`${FILE} holds ${JSON.stringify(fs.readFileSync(file, 'latin1'))}, expected ${JSON.stringify(expected)}`);
      });
      // The picker comes back with the one hunk left.
      await row('Undo hunk 1').waitFor({ timeout: 15_000 });
      assert((await widget.locator('.quick-input-list .label-name', { hasText: exactly('Undo hunk 2') }).count()) === 0, 'hunk 2 is still offered after hunk 1 was undone');
      await p.keyboard.press('Escape');
      await h.runCommand(p, 'View: Close All Editors').catch(() => {});
    }), p);
}
