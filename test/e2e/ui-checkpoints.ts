/**
 * UI end to end of Vox checkpoints in a real VS Code: code-server + Debian Chromium driven through
 * playwright-core, one code-server session with a fresh profile (user data, HOME, browser
 * context) on a sample git workspace holding a committed `notes.txt` ("original\n"), and a
 * scripted OpenAI-compatible server (test/support/fake-openai-server.ts) on 127.0.0.1.
 *
 * The requirement: create a checkpoint through the agent, restore it from the Source
 * Control view, see the file change back. Called by test/e2e/run-e2e.mjs and
 * run-checkpoints-e2e.mjs; every check below is one named, counted check there:
 *   1. a prompt sent in the Vox chat; the model answers with `write_file notes.txt` (write
 *      approval set to auto) and then text: notes.txt changes on disk, two checkpoint refs
 *      appear under refs/vox/checkpoints/ and the user's HEAD does not move;
 *   2. the Source Control container shows "Vox Checkpoints": the thread (titled with the prompt),
 *      `#2 turn end` and `#1 before write_file`; #2 expands to notes.txt; screenshot
 *      test-results/e2e-checkpoints.png;
 *   3. the inline action "Compare Checkpoint with Working Tree" on #1 opens a diff editor titled
 *      `notes.txt (Checkpoint #1 ↔ Working Tree)` with "original" on the left and the agent's text
 *      on the right; screenshot test-results/e2e-checkpoints-diff.png;
 *   4. right-click #1 → "Restore Checkpoint…" → quick pick "Files only": notes.txt is "original\n"
 *      again on disk, a restore point ref exists, the notification offers Undo;
 *   5. the notifications cleared, "Undo restore" stays in the status bar; clicked, notes.txt is the agent's text again (the item goes); the user's HEAD, branch,
 *      index (`git ls-files -s`) and stash are what they were before the agent ran;
 *   6. a key set through "Vox: Set API Key" while the view is open (it applies to the next
 *      prompt, with no engine restart: the next requests carry it); a second thread (from an
 *      editor tab) writes todo.txt and its checkpoints appear in the open view without a refresh;
 *   7. screenshots are PNGs, the README picture is small enough (copied to
 *      docs/screenshot-checkpoints.png with `updateDocsScreenshot`).
 *
 * The session and screenshots are test/e2e/ui-session.ts's, the workbench helpers
 * test/e2e/ui-workbench.ts's, the git runner and the "user's repository unchanged" invariant
 * test/support/git.ts's and user-repo.ts's. Waits are condition-based with bounded timeouts; git
 * is run from this process, read-only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Locator } from 'playwright-core';
import * as h from './harness';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { git } from '../support/git';
import { assertRepoUnchanged, userRepoState } from '../support/user-repo';
import {
  AGENT_EDITS_SETTINGS,
  assert,
  checkScreenshots,
  createNotesWorkspace,
  readmePicture,
  WORKBENCH_REPO_EXCEPT,
  VOX_WEBVIEW,
  type UiCheckOptions,
} from './ui-session';
import {
  clickContextMenuItem,
  clickInlineAction,
  collapsePane,
  exactly,
  expandPane,
  expandRow,
  rowsLabelled,
  sendInNewThread,
  setApiKey,
  sideBarPane,
  toast,
  treeRow,
  waitForDiff,
  waitForEditorTab,
  widenSideBar,
} from './ui-workbench';
import { defineUiSet } from './ui-set';

const OPENAI_MODEL = 'openai:gpt-e2e';
const NOTES = 'notes.txt';
const ORIGINAL = 'original\n';
const CHANGED = 'changed by the agent\n';
const PROMPT = 'Please rewrite notes.txt';
const ANSWER = ['Rewrote ', NOTES, ' for you.'];
/** The second turn (after the new key): a new thread writing a new file. */
const PROMPT2 = 'Now write todo.txt';
const TODO = 'todo.txt';
const TODO_CONTENT = 'written by a second thread\n';
const API_KEY = 'sk-e2e-checkpoints-0123456789';
/** The picture the README shows (test-results/screenshot-checkpoints.png; docs/ with `updateDocsScreenshot`). */
const README = readmePicture('screenshot-checkpoints', 300 * 1024);
export const DOCS_SCREENSHOT = README.docsFile;

/** The names the runner reports, in order. */
export const CHECKPOINT_CHECKS = {
  agent: 'checkpoints UI: the agent\'s write_file changes notes.txt and takes checkpoints (hidden refs, HEAD unmoved)',
  view: 'checkpoints UI: Source Control shows Vox Checkpoints: thread → #2 turn end, #1 before write_file → notes.txt',
  compare: 'checkpoints UI: Compare with Working Tree on #1 opens the diff "original" ↔ the agent\'s text',
  restore: 'checkpoints UI: Restore #1 → "Files only" from the context menu puts notes.txt back, with Undo offered',
  undo: 'checkpoints UI: with the notification cleared, "Undo restore" in the status bar brings the agent\'s text back (and goes); HEAD, branch, index and stash untouched',
  live: 'checkpoints UI: a second thread (editor tab, after "Vox: Set API Key", whose key its requests carry) shows its checkpoints in the open view by itself',
  screenshots: 'checkpoints UI: screenshots in test-results/ and the README picture',
} as const;

/** The runner's options (see UiCheckOptions); `updateDocsScreenshot` copies docs/screenshot-checkpoints.png. */
export type CheckpointUiOptions = UiCheckOptions;

// ---------------------------------------------------------------------------------------------
// Small helpers

function refsUnder(ws: string, prefix: string): string[] {
  return git(ws, ['for-each-ref', '--format=%(refname)', prefix]).split('\n').filter(Boolean);
}

const readNotes = (ws: string): string => fs.readFileSync(path.join(ws, NOTES), 'utf8');

/** Waits until notes.txt holds `want`; the error shows what it holds instead. */
async function waitForNotes(ws: string, want: string, what: string, ms = 20_000): Promise<void> {
  let last = '';
  try {
    await h.waitFor(what, ms, async () => (last = readNotes(ws)) === want, 100);
  } catch {
    throw new Error(`${what}: ${NOTES} holds ${JSON.stringify(last)} after ${ms} ms, expected ${JSON.stringify(want)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The chat webview

/** The last run's footer status and its assistant text, as the webview renders them. */
async function lastRun(frame: Frame): Promise<{ runs: number; status: string | null; text: string; tools: string[] }> {
  return (await frame.evaluate(`(() => {
    const runs = document.querySelectorAll('article.run');
    const run = runs[runs.length - 1];
    return {
      runs: runs.length,
      status: run ? (run.querySelector('footer.run-status')?.getAttribute('data-status') ?? null) : null,
      text: run ? Array.from(run.querySelectorAll('.message.assistant')).map((b) => b.innerText).join('') : '',
      tools: run ? Array.from(run.querySelectorAll('section.tool')).map((t) => t.getAttribute('data-status') ?? '') : [],
    };
  })()`)) as { runs: number; status: string | null; text: string; tools: string[] };
}

// ---------------------------------------------------------------------------------------------
// The checkpoints tree, seen from the page

/** Labels of the pane's visible rows, for error messages. */
async function rowLabels(pane: Locator): Promise<string[]> {
  return (await pane.locator('.monaco-list-row .label-name').allTextContents().catch(() => [])).map((s) => s.trim());
}

/** Waits for a row; the error lists the rows the pane shows. */
async function waitRow(pane: Locator, label: string, ms = 15_000): Promise<Locator> {
  const row = treeRow(pane, label);
  try {
    await row.waitFor({ state: 'visible', timeout: ms });
  } catch {
    throw new Error(`no row "${label}" in Vox Checkpoints after ${ms} ms (rows: ${(await rowLabels(pane)).join(' | ') || 'none'})`);
  }
  return row;
}

// ---------------------------------------------------------------------------------------------
// The checks

export const runCheckpointChecks = defineUiSet({
  name: 'checkpoints UI',
  dir: 'cp',
  checks: CHECKPOINT_CHECKS,
  state: { agent: false, view: false, restored: false },
  fake: {
    responses: [
      toolCallTurn([{ name: 'write_file', args: { path: NOTES, content: CHANGED } }], { eventDelayMs: 10, usage: { inputTokens: 100, outputTokens: 20 } }),
      textTurn(ANSWER, { eventDelayMs: 10, usage: { inputTokens: 130, outputTokens: 8 } }),
    ],
  },
  workspace: (ws) => createNotesWorkspace(ws, NOTES, ORIGINAL),
  /** The user's repository before any check: what the checks compare it with. */
  prepare: ({ dirs }) => userRepoState(dirs.workspace),
  settings: ({ fake }) => ({
    'vox.model': OPENAI_MODEL,
    'vox.models': [OPENAI_MODEL],
    'vox.openaiBaseUrl': fake.baseUrl,
    ...AGENT_EDITS_SETTINGS,
  }),
  run: async ({ o, page: p, shots, shot, openWorkbench, check, requireState, state, dirs, fake: fk, setup: base }) => {
    const ws = dirs.workspace;
    let restoreNotice: Locator | undefined;

    // ---- 1. The agent changes notes.txt; checkpoints are taken
    await check(CHECKPOINT_CHECKS.agent, async () => {
      const since = await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      const view = (await h.waitForWebview(p, VOX_WEBVIEW, { within: '.part.sidebar', timeoutMs: 20_000, retries: 2 })).content;
      h.log(`checkpoints UI: chat view rendered after ${since()}`);
      await h.waitFor(`the model picker to show ${OPENAI_MODEL}`, 20_000, async () => (await view.locator('.model-row select').inputValue({ timeout: 2_000 })) === OPENAI_MODEL);
      assert(readNotes(ws) === ORIGINAL, `${NOTES} is not "original" before the prompt`);
      assert(refsUnder(ws, 'refs/vox/').length === 0, 'checkpoint refs exist before the prompt');

      await sendInNewThread(view, PROMPT);
      await waitForNotes(ws, CHANGED, `the agent's write_file to change ${NOTES}`, 30_000);
      h.log(`checkpoints UI: ${NOTES} changed after ${since()}`);
      const end = await h.waitFor('the run to end', 30_000, async () => {
        const r = await lastRun(view);
        return r.status !== null && r.status !== 'running' ? r : undefined;
      }, 100);
      assert(end.status === 'completed', `the run ended ${end.status}`);
      assert(end.text === ANSWER.join(''), `the answer shows ${JSON.stringify(end.text)}, expected ${JSON.stringify(ANSWER.join(''))}`);
      assert(end.tools.length === 1 && end.tools[0] === 'completed', `tool sections: ${JSON.stringify(end.tools)}, expected one completed write_file`);
      assert(fk.requests.length === 2, `expected 2 model requests (tool call, then answer), got ${fk.requests.length}`);
      assert(fk.pending() === 0, `${fk.pending()} scripted response(s) not consumed`);

      // The turn-end checkpoint is taken after the answer: wait for it rather than race it.
      const cps = await h.waitFor('two checkpoint refs (before write_file, turn end)', 15_000, async () => {
        const refs = refsUnder(ws, 'refs/vox/checkpoints/');
        return refs.length >= 2 ? refs : undefined;
      });
      assert(cps.length === 2, `expected 2 checkpoint refs, got ${cps.length}: ${cps.join(', ')}`);
      const first = cps.find((r) => r.endsWith('/1'));
      assert(first, `no checkpoint #1 among ${cps.join(', ')}`);
      assert(git(ws, ['show', `${first}:${NOTES}`]) === ORIGINAL, `checkpoint #1 does not hold the original ${NOTES}`);
      assertRepoUnchanged(base, userRepoState(ws), { except: WORKBENCH_REPO_EXCEPT, what: "the user's repository (while checkpoints were taken)" });
      state.agent = true;
    });

    // ---- 2. The Vox Checkpoints view in Source Control
    await check(CHECKPOINT_CHECKS.view, async () => {
      requireState('agent');
      // Shows the Source Control container and focuses the view (its title is the view's name).
      await h.runCommand(p, 'Source Control: Focus on Vox Checkpoints View', 20_000);
      const pane = await expandPane(p, 'Vox Checkpoints');
      // Room for the tree (the list only renders rows that fit) and its descriptions.
      await collapsePane(p, 'Graph').catch((e: unknown) => h.log(`checkpoints UI: ${String(e)}`));
      await widenSideBar(p, 430);
      // The thread, expanded by default, newest checkpoint first.
      const thread = await waitRow(pane, PROMPT, 20_000);
      const threadText = (await thread.textContent()) ?? '';
      assert(threadText.includes('2 checkpoints'), `the thread row says ${JSON.stringify(threadText)}, expected "2 checkpoints"`);
      const cp2 = await waitRow(pane, '#2 turn end');
      const cp1 = await waitRow(pane, '#1 before write_file');
      const labels = await rowLabels(pane);
      assert(
        labels.indexOf(PROMPT) < labels.indexOf('#2 turn end') && labels.indexOf('#2 turn end') < labels.indexOf('#1 before write_file'),
        `rows are not thread → #2 → #1: ${labels.join(' | ')}`,
      );
      const cp2Text = (await cp2.textContent()) ?? '';
      h.log(`checkpoints UI: tree rows: ${(await pane.locator('.monaco-list-row').allTextContents()).map((t) => t.trim()).join(' | ')}`);
      assert(/1 file changed/.test(cp2Text), `#2 says ${JSON.stringify(cp2Text)}, expected "1 file changed"`);
      assert(/files? changed/.test((await cp1.textContent()) ?? ''), '#1 has no "files changed" description');
      // #2 changed notes.txt: expanding it lists the file.
      await expandRow(cp2);
      const file = await waitRow(pane, NOTES);
      assert((await file.getAttribute('aria-level')) === '3', `${NOTES} is not a child of #2 (level ${await file.getAttribute('aria-level')})`);
      await p.mouse.move(5, 5); // no hover highlight in the picture
      await shot('e2e-checkpoints');
      state.view = true;
    });

    // ---- 3. Compare #1 with the working tree (inline action)
    await check(CHECKPOINT_CHECKS.compare, async () => {
      requireState('agent', 'view');
      const pane = sideBarPane(p, 'Vox Checkpoints');
      await clickInlineAction(await waitRow(pane, '#1 before write_file'), 'Compare Checkpoint with Working Tree');
      const tab = await waitForEditorTab(p, 'Checkpoint #1', '…Checkpoint #1…');
      const title = ((await tab.textContent()) ?? '').trim();
      assert(title.includes(NOTES) && title.includes('Working Tree'), `the diff tab is titled ${JSON.stringify(title)}`);
      const sides = await waitForDiff(
        p,
        (d) => d.original.includes(ORIGINAL.trim()) && d.modified.includes(CHANGED.trim()),
        `"original" ↔ "${CHANGED.trim()}"`,
        10_000,
      );
      assert(!sides.original.includes(CHANGED.trim()), 'the checkpoint side of the diff shows the agent\'s text');
      await p.mouse.move(5, 5);
      await h.sleep(300); // the diff decorations settle (cosmetic)
      await shot('e2e-checkpoints-diff');
      await shot(README.shot);
    });

    // ---- 4. Restore #1, files only (context menu)
    await check(CHECKPOINT_CHECKS.restore, async () => {
      requireState('agent', 'view');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      const pane = sideBarPane(p, 'Vox Checkpoints');
      await clickContextMenuItem(p, await waitRow(pane, '#1 before write_file'), 'Restore Checkpoint…');
      const widget = p.locator('.quick-input-widget');
      const input = widget.locator('.quick-input-box input');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      const placeholder = await input.getAttribute('placeholder');
      assert(placeholder === 'Restore checkpoint #1', `the quick pick asks ${JSON.stringify(placeholder)}, expected "Restore checkpoint #1"`);
      const rows = widget.locator('.quick-input-list .monaco-list-row');
      // Each row's first label is the item's label (its detail line is another label below).
      const modes = await rows.evaluateAll((els) => els.map((el) => el.querySelector('.label-name')?.textContent?.trim() ?? ''));
      assert(
        JSON.stringify(modes) === JSON.stringify(['Files and conversation', 'Files only', 'Conversation only']),
        `restore modes offered: ${JSON.stringify(modes)}`,
      );
      assert(readNotes(ws) === CHANGED, `${NOTES} changed before a mode was picked`);
      await shot('e2e-checkpoints-restore-pick');
      await rows.filter({ has: p.locator('.label-name', { hasText: exactly('Files only') }) }).first().click({ timeout: 5_000 });
      await waitForNotes(ws, ORIGINAL, `"Files only" to restore ${NOTES}`);
      restoreNotice = toast(p, 'to checkpoint #1');
      await restoreNotice.waitFor({ state: 'visible', timeout: 15_000 });
      const text = ((await restoreNotice.textContent()) ?? '').trim();
      assert(/restored 1 file\(s\) to checkpoint #1/.test(text), `the notification says ${JSON.stringify(text)}`);
      await restoreNotice.getByRole('button', { name: 'Undo' }).waitFor({ state: 'visible', timeout: 5_000 });
      const points = refsUnder(ws, 'refs/vox/restore-points/');
      assert(points.length === 1, `expected 1 restore point ref, got ${points.length}`);
      assert(git(ws, ['show', `${points[0]}:${NOTES}`]) === CHANGED, 'the restore point does not hold the agent\'s text');
      assert(git(ws, ['status', '--porcelain']) === '', `the restored workspace is not clean: ${git(ws, ['status', '--porcelain'])}`);
      await shot('e2e-checkpoints-restored');
      state.restored = true;
    });

    // ---- 5. Undo after the notification is gone: the status-bar item stays until used
    await check(CHECKPOINT_CHECKS.undo, async () => {
      requireState('restored');
      await h.runCommand(p, 'Notifications: Clear All Notifications');
      const item = p.locator('.statusbar-item', { hasText: 'Undo restore' }).first();
      await item.waitFor({ state: 'visible', timeout: 10_000 });
      await item.click({ timeout: 5_000 });
      await waitForNotes(ws, CHANGED, `Undo to bring back the agent's ${NOTES}`);
      await toast(p, /restore undone \(1 file\(s\)/).waitFor({ state: 'visible', timeout: 15_000 });
      assert(base.stash === '', `git stash list was not empty before the agent ran: ${base.stash}`);
      assertRepoUnchanged(base, userRepoState(ws), { except: WORKBENCH_REPO_EXCEPT });
      const status = git(ws, ['status', '--porcelain']);
      assert(status === ` M ${NOTES}\n`, `git status after Undo: ${JSON.stringify(status)}, expected " M ${NOTES}"`);
      assert(refsUnder(ws, 'refs/vox/checkpoints/').length === 2, 'checkpoint refs changed through restore + undo');
      await p.locator('.statusbar-item', { hasText: 'Undo restore' }).first().waitFor({ state: 'hidden', timeout: 10_000 })
        .catch(() => { throw new Error('the "Undo restore" item is still in the status bar after the undo'); });
    });

    // ---- 6. The open view follows a new thread's checkpoints by itself
    await check(CHECKPOINT_CHECKS.live, async () => {
      requireState('agent', 'view');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      // The engine reads keys when a prompt resolves its model: the new one applies to the
      // next turn, with the engine (and the view's subscription to it) as they were.
      await setApiKey(p, 'openai', API_KEY, { timeoutMs: 20_000 });
      const sentBefore = fk.requests.length;

      const pane = sideBarPane(p, 'Vox Checkpoints');
      assert(await pane.isVisible(), 'the Vox Checkpoints view is not on screen');
      const turnEnds = rowsLabelled(pane, '#2 turn end');
      const before2 = await turnEnds.count();
      assert(before2 === 1, `the view shows ${before2} "#2 turn end" rows before the second turn, expected 1`);

      // A second thread from an editor tab, so the side bar keeps showing the view.
      fk.push(
        toolCallTurn([{ name: 'write_file', args: { path: TODO, content: TODO_CONTENT } }], { eventDelayMs: 10 }),
        textTurn(['Wrote ', TODO, '.'], { eventDelayMs: 10 }),
      );
      await h.runCommand(p, 'Vox: Open Chat in Editor Tab');
      const tab = (await h.waitForWebview(p, VOX_WEBVIEW, { within: '.part.editor', timeoutMs: 20_000, retries: 2 })).content;
      await sendInNewThread(tab, PROMPT2);
      await h.waitFor(`the agent to write ${TODO}`, 30_000, async () => fs.existsSync(path.join(ws, TODO)) && fs.readFileSync(path.join(ws, TODO), 'utf8') === TODO_CONTENT, 100);
      const end = await h.waitFor('the second run to end', 30_000, async () => {
        const r = await lastRun(tab);
        return r.status !== null && r.status !== 'running' ? r : undefined;
      }, 100);
      assert(end.status === 'completed', `the second run ended ${end.status}`);
      const sent = fk.requests.slice(sentBefore).map((r) => r.headers.authorization);
      assert(sent.length === 2 && sent.every((a) => a === `Bearer ${API_KEY}`), `the second thread's requests carried ${JSON.stringify(sent)}, expected the new key on both`);
      await h.waitFor('the second thread\'s turn-end checkpoint ref', 15_000, async () => refsUnder(ws, 'refs/vox/checkpoints/').length === 4);

      // No refresh clicked: the view must pick the new thread up from the engine's events.
      try {
        await treeRow(pane, PROMPT2).waitFor({ state: 'visible', timeout: 10_000 });
        await h.waitFor('two "#2 turn end" rows', 5_000, async () => (await turnEnds.count()) === 2, 200);
      } catch {
        throw new Error(`the open view did not show the new thread's checkpoints within 15 s of them being taken (rows: ${(await rowLabels(pane)).join(' | ')})`);
      }
      await shot('e2e-checkpoints-live');
    });

    // ---- 7. Screenshots: artifacts + the README picture
    await o.check(CHECKPOINT_CHECKS.screenshots, async () => {
      const taken = ['e2e-checkpoints', 'e2e-checkpoints-diff', 'e2e-checkpoints-restore-pick', 'e2e-checkpoints-restored', 'e2e-checkpoints-live'];
      checkScreenshots(o, shots, taken, README);
    }, p);
  },
});
