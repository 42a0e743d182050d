/**
 * Notifications and keys (SPEC: working with the agent) in the real workbench, in the chat UI
 * session after the run-control checks (API key and `openai:gpt-e2e` picked):
 *
 *   a turn whose answer is held after its first word; the side bar switched to the Explorer (no
 *   Vox chat visible); released, the turn ends: a notification "Vox finished "<prompt>" …" with an
 *   Open button appears and the Vox activity-bar icon carries a badge; Open brings the chat back
 *   with the thread, and the badge goes away. Then ArrowUp in the empty composer recalls that
 *   prompt, ArrowDown clears it again.
 *
 * Conditions, not timing: the answer is held by the fake server until the side bar shows the
 * Explorer.
 */
import { textTurn } from '../support/fake-openai-server';
import * as h from './harness';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { toast } from './ui-workbench';
import { assert, checkScreenshots, readmePicture, type UiSession } from './ui-session';

export const ATTENTION_CHECKS = {
  attention: 'notifications: a turn that ends while the chat is hidden notifies with Open and badges the Vox icon; Open shows the thread, the badge goes; ArrowUp recalls the prompt',
} as const;

/** The README picture: the notification over the Explorer, the badge on the Vox icon. */
export const NOTIFY_README = readmePicture('screenshot-notification', 250 * 1024);

const PROMPT = 'Attention: answer while I look elsewhere';
const ANSWER = 'Done while you were in the Explorer.';
/** The SSE event the answer is held before: 0 is the role, 1 the first word. */
const HOLD_BEFORE = 2;
/** The Vox icon's badge in the activity bar. */
const BADGE = '.activitybar .action-item:has([aria-label^="Vox"]) .badge .badge-content, .activitybar li[aria-label^="Vox"] .badge-content';

export async function runAttentionCheck(c: ChatContext, session: UiSession): Promise<void> {
  const { o, timed, page: p, requireState, sidebar, scripted, holdBeforeEvent, send, waitReached, shot } = c;
  await o.check(ATTENTION_CHECKS.attention, () =>
    timed(ATTENTION_CHECKS.attention, () => {
      requireState('view', 'model');
      const gate = holdBeforeEvent(HOLD_BEFORE);
      return scripted([textTurn(words(ANSWER), { eventDelayMs: 10, holds: [gate.hold] })], async () => {
        let view = await sidebar();
        await send(view, PROMPT);
        await waitReached(gate.reached, 'the answer to be held after its first word');
        await h.runCommand(p, 'View: Show Explorer');
        await p.locator('.sidebar .composite.title', { hasText: /explorer/i }).first().waitFor({ state: 'visible', timeout: 10_000 });
        gate.release();
        const notice = toast(p, `Vox finished "${PROMPT}"`);
        await notice.waitFor({ state: 'visible', timeout: 30_000 }).catch(async (e: Error) => {
          throw new Error(`${e.message}; toasts: ${JSON.stringify(await p.locator('.notifications-toasts .notification-toast').allInnerTexts())}`);
        });
        const badge = p.locator(BADGE).first();
        await badge.waitFor({ state: 'visible', timeout: 10_000 });
        const count = ((await badge.textContent()) ?? '').trim();
        assert(count === '1', `the Vox badge says ${JSON.stringify(count)}, expected "1"`);
        await notice.getByRole('button', { name: 'Open' }).waitFor({ state: 'visible', timeout: 5_000 });
        await shot('e2e-attention-notification');
        await shot(NOTIFY_README.shot);
        checkScreenshots(o, session.shots, ['e2e-attention-notification'], NOTIFY_README);
        await notice.getByRole('button', { name: 'Open' }).click({ timeout: 5_000 });
        view = await sidebar();
        await watch(view, 'the chat to show the finished thread', 15_000, (s) => s.status === 'completed' && s.userMessages.includes(PROMPT) && s.text === ANSWER);
        const shownBadges = (): Promise<string[]> =>
          p.locator(BADGE).evaluateAll((els) => els.filter((el) => (el as unknown as { offsetParent: unknown }).offsetParent !== null && (el.textContent ?? '').trim() !== '').map((el) => (el.textContent ?? '').trim()));
        await h.waitFor('the badge to go once the chat is visible', 10_000, async () => (await shownBadges()).length === 0).catch(async (e: Error) => {
          throw new Error(`${e.message}; badges shown: ${JSON.stringify(await shownBadges())}`);
        });

        // ArrowUp in the empty composer recalls the prompt; ArrowDown gives the empty draft back.
        const area = view.locator('vscode-textarea textarea');
        await area.click({ timeout: 5_000 });
        await area.press('ArrowUp');
        await h.waitFor('ArrowUp to recall the prompt', 5_000, async () => (await area.inputValue()) === PROMPT);
        await area.press('ArrowDown');
        await h.waitFor('ArrowDown to empty the composer again', 5_000, async () => (await area.inputValue()) === '');
      });
    }), p);
}
