/**
 * UI end to end of the conversation tree in a real VS Code (code-server
 * + Chromium, own session with a fresh profile on the sample workspace), with the offline demo
 * model and the scripted OpenAI-compatible server as `openai:gpt-e2e`. Called by
 * test/e2e/run-e2e.mjs (pass 1, UI set `branches`); each check is one named, counted check:
 *   1. the chat view opens on the demo model; the OpenAI key goes in through "Vox: Set API Key";
 *   2. a prompt answered by the demo model is regenerated with ANOTHER model picked in the
 *      answer's "Regenerate with…" dropdown: the scripted server gets the same prompt for
 *      gpt-e2e (without the old answer) and its answer shows, under ‹ 2/2 ›;
 *   3. ‹ shows the demo model's answer again (1/2), › the scripted one (2/2);
 *   4. "Compare branches" opens an editor tab with two columns (nothing shared: the branches
 *      part at the root; the open one first) and the diff of the final answers; "Vox: Compare
 *      Branches" from the palette (thread picked) opens it too;
 *   5. the scripted answer edited in place (Edit → Ctrl+Enter) shows the new text and "edited";
 *      after "Developer: Reload Window" it still does;
 *   6. screenshots: docs/screenshot-branches.png and docs/screenshot-compare.png with
 *      --update-screenshot.
 */
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { EDITOR } from './ui-chat-context';
import { runState, watch } from './ui-chat-stream';
import { assert, checkScreenshots, readmePicture, VOX_WEBVIEW } from './ui-session';
import { sendInNewThread, setApiKey, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const BRANCH_CHECKS = {
  view: 'branches UI: the chat opens on the demo model; the OpenAI key through "Vox: Set API Key"',
  regenerate: 'branches UI: a demo answer regenerated with another model from the dropdown (the server gets the same prompt for gpt-e2e); ‹ 2/2 ›',
  switch: 'branches UI: ‹ shows the demo answer again (1/2), › the regenerated one (2/2)',
  compare: 'branches UI: "Compare branches" (chat, then palette) opens an editor tab with a column per branch and the final answers\' diff',
  edit: 'branches UI: an answer edited in place shows the new text and "edited", also after "Developer: Reload Window"',
  screenshots: 'branches UI: screenshots in test-results/ and the README pictures',
} as const;

const OPENAI_MODEL = 'openai:gpt-e2e';
const API_KEY = 'sk-e2e-branches-0123456789';
const PROMPT = 'Name a colour';
const SCRIPTED = 'Teal: a blue-green, like shallow sea water.';
const EDITED = 'Teal, edited by hand: blue-green.';
const README_BRANCHES = readmePicture('screenshot-branches', 250 * 1024);
const README_COMPARE = readmePicture('screenshot-compare', 250 * 1024);

/** The open branch's last answer (text), the switcher's position and whether the answer shows "edited". */
async function branchState(view: Frame): Promise<{ text: string; position: string | null; edited: boolean; status: string | null }> {
  const s = await runState(view);
  const position = await view.locator('.prompt-actions .branch-switcher .position').last().innerText({ timeout: 500 }).catch(() => null);
  const edited = (await view.locator('article.run').last().locator('.message-actions .edited').count()) > 0;
  return { text: s.text, position, edited, status: s.status };
}

async function waitBranch(view: Frame, what: string, ok: (s: Awaited<ReturnType<typeof branchState>>) => boolean, ms = 20_000): Promise<Awaited<ReturnType<typeof branchState>>> {
  let last: Awaited<ReturnType<typeof branchState>> | undefined;
  try {
    await h.waitFor(what, ms, async () => ok((last = await branchState(view))), 100);
  } catch {
    throw new Error(`timed out waiting for ${what}; the view shows ${JSON.stringify(last)}`);
  }
  return last!;
}

export const runBranchChecks = defineUiSet({
  name: 'branches UI',
  dir: 'branches',
  checks: BRANCH_CHECKS,
  state: { view: false, regenerated: false, edited: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': 'local:demo', 'vox.models': [OPENAI_MODEL], 'vox.openaiBaseUrl': fake.baseUrl }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk }) => {
    /** The demo model's answer, as shown before the regenerate. */
    let demoAnswer = '';

    // ---- 1. The view; the key
    await check(BRANCH_CHECKS.view, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      const picked = await view.locator('.model-row select').inputValue({ timeout: 20_000 });
      assert(picked === 'local:demo', `the picker shows ${picked}, expected local:demo`);
      await setApiKey(p, 'openai', API_KEY, { listed: 'anthropic' });
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      state.view = true;
    });

    // ---- 2. The demo answers; regenerate with gpt-e2e from the dropdown
    await check(BRANCH_CHECKS.regenerate, async () => {
      requireState('view');
      const view = await sidebar();
      await sendInNewThread(view, PROMPT);
      const done = await watch(view, 'the demo answer', 120_000, (s) => s.runs === 1 && s.status !== null && s.status !== 'running', 100);
      const first = done[done.length - 1]!;
      assert(first.status === 'completed' && first.text.trim().length > 0, `the demo run ended ${first.status} with ${JSON.stringify(first.text.slice(0, 80))}`);
      demoAnswer = first.text;
      const before = fk.requests.length;
      fk.push(textTurn(SCRIPTED.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`)), { eventDelayMs: 10 }));
      const select = view.locator('article.run').last().locator('select.rerun-model');
      await select.selectOption(OPENAI_MODEL, { timeout: 10_000 });
      const s = await waitBranch(view, 'the regenerated answer under 2/2', (b) => b.text === SCRIPTED && b.status === 'completed' && b.position === '2/2', 60_000);
      assert(!s.edited, 'a fresh answer says "edited"');
      const reqs = fk.requests.slice(before).filter((r) => r.method === 'POST');
      assert(reqs.length === 1, `expected one model request, got ${reqs.length}`);
      assert(reqs[0]!.body?.model === 'gpt-e2e', `the regenerate asked for ${JSON.stringify(reqs[0]!.body?.model)}`);
      assert(reqs[0]!.headers.authorization === `Bearer ${API_KEY}`, 'the regenerate did not carry the key set through the palette');
      const msgs = (reqs[0]!.body?.messages ?? []) as { role: string; content: unknown }[];
      const users = msgs.filter((m) => m.role === 'user').map((m) => String(m.content));
      assert(users.length === 1 && users[0] === PROMPT, `the regenerated request's prompts: ${JSON.stringify(users)}`);
      assert(!msgs.some((m) => m.role === 'assistant'), 'the old answer went along with the regenerate');
      const shown = await view.locator('.message.user .plain').allInnerTexts();
      assert(shown.length === 1 && shown[0] === PROMPT, `the open branch shows prompts ${JSON.stringify(shown)}`);
      state.regenerated = true;
    });

    // ---- 3. ‹ and ›
    await check(BRANCH_CHECKS.switch, async () => {
      requireState('regenerated');
      const view = await sidebar();
      await view.locator('.prompt-actions .prev').click({ timeout: 10_000 });
      await waitBranch(view, 'the demo answer under 1/2', (b) => b.text === demoAnswer && b.position === '1/2');
      await shot('e2e-branches-first');
      await view.locator('.prompt-actions .next').click({ timeout: 10_000 });
      await waitBranch(view, 'the regenerated answer under 2/2', (b) => b.text === SCRIPTED && b.position === '2/2');
    });

    // ---- 4. The compare tab
    await check(BRANCH_CHECKS.compare, async () => {
      requireState('regenerated');
      const view = await sidebar();
      await view.locator('.prompt-actions .compare').click({ timeout: 10_000 });
      await p.locator('.part.editor .tab', { hasText: 'Compare:' }).first().waitFor({ timeout: 20_000 });
      const tab = (await h.waitForWebview(p, VOX_WEBVIEW, { within: EDITOR, timeoutMs: 20_000, retries: 2 })).content;
      await tab.locator('.columns .column').nth(1).waitFor({ timeout: 20_000 });
      const columns = await tab.locator('.columns .column').count();
      assert(columns === 2, `the compare tab shows ${columns} columns`);
      const texts = await tab.locator('.column .cmp-message.assistant .markdown').allInnerTexts();
      assert(texts.some((t) => t.trim() === SCRIPTED), `the columns' answers: ${JSON.stringify(texts)}`);
      const heads = await tab.locator('.column h2').allInnerTexts();
      assert(heads.some((x) => /\(open\)$/.test(x)), `no column is marked open: ${JSON.stringify(heads)}`);
      // The open branch is the first column; the other's final answer is diffed against it.
      const changed = await tab.locator('.diff-text .add, .diff-text .del').allInnerTexts();
      assert(changed.some((l) => l.includes('Teal')), `the final answers' diff changes ${JSON.stringify(changed)}`);
      await shot('e2e-compare');
      await shot(README_COMPARE.shot);
      await h.runCommand(p, 'View: Close All Editors').catch(() => {});
      // The same from the palette: pick the thread, the tab opens again.
      await h.runCommand(p, 'Vox: Compare Branches', 30_000, { opensQuickInput: true });
      await p.locator('.quick-input-widget .quick-input-list .label-name', { hasText: PROMPT }).first().waitFor({ timeout: 15_000 });
      await h.answerQuickInput(p, PROMPT);
      const again = (await h.waitForWebview(p, VOX_WEBVIEW, { within: EDITOR, timeoutMs: 20_000, retries: 2 })).content;
      await again.locator('.columns .column').nth(1).waitFor({ timeout: 20_000 });
      await h.runCommand(p, 'View: Close All Editors').catch(() => {});
    });

    // ---- 5. Edit the answer in place; still edited after a reload
    await check(BRANCH_CHECKS.edit, async () => {
      requireState('regenerated');
      let view = await sidebar();
      await waitBranch(view, 'the regenerated answer', (b) => b.text === SCRIPTED);
      const run = view.locator('article.run').last();
      await run.locator('.message-actions .edit-answer').click({ timeout: 10_000 });
      const area = view.locator('.message-editor[data-mode="save"] vscode-textarea textarea');
      await area.fill(EDITED, { timeout: 10_000 });
      await area.press('Control+Enter');
      await waitBranch(view, 'the edited answer marked "edited"', (b) => b.text === EDITED && b.edited && b.position === '2/2');
      state.edited = true;
      await shot('e2e-branches-edited');
      await shot(README_BRANCHES.shot);
      await p.evaluate('window.__voxBeforeReload = true');
      await h.runCommand(p, 'Developer: Reload Window');
      await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
      await h.waitForWorkbench(p);
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      view = await sidebar();
      // The view restores its open thread; if it starts on the thread list, open the thread.
      const opened = await waitBranch(view, 'the thread back after the reload', (b) => b.text.length > 0, 20_000).catch(() => null);
      if (!opened) await view.locator('ul.threads button.open').first().click({ timeout: 20_000 });
      await waitBranch(view, 'the edited answer still "edited" after the reload', (b) => b.text === EDITED && b.edited && b.position === '2/2', 30_000);
      await shot('e2e-branches-after-reload');
    });

    await o.check(BRANCH_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-branches-first', 'e2e-compare', 'e2e-branches-edited', 'e2e-branches-after-reload'], [README_BRANCHES, README_COMPARE]);
    }, p);
  },
});

