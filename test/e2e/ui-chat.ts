/**
 * UI end to end of the Vox chat in a real VS Code: code-server + Debian Chromium driven through
 * playwright-core, one code-server session with a fresh profile (user data, HOME, browser
 * context) on a sample git workspace, and a scripted OpenAI-compatible server
 * (test/support/fake-openai-server.ts) on 127.0.0.1 that the extension host talks to.
 *
 * Called by test/e2e/run-e2e.mjs; every check below is one named, counted check there:
 *   1. the Vox view opens (palette "Vox: Focus on Chat View") with the demo banner;
 *   2. the offline demo model (local:demo, GGUF) streams a reply to "hello" and completes;
 *   3. the API key goes in through "Vox: Set API Key" (palette + quick input) and the webview's
 *      model picker switches to `openai:gpt-e2e`;
 *   4. a write_file tool call waits for approval, Approve writes e2e-out.txt (checked on disk)
 *      and the final answer renders;
 *   5. Stop mid-stream: the run ends as stopped, the partial text stays (= the stored message),
 *      nothing more arrives;
 *   6. "Vox: Open Chat in Editor Tab" mid-stream, the same thread opened from the tab's thread
 *      list: both views show the same text while it streams and at the end;
 *   7. the sidebar hidden (webview document destroyed: no retainContextWhenHidden) and shown again
 *      mid-stream: the final text equals the stored assistant message (SQLite, read-only from
 *      this process) byte for byte;
 *   8. screenshots in test-results/ (CI artifacts) and the README picture.
 *
 * Mid-stream moments are made deterministic with the fake server's `holds`: the stream pauses at
 * a known chunk until the test has done its part (opened the tab, hidden the view), so a slow
 * machine cannot turn a mid-stream check into an after-the-end one. Waits are condition-based
 * with bounded timeouts. Assistant texts are single markdown paragraphs with no markdown syntax,
 * so the rendered text (`innerText`) is the raw text and can be compared byte for byte.
 *
 * The session and screenshots are test/e2e/ui-session.ts's, the palette/side bar helpers
 * test/e2e/ui-workbench.ts's; reading the webview's runs and the stored messages is
 * test/e2e/ui-chat-stream.ts's.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeHold, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import {
  assert,
  checkScreenshots,
  EXTENSION_ID,
  readmePicture,
  startUiSession,
  stateGuard,
  timedOf,
  uiDirs,
  VOX_WEBVIEW,
  type UiCheckOptions,
  type UiSession,
} from './ui-session';
import {
  sendInNewThread,
  setApiKey,
  widenSideBar,
} from './ui-workbench';
import {
  assertSameBytes,
  assertStreamedPrefixes,
  growth,
  READ_RECORDER_JS,
  readStoredAnswer,
  readStoredStream,
  rendered,
  runState,
  slowChunks,
  START_RECORDER_JS,
  watch,
  words,
  type RunSample,
} from './ui-chat-stream';

const OPENAI_MODEL = 'openai:gpt-e2e';
const API_KEY = 'sk-e2e-ui-0123456789';
const OUT_FILE = 'e2e-out.txt';
const OUT_CONTENT = 'written by vox e2e\n';
/** Demo prompts tried before the demo check gives up on seeing a reply grow (see the check). */
const DEMO_ATTEMPTS = 3;

/** The names run-e2e.mjs reports, in order. */
export const CHAT_CHECKS = {
  view: 'chat UI: the Vox view opens with the demo banner',
  demo: 'chat UI: the demo GGUF model streams a reply to "hello"',
  model: 'chat UI: API key via "Vox: Set API Key", openai:gpt-e2e via the model picker',
  tool: 'chat UI: Approve on a write_file call writes e2e-out.txt, the answer renders',
  stop: 'chat UI: Stop mid-stream keeps the partial text, nothing more arrives',
  editor: 'chat UI: editor tab opened mid-stream shows the same text as the sidebar',
  hideShow: 'chat UI: sidebar hidden + shown mid-stream, final text = stored message byte for byte',
  screenshots: 'chat UI: screenshots in test-results/ and the README picture',
} as const;

/** run-e2e's options (see UiCheckOptions); `updateDocsScreenshot` copies docs/screenshot-chat.png. */
export type ChatUiOptions = UiCheckOptions;

// ---------------------------------------------------------------------------------------------
// Small helpers

interface Deferred<T> { promise: Promise<T>; resolve: (v: T) => void }
function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The editor-tab check's answer (readable: its moment is the README picture). */
const EDITOR_TAB_ANSWER =
  'Vox streams this answer into the side bar and into an editor tab at the same time. Both views subscribe to ' +
  'the same turn and each receives every token exactly once, in order, from the chunk it last saw. Hide a view, ' +
  'reload it or open another tab: the text picks up where it left off and ends identical to the stored message.';

/** Fake-server hold before text chunk `k` (0-based; event 0 is the role chunk). */
function holdBeforeChunk(k: number, release: Promise<unknown>, reached: Deferred<void>): FakeHold {
  return { afterEvents: 1 + k, release, onReached: () => reached.resolve() };
}

/** Ends leftover scripted responses (a check that failed half way) so the next check starts clean. */
async function discardPending(fake: FakeServer): Promise<void> {
  for (let i = 0; fake.pending() > 0 && i < 20; i++) {
    await new Promise<void>((resolve) => {
      const req = http.request(`${fake.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.destroy();
        resolve();
      });
      req.on('error', () => resolve());
      req.end(JSON.stringify({ model: 'discard', stream: true, messages: [] }));
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Screenshots

/**
 * The README picture: the editor-tab check's mid-stream moment (the same thread streaming in the
 * side bar and in an editor tab). test-results/screenshot-chat.png, at most 250 KiB;
 * --update-screenshot copies it to docs/screenshot-chat.png.
 */
const README = readmePicture('screenshot-chat', 250 * 1024);
export const DOCS_SCREENSHOT = README.docsFile;

// ---------------------------------------------------------------------------------------------
// The webview, seen from the page

/** Vox's webviews (VOX_WEBVIEW): which one is the side bar view and which the editor tab is told by where they sit. */
const SIDEBAR = '.part.sidebar';
const EDITOR = '.part.editor';

// ---------------------------------------------------------------------------------------------
// The checks

export async function runChatUiChecks(o: ChatUiOptions): Promise<void> {
  const timed = timedOf(o);
  const dirs = uiDirs(o, 'chat');
  const dbFile = path.join(dirs.userData, 'User', 'globalStorage', EXTENSION_ID, 'vox.db');
  const state = { view: false, model: false };
  const requireState = stateGuard(state, (k) => CHAT_CHECKS[k], '; ');
  let fake: FakeServer | undefined;
  let session: UiSession | undefined;
  /** Releases every hold a check set up, so a failed check never leaves the fake server waiting. */
  const releases: (() => void)[] = [];

  const shot = (name: string): Promise<void> => session!.shot(name);
  /** The sidebar chat's content frame (blank-webview retry included); the error lists the webviews seen. */
  const sidebar = async (): Promise<Frame> => {
    try {
      return (await h.waitForWebview(session!.page, VOX_WEBVIEW, { within: SIDEBAR, timeoutMs: 20_000, retries: 2 })).content;
    } catch (e) {
      const srcs = await session!.page.$$eval('iframe.webview', (els) => els.map((el) => el.getAttribute('src') ?? '')).catch(() => []);
      throw new Error(`${(e as Error).message}; webview iframes: ${srcs.map((s) => s.replace(/^.*\?/, '?')).join(' | ') || 'none'}`);
    }
  };
  /** Pushes a check's script; afterwards releases its holds and drops what it did not use. */
  const scripted = async <T>(responses: FakeResponse[], fn: () => Promise<T>): Promise<T> => {
    await discardPending(fake!);
    const before = fake!.requests.length;
    fake!.push(...responses);
    let ok = false;
    try {
      const r = await fn();
      ok = true;
      return r;
    } finally {
      for (const r of releases.splice(0)) r();
      if (!ok) {
        // Stop whatever the failed check left running, then drop its unused responses.
        await h.runCommand(session!.page, 'Vox: Stop', 10_000).catch(() => {});
        await discardPending(fake!);
      }
      if (o.verbose) h.log(`fake server: ${fake!.requests.length - before} request(s) in this check`);
    }
  };
  const hold = (k: number): { release: () => void; reached: Deferred<void>; hold: FakeHold } => {
    const gate = deferred<void>();
    const reached = deferred<void>();
    releases.push(() => gate.resolve());
    return { release: () => gate.resolve(), reached, hold: holdBeforeChunk(k, gate.promise, reached) };
  };
  const waitReached = (d: Deferred<void>, what: string, ms = 30_000): Promise<void> => h.withTimeout(what, ms, d.promise);

  /** New thread in `frame`, prompt typed into the composer and sent with the Send button. */
  const send = async (frame: Frame, prompt: string): Promise<void> => {
    await sendInNewThread(frame, prompt);
    await watch(frame, `the prompt ${JSON.stringify(prompt)} shows as a thread with a run`, 20_000, (s) => s.runs > 0 && s.userMessages.includes(prompt));
  };

  /** Another prompt in the open thread (waits for its run to show). */
  const sendInThread = async (frame: Frame, prompt: string): Promise<void> => {
    const runs = (await runState(frame)).runs;
    await frame.locator('vscode-textarea textarea').fill(prompt, { timeout: 10_000 });
    await frame.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
    await watch(frame, `the prompt ${JSON.stringify(prompt)} to start a run`, 20_000, (s) => s.runs > runs);
  };

  try {
    // ---- Session: fake server, settings, code-server, browser context
    try {
      fake = await startFakeOpenAI({ responses: [] });
      h.createSampleWorkspace(dirs.workspace);
      session = await startUiSession(o, {
        label: 'chat UI',
        dirs,
        settings: {
          'vox.model': 'local:demo',
          'vox.models': [OPENAI_MODEL],
          'vox.openaiBaseUrl': fake.baseUrl,
          'vox.approval': { read: 'auto', write: 'ask', execute: 'ask' },
        },
      });
    } catch (e) {
      // Every check fails with the reason rather than the run losing count of them.
      const why = `the chat UI session did not start: ${(e as Error).message}`;
      for (const name of Object.values(CHAT_CHECKS)) await o.check(name, () => Promise.reject(new Error(why)));
      return;
    }
    const { page: p, shots, openWorkbench } = session;
    const fk = fake;

    // ---- 1. The view, the demo banner
    await o.check(CHAT_CHECKS.view, () =>
      timed(CHAT_CHECKS.view, async () => {
        const since = await openWorkbench();
        await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
        const view = await sidebar();
        h.log(`chat UI: Vox view rendered after ${since()}`);
        // A readable width for the chat (cosmetic: screenshots only).
        const widened = await widenSideBar(p, 520);
        if (widened) h.log(`chat UI: side bar ${Math.round(widened.from)} px -> ${Math.round(widened.to)} px wide`);
        const banner = view.locator('section.demo-banner');
        await banner.waitFor({ state: 'visible', timeout: 30_000 });
        h.log(`chat UI: demo banner after ${since()}`);
        const text = await banner.innerText();
        assert(/Demo model\./.test(text), `demo banner says ${JSON.stringify(text.slice(0, 120))}`);
        const picked = await view.locator('.model-row select').inputValue({ timeout: 10_000 });
        assert(picked === 'local:demo', `model picker shows ${picked}, expected local:demo`);
        state.view = true;
      }), p);

    // ---- 2. The demo model streams
    await o.check(CHAT_CHECKS.demo, () =>
      timed(CHAT_CHECKS.demo, async () => {
        requireState('view');
        const before = fk.requests.length;
        const view = await sidebar();
        // The bigram model samples its reply length: now and then it ends after a few tokens,
        // too short to see growing. Ask again (same thread) up to DEMO_ATTEMPTS times; every
        // reply must complete with text.
        const lengths: string[] = [];
        let streamed = false;
        for (let attempt = 1; attempt <= DEMO_ATTEMPTS && !streamed; attempt++) {
          await view.evaluate(START_RECORDER_JS);
          if (attempt === 1) await send(view, 'hello');
          else await sendInThread(view, 'hello again');
          const polled = await watch(view, 'the demo reply to end', 120_000, (s) => s.status !== null && s.status !== 'running', 40);
          const last = polled[polled.length - 1]!;
          // The states of this attempt's run (the last one): every one the recorder saw, or the
          // polled ones if the recorder saw none (its document was replaced).
          const recorded = ((await view.evaluate(READ_RECORDER_JS)) as RunSample[]).filter((r) => r.runs === last.runs);
          const samples = recorded.length > 0 ? recorded : polled.filter((r) => r.runs === last.runs);
          assert(last.status === 'completed', `the demo run ended ${last.status}`);
          assert(last.text.trim().length > 0, 'the demo reply is empty');
          const seen = growth(samples);
          streamed = seen.length >= 2 && seen[seen.length - 1]!.length > seen[0]!.length;
          lengths.push(`attempt ${attempt}: ${last.text.length} chars, growing texts seen ${seen.map((t) => t.length).join('<') || 'none'}`);
        }
        h.log(`demo replies: ${lengths.join('; ')}`);
        assert(streamed, `no demo reply was seen growing while it streamed (${lengths.join('; ')})`);
        assert(fk.requests.length === before, 'the demo model sent a request to the OpenAI-compatible server');
        await shot('e2e-demo-reply');
      }), p);

    // ---- 3. API key through the palette, model through the webview's picker
    await o.check(CHAT_CHECKS.model, () =>
      timed(CHAT_CHECKS.model, async () => {
        requireState('view');
        // The provider pick lists every provider (anthropic first), then asks for openai's key.
        await setApiKey(p, 'openai', API_KEY, { listed: 'anthropic' });

        const view = await sidebar();
        await view.locator('.model-row select').selectOption(OPENAI_MODEL, { timeout: 10_000 });
        await h.waitFor('the picker to show openai:gpt-e2e and the demo banner to go', 15_000, async () => {
          const v = await view.locator('.model-row select').inputValue();
          return v === OPENAI_MODEL && (await view.locator('section.demo-banner').count()) === 0;
        });
        await p.locator('.statusbar-item', { hasText: `Vox: ${OPENAI_MODEL}` }).first().waitFor({ timeout: 10_000 });
        // Keep later screenshots clean.
        await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
        const settings = JSON.parse(fs.readFileSync(path.join(dirs.userData, 'User', 'settings.json'), 'utf8')) as Record<string, unknown>;
        assert(settings['vox.model'] === OPENAI_MODEL, `settings.json has vox.model = ${JSON.stringify(settings['vox.model'])}`);
        assert(!fs.readFileSync(path.join(dirs.userData, 'User', 'settings.json'), 'utf8').includes(API_KEY), 'the API key ended up in settings.json');
        state.model = true;
      }), p);

    // ---- 4. A write_file call: approval card, Approve, the file on disk, the answer
    await o.check(CHAT_CHECKS.tool, () =>
      timed(CHAT_CHECKS.tool, () => {
        requireState('view', 'model');
        const answer = ['Wrote ', OUT_FILE, ' as asked.'];
        return scripted(
          [
            toolCallTurn([{ name: 'write_file', args: { path: OUT_FILE, content: OUT_CONTENT } }], { eventDelayMs: 20, usage: { inputTokens: 120, outputTokens: 30 } }),
            textTurn(answer, { eventDelayMs: 20, usage: { inputTokens: 150, outputTokens: 12 } }),
          ],
          async () => {
            const before = fk.requests.length;
            const outPath = path.join(dirs.workspace, OUT_FILE);
            const view = await sidebar();
            await send(view, `Create ${OUT_FILE} please`);
            const card = view.locator('section.tool[data-status="approval"]');
            await card.waitFor({ timeout: 30_000 });
            assert((await card.locator('.name').innerText()).trim() === 'write_file', 'the approval card is not for write_file');
            assert((await card.innerText()).includes(OUT_FILE), `the approval card does not show the path ${OUT_FILE}`);
            assert(!fs.existsSync(outPath), `${OUT_FILE} exists before it was approved`);
            await shot('e2e-tool-approval');
            await card.locator('vscode-button.approve').click({ timeout: 10_000 });
            await h.waitFor(`${OUT_FILE} in the workspace`, 15_000, async () => fs.existsSync(outPath));
            assertSameBytes(`${OUT_FILE} on disk`, fs.readFileSync(outPath, 'utf8'), OUT_CONTENT);
            const samples = await watch(view, 'the tool run to end', 30_000, (s) => s.status !== null && s.status !== 'running');
            const last = samples[samples.length - 1]!;
            assert(last.status === 'completed', `the run ended ${last.status}`);
            assertSameBytes('final answer', last.text, rendered(answer));
            await view.locator('section.tool[data-status="completed"]').waitFor({ timeout: 10_000 });
            const footer = await view.locator('footer.run-status').last().innerText();
            assert(footer.includes('270 in / 42 out tokens'), `the run's footer says ${JSON.stringify(footer)}, expected the usage of both requests (270 in / 42 out)`);
            const reqs = fk.requests.slice(before);
            assert(reqs.length === 2, `expected 2 model requests (tool call, then answer), got ${reqs.length}`);
            for (const r of reqs) {
              assert(r.headers.authorization === `Bearer ${API_KEY}`, `request carried authorization ${JSON.stringify(r.headers.authorization)}`);
              assert(r.body?.model === 'gpt-e2e', `request asked for model ${JSON.stringify(r.body?.model)}`);
            }
            const toolMsg = (reqs[1]!.body?.messages as { role: string; content: unknown }[] | undefined)?.find((m) => m.role === 'tool');
            assert(toolMsg && String(toolMsg.content).includes(OUT_FILE), 'the second request does not carry the write_file result');
            await shot('e2e-tool-approved');
          },
        );
      }), p);

    // ---- 5. Stop mid-stream
    await o.check(CHAT_CHECKS.stop, () =>
      timed(CHAT_CHECKS.stop, () => {
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
    await o.check(CHAT_CHECKS.editor, () =>
      timed(CHAT_CHECKS.editor, () => {
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
          await shot(README.shot);

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
    await o.check(CHAT_CHECKS.hideShow, () =>
      timed(CHAT_CHECKS.hideShow, () => {
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

    // ---- 8. Screenshots: artifacts + the README picture
    await o.check(CHAT_CHECKS.screenshots, async () => {
      const taken = ['e2e-demo-reply', 'e2e-tool-approval', 'e2e-tool-approved', 'e2e-streaming', 'e2e-stopped', 'e2e-editor-tab', 'e2e-after-show', 'e2e-hide-show-final'];
      checkScreenshots(o, shots, taken, README);
    }, p);
  } finally {
    for (const r of releases.splice(0)) r();
    if (session) await session.close();
    if (fake) await fake.close().catch(() => {});
  }
}
