/**
 * UI end to end of SPEC 3.2 in a real VS Code (code-server + Chromium, own session with a fresh
 * profile on the sample workspace), the model `compat:refusal-e2e` on a scripted OpenAI-
 * compatible server on 127.0.0.1. Called by test/e2e/run-e2e.mjs (`--set refusal`); each check is
 * one named, counted check there:
 *   1. retry: the model first answers "I can't read files…"; the engine discards that reply and
 *      asks again (the server's second request has no refusal and a reminder naming read_file),
 *      the model calls read_file, then answers; the chat shows a collapsed "Retried after a
 *      refusal" note, the tool card and the answer — and no refusal in the answer;
 *   2. expand: the note opens on click and shows the discarded reply;
 *   3. screenshots (the expanded note: docs/screenshot-refusal-workbench.png with --update-screenshot).
 */
import * as h from './harness';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const REFUSAL_CHECKS = {
  retry: 'refusal UI: a false refusal is discarded and retried once with the tools named; the tool runs; the chat shows a collapsed "Retried after a refusal" note and the answer without the refusal',
  expand: 'refusal UI: the note expands to the discarded reply',
  screenshots: 'refusal UI: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-refusal-workbench', 250 * 1024);
const PROMPT = 'What does src/math.js export?';
const REFUSAL = "I'm sorry, but I can't read files in your workspace.";
const ANSWER = 'It exports add and mean.';

export const runRefusalChecks = defineUiSet({
  name: 'refusal UI',
  dir: 'refusal',
  checks: REFUSAL_CHECKS,
  state: { retried: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': 'compat:refusal-e2e', 'vox.compatBaseUrl': fake.baseUrl, 'vox.approval': { read: 'auto', write: 'ask', execute: 'ask' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk }) => {
    // ---- 1. Refusal, retry, tool, answer
    await check(REFUSAL_CHECKS.retry, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      await area.waitFor({ timeout: 30_000 });
      const before = fk.requests.length;
      fk.push(textTurn(['I\'m sorry, but I can\'t ', 'read files in your workspace.']), toolCallTurn([{ name: 'read_file', args: { path: 'src/math.js' } }]), textTurn(ANSWER));
      await area.click();
      await area.fill(PROMPT);
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await h.waitFor('the three model calls', 60_000, async () => fk.requests.length >= before + 3, 200);
      const second = (fk.requests[before + 1]!.body?.messages ?? []) as { role: string; content: string | null }[];
      assert(!second.some((m) => (m.content ?? '').includes("can't read files")), 'the retry request still carries the refusal');
      const reminder = second.at(-1);
      assert(reminder?.role === 'user' && (reminder.content ?? '').includes('read_file'), `the retry's last message is ${JSON.stringify(reminder).slice(0, 200)}`);
      const third = (fk.requests[before + 2]!.body?.messages ?? []) as { role: string; content: string | null }[];
      assert(third.some((m) => m.role === 'tool' && (m.content ?? '').includes('export')), 'read_file did not run (no tool result in the third request)');
      const run = view.locator('article.run').last();
      await h.waitFor('the answer', 30_000, async () => (await run.locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes(ANSWER), 200);
      const note = run.locator('details.refusal-note');
      await note.waitFor({ timeout: 15_000 });
      assert((await note.locator('summary').innerText()).trim() === 'Retried after a refusal', 'the note\'s summary');
      assert((await note.getAttribute('open')) === null, 'the note is not collapsed');
      await run.locator('section.tool', { hasText: 'read_file' }).first().waitFor({ timeout: 10_000 });
      const answer = (await run.locator('[data-role="assistant"]').allInnerTexts()).join('\n');
      assert(!answer.includes("can't read files"), `the answer shows the refusal: ${JSON.stringify(answer.slice(0, 200))}`);
      await note.scrollIntoViewIfNeeded();
      await shot('e2e-refusal');
      state.retried = true;
    });

    // ---- 2. Expanded
    await check(REFUSAL_CHECKS.expand, async () => {
      requireState('retried');
      const view = await sidebar();
      const note = view.locator('article.run').last().locator('details.refusal-note');
      await note.locator('summary').click({ timeout: 10_000 });
      await h.waitFor('the note to open', 10_000, async () => (await note.getAttribute('open')) !== null, 100);
      const discarded = (await note.locator('.discarded').innerText()).trim();
      assert(discarded === REFUSAL, `the note shows ${JSON.stringify(discarded)}`);
      await note.scrollIntoViewIfNeeded();
      await shot(README.shot);
    });

    await o.check(REFUSAL_CHECKS.screenshots, async () => {
      requireState('retried');
      checkScreenshots(o, shots, ['e2e-refusal'], README);
    }, p);
  },
});
