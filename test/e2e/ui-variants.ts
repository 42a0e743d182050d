/**
 * UI end to end of Vox variants in a real VS Code: code-server + Debian Chromium driven through
 * playwright-core, one code-server session with a fresh profile (user data, HOME, browser
 * context) on a sample git workspace holding a committed `notes.txt` ("original\n"), and scripted
 * OpenAI-compatible servers (test/support/fake-openai-server.ts) on 127.0.0.1.
 *
 * The two variants run at the same time, so the order of their model requests is not fixed: a
 * small router (test/e2e/model-router.ts) in front of the fake servers sends each request to the
 * script of the model it names (`muse-alpha` → one fake server, `muse-beta` → another), so
 * variant #0 and variant #1 deterministically write different text to notes.txt with `write_file`.
 *
 * The requirement: the README shows the variants workflow with a picture from this run.
 * Called by test/e2e/run-e2e.mjs (and run-checkpoints-e2e.mjs); every check below is one named,
 * counted check there:
 *   1. "Vox: Run Prompt as Variants…" from the command palette: the prompt typed into its input
 *      box, a second model ticked in its multi-select quick pick; two worktrees appear under
 *      .vox/worktrees/muse/, each variant's notes.txt holds its model's text, each fake server
 *      answered exactly its own model's two requests; the main workspace, HEAD and index do not
 *      change;
 *   2. the Source Control container shows "Vox Variants": the prompt, `#0 openai:muse-alpha` and
 *      `#1 openai:muse-beta`, both `completed` with their diff stats (`1 file +1 −1`,
 *      `1 file +2 −1`); screenshot test-results/e2e-variants.png;
 *   3. the inline action "Open Variant Diff" on #1 opens a diff editor titled
 *      `Variant #1 (openai:muse-beta) vs base — in the variant's worktree` with "original" on the left and variant #1's text
 *      on the right; screenshot test-results/screenshot-variants.png (the README picture);
 *   4. the inline action "Adopt Variant" on #1 → "Adopt" in the confirmation dialog: the main
 *      notes.txt holds exactly variant #1's text (read from disk here), HEAD, branch, index
 *      (`git ls-files -s`) and stash are unchanged, `git worktree list` shows only the main
 *      worktree (the other variant's worktree is removed too), the view no longer lists the set;
 *   4b. the adopted variant's diff tab closes, and after "Developer: Reload Window" no
 *      "Variant #" tab comes back (its worktree is gone);
 *   5. screenshots are PNGs, the README picture is small enough (copied to
 *      docs/screenshot-variants.png with `updateDocsScreenshot`).
 *
 * The session and screenshots are test/e2e/ui-session.ts's, the workbench helpers
 * test/e2e/ui-workbench.ts's, the git runner and the "user's repository unchanged" invariant
 * test/support/git.ts's and user-repo.ts's. Waits are condition-based with bounded timeouts; git
 * is run from this process, read-only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import * as h from './harness';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { git } from '../support/git';
import { assertRepoUnchanged, userRepoState } from '../support/user-repo';
import { startModelRouter, type ModelRouter } from './model-router';
import {
  AGENT_EDITS_SETTINGS,
  assert,
  checkScreenshots,
  createNotesWorkspace,
  readmePicture,
  WORKBENCH_REPO_EXCEPT,
  type UiCheckOptions,
} from './ui-session';
import {
  clickInlineAction,
  collapsePane,
  errorToasts,
  exactly,
  expandPane,
  sideBarPane,
  toast,
  treeRow,
  waitForDiff,
  waitForEditorTab,
  widenSideBar,
} from './ui-workbench';
import { defineUiSet } from './ui-set';

const NOTES = 'notes.txt';
const ORIGINAL = 'original\n';
const PROMPT = 'Rewrite notes.txt in your own words';
/** The two models, in the order the quick pick lists them (= the variants' indexes). */
const MODELS = [
  { ref: 'openai:muse-alpha', wire: 'muse-alpha', content: 'alpha: one short line\n', stats: '1 file +1 −1', answer: 'Alpha rewrote notes.txt.' },
  { ref: 'openai:muse-beta', wire: 'muse-beta', content: 'beta: a first line\nbeta: and a second one\n', stats: '1 file +2 −1', answer: 'Beta rewrote notes.txt.' },
] as const;
/** The variant the checks open and adopt (index into MODELS = the variant's index). */
const ADOPT = 1;
/** The picture the README shows (test-results/screenshot-variants.png; docs/ with `updateDocsScreenshot`). */
const README = readmePicture('screenshot-variants', 300 * 1024);
export const DOCS_SCREENSHOT = README.docsFile;

const variantLabel = (i: number): string => `#${i} ${MODELS[i]!.ref}`;

/** The names the runner reports, in order. */
export const VARIANT_CHECKS = {
  start: 'variants UI: "Vox: Run Prompt as Variants…" with two models runs each in its own worktree, writing different notes.txt',
  view: 'variants UI: Source Control shows Vox Variants: #0 and #1 completed with their diff stats',
  diff: 'variants UI: Open Variant Diff on #1 opens the diff "original" ↔ variant #1\'s text',
  adopt: 'variants UI: Adopt #1 puts exactly its text in the workspace; HEAD, branch, index unchanged; worktrees removed',
  staleTab: 'variants UI: the adopted variant\'s diff tab closes and does not come back after "Developer: Reload Window"',
  screenshots: 'variants UI: screenshots in test-results/ and the README picture',
} as const;

/** The runner's options (see UiCheckOptions); `updateDocsScreenshot` copies docs/screenshot-variants.png. */
export type VariantUiOptions = UiCheckOptions;

// ---------------------------------------------------------------------------------------------
// Small helpers

/** `git worktree list --porcelain` as paths (the main worktree first). */
function worktreePaths(ws: string): string[] {
  return git(ws, ['worktree', 'list', '--porcelain'])
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

const readFileOr = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------------------------------------
// The variants tree, seen from the page

/** The pane's visible rows as "label — description", for error messages. */
async function rowTexts(pane: Locator): Promise<string[]> {
  return pane
    .locator('.monaco-list-row')
    .evaluateAll((els) =>
      els.map((el) => {
        const name = el.querySelector('.label-name')?.textContent?.trim() ?? '';
        const desc = el.querySelector('.label-description')?.textContent?.trim() ?? '';
        return desc ? `${name} — ${desc}` : name;
      }),
    )
    .catch(() => []);
}

/** The description (grey text after the label) of a row. */
async function rowDescription(row: Locator): Promise<string> {
  return ((await row.locator('.label-description').first().textContent({ timeout: 2_000 })) ?? '').trim();
}

/** No hover highlight and no focus outline (a collapsed pane's header keeps one) in a picture. */
async function settleForPicture(page: Page): Promise<void> {
  await page.mouse.move(5, 5);
  await page.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()').catch(() => {});
}

// ---------------------------------------------------------------------------------------------
// The checks

export const runVariantChecks = defineUiSet({
  name: 'variants UI',
  dir: 'var',
  checks: VARIANT_CHECKS,
  state: { started: false, view: false },
  workspace: (ws) => createNotesWorkspace(ws, NOTES, ORIGINAL),
  /** One fake server per model, the router in front of them, and the user's repository before any check. */
  prepare: async ({ dirs, onClose }) => {
    const fakes: FakeServer[] = [];
    const backends: Record<string, FakeServer> = {};
    for (const m of MODELS) {
      const fk = await startFakeOpenAI({
        responses: [
          toolCallTurn([{ name: 'write_file', args: { path: NOTES, content: m.content } }], { eventDelayMs: 10, usage: { inputTokens: 100, outputTokens: 20 } }),
          textTurn(m.answer, { eventDelayMs: 10, usage: { inputTokens: 130, outputTokens: 8 } }),
        ],
      });
      onClose(() => fk.close());
      fakes.push(fk);
      backends[m.wire] = fk;
    }
    const router: ModelRouter = await startModelRouter(backends);
    onClose(() => router.close());
    return { fakes, router, base: userRepoState(dirs.workspace) };
  },
  settings: ({ setup }) => ({
    'vox.model': MODELS[0].ref,
    'vox.models': MODELS.map((m) => m.ref),
    'vox.openaiBaseUrl': setup.router.baseUrl,
    ...AGENT_EDITS_SETTINGS,
  }),
  run: async ({ o, page: p, shots, shot, openWorkbench, check, requireState, state, dirs, setup }) => {
    const ws = dirs.workspace;
    const { fakes, router: rt, base } = setup;
    /** Worktree of variant i (from `git worktree list`, by its `variant-<i>` folder). */
    const worktrees: string[] = [];

    // ---- 1. Start the variants from the command palette
    await check(VARIANT_CHECKS.start, async () => {
      const since = await openWorkbench();
      assert(worktreePaths(ws).length === 1, `worktrees exist before the variants: ${worktreePaths(ws).join(', ')}`);

      // The command starts the engine, then asks for the prompt in an input box.
      await h.runCommand(p, 'Vox: Run Prompt as Variants…', 45_000, { opensQuickInput: true });
      const widget = p.locator('.quick-input-widget');
      try {
        await widget.locator('.quick-input-message', { hasText: 'Prompt to run as 1..4 variants' }).waitFor({ state: 'visible', timeout: 30_000 });
      } catch {
        throw new Error(`no prompt input box after "Vox: Run Prompt as Variants…" (toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
      }
      await h.answerQuickInput(p, PROMPT);

      // Then a multi-select quick pick of the models; the current model (muse-alpha) is ticked.
      const input = widget.locator('.quick-input-box input');
      await h.waitFor('the model quick pick', 15_000, async () => ((await input.getAttribute('placeholder')) ?? '').startsWith('Pick 1..4 models'), 100);
      const rows = widget.locator('.quick-input-list .monaco-list-row');
      const offered = await rows.evaluateAll((els) => els.map((el) => el.querySelector('.label-name')?.textContent?.trim() ?? ''));
      for (const m of MODELS) assert(offered.includes(m.ref), `the quick pick offers ${JSON.stringify(offered)}, no ${m.ref}`);
      const rowOf = (ref: string): Locator => rows.filter({ has: p.locator('.label-name', { hasText: exactly(ref) }) }).first();
      const checked = async (ref: string): Promise<boolean> => (await rowOf(ref).getAttribute('aria-checked')) === 'true';
      assert(await checked(MODELS[0].ref), `${MODELS[0].ref} (the current model) is not ticked`);
      assert(!(await checked(MODELS[1].ref)), `${MODELS[1].ref} is ticked before it was clicked`);
      await rowOf(MODELS[1].ref).click({ timeout: 5_000 });
      await h.waitFor(`${MODELS[1].ref} to be ticked`, 5_000, () => checked(MODELS[1].ref), 100);
      const ticked = await rows.evaluateAll((els) =>
        els.filter((el) => el.getAttribute('aria-checked') === 'true').map((el) => el.querySelector('.label-name')?.textContent?.trim() ?? ''),
      );
      assert(JSON.stringify(ticked) === JSON.stringify(MODELS.map((m) => m.ref)), `ticked models: ${JSON.stringify(ticked)}`);
      await shot('e2e-variants-pick');
      await p.keyboard.press('Enter');
      await widget.waitFor({ state: 'hidden', timeout: 10_000 });
      h.log(`variants UI: started after ${since()}`);

      // Two worktrees, one per variant, each gets its own model's text.
      const wts = await h.waitFor('two variant worktrees', 60_000, async () => {
        const list = worktreePaths(ws).slice(1);
        return list.length === MODELS.length ? list : undefined;
      }, 200);
      for (let i = 0; i < MODELS.length; i++) {
        const wt = wts.find((w) => path.basename(w) === `variant-${i}`);
        assert(wt, `no worktree .../variant-${i} among ${wts.join(', ')}`);
        assert(wt.startsWith(path.join(fs.realpathSync(ws), '.vox', 'worktrees', 'muse') + path.sep), `variant ${i}'s worktree ${wt} is not under .vox/worktrees/muse/`);
        worktrees[i] = wt;
      }
      for (let i = 0; i < MODELS.length; i++) {
        let last: string | undefined;
        try {
          await h.waitFor(`variant ${i} to write ${NOTES}`, 60_000, async () => (last = readFileOr(path.join(worktrees[i]!, NOTES))) === MODELS[i]!.content, 100);
        } catch {
          throw new Error(`variant ${i}'s ${NOTES} holds ${JSON.stringify(last)}, expected ${JSON.stringify(MODELS[i]!.content)} (toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
        }
      }
      h.log(`variants UI: both variants wrote ${NOTES} after ${since()}`);
      // Each model answered its own two requests (the tool call, then the answer).
      await h.waitFor('both scripts consumed', 30_000, async () => fakes.every((f) => f.pending() === 0), 100);
      for (let i = 0; i < MODELS.length; i++) {
        const reqs = fakes[i]!.requests;
        assert(reqs.length === 2, `${MODELS[i]!.wire} got ${reqs.length} requests, expected 2`);
        assert(reqs.every((r) => r.body?.model === MODELS[i]!.wire), `${MODELS[i]!.wire}'s server got requests for ${reqs.map((r) => r.body?.model).join(', ')}`);
      }
      assert(rt.unrouted.length === 0, `requests for no known model: ${rt.unrouted.join('; ')}`);
      // The main workspace is untouched: its notes.txt, HEAD, index; .vox/ is excluded from status.
      assert(readFileOr(path.join(ws, NOTES)) === ORIGINAL, `the main workspace's ${NOTES} changed while the variants ran`);
      assertRepoUnchanged(base, userRepoState(ws), { except: WORKBENCH_REPO_EXCEPT });
      const status = git(ws, ['status', '--porcelain']);
      assert(status === '', `git status of the main workspace is not clean: ${JSON.stringify(status)}`);
      state.started = true;
    });

    // ---- 2. The Vox Variants view in Source Control
    await check(VARIANT_CHECKS.view, async () => {
      requireState('started');
      // The start command focuses the view itself; the palette is the fallback.
      if (!(await sideBarPane(p, 'Vox Variants').isVisible())) {
        h.log('variants UI: Vox Variants not on screen after the start; focusing it from the palette');
        await h.runCommand(p, 'Source Control: Focus on Vox Variants View', 20_000);
      }
      const pane = await expandPane(p, 'Vox Variants');
      // Room for the tree and its descriptions (cosmetic: the picture).
      for (const other of ['Vox Checkpoints', 'Graph']) await collapsePane(p, other).catch((e: unknown) => h.log(`variants UI: ${String(e)}`));
      await widenSideBar(p, 430);
      const group = treeRow(pane, PROMPT);
      try {
        await group.waitFor({ state: 'visible', timeout: 20_000 });
      } catch {
        throw new Error(`no row "${PROMPT}" in Vox Variants (rows: ${(await rowTexts(pane)).join(' | ') || 'none'})`);
      }
      assert((await rowDescription(group)) === `${MODELS.length} variants`, `the set's row says ${JSON.stringify(await rowDescription(group))}`);
      // Both variants finished, with their own stats (the view follows the pool's events).
      const want = MODELS.map((m, i) => `${variantLabel(i)} — completed · ${m.stats}`);
      try {
        await h.waitFor('both variants completed with diff stats', 30_000, async () => {
          const rows = await rowTexts(pane);
          return want.every((w) => rows.includes(w));
        }, 200);
      } catch {
        throw new Error(`Vox Variants shows ${JSON.stringify(await rowTexts(pane))}, expected rows ${JSON.stringify(want)}`);
      }
      const rows = await rowTexts(pane);
      h.log(`variants UI: tree rows: ${rows.join(' | ')}`);
      assert(rows.indexOf(want[0]!) > rows.findIndex((r) => r.startsWith(PROMPT)) && rows.indexOf(want[0]!) < rows.indexOf(want[1]!), `rows are not set → #0 → #1: ${rows.join(' | ')}`);
      for (let i = 0; i < MODELS.length; i++) {
        const row = treeRow(pane, variantLabel(i));
        assert((await row.getAttribute('aria-level')) === '2', `${variantLabel(i)} is not a child of the set`);
      }
      await settleForPicture(p);
      await shot('e2e-variants');
      state.view = true;
    });

    // ---- 3. Open Diff on variant #1 (inline action)
    await check(VARIANT_CHECKS.diff, async () => {
      requireState('started', 'view');
      const pane = sideBarPane(p, 'Vox Variants');
      await clickInlineAction(treeRow(pane, variantLabel(ADOPT)), 'Open Variant Diff');
      const title = `Variant #${ADOPT} (${MODELS[ADOPT].ref}) vs base — in the variant's worktree`;
      const tab = await waitForEditorTab(p, `Variant #${ADOPT}`, title, async () => `; toasts: ${(await errorToasts(p)).join(' | ') || 'none'}`);
      const tabText = ((await tab.textContent()) ?? '').trim();
      assert(tabText.includes(title), `the diff tab is titled ${JSON.stringify(tabText)}, expected ${JSON.stringify(title)}`);
      const want = MODELS[ADOPT].content.trim().split('\n');
      const sides = await waitForDiff(
        p,
        (d) => d.original.includes(ORIGINAL.trim()) && want.every((l) => d.modified.includes(l)),
        `"original" ↔ ${JSON.stringify(MODELS[ADOPT].content)}`,
        15_000,
      );
      assert(!sides.modified.includes(ORIGINAL.trim()), 'the variant side of the diff still shows "original"');
      for (const other of MODELS.filter((_, i) => i !== ADOPT)) assert(!sides.modified.includes(other.content.trim()), `the diff shows ${other.ref}'s text`);
      // The file in the diff is the variant's own (in its worktree), not the main workspace's.
      const fileLabel = await p.locator('.part.editor').innerText({ timeout: 2_000 }).catch(() => '');
      assert(fileLabel.includes(NOTES), `the diff editor does not name ${NOTES}`);
      await settleForPicture(p);
      await h.sleep(300); // the diff decorations settle (cosmetic)
      await shot('e2e-variants-diff');
      await shot(README.shot);
    });

    // ---- 4. Adopt variant #1 (inline action + the confirmation dialog)
    await check(VARIANT_CHECKS.adopt, async () => {
      requireState('started', 'view');
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      const pane = sideBarPane(p, 'Vox Variants');
      await clickInlineAction(treeRow(pane, variantLabel(ADOPT)), 'Adopt Variant');
      const dialog = p.locator('.monaco-dialog-box').first();
      try {
        await dialog.waitFor({ state: 'visible', timeout: 10_000 });
      } catch {
        throw new Error(`no confirmation dialog after "Adopt Variant" (toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
      }
      const question = ((await dialog.innerText()) ?? '').replace(/\s+/g, ' ');
      assert(question.includes(`Apply variant #${ADOPT}'s changes to your workspace`), `the dialog asks ${JSON.stringify(question)}`);
      assert(readFileOr(path.join(ws, NOTES)) === ORIGINAL, `${NOTES} changed before "Adopt" was clicked`);
      await shot('e2e-variants-adopt-confirm');
      await dialog.getByRole('button', { name: 'Adopt', exact: true }).click({ timeout: 5_000 });

      let last: string | undefined;
      try {
        await h.waitFor(`adoption to write variant #${ADOPT}'s ${NOTES}`, 30_000, async () => (last = readFileOr(path.join(ws, NOTES))) === MODELS[ADOPT].content, 100);
      } catch {
        throw new Error(`the main ${NOTES} holds ${JSON.stringify(last)}, expected ${JSON.stringify(MODELS[ADOPT].content)} (toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
      }
      const done = toast(p, `adopted variant #${ADOPT}`);
      await done.waitFor({ state: 'visible', timeout: 30_000 });
      const doneText = ((await done.textContent()) ?? '').trim();
      assert(doneText.includes(`adopted variant #${ADOPT} (1 file(s))`), `the notification says ${JSON.stringify(doneText)}`);
      // Exactly the variant's bytes, and only that file changed; the user's git state is theirs.
      assert(fs.readFileSync(path.join(ws, NOTES), 'utf8') === MODELS[ADOPT].content, `${NOTES} is not exactly variant #${ADOPT}'s text`);
      assertRepoUnchanged(base, userRepoState(ws), { except: WORKBENCH_REPO_EXCEPT });
      const status = git(ws, ['status', '--porcelain']);
      assert(status === ` M ${NOTES}\n`, `git status after adoption: ${JSON.stringify(status)}, expected " M ${NOTES}" (unstaged)`);
      // Every variant worktree is removed (the other variant's too): only the main one is left.
      const left = await h.waitFor('the variant worktrees to be removed', 30_000, async () => {
        const l = worktreePaths(ws);
        return l.length === 1 ? l : undefined;
      }, 200).catch(() => worktreePaths(ws));
      assert(left.length === 1 && left[0] === fs.realpathSync(ws), `git worktree list after adoption: ${left.join(', ')}`);
      for (const wt of worktrees) assert(!fs.existsSync(wt), `${wt} still exists`);
      // The adopted set has ended: the view no longer lists it.
      try {
        await treeRow(pane, PROMPT).waitFor({ state: 'hidden', timeout: 15_000 });
      } catch {
        throw new Error(`Vox Variants still lists the adopted set: ${(await rowTexts(pane)).join(' | ')}`);
      }
      await shot('e2e-variants-adopted');
    });

    // ---- 4b. The diff tab of the adopted variant is stale: it closes, and a reload does not bring it back
    await check(VARIANT_CHECKS.staleTab, async () => {
      requireState('started', 'view');
      const variantTabs = () => p.locator('.part.editor .tab', { hasText: 'Variant #' }).count();
      await h.waitFor('the adopted variant\'s diff tab to close', 15_000, async () => (await variantTabs()) === 0, 200)
        .catch(async () => { throw new Error(`${await variantTabs()} "Variant #" tab(s) still open after the adoption`); });
      await p.evaluate('window.__voxBeforeReload = true');
      await h.runCommand(p, 'Developer: Reload Window');
      await h.waitFor('the window to reload', 30_000, async () => (await p.evaluate('window.__voxBeforeReload === undefined').catch(() => false)) === true, 200);
      await h.waitForWorkbench(p);
      await h.sleep(3_000); // restored editors and the extension's activation settle
      assert((await variantTabs()) === 0, 'a "Variant #" diff tab came back after the reload');
    });

    // ---- 5. Screenshots: artifacts + the README picture
    await o.check(VARIANT_CHECKS.screenshots, async () => {
      const taken = ['e2e-variants-pick', 'e2e-variants', 'e2e-variants-diff', 'e2e-variants-adopt-confirm', 'e2e-variants-adopted'];
      checkScreenshots(o, shots, taken, README);
    }, p);
  },
});
