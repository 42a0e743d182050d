/**
 * What the chat UI checks (test/e2e/ui-chat.ts, ui-chat-midstream.ts) work with, once their
 * code-server session is up: the page, the side bar's chat frame (blank-webview retry included),
 * the scripted OpenAI-compatible server — each check pushes its own responses, holds pause a
 * stream before a known chunk until the check releases them, and whatever a failed check left
 * behind is stopped and dropped — and sending prompts from a chat frame.
 */
import * as http from 'node:http';
import type { Frame, Page } from 'playwright-core';
import type { FakeHold, FakeResponse, FakeServer } from '../support/fake-openai-server';
import * as h from './harness';
import { runState, watch } from './ui-chat-stream';
import { VOX_WEBVIEW, type Timed, type UiCheckOptions, type UiSession } from './ui-session';
import { sendInNewThread } from './ui-workbench';

/** Vox's webviews (VOX_WEBVIEW): which one is the side bar view and which the editor tab is told by where they sit. */
export const SIDEBAR = '.part.sidebar';
export const EDITOR = '.part.editor';

export interface Deferred<T> { promise: Promise<T>; resolve: (v: T) => void }
function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Fake-server hold before SSE event `n` (0-based: event 0 is the role chunk, so text chunk `k` is event 1 + k). */
function holdBeforeEvent(n: number, release: Promise<unknown>, reached: Deferred<void>): FakeHold {
  return { afterEvents: n, release, onReached: () => reached.resolve() };
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

export interface ChatContext {
  o: UiCheckOptions;
  timed: Timed;
  page: Page;
  fake: FakeServer;
  /** The engine's SQLite store, <home>/.vox/vox.db (read-only from here). */
  dbFile: string;
  /** Throws "not run: an earlier step failed (…)" unless every key's check passed. */
  requireState: (...keys: ('view' | 'model')[]) => void;
  shot(name: string): Promise<void>;
  /** The sidebar chat's content frame (blank-webview retry included); the error lists the webviews seen. */
  sidebar(): Promise<Frame>;
  /** Pushes a check's script; afterwards releases its holds and drops what it did not use. */
  scripted<T>(responses: FakeResponse[], fn: () => Promise<T>): Promise<T>;
  /** A hold before text chunk `k`: put `hold` in a response, wait for `reached`, then `release()`. */
  hold(k: number): { release: () => void; reached: Deferred<void>; hold: FakeHold };
  /** The same before SSE event `n` of a response (for turns that are not only text: tool calls, the finish chunk). */
  holdBeforeEvent(n: number): { release: () => void; reached: Deferred<void>; hold: FakeHold };
  waitReached(d: Deferred<void>, what: string, ms?: number): Promise<void>;
  /** New thread in `frame`, prompt typed into the composer and sent with the Send button. */
  send(frame: Frame, prompt: string): Promise<void>;
  /** Another prompt in the open thread (waits for its run to show). */
  sendInThread(frame: Frame, prompt: string): Promise<void>;
  /** Releases every hold a check set up, so a failed check never leaves the fake server waiting. */
  releaseAll(): void;
}

export function chatContext(c: { o: UiCheckOptions; timed: Timed; session: UiSession; fake: FakeServer; dbFile: string; requireState: ChatContext['requireState'] }): ChatContext {
  const { o, session, fake } = c;
  const page = session.page;
  const releases: (() => void)[] = [];
  const releaseAll = (): void => {
    for (const r of releases.splice(0)) r();
  };
  const holdAt = (n: number): ReturnType<ChatContext['hold']> => {
    const gate = deferred<void>();
    const reached = deferred<void>();
    releases.push(() => gate.resolve());
    return { release: () => gate.resolve(), reached, hold: holdBeforeEvent(n, gate.promise, reached) };
  };
  return {
    o,
    timed: c.timed,
    page,
    fake,
    dbFile: c.dbFile,
    requireState: c.requireState,
    shot: (name) => session.shot(name),
    sidebar: async () => {
      try {
        return (await h.waitForWebview(page, VOX_WEBVIEW, { within: SIDEBAR, timeoutMs: 20_000, retries: 2 })).content;
      } catch (e) {
        const srcs = await page.$$eval('iframe.webview', (els) => els.map((el) => el.getAttribute('src') ?? '')).catch(() => []);
        throw new Error(`${(e as Error).message}; webview iframes: ${srcs.map((s) => s.replace(/^.*\?/, '?')).join(' | ') || 'none'}`);
      }
    },
    scripted: async (responses, fn) => {
      await discardPending(fake);
      const before = fake.requests.length;
      fake.push(...responses);
      let ok = false;
      try {
        const r = await fn();
        ok = true;
        return r;
      } finally {
        releaseAll();
        if (!ok) {
          // Stop whatever the failed check left running, then drop its unused responses.
          await h.runCommand(page, 'Vox: Stop', 10_000).catch(() => {});
          await discardPending(fake);
        }
        if (o.verbose) h.log(`fake server: ${fake.requests.length - before} request(s) in this check`);
      }
    },
    hold: (k) => holdAt(1 + k),
    holdBeforeEvent: (n) => holdAt(n),
    waitReached: (d, what, ms = 30_000) => h.withTimeout(what, ms, d.promise),
    send: async (frame, prompt) => {
      await sendInNewThread(frame, prompt);
      await watch(frame, `the prompt ${JSON.stringify(prompt)} shows as a thread with a run`, 20_000, (s) => s.runs > 0 && s.userMessages.includes(prompt));
    },
    sendInThread: async (frame, prompt) => {
      const runs = (await runState(frame)).runs;
      await frame.locator('vscode-textarea textarea').fill(prompt, { timeout: 10_000 });
      await frame.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await watch(frame, `the prompt ${JSON.stringify(prompt)} to start a run`, 20_000, (s) => s.runs > runs);
    },
    releaseAll,
  };
}
