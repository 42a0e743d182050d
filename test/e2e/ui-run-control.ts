/**
 * Run control (SPEC 2.4) end to end in the real webview: the chat UI session's side bar
 * (test/e2e/ui-chat.ts runs these after its mid-stream checks, with the API key and
 * `openai:gpt-e2e` already picked), the scripted OpenAI-compatible server and the engine's store
 * (read-only from this process, through VoxStore itself). Each is one named, counted check:
 *
 *   1. queue, reorder, steer: a turn whose first model call (text, then a write_file call) is
 *      held before its finish chunk, so the run is visibly running and the engine is inside that
 *      call. Two prompts typed into the composer, Enter for each: both show in the queue strip, in
 *      the store's queue in the same order; Alt+↑ on the second row (keyboard focus on the row)
 *      moves it first, in the strip and in the store; the Steer button of the row now second
 *      marks it steering. Released, the call ends with its tool call: the next boundary is the
 *      tool batch, so write_file must not run (no file, no approval card; its "not run" result
 *      goes to the model) and the next request carries the steering prompt as a user message
 *      after that result. The transcript shows the steer where it landed ("You, during the turn",
 *      the skipped tool), and when the turn ends the remaining queued prompt runs by itself as
 *      the next turn (its request, its answer) and the strip goes away; the store agrees (entry
 *      statuses steered / started, with their runs);
 *   2. a scripted 429 with `retry-after`: the run shows the countdown, whose number goes down
 *      between two reads; "Don't auto-resume" changes the text (and the engine records it);
 *      "Resume now" sends the same request again (no other request went out before), the answer
 *      renders and the countdown box goes away; the store says the user resumed it;
 *   3. the screenshots of both moments (test-results/; the README pictures with
 *      --update-screenshot).
 *
 * Both moments are conditions, not timing: the first model call is held by the fake server until
 * the check has queued, reordered and steered; the rate-limit wait is long (RETRY_AFTER_S) and
 * the check ends it itself with Resume now, so nothing sleeps it out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { STEERED_TOOL_RESULT } from '../../src/engine/agent/runner';
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { rateLimited, textTurn, toolCallTurn } from '../support/fake-openai-server';
import * as h from './harness';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { assert, checkScreenshots, readmePicture, type UiSession } from './ui-session';

/** The names the runner reports (keys for run-e2e.mjs's subsets), in order. */
export const RUN_CONTROL_CHECKS = {
  runQueue: 'run control UI: two prompts queued during a held turn, reordered with Alt+↑ (strip = store), one steered in: its tool call is not run, the next request and the transcript carry the steer, the other runs next',
  runRateLimit: 'run control UI: a 429 with retry-after counts down; "Don\'t auto-resume" changes the wait, "Resume now" retries the same request and the answer renders',
  runScreenshots: 'run control UI: screenshots of the queue strip with a steering row and of the countdown (test-results/, README pictures)',
} as const;

/** The README pictures: the queue strip with a steering row, and the rate-limit countdown. */
export const QUEUE_README = readmePicture('screenshot-queue', 250 * 1024);
export const RATE_LIMIT_README = readmePicture('screenshot-rate-limit', 250 * 1024);

// ---- Check 1's script
const PROMPT = 'Run control: write steer-skipped.txt, then tell me about it';
const SKIPPED_FILE = 'steer-skipped.txt';
const FIRST_TEXT = 'Writing steer-skipped.txt first.';
/** write_file's arguments, streamed in these pieces (so the event numbers below are fixed). */
const WRITE_ARGS = { path: SKIPPED_FILE, content: 'must never be written\n' };
const WRITE_ARG_CHUNKS = (() => {
  const full = JSON.stringify(WRITE_ARGS);
  return [full.slice(0, 10), full.slice(10, 30), full.slice(30)];
})();
const WRITE_CALL_ID = 'call_run_control_write';
/**
 * The first response's SSE events: 0 role, 1 the text, 2 the call opened, 3–5 its argument
 * pieces, 6 the finish chunk, 7 [DONE]. Held before the finish chunk, the call is streamed but
 * not over: the engine is inside the model call, and the tool batch is its next boundary.
 */
const HOLD_BEFORE_FINISH = 1 + 1 + 1 + WRITE_ARG_CHUNKS.length;
const QUEUED_A = 'Queued A: on second thought, do not create any file';
const QUEUED_B = 'Queued B: and then list what you changed';
const STEERED_ANSWER = 'Understood, I did not create steer-skipped.txt.';
const QUEUED_ANSWER = 'Nothing changed in the workspace.';

// ---- Check 2's script
const RL_PROMPT = 'Run control: answer after the rate limit';
const RL_ANSWER = 'Answered after the rate limit.';
/**
 * The provider's retry-after. The check turns auto-resume off within a few seconds of seeing the
 * countdown and ends the wait itself (Resume now), so this only has to outlast those seconds on a
 * slow machine; it costs no time.
 */
const RETRY_AFTER_S = 20;

/** A row of the queue strip as the webview shows it. */
interface StripRow { entry: string; prompt: string; steering: boolean }

const STRIP_JS = `Array.from(document.querySelectorAll('section.queue li.row')).map((el) => ({
  entry: el.getAttribute('data-entry') ?? '',
  prompt: el.querySelector('.text')?.textContent ?? '',
  steering: el.classList.contains('steering') && (el.querySelector('.badge')?.textContent ?? '') === 'steering',
}))`;

async function strip(view: Frame): Promise<StripRow[]> {
  return (await view.evaluate(STRIP_JS)) as StripRow[];
}

/** Waits for the strip to satisfy `ok`; the error shows what it showed last. */
async function waitStrip(view: Frame, what: string, ok: (rows: StripRow[]) => boolean, ms = 15_000): Promise<StripRow[]> {
  let last: StripRow[] = [];
  try {
    await h.waitFor(what, ms, async () => ok((last = await strip(view))), 50);
  } catch {
    throw new Error(`${what}: the queue strip shows ${JSON.stringify(last.map((r) => `${r.prompt}${r.steering ? ' [steering]' : ''}`))}`);
  }
  return last;
}

/**
 * After a failed check 1: cancels what it left in the strip (✕ on each row), so that stopping the
 * run does not start those prompts (a run that ends drains its queue) and hand them the next
 * check's scripted answers.
 */
async function cancelLeftovers(view: Frame): Promise<void> {
  for (let i = 0; i < 5 && (await strip(view).catch(() => [])).length > 0; i++) {
    await view.locator('section.queue li.row').first().getByRole('button', { name: 'Cancel queued prompt' }).click({ timeout: 2_000 }).catch(() => {});
    await h.sleep(200);
  }
}

/**
 * The conversation as the webview renders it, one line per block: `you: …` for a user message,
 * then per run `vox: …` (assistant text), `steer: <label> | <prompt> | <skipped>`, `tool: <name>`
 * and `end: <footer status>`.
 */
const TRANSCRIPT_JS = `(() => {
  const log = document.querySelector('[role="region"][aria-label="Conversation"]');
  const out = [];
  const text = (el) => (el?.innerText ?? '').trim();
  // The list is virtualised (VirtualList.svelte): each entry sits in a .vrow of the .vlist; this
  // short thread renders all of them. A run's action rows (edit, regenerate, ‹ › switchers) are
  // controls, and its cost line is the ledger's figure: neither is conversation.
  const rows = log ? Array.from(log.querySelectorAll(':scope > .vlist > .vrow > *')) : [];
  for (const el of rows.length > 0 ? rows : log ? Array.from(log.children) : []) {
    if (el.matches('.vlist, .jump-latest, .find-bar')) continue;
    if (el.matches('.message.user')) out.push('you: ' + text(el.querySelector('.plain')));
    else if (el.matches('article.run')) {
      for (const b of Array.from(el.children)) {
        if (b.matches('.message.assistant')) out.push('vox: ' + text(b));
        else if (b.matches('.steer')) out.push('steer: ' + [text(b.querySelector('.steer-label')), text(b.querySelector('.plain')), text(b.querySelector('.steer-skipped'))].join(' | '));
        else if (b.matches('section.tool')) out.push('tool: ' + text(b.querySelector('.name')));
        else if (b.matches('footer.run-status')) out.push('end: ' + (b.getAttribute('data-status') ?? '?'));
        else if (b.matches('.prompt-actions, .message-actions, .turn-cost')) continue;
        else out.push('other: ' + b.className);
      }
    } else out.push('other: ' + el.className);
  }
  return out;
})()`;

async function transcript(view: Frame): Promise<string[]> {
  return (await view.evaluate(TRANSCRIPT_JS)) as string[];
}

/** Reads the engine's store (read-only, through VoxStore) and closes it again. */
function withStore<T>(dbFile: string, fn: (s: VoxStore) => T): T {
  const store = VoxStore.open(dbFile, { readonly: true, schema: STORE_SCHEMAS });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function threadIdOf(s: VoxStore, title: string): string {
  const t = s.listThreads().find((x) => x.title === title);
  assert(t, `no thread titled ${JSON.stringify(title)} in the store`);
  return t.id;
}

interface WireMessage { role: string; content?: unknown; tool_call_id?: string; tool_calls?: { id: string; function: { name: string } }[] }

const wireMessages = (body: unknown): WireMessage[] => ((body as { messages?: WireMessage[] } | undefined)?.messages ?? []);
const userTexts = (msgs: WireMessage[]): string[] => msgs.filter((m) => m.role === 'user').map((m) => String(m.content));
const roles = (msgs: WireMessage[]): string => msgs.map((m) => m.role).join(',');

type Gate = ReturnType<ChatContext['holdBeforeEvent']>;

/**
 * Check 1's steps, in the side bar's frame `view`, with the first model call held by `gate`
 * (see the header).
 */
async function queueReorderSteer(c: ChatContext, workspace: string, view: Frame, gate: Gate): Promise<void> {
  const { fake: fk, waitReached, send, shot, dbFile } = c;
  const before = fk.requests.length;
  await send(view, PROMPT);
  await waitReached(gate.reached, 'the first model call to reach its finish chunk (held there)');
  await watch(view, 'the held turn to show its first text, running, with Stop', 15_000, (s) => s.status === 'running' && s.text === FIRST_TEXT && s.stop);

  // Two prompts typed while it runs, Enter for each: the composer queues them.
  const area = view.locator('vscode-textarea textarea');
  for (const [i, prompt] of [QUEUED_A, QUEUED_B].entries()) {
    await area.click({ timeout: 5_000 });
    await area.pressSequentially(prompt);
    await area.press('Enter');
    await waitStrip(view, `the queue strip to show ${i + 1} prompt(s), the last ${JSON.stringify(prompt)}`, (rows) => rows.length === i + 1 && rows[i]!.prompt === prompt);
  }
  const threadId = withStore(dbFile, (s) => threadIdOf(s, PROMPT));
  const queued = await strip(view);
  const storeOrder = (): string[] => withStore(dbFile, (s) => s.queue(threadId).map((r) => r.entryId));
  assert(JSON.stringify(storeOrder()) === JSON.stringify(queued.map((r) => r.entry)), `the store's queue ${JSON.stringify(storeOrder())} is not the strip's ${JSON.stringify(queued.map((r) => r.entry))}`);
  const [a, b] = queued as [StripRow, StripRow];

  // Reorder from the keyboard: B's row focused, Alt+↑ moves it first.
  await view.locator(`section.queue li.row[data-entry="${b.entry}"]`).press('Alt+ArrowUp');
  await waitStrip(view, 'Alt+↑ on the second row to move it first', (rows) => rows.map((r) => r.entry).join() === [b.entry, a.entry].join());
  await h.waitFor('the store\'s queue to have the same order', 5_000, async () => storeOrder().join() === [b.entry, a.entry].join(), 100);

  // Promote A (now second) with its Steer button.
  await view.locator(`section.queue li.row[data-entry="${a.entry}"]`).getByRole('button', { name: 'Steer the running turn with this prompt' }).click({ timeout: 5_000 });
  const steering = await waitStrip(view, `${JSON.stringify(QUEUED_A)} to show as steering`, (rows) => rows.length === 2 && rows[1]!.entry === a.entry && rows[1]!.steering);
  assert(!steering[0]!.steering, `${JSON.stringify(QUEUED_B)} shows as steering too`);
  assert(withStore(dbFile, (s) => s.queueEntry(a.entry)?.steer) === true, 'the store does not have the steer request');
  // The pointer off the strip, so the picture shows no hovered button (cosmetic).
  await c.page.mouse.move(900, 700);
  await shot('e2e-run-control-queue');
  await shot(QUEUE_README.shot);
  assert(fk.requests.length === before + 1, `${fk.requests.length - before} model requests while the first one was held, expected 1`);

  // Released: the call ends with its tool call, and the tool batch is where the steer lands.
  gate.release();
  const ended = await h.waitFor('the steered turn to end and the queued prompt to run as the next turn', 30_000, async () => {
    const t = await transcript(view);
    return t.filter((l) => l.startsWith('end: ')).length === 2 && !t.includes('end: running') && (await strip(view)).length === 0 ? t : undefined;
  }, 100).catch(async (e: Error) => {
    throw new Error(`${e.message}; the transcript shows ${JSON.stringify(await transcript(view))}, the strip ${JSON.stringify(await strip(view))}`);
  });
  const expected = [
    `you: ${PROMPT}`,
    `vox: ${FIRST_TEXT}`,
    `steer: You, during the turn | ${QUEUED_A} | Not run, because this came first: write_file`,
    `vox: ${STEERED_ANSWER}`,
    'end: completed',
    `you: ${QUEUED_B}`,
    `vox: ${QUEUED_ANSWER}`,
    'end: completed',
  ];
  assert(JSON.stringify(ended) === JSON.stringify(expected), `the transcript is\n  ${ended.join('\n  ')}\nexpected\n  ${expected.join('\n  ')}`);
  assert((await view.locator('section.queue').count()) === 0, 'the queue strip is still there with nothing queued');

  // The tool call never ran: no file, no approval asked (write is "ask" in this session).
  assert(!fs.existsSync(path.join(workspace, SKIPPED_FILE)), `${SKIPPED_FILE} was written: the pre-empted write_file ran`);

  // What the model was sent: the steer after the call's "not run" result, then the queued prompt as a new turn.
  const reqs = fk.requests.slice(before);
  assert(reqs.length === 3, `expected 3 model requests (held call, after the steer, the queued turn), got ${reqs.length}`);
  const second = wireMessages(reqs[1]!.body);
  const last3 = second.slice(-3);
  assert(
    roles(last3) === 'assistant,tool,user' && last3[0]!.tool_calls?.[0]?.id === WRITE_CALL_ID && last3[1]!.tool_call_id === WRITE_CALL_ID &&
      last3[1]!.content === STEERED_TOOL_RESULT && last3[2]!.content === QUEUED_A,
    `the request after the steer ends with ${JSON.stringify(last3)}, expected the write_file call, its "not run" result and ${JSON.stringify(QUEUED_A)}`,
  );
  assert(!second.some((m) => m.role === 'user' && m.content === QUEUED_B), `the steered turn was sent ${JSON.stringify(QUEUED_B)}, which was only queued`);
  const third = wireMessages(reqs[2]!.body);
  assert(
    JSON.stringify(userTexts(third)) === JSON.stringify([PROMPT, QUEUED_A, QUEUED_B]) && third[third.length - 1]!.content === QUEUED_B,
    `the queued turn's request has the user messages ${JSON.stringify(userTexts(third))} (ending ${JSON.stringify(third[third.length - 1])}), expected the prompt, the steer, then ${JSON.stringify(QUEUED_B)}`,
  );

  // The engine's record: A steered run 1, B started run 2, both runs completed, nothing waits.
  withStore(dbFile, (s) => {
    const runs = s.runs(threadId);
    assert(runs.length === 2 && runs.every((r) => r.status === 'completed'), `the thread's runs: ${JSON.stringify(runs.map((r) => r.status))}`);
    const ea = s.queueEntry(a.entry);
    const eb = s.queueEntry(b.entry);
    assert(ea?.status === 'steered' && ea.runId === runs[0]!.id, `the steered entry is ${ea?.status} (run ${ea?.runId}), expected steered into ${runs[0]!.id}`);
    assert(eb?.status === 'started' && eb.runId === runs[1]!.id, `the queued entry is ${eb?.status} (run ${eb?.runId}), expected started as ${runs[1]!.id}`);
    assert(s.queue(threadId).length === 0, 'the store still has prompts queued');
  });
  await shot('e2e-run-control-steered');
}

/** Runs the three checks (each one named check through the context's runner). */
export async function runRunControlChecks(c: ChatContext, session: UiSession, names: typeof RUN_CONTROL_CHECKS = RUN_CONTROL_CHECKS): Promise<void> {
  const { o, timed, page: p, fake: fk, requireState, sidebar, scripted, holdBeforeEvent, send, shot, dbFile } = c;
  const workspace = session.dirs.workspace;

  // ---- 1. Queue during a run, reorder, steer; the agent takes it at the tool batch
  await o.check(names.runQueue, () =>
    timed(names.runQueue, () => {
      requireState('view', 'model');
      const gate = holdBeforeEvent(HOLD_BEFORE_FINISH);
      return scripted(
        [
          toolCallTurn([{ name: 'write_file', id: WRITE_CALL_ID, args: WRITE_ARGS, argChunks: WRITE_ARG_CHUNKS }], { text: [FIRST_TEXT], eventDelayMs: 10, holds: [gate.hold] }),
          textTurn(words(STEERED_ANSWER), { eventDelayMs: 10 }),
          textTurn(words(QUEUED_ANSWER), { eventDelayMs: 10 }),
        ],
        async () => {
          const view = await sidebar();
          try {
            await queueReorderSteer(c, workspace, view, gate);
          } catch (e) {
            await cancelLeftovers(view);
            throw e;
          }
        },
      );
    }), p);

  // ---- 2. A scripted 429: the countdown, Don't auto-resume, Resume now
  await o.check(names.runRateLimit, () =>
    timed(names.runRateLimit, () => {
      requireState('view', 'model');
      return scripted([rateLimited(RETRY_AFTER_S), textTurn(words(RL_ANSWER), { eventDelayMs: 10 })], async () => {
        const before = fk.requests.length;
        const view = await sidebar();
        await send(view, RL_PROMPT);
        const wait = view.locator('.wait');
        const what = view.locator('.wait .what');
        await wait.waitFor({ state: 'visible', timeout: 20_000 });
        const seconds = async (): Promise<{ text: string; n: number | null }> => {
          const text = (await what.innerText({ timeout: 2_000 })).replace(/\s+/g, ' ').trim();
          const m = /^Rate limited — resuming in (\d+)s$/.exec(text);
          return { text, n: m ? Number(m[1]) : null };
        };
        const first = await seconds();
        assert(first.n !== null, `the wait says ${JSON.stringify(first.text)}, expected "Rate limited — resuming in Ns"`);
        assert(first.n <= RETRY_AFTER_S + 1, `the countdown starts at ${first.n}s, more than the provider's retry-after (${RETRY_AFTER_S}s) and the margin`);
        assert((await view.locator('footer.run-status .working').innerText()).includes('Waiting for the rate limit'), 'the run\'s status line does not say it waits for the rate limit');
        let later = first;
        await h.waitFor('the countdown to go down', 5_000, async () => {
          later = await seconds();
          return later.n !== null && later.n < first.n!;
        }, 200).catch(() => {
          throw new Error(`the countdown did not go down: ${JSON.stringify(first.text)}, then ${JSON.stringify(later.text)}`);
        });
        h.log(`run control UI: countdown ${first.n}s, then ${later.n}s`);
        await shot('e2e-run-control-rate-limit');
        await shot(RATE_LIMIT_README.shot);
        assert(fk.requests.length === before + 1, `${fk.requests.length - before} requests before Resume now, expected only the refused one`);

        await wait.getByRole('button', { name: "Don't auto-resume" }).click({ timeout: 5_000 });
        await h.waitFor('the wait to say it waits for Resume now', 10_000, async () =>
          /^Rate limited — waiting for you to resume \(the limit resets in \d+s\)$/.test((await what.innerText()).replace(/\s+/g, ' ').trim()) &&
          (await wait.getByRole('button', { name: 'Auto-resume' }).count()) === 1,
        100).catch(async (e: Error) => {
          throw new Error(`${e.message}; it says ${JSON.stringify(await what.innerText().catch(() => '?'))}`);
        });
        const threadId = withStore(dbFile, (s) => threadIdOf(s, RL_PROMPT));
        const runId = withStore(dbFile, (s) => s.runs(threadId)[0]!.id);
        const stored = withStore(dbFile, (s) => s.rateLimitWait(runId));
        assert(stored && stored.autoResume === false && stored.source === 'provider', `the store's wait: ${JSON.stringify(stored)}, expected auto-resume off, from the provider's reset`);
        assert(fk.requests.length === before + 1, 'a request went out before Resume now');

        await wait.getByRole('button', { name: 'Resume now' }).click({ timeout: 5_000 });
        const samples = await watch(view, 'the retried call\'s answer', 20_000, (s) => s.status !== null && s.status !== 'running');
        const end = samples[samples.length - 1]!;
        assert(end.status === 'completed', `the run ended ${end.status}`);
        assert(end.text === RL_ANSWER, `the answer is ${JSON.stringify(end.text)}, expected ${JSON.stringify(RL_ANSWER)}`);
        assert((await wait.count()) === 0, 'the countdown is still shown after the answer');
        const reqs = fk.requests.slice(before);
        assert(reqs.length === 2, `expected 2 requests (the refused one and the retry), got ${reqs.length}`);
        assert(JSON.stringify(reqs[1]!.body?.messages) === JSON.stringify(reqs[0]!.body?.messages), 'the retry did not send the same messages as the refused call');
        withStore(dbFile, (s) => {
          const resumed = s.eventsAfter(0, { threadId }).flatMap((e) => (e.type === 'run.resumed' ? [e] : []));
          assert(resumed.length === 1 && resumed[0]!.by === 'user', `the store's run.resumed events: ${JSON.stringify(resumed)}, expected one, by the user`);
          assert(s.rateLimitWait(runId) === undefined, 'the store still has the wait');
        });
      });
    }), p);

  // ---- 3. Screenshots of both moments
  await o.check(names.runScreenshots, async () => {
    checkScreenshots(o, session.shots, ['e2e-run-control-queue', 'e2e-run-control-steered', 'e2e-run-control-rate-limit'], [QUEUE_README, RATE_LIMIT_README]);
  }, p);
}
