/**
 * UI end to end of the context sanitiser and the handoff across models
 * in a real VS Code (code-server + Chromium, own session with a fresh profile on the sample
 * workspace), two models `compat:sanitize-a` and `compat:sanitize-b` on one scripted
 * OpenAI-compatible server on 127.0.0.1. Called by test/e2e/run-e2e.mjs (`--set sanitize`); each
 * check is one named, counted check there:
 *   1. think tags: model a streams `<think>…</think>\n\nTeal.` cut inside both tags; the answer
 *      shows "Teal." only and the thinking is in the run's reasoning block;
 *   2. handoff: model b picked in the chat's model picker; the next request starts with the
 *      `<context_handoff covered_runs="0..0" source_model="compat:sanitize-a" …>` block before the
 *      prompt and has no think block; the chat shows "Context handed off from compat:sanitize-a:
 *      1 turn verbatim, 0 compacted, 0 left out" above the answer;
 *   3. after "Developer: Reload Window" the note is still there;
 *   4. screenshots (docs/screenshot-sanitize-e2e.png with --update-screenshot).
 */
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { SIDEBAR } from './ui-chat-context';
import { runState, watch } from './ui-chat-stream';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { sendInNewThread, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const SANITIZE_CHECKS = {
  think: 'sanitize UI: inline <think> streamed in chunks shows in the reasoning block, the answer shows only the answer',
  handoff: 'sanitize UI: another model picked: its request starts with the <context_handoff> block, no think block; the chat shows the handoff note',
  reload: 'sanitize UI: the handoff note is still there after "Developer: Reload Window"',
  screenshots: 'sanitize UI: screenshots in test-results/ and the README picture',
} as const;

const MODEL_A = 'compat:sanitize-a';
const MODEL_B = 'compat:sanitize-b';
const THINKING = 'The user wants one colour name.';
const ANSWER = 'Teal.';
const NOTE = `Context handed off from ${MODEL_A}: 1 turn verbatim, 0 compacted, 0 left out`;
const README = readmePicture('screenshot-sanitize-e2e', 250 * 1024);

export const runSanitizeChecks = defineUiSet({
  name: 'sanitize UI',
  dir: 'sanitize',
  checks: SANITIZE_CHECKS,
  state: { answered: false, handedOff: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': MODEL_A, 'vox.models': [MODEL_A, MODEL_B], 'vox.compatBaseUrl': fake.baseUrl, 'vox.approval': { read: 'auto', write: 'auto', execute: 'auto' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk }) => {
    const note = (view: Frame) => view.locator('article.run .handoff-note summary');

    // ---- 1. Inline thinking → the reasoning block
    await check(SANITIZE_CHECKS.think, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      fk.push(textTurn(['<thi', `nk>${THINKING.slice(0, 12)}`, `${THINKING.slice(12)}</th`, `ink>\n\n${ANSWER}`], { eventDelayMs: 20 }));
      await sendInNewThread(view, 'Name a colour');
      const done = await watch(view, 'the answer', 60_000, (s) => s.runs === 1 && s.status !== null && s.status !== 'running', 100);
      const last = done[done.length - 1]!;
      assert(last.status === 'completed', `the run ended ${last.status}`);
      const answer = (await view.locator('[data-role="assistant"]').last().innerText()).trim();
      assert(answer === ANSWER, `the answer shows ${JSON.stringify(answer)}`);
      // The block is collapsed: its text is in the DOM, not rendered.
      const reasoning = (await view.locator('article.run').last().locator('details.reasoning .text').textContent({ timeout: 10_000 })) ?? '';
      assert(reasoning.includes(THINKING), `the reasoning block shows ${JSON.stringify(reasoning.slice(0, 200))}`);
      await shot('e2e-sanitize-think');
      state.answered = true;
    });

    // ---- 2. Another model: the handoff block and the note
    await check(SANITIZE_CHECKS.handoff, async () => {
      requireState('answered');
      const view = await sidebar();
      await view.locator('.model-row select').selectOption(MODEL_B, { timeout: 10_000 });
      await h.waitFor('the picker on model b', 10_000, async () => (await view.locator('.model-row select').inputValue()) === MODEL_B, 100);
      const before = fk.requests.length;
      fk.push(textTurn(['Teal ', 'again, from b.']));
      await view.locator('vscode-textarea textarea').fill('Are you sure?', { timeout: 10_000 });
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await h.waitFor('the scripted server to get the second prompt', 30_000, async () => fk.requests.length > before, 200);
      const req = fk.requests[before]!;
      assert(req.body?.model === 'sanitize-b', `the request went to ${String(req.body?.model)}`);
      const messages = req.body?.messages as { role: string; content: string }[];
      const lastMsg = messages.at(-1)!;
      assert(lastMsg.role === 'user' && lastMsg.content.startsWith(`<context_handoff covered_runs="0..0" source_model="${MODEL_A}" strategy="deltaSinceTargetLastSeen">\n`), `the prompt is ${JSON.stringify(lastMsg.content.slice(0, 160))}`);
      assert(lastMsg.content.endsWith('</context_handoff>\n\nAre you sure?'), `the prompt ends ${JSON.stringify(lastMsg.content.slice(-80))}`);
      assert(!JSON.stringify(messages).includes('<think>') && !JSON.stringify(messages).includes(THINKING), 'the thinking was sent back');
      await note(view).waitFor({ timeout: 20_000 });
      const text = (await note(view).innerText()).trim();
      assert(text === NOTE, `the note reads ${JSON.stringify(text)}`);
      await h.waitFor('the answer from b', 30_000, async () => (await view.locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes('from b'), 200);
      // The picture: the chat with room (the Vox Rules view collapsed), the note and both answers in view.
      const rules = p.locator(`${SIDEBAR} .pane-header`, { hasText: 'Vox Rules' }).first();
      if ((await rules.getAttribute('aria-expanded').catch(() => null)) === 'true') await rules.click().catch(() => {});
      await view.locator('article.run').first().scrollIntoViewIfNeeded().catch(() => {});
      await note(view).click();
      await shot(README.shot);
      await shot('e2e-sanitize-handoff');
      state.handedOff = true;
    });

    // ---- 3. After a reload
    await check(SANITIZE_CHECKS.reload, async () => {
      requireState('handedOff');
      await p.evaluate('window.__voxBeforeReload = true');
      await h.runCommand(p, 'Developer: Reload Window');
      await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
      await h.waitForWorkbench(p);
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      const view = await sidebar();
      const back = await h.waitFor('the thread back', 20_000, async () => (await runState(view)).runs === 2, 200).then(() => true, () => false);
      if (!back) await view.locator('ul.threads button.open').first().click({ timeout: 20_000 });
      await note(view).waitFor({ timeout: 30_000 });
      const text = (await note(view).innerText()).trim();
      assert(text === NOTE, `after the reload the note reads ${JSON.stringify(text)}`);
      await shot('e2e-sanitize-after-reload');
    });

    await o.check(SANITIZE_CHECKS.screenshots, async () => {
      requireState('handedOff');
      checkScreenshots(o, shots, ['e2e-sanitize-think', 'e2e-sanitize-handoff', 'e2e-sanitize-after-reload'], README);
    }, p);
  },
});
