/**
 * The reload UI checks, in their own code-server session: "Developer: Reload Window" while an
 * answer streams. The window's extension host (and the engine in it) goes away mid-turn; after
 * the reload the chat shows that same thread — not an empty new one — with its run marked
 * "Stopped by a reload" and a Retry, and Retry runs the prompt again to a complete answer.
 *
 *   1. openai:gpt-e2e (scripted server) streams an answer, held at a known chunk; Reload Window;
 *      the side bar's chat shows the prompt's thread, its last run `interrupted`, its footer
 *      "Stopped by a reload", the streamed text kept, and a Retry button;
 *   2. Retry: the scripted server's next answer streams and completes in that thread.
 * The store agrees (read-only, through VoxStore): the run is `interrupted` with `run.ended` cause
 * `ownerEnded` and the streamed text kept as an interrupted message; the retry's run completes in
 * the same thread.
 */
import * as path from 'node:path';
import * as h from './harness';
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { textTurn } from '../support/fake-openai-server';
import { assert } from './ui-session';
import { setApiKey, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';
import { rendered, runState, slowChunks, watch } from './ui-chat-stream';

export const RELOAD_CHECKS = {
  midStream: 'reload UI: after "Developer: Reload Window" mid-stream the chat shows that thread, its run "Stopped by a reload" with Retry',
  retry: 'reload UI: Retry after the reload runs the prompt again to a complete answer in that thread',
} as const;

const MODEL = 'openai:gpt-e2e';
const API_KEY = 'sk-e2e-reload';
const PROMPT = 'Reload test: stream a long answer';
/** The text chunk the stream is held at while the window reloads. */
const HOLD_AT = 20;
const RETRIED = 'The retried answer, complete.';

/** Reads the engine's store (read-only) and closes it again. */
function withStore<T>(dbFile: string, fn: (s: VoxStore) => T): T {
  const store = VoxStore.open(dbFile, { readonly: true, schema: STORE_SCHEMAS });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** The thread whose first message is the prompt, and its runs' statuses and `run.ended` causes. */
function storedRuns(dbFile: string): { threadId: string; runs: { status: string; cause: string | null }[]; partial: string | null } {
  return withStore(dbFile, (s) => {
    const t = s.listThreads().find((x) => s.activePath(x.id)[0]?.content === PROMPT);
    assert(t, 'the prompt\'s thread is not in the store');
    const ended = s.eventsAfter(0, { threadId: t.id }).filter((e) => e.type === 'run.ended');
    const runs = s.runs(t.id).map((r) => {
      const e = ended.find((x) => x.type === 'run.ended' && x.runId === r.id);
      return { status: r.status, cause: e?.type === 'run.ended' ? (e.cause ?? null) : null };
    });
    const partial = s.messages(t.id).find((m) => m.role === 'assistant' && m.status === 'interrupted')?.content ?? null;
    return { threadId: t.id, runs, partial };
  });
}

export const runReloadChecks = defineUiSet({
  name: 'reload UI',
  dir: 'reload',
  checks: RELOAD_CHECKS,
  state: { stopped: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': MODEL, 'vox.models': [MODEL], 'vox.openaiBaseUrl': fake.baseUrl }),
  run: async ({ page: p, shot, openWorkbench, sidebar, check, requireState, state, fake: fk, dirs }) => {
    const dbFile = path.join(dirs.home, '.vox', 'vox.db');
    let release: () => void = () => undefined;
    try {
      // ---- 1. Reload mid-stream
      await check(RELOAD_CHECKS.midStream, async () => {
        await openWorkbench();
        await setApiKey(p, 'openai', API_KEY, { listed: 'anthropic' });
        await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
        await widenSideBar(p, 560);
        const chunks = slowChunks('Reload test', 80);
        let reached!: () => void;
        const atHold = new Promise<void>((r) => (reached = r));
        const gate = new Promise<void>((r) => (release = r));
        // Event 0 is the role chunk: text chunk k is event 1 + k.
        fk.push(textTurn(chunks, { eventDelayMs: 20, holds: [{ afterEvents: 1 + HOLD_AT, release: gate, onReached: () => reached() }] }));
        fk.push(textTurn([RETRIED]));
        let view = await sidebar();
        await view.locator('vscode-textarea textarea').fill(PROMPT, { timeout: 10_000 });
        await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
        await h.withTimeout('the stream to reach the hold', 30_000, atHold);
        const upToHold = rendered(chunks.slice(0, HOLD_AT));
        await watch(view, `the chat to show the first ${HOLD_AT} chunks`, 15_000, (s) => s.status === 'running' && s.text === upToHold);

        await p.evaluate('window.__voxBeforeReload = true');
        await h.runCommand(p, 'Developer: Reload Window');
        await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
        await h.waitForWorkbench(p);
        await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
        view = await sidebar();
        const samples = await watch(view, 'the chat to show the thread that was streaming, its run ended', 45_000, (s) => s.userMessages.includes(PROMPT) && s.status !== null && s.status !== 'running');
        const last = samples[samples.length - 1]!;
        assert(last.status === 'interrupted', `the run after the reload is ${last.status}, expected interrupted`);
        const footer = await view.locator('footer.run-status').last().innerText();
        assert(footer.includes('Stopped by a reload'), `the run's footer says ${JSON.stringify(footer)}`);
        assert(upToHold.startsWith(last.text) && last.text.length > 0, `the streamed text was not kept (${JSON.stringify(last.text.slice(0, 80))})`);
        await view.locator('button.rerun.retry').last().waitFor({ timeout: 10_000 });
        const stored = storedRuns(dbFile);
        assert(JSON.stringify(stored.runs) === JSON.stringify([{ status: 'interrupted', cause: 'ownerEnded' }]), `the store's runs: ${JSON.stringify(stored.runs)}`);
        assert(stored.partial === last.text, `the store kept ${JSON.stringify(stored.partial?.slice(0, 80))}, the chat shows ${JSON.stringify(last.text.slice(0, 80))}`);
        await shot('e2e-reload-stopped');
        state.stopped = true;
      });

      // ---- 2. Retry
      await check(RELOAD_CHECKS.retry, async () => {
        requireState('stopped');
        const view = await sidebar();
        await view.locator('button.rerun.retry:not([disabled])').last().click({ timeout: 10_000 });
        const samples = await watch(view, 'the retried answer to complete', 30_000, (s) => s.status === 'completed' && s.text.includes(RETRIED));
        const end = samples[samples.length - 1]!;
        assert(end.userMessages.includes(PROMPT), `the retried answer is not in the prompt's thread (${JSON.stringify(end.userMessages)})`);
        const again = await runState(view);
        assert(again.text.includes(RETRIED), 'the retried answer went away');
        const stored = storedRuns(dbFile);
        assert(stored.runs.map((r) => r.status).join() === 'interrupted,completed', `the store's runs after Retry: ${JSON.stringify(stored.runs)}`);
        await shot('e2e-reload-retried');
      });
    } finally {
      release(); // the held response of the old window ends
    }
  },
});
