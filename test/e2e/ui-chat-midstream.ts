/**
 * The chat UI checks that act while an answer streams (test/e2e/ui-chat.ts runs them, in this
 * order, after its first four): Stop mid-stream; "Vox: Open Chat in Editor Tab" mid-stream, the
 * tab and the side bar then showing the same text; the side bar hidden (its webview document
 * destroyed) and shown again mid-stream, ending byte for byte equal to the stored message.
 *
 * The mid-stream moments are made deterministic with the fake server's holds (ChatContext.hold):
 * the stream pauses at a known chunk until the check has done its part, so a slow machine cannot
 * turn a mid-stream check into an after-the-end one.
 */
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { EDITOR, SIDEBAR, type ChatContext } from './ui-chat-context';
import {
  assertSameBytes,
  assertStreamedPrefixes,
  growth,
  readStoredAnswer,
  readStoredStream,
  rendered,
  runState,
  slowChunks,
  watch,
  words,
  type RunSample,
} from './ui-chat-stream';
import { assert, VOX_WEBVIEW } from './ui-session';

/** The editor-tab check's answer (readable: its moment is the README picture). */
const EDITOR_TAB_ANSWER =
  'Vox streams this answer into the side bar and into an editor tab at the same time. Both views subscribe to ' +
  'the same turn and each receives every token exactly once, in order, from the chunk it last saw. Hide a view, ' +
  'reload it or open another tab: the text picks up where it left off and ends identical to the stored message.';

/** The three checks' names, as the runner reports them. */
export interface MidStreamCheckNames {
  stop: string;
  editor: string;
  hideShow: string;
}

/** Runs the three checks, each one named check; `readmeShot` is taken at the editor tab's mid-stream moment. */
export async function runMidStreamChecks(c: ChatContext, names: MidStreamCheckNames, readmeShot: string): Promise<void> {
  const { o, timed, page: p, requireState, sidebar, scripted, hold, waitReached, send, shot, dbFile } = c;

  // ---- 5. Stop mid-stream
  await o.check(names.stop, () =>
    timed(names.stop, () => {
      requireState('view', 'model');
      const chunks = slowChunks('Stop test', 240);
      const prompt = 'Stop test: a long answer please';
      return scripted([textTurn(chunks, { eventDelayMs: 40 })], async () => {
        const view = await sidebar();
        await send(view, prompt);
        // Let it stream for real (no hold: the server keeps sending while we press Stop).
        const minText = rendered(chunks.slice(0, 15));
        await watch(view, 'at least 15 chunks on screen', 30_000, (s) => s.status === 'running' && s.text.length >= minText.length);
        await shot('e2e-streaming');
        const beforeStop = await runState(view);
        assert(beforeStop.status === 'running' && beforeStop.stop, 'the run is not running (with a Stop button) before Stop');
        await view.locator('vscode-button.stop').click({ timeout: 5_000 });
        const samples = await watch(view, 'the run to end after Stop', 15_000, (s) => s.status !== null && s.status !== 'running');
        const atEnd = samples[samples.length - 1]!;
        assert(atEnd.status === 'cancelled', `the run ended ${atEnd.status}, expected cancelled`);
        assert((await view.locator('footer.run-status').last().innerText()).includes('Stopped.'), 'the run does not say "Stopped."');
        await view.locator('vscode-button.send').waitFor({ timeout: 5_000 });
        // Nothing more arrives: the server would have sent ~40 more chunks in this time.
        await h.sleep(1_600);
        const later = await runState(view);
        assertSameBytes('text 1.6 s after the run stopped', later.text, atEnd.text);
        assert(later.status === 'cancelled', `status changed to ${later.status} after the stop`);
        const full = rendered(chunks);
        assert(atEnd.text.length >= minText.length, 'the partial text was lost');
        assert(full.startsWith(atEnd.text) && atEnd.text.length < full.length - 200, `the stopped text is not a strict prefix of the answer (${atEnd.text.length} of ${full.length} chars)`);
        assertStreamedPrefixes('stop run', samples, atEnd.text);
        const stored = readStoredAnswer(dbFile, prompt);
        assert(stored.status === 'cancelled', `stored message status ${stored.status}`);
        assertSameBytes('partial text on screen vs stored message', atEnd.text, stored.content);
        await shot('e2e-stopped');
      });
    }), p);

  // ---- 6. Editor tab mid-stream
  await o.check(names.editor, () =>
    timed(names.editor, () => {
      requireState('view', 'model');
      const chunks = words(EDITOR_TAB_ANSWER);
      const prompt = 'Explain how Vox streams one answer into two views';
      const HOLD_AT = 40; // of 63 chunks: enough text for the README picture, enough left to see both views grow
      const h1 = hold(HOLD_AT);
      return scripted([textTurn(chunks, { eventDelayMs: 40, holds: [h1.hold] })], async () => {
        const view = await sidebar();
        await send(view, prompt);
        await waitReached(h1.reached, `the stream to reach chunk ${HOLD_AT}`);
        const upToHold = rendered(chunks.slice(0, HOLD_AT));
        await watch(view, `the sidebar to show the first ${HOLD_AT} chunks`, 15_000, (s) => s.status === 'running' && s.text === upToHold);

        await h.runCommand(p, 'Vox: Open Chat in Editor Tab');
        const tab = (await h.waitForWebview(p, VOX_WEBVIEW, { within: EDITOR, timeoutMs: 20_000, retries: 2 })).content;
        const row = tab.locator('ul.threads button.open', { hasText: prompt });
        await row.first().click({ timeout: 20_000 });
        const first = await watch(tab, 'the tab to show the thread', 15_000, (s) => s.runs > 0 && s.text.length > 0);
        const opened = first[first.length - 1]!;
        assert(opened.status === 'running', `the turn was ${opened.status} when the tab opened it (not mid-stream)`);
        assertSameBytes('the tab\'s text when it opened the thread vs the sidebar\'s', opened.text, upToHold);
        await shot('e2e-editor-tab');
        await shot(readmeShot);

        h1.release();
        const ended = (s: RunSample): boolean => s.status !== null && s.status !== 'running';
        const [tabSamples, viewSamples] = await Promise.all([
          watch(tab, 'the tab to see the end', 30_000, ended),
          watch(view, 'the sidebar to see the end', 30_000, ended),
        ]);
        const tabEnd = tabSamples[tabSamples.length - 1]!;
        const viewEnd = viewSamples[viewSamples.length - 1]!;
        assert(tabEnd.status === 'completed' && viewEnd.status === 'completed', `ended ${tabEnd.status} (tab) / ${viewEnd.status} (sidebar)`);
        const full = rendered(chunks);
        assert(growth(tabSamples).length >= 2, 'the tab did not see the text grow after it opened the thread');
        assertStreamedPrefixes('editor tab', tabSamples, full);
        assertStreamedPrefixes('sidebar', viewSamples, full);
        assertSameBytes('editor tab text vs sidebar text', tabEnd.text, viewEnd.text);
        assertSameBytes('sidebar text vs the streamed answer', viewEnd.text, full);
        const stored = readStoredAnswer(dbFile, prompt);
        assertSameBytes('editor tab text vs stored message', tabEnd.text, stored.content);
      }).finally(async () => {
        // The next check hides the side bar: no Vox tab may be left to confuse it.
        await h.runCommand(p, 'View: Close All Editors').catch(() => {});
        await h.waitFor('the editor tab to close', 10_000, async () => (await h.findWebviews(p, VOX_WEBVIEW, { within: EDITOR })).length === 0);
      });
    }), p);

  // ---- 7. Hide and show the sidebar mid-stream; byte-for-byte against the store
  await o.check(names.hideShow, () =>
    timed(names.hideShow, () => {
      requireState('view', 'model');
      const chunks = slowChunks('Hide show test', 100);
      const prompt = 'Hide show test: keep streaming while hidden';
      const h1 = hold(20);
      const h2 = hold(50);
      return scripted([textTurn(chunks, { eventDelayMs: 25, holds: [h1.hold, h2.hold] })], async () => {
        let view = await sidebar();
        await send(view, prompt);
        await waitReached(h1.reached, 'the stream to reach chunk 20');
        await watch(view, 'the sidebar to show the first 20 chunks', 15_000, (s) => s.status === 'running' && s.text === rendered(chunks.slice(0, 20)));
        await view.evaluate('window.__voxE2eMark = "before-hide"');

        // Hide: another view container takes the side bar; the chat webview's document goes away.
        await h.runCommand(p, 'View: Show Explorer');
        await h.waitFor('the chat webview to be destroyed while hidden (retainContextWhenHidden must be off)', 10_000, async () =>
          view.isDetached() && (await h.findWebviews(p, VOX_WEBVIEW, { within: SIDEBAR })).length === 0,
        );
        h1.release(); // chunks 20..49 stream while the view is hidden
        await waitReached(h2.reached, 'the stream to reach chunk 50 while hidden');
        const upTo50 = rendered(chunks.slice(0, 50));
        await h.waitFor('the engine to store the 50 chunks streamed so far', 10_000, async () => readStoredStream(dbFile, prompt) === upTo50, 100);

        await h.runCommand(p, 'Vox: Focus on Chat View');
        view = await sidebar();
        assert((await view.evaluate('window.__voxE2eMark ?? null')) === null, 'the chat webview kept its document while hidden');
        const back = await watch(view, 'the shown view to catch up on what streamed while hidden', 20_000, (s) => s.text.length >= upTo50.length || (s.status !== null && s.status !== 'running'));
        const caught = back[back.length - 1]!;
        assert(caught.status === 'running', `the turn was ${caught.status} when the view came back (not mid-stream)`);
        assertSameBytes('text after showing the view again', caught.text, upTo50);
        await shot('e2e-after-show');

        h2.release();
        const samples = await watch(view, 'the run to end', 30_000, (s) => s.status !== null && s.status !== 'running');
        const end = samples[samples.length - 1]!;
        assert(end.status === 'completed', `the run ended ${end.status}`);
        assert(growth(samples).length >= 2, 'the view did not see the text grow after it came back');
        assert(end.runs === 1 && end.blocks === 1, `the thread shows ${end.runs} run(s) with ${end.blocks} text block(s), expected 1 and 1`);
        const stored = readStoredAnswer(dbFile, prompt);
        assert(stored.status === 'complete', `stored message status ${stored.status}`);
        assertStreamedPrefixes('sidebar after show', samples, stored.content);
        assertSameBytes('sidebar final text vs stored assistant message', end.text, stored.content);
        assertSameBytes('stored assistant message vs the streamed answer', stored.content, chunks.join(''));
        await shot('e2e-hide-show-final');
      });
    }), p);
}
