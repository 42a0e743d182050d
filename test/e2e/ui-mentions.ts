/**
 * @-mentions and the context meter in the real chat, in the chat UI session's
 * side bar after the command-output check (the API key and `openai:gpt-e2e` already picked; the
 * sample workspace has src/math.js): typing `@math` in the composer lists the workspace file
 * src/math.js (the engine's suggestMentions over ripgrep's listing), Enter adds it as a chip with
 * its size in tokens, the meter shows "N / …" or "N tokens"; a second `@` opens the popup again
 * (screenshot, the README picture docs/screenshot-mentions.png); Escape closes it; Send: the
 * request the scripted model gets carries the file's text in the prompt's context block, the
 * chips are gone from the composer, and the sent message shows the prompt with its chip.
 */
import { textTurn } from '../support/fake-openai-server';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { assert, checkScreenshots, readmePicture, type UiSession } from './ui-session';

export const MENTION_CHECKS = {
  mentions: 'chat UI: typing @ in the composer lists a workspace file, choosing it adds a chip with its tokens, the prompt sent carries the file',
} as const;

/** The README picture: the popup open above a chip and the meter. */
export const MENTIONS_README = readmePicture('screenshot-mentions', 250 * 1024);

const PROMPT_START = 'Mentions: explain ';
const FILE = 'src/math.js';
const ANSWER = 'It adds two numbers.';

export async function runMentionsCheck(c: ChatContext, session: UiSession, names = MENTION_CHECKS): Promise<void> {
  const { o, timed, page: p, fake: fk, requireState, sidebar, scripted, shot } = c;
  await o.check(names.mentions, () =>
    timed(names.mentions, () => {
      requireState('view', 'model');
      return scripted([textTurn(words(ANSWER), { eventDelayMs: 10 })], async () => {
        const before = fk.requests.length;
        const view = await sidebar();
        await view.locator('vscode-button.new-thread').click({ timeout: 10_000 });
        await view.locator('section.empty').waitFor({ timeout: 10_000 });
        const area = view.locator('vscode-textarea textarea');
        await area.click();
        await area.pressSequentially(`${PROMPT_START}@math`);
        const row = view.locator('#vox-mention-popup [role="option"]', { hasText: FILE });
        await row.first().waitFor({ timeout: 15_000 });
        await area.press('Enter');
        await view.locator('#vox-mention-popup').waitFor({ state: 'detached', timeout: 10_000 });
        const value = await area.inputValue();
        assert(value === `${PROMPT_START}@${FILE} `, `the draft is ${JSON.stringify(value)}`);
        const chip = view.locator('.composer .chip', { hasText: FILE });
        await chip.locator('.tokens').waitFor({ timeout: 15_000 });
        const tokens = (await chip.locator('.tokens').innerText()).trim();
        assert(/^\d+(\.\d+)?k?$/.test(tokens) && tokens !== '0', `the chip shows ${JSON.stringify(tokens)} tokens`);
        const meter = (await view.locator('.meter .figure').innerText({ timeout: 15_000 })).trim();
        assert(/^\d+(\.\d+)?k?( \/ \d+(\.\d+)?k?| tokens)$/.test(meter), `the meter shows ${JSON.stringify(meter)}`);
        // The popup again, for the picture: specials and files for a bare @.
        await area.pressSequentially('@');
        await view.locator('#vox-mention-popup [role="option"]').first().waitFor({ timeout: 15_000 });
        await shot(MENTIONS_README.shot);
        await shot('e2e-mentions');
        await area.press('Escape');
        await view.locator('#vox-mention-popup').waitFor({ state: 'detached', timeout: 10_000 });
        await area.press('Backspace'); // the bare @
        await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
        const samples = await watch(view, 'the mention turn to end', 30_000, (s) => s.status === 'completed');
        assert(samples[samples.length - 1]!.text.includes(ANSWER), 'the answer did not render');
        const req = fk.requests[before];
        const last = (req?.body?.messages as { role: string; content: string }[] | undefined)?.at(-1);
        assert(last?.role === 'user' && last.content.startsWith(`${PROMPT_START}@${FILE}`), `the request's prompt is ${JSON.stringify(last?.content?.slice(0, 80))}`);
        assert(last.content.includes(`<context kind="file" label="${FILE}">`) && last.content.includes('export function add(a, b)'), 'the request does not carry src/math.js');
        assert((await view.locator('.composer .chip').count()) === 0, 'the chips stayed in the composer after sending');
        const sent = view.locator('[data-role="user"]').last();
        assert((await sent.locator('.chip', { hasText: FILE }).count()) === 1, 'the sent message does not show its chip');
        assert(!(await sent.innerText()).includes('export function add'), 'the sent message shows the attached file as text');
        await shot('e2e-mentions-sent');
        // The pictures exist, are PNGs, the README one is small; --update-screenshot copies it to docs/.
        checkScreenshots(o, session.shots, ['e2e-mentions', 'e2e-mentions-sent'], MENTIONS_README);
      });
    }), p);
}
