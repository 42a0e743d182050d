/**
 * UI end to end of partial compaction (SPEC 3.7) in a real VS Code (code-server
 * + Chromium, own session with a fresh profile on the sample workspace), with the scripted
 * OpenAI-compatible server as `openai:gpt-e2e`. Called by test/e2e/run-e2e.mjs (pass 1, UI set
 * `compact`); each check is one named, counted check:
 *   1. the chat view opens on the scripted model; the OpenAI key goes in through "Vox: Set API Key";
 *   2. two turns answered; `/compact` typed as the whole prompt asks the server for the summary
 *      (both prompts in its transcript, no tools) instead of sending a prompt, and the chat shows
 *      "Context compacted up to here" below the last answer, the raw messages above still shown;
 *   3. the next prompt's request carries the summary in place of the earlier messages;
 *   4. screenshots: docs/screenshot-compact.png with --update-screenshot.
 */
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { watch } from './ui-chat-stream';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { collapsePane, sendInNewThread, setApiKey, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const COMPACT_CHECKS = {
  view: 'compact UI: the chat opens on the scripted model; the OpenAI key through "Vox: Set API Key"',
  compact: 'compact UI: /compact asks the model for the summary and the chat shows "Context compacted up to here" with the messages above still shown',
  next: 'compact UI: the next prompt\'s request carries the summary in place of the earlier messages',
  screenshots: 'compact UI: screenshots in test-results/ and the README picture',
} as const;

const OPENAI_MODEL = 'openai:gpt-e2e';
const API_KEY = 'sk-e2e-compact-0123456789';
const PROMPTS = ['Which file holds the lexer?', 'Make its tokens carry spans', 'Now add a test for spans'];
const ANSWERS = ['The lexer lives in src/lexer.ts.', 'Done: every token now has a start and end offset.', 'Added test/lexer.test.ts with three span cases.'];
const SUMMARY = [
  '## Goal', 'Tokens of the lexer carry source spans.', '', '## Decisions', '- Spans are start/end offsets on each token.', '',
  '## Files touched', '- src/lexer.ts: tokens carry spans', '', '## Open items', '- A test for spans.',
].join('\n');
const README = readmePicture('screenshot-compact', 250 * 1024);

const words = (s: string) => s.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`));

export const runCompactChecks = defineUiSet({
  name: 'compact UI',
  dir: 'compact',
  checks: COMPACT_CHECKS,
  state: { view: false, compacted: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': OPENAI_MODEL, 'vox.models': [OPENAI_MODEL], 'vox.openaiBaseUrl': fake.baseUrl }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk }) => {
    const posts = () => fk.requests.filter((r) => r.method === 'POST');
    const type = async (view: Frame, text: string) => {
      const area = view.locator('vscode-textarea textarea');
      await area.fill(text, { timeout: 10_000 });
      await area.press('Enter');
    };

    await check(COMPACT_CHECKS.view, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      await collapsePane(p, 'Vox Rules').catch(() => {}); // cosmetic: the chat gets the side bar's height
      const view = await sidebar();
      await setApiKey(p, 'openai', API_KEY, { listed: 'anthropic' });
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      const picked = await view.locator('.model-row select').inputValue({ timeout: 20_000 });
      assert(picked === OPENAI_MODEL, `the picker shows ${picked}, expected ${OPENAI_MODEL}`);
      state.view = true;
    });

    await check(COMPACT_CHECKS.compact, async () => {
      requireState('view');
      const view = await sidebar();
      fk.push(textTurn(words(ANSWERS[0]!), { eventDelayMs: 5 }));
      await sendInNewThread(view, PROMPTS[0]!);
      await watch(view, 'the first answer', 60_000, (s) => s.runs === 1 && s.status === 'completed' && s.text === ANSWERS[0], 100);
      fk.push(textTurn(words(ANSWERS[1]!), { eventDelayMs: 5 }));
      await type(view, PROMPTS[1]!);
      await watch(view, 'the second answer', 60_000, (s) => s.runs === 2 && s.status === 'completed' && s.text === ANSWERS[1], 100);
      const before = posts().length;
      fk.push(textTurn(words(SUMMARY)));
      await type(view, '/compact');
      const note = view.locator('details.compaction-note');
      await note.waitFor({ timeout: 30_000 });
      const label = await note.locator('summary').innerText();
      assert(label.startsWith('Context compacted up to here'), `the note says ${JSON.stringify(label)}`);
      assert(/4 messages/.test(label), `the note does not count the four messages: ${JSON.stringify(label)}`);
      const asked = posts().slice(before);
      assert(asked.length === 1, `expected one summary request, got ${asked.length}`);
      const body = JSON.stringify(asked[0]!.body?.messages ?? []);
      assert(PROMPTS.slice(0, 2).every((x) => body.includes(x)) && body.includes('## Open items'), 'the summary request does not carry the transcript and the shape');
      assert(asked[0]!.body?.tools === undefined, 'the summary request offered tools');
      const shown = await view.locator('.message.user .plain').allInnerTexts();
      assert(PROMPTS.slice(0, 2).every((x) => shown.includes(x)), `the prompts above the note: ${JSON.stringify(shown)}`);
      const draft = await view.locator('vscode-textarea textarea').inputValue();
      assert(draft === '', `"/compact" stayed in the composer: ${JSON.stringify(draft)}`);
      state.compacted = true;
      await shot('e2e-compact');
      await shot(README.shot);
      await note.locator('summary').click();
      await note.locator('.summary-text').waitFor({ timeout: 5_000 });
      const text = await note.locator('.summary-text').innerText();
      assert(text.includes('## Decisions') && text.includes('src/lexer.ts'), `the opened note shows ${JSON.stringify(text.slice(0, 120))}`);
      await shot('e2e-compact-summary');
      await note.locator('summary').click();
    });

    await check(COMPACT_CHECKS.next, async () => {
      requireState('compacted');
      const view = await sidebar();
      const before = posts().length;
      fk.push(textTurn(words(ANSWERS[2]!), { eventDelayMs: 5 }));
      await type(view, PROMPTS[2]!);
      await watch(view, 'the third answer', 60_000, (s) => s.runs === 3 && s.status === 'completed' && s.text === ANSWERS[2], 100);
      const req = posts().slice(before)[0];
      const msgs = ((req?.body?.messages ?? []) as { role: string; content: unknown }[]).map((m) => ({ role: m.role, content: String(m.content) }));
      assert(msgs.length === 3, `the request has ${msgs.length} messages: ${JSON.stringify(msgs.map((m) => m.role))}`);
      assert(msgs[1]!.role === 'user' && msgs[1]!.content.startsWith('<compacted_context messages="4">') && msgs[1]!.content.includes(SUMMARY), 'the summary is not the second message');
      assert(msgs[2]!.content === PROMPTS[2], `the prompt is ${JSON.stringify(msgs[2]!.content)}`);
      assert(!msgs.some((m) => m.content.includes(ANSWERS[0]!)), 'an earlier answer went along');
      await shot('e2e-compact-next');
    });

    await o.check(COMPACT_CHECKS.screenshots, async () => {
      checkScreenshots(o, shots, ['e2e-compact', 'e2e-compact-summary', 'e2e-compact-next'], [README]);
    }, p);
  },
});
