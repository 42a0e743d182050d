/**
 * UI end to end of Vox checkpoints in a real VS Code: code-server + Debian Chromium driven through
 * playwright-core, one code-server session with a fresh profile (user data, HOME, browser
 * context) on a sample git workspace holding a committed `notes.txt` ("original\n"), and a
 * scripted OpenAI-compatible server (test/support/fake-openai-server.ts) on 127.0.0.1.
 *
 * The requirement: create a checkpoint through the agent, restore it from the Source
 * Control view, see the file change back. Called by test/e2e/run-checkpoints-e2e.mjs; every
 * check below is one named, counted check there:
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
 *   5. Undo in that notification: notes.txt is the agent's text again; the user's HEAD, branch,
 *      index (`git ls-files -s`) and stash are what they were before the agent ran;
 *   6. screenshots are PNGs, the README picture is small enough (copied to
 *      docs/screenshot-checkpoints.png with `updateDocsScreenshot`).
 *
 * Waits are condition-based with bounded timeouts; git is run from this process, read-only.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, BrowserContext, Frame, Locator, Page } from 'playwright-core';
import * as h from './harness';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';

const EXTENSION_ID = 'vox-dev.vox';
const OPENAI_MODEL = 'openai:gpt-e2e';
const NOTES = 'notes.txt';
const ORIGINAL = 'original\n';
const CHANGED = 'changed by the agent\n';
const PROMPT = 'Please rewrite notes.txt';
const ANSWER = ['Rewrote ', NOTES, ' for you.'];
/** The second turn (after the engine restarted): a new thread writing a new file. */
const PROMPT2 = 'Now write todo.txt';
const TODO = 'todo.txt';
const TODO_CONTENT = 'written after the engine restarted\n';
const API_KEY = 'sk-e2e-checkpoints-0123456789';
/** The picture the README shows (copied from test-results/ with `updateDocsScreenshot`). */
export const DOCS_SCREENSHOT = path.join(h.REPO_ROOT, 'docs', 'screenshot-checkpoints.png');
/** Largest PNG accepted as the README picture. */
const DOCS_SCREENSHOT_MAX_BYTES = 300 * 1024;
/** test-results/<README_SHOT>.png is what `updateDocsScreenshot` copies to the docs. */
const README_SHOT = 'screenshot-checkpoints';

/** The names the runner reports, in order. */
export const CHECKPOINT_CHECKS = {
  agent: 'checkpoints UI: the agent\'s write_file changes notes.txt and takes checkpoints (hidden refs, HEAD unmoved)',
  view: 'checkpoints UI: Source Control shows Vox Checkpoints: thread → #2 turn end, #1 before write_file → notes.txt',
  compare: 'checkpoints UI: Compare with Working Tree on #1 opens the diff "original" ↔ the agent\'s text',
  restore: 'checkpoints UI: Restore #1 → "Files only" from the context menu puts notes.txt back, with Undo offered',
  undo: 'checkpoints UI: Undo in the notification brings the agent\'s text back; HEAD, branch, index and stash untouched',
  live: 'checkpoints UI: after an engine restart ("Vox: Set API Key"), a new turn\'s checkpoints appear in the open view by themselves',
  screenshots: 'checkpoints UI: screenshots in test-results/ and the README picture',
} as const;

export interface CheckpointUiOptions {
  codeServerBin: string;
  /** Extensions dir holding the installed Vox (ignored with devExtensionPath). */
  extensionsDir: string;
  /** Load this folder as the extension under development instead. */
  devExtensionPath?: string;
  browser: Browser;
  /** Scratch directory (profile, HOME, workspace live under it); the caller removes it. */
  rootDir: string;
  /** The runner's named check: runs fn, counts pass/fail, screenshots `page` on failure. */
  check: (name: string, fn: () => Promise<unknown>, page?: Page) => Promise<void>;
  timed?: <T>(label: string, fn: () => Promise<T>) => Promise<T>;
  /** Copy the README picture to docs/screenshot-checkpoints.png (otherwise test-results/ only). */
  updateDocsScreenshot?: boolean;
  verbose?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const exactly = (s: string): RegExp => new RegExp(`^\\s*${escapeRegExp(s)}\\s*$`);

/** Runs git in `cwd` (from this process, never through the extension); throws on a non-zero exit. */
function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=Vox E2E', '-c', 'user.email=e2e@vox.invalid', ...args], { cwd, encoding: 'utf8', timeout: 15_000 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (exit ${r.status ?? r.signal}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** What the user's repository looks like to them: none of it may change through checkpoints. */
interface UserRepoState {
  head: string;
  branch: string;
  index: string;
  stash: string;
}

function userRepoState(ws: string): UserRepoState {
  return {
    head: git(ws, 'rev-parse', 'HEAD').trim(),
    branch: git(ws, 'symbolic-ref', '--short', 'HEAD').trim(),
    index: git(ws, 'ls-files', '-s'),
    stash: git(ws, 'stash', 'list'),
  };
}

function refsUnder(ws: string, prefix: string): string[] {
  return git(ws, 'for-each-ref', '--format=%(refname)', prefix).split('\n').filter(Boolean);
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

/** The sample workspace plus a committed notes.txt. */
function createWorkspace(dir: string): void {
  h.createSampleWorkspace(dir);
  fs.writeFileSync(path.join(dir, NOTES), ORIGINAL);
  git(dir, 'add', NOTES);
  git(dir, 'commit', '-q', '-m', 'Add notes');
  assert(git(dir, 'status', '--porcelain') === '', 'the sample workspace is not clean after its commits');
}

// ---------------------------------------------------------------------------------------------
// The chat webview

const VOX_WEBVIEW = `extensionId=${EXTENSION_ID}`;

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

/** The "Vox Checkpoints" pane in the side bar (a view pane of the Source Control container). */
function checkpointsPane(page: Page): Locator {
  return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: exactly('Vox Checkpoints') }) }).first();
}

/** The tree rows whose label is exactly `label`. */
function rowsLabelled(pane: Locator, label: string): Locator {
  return pane.locator('.monaco-list-row', { has: pane.page().locator('.label-name', { hasText: exactly(label) }) });
}

/** The first tree row whose label is exactly `label`. */
function treeRow(pane: Locator, label: string): Locator {
  return rowsLabelled(pane, label).first();
}

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

/** Clicks an inline action of a row: hovering the row reveals its action bar. */
async function clickInlineAction(row: Locator, title: string): Promise<void> {
  const action = row.locator(`.actions .action-label[aria-label^="${title}"]`).first();
  await row.hover({ timeout: 5_000 });
  try {
    await action.waitFor({ state: 'visible', timeout: 5_000 });
  } catch {
    const have = await row.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? '')).catch(() => []);
    throw new Error(`row has no visible inline action "${title}" (actions: ${have.join(' | ') || 'none'})`);
  }
  await action.click({ timeout: 5_000 });
}

/** Right-clicks a row and picks `item` from its context menu. */
async function clickContextMenuItem(page: Page, row: Locator, item: string): Promise<void> {
  await row.click({ button: 'right', timeout: 5_000 });
  const menu = page.locator('.monaco-menu').first();
  await menu.waitFor({ state: 'visible', timeout: 5_000 });
  const entry = menu.locator('.action-menu-item', { has: page.locator('.action-label', { hasText: exactly(item) }) }).first();
  try {
    await entry.waitFor({ state: 'visible', timeout: 5_000 });
  } catch {
    const have = (await menu.locator('.action-label').allTextContents().catch(() => [])).map((s) => s.trim()).filter(Boolean);
    await page.keyboard.press('Escape');
    throw new Error(`the context menu has no "${item}" (items: ${have.join(' | ') || 'none'})`);
  }
  await entry.click({ timeout: 5_000 });
}

/** Expands a collapsed tree row through its twistie (no-op when already expanded). */
async function expandRow(row: Locator): Promise<void> {
  if ((await row.getAttribute('aria-expanded')) === 'true') return;
  await row.locator('.monaco-tl-twistie').click({ timeout: 5_000 });
  await h.waitFor('the row to expand', 5_000, async () => (await row.getAttribute('aria-expanded')) === 'true', 100);
}

/** Collapses a view pane of the side bar by its title (no-op when collapsed or absent). */
async function collapsePane(page: Page, title: string): Promise<void> {
  const header = page.locator('.part.sidebar .pane-header', { has: page.locator('h3.title', { hasText: exactly(title) }) }).first();
  if ((await header.count()) === 0 || (await header.getAttribute('aria-expanded')) !== 'true') return;
  // The title, not the header's middle: the header also holds the view's action buttons.
  await header.locator('h3.title').click({ timeout: 5_000 });
  await h.waitFor(`the ${title} pane to collapse`, 5_000, async () => (await header.getAttribute('aria-expanded')) === 'false', 100);
}

/** Drags the side bar's edge to `to` px so the tree's descriptions fit (cosmetic: screenshots). */
async function widenSideBar(page: Page, to: number): Promise<void> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar || bar.width >= to) return;
  const x = bar.x + bar.width;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + (to - bar.width), y, { steps: 8 });
  await page.mouse.up();
}

/** Text of one side of the open diff editor (Monaco renders spaces as U+00A0). */
async function diffSide(page: Page, side: 'original' | 'modified'): Promise<string> {
  const t = await page.locator(`.part.editor .monaco-diff-editor .editor.${side} .view-lines`).first().textContent({ timeout: 2_000 });
  return (t ?? '').replace(/\u00a0/g, ' ');
}

/** A notification toast containing `text`. */
function toast(page: Page, text: string | RegExp): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
}

// ---------------------------------------------------------------------------------------------
// The checks

export async function runCheckpointChecks(o: CheckpointUiOptions): Promise<void> {
  const timed = o.timed ?? (<T>(_l: string, fn: () => Promise<T>) => fn());
  const dirs = {
    home: path.join(o.rootDir, 'cp-home'),
    userData: path.join(o.rootDir, 'cp-user-data'),
    workspace: path.join(o.rootDir, 'cp-workspace'),
    extensions: o.devExtensionPath ? path.join(o.rootDir, 'cp-extensions') : o.extensionsDir,
  };
  const ws = dirs.workspace;
  const shots: Record<string, string> = {};
  const state = { agent: false, view: false, restored: false };
  let fake: FakeServer | undefined;
  let server: h.CodeServer | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let before: UserRepoState | undefined;
  let restoreNotice: Locator | undefined;

  const requireState = (...keys: (keyof typeof state)[]): void => {
    const missing = keys.filter((k) => !state[k]);
    if (missing.length) throw new Error(`not run: an earlier step failed (${missing.join(', ')})`);
  };
  const shot = async (name: string): Promise<void> => {
    shots[name] = await h.screenshot(page!, name);
  };

  try {
    // ---- Session: fake server, workspace, settings, code-server, browser context
    fake = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: NOTES, content: CHANGED } }], { eventDelayMs: 10, usage: { inputTokens: 100, outputTokens: 20 } }),
        textTurn(ANSWER, { eventDelayMs: 10, usage: { inputTokens: 130, outputTokens: 8 } }),
      ],
    });
    createWorkspace(ws);
    before = userRepoState(ws);
    fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(dirs.userData, 'User', 'settings.json'),
      JSON.stringify(
        {
          ...h.QUIET_WORKBENCH_SETTINGS,
          'vox.model': OPENAI_MODEL,
          'vox.models': [OPENAI_MODEL],
          'vox.openaiBaseUrl': fake.baseUrl,
          'vox.approval': { read: 'auto', write: 'auto', execute: 'ask' },
          // The diff stays side by side at this window size (cosmetic: the screenshots).
          'diffEditor.useInlineViewWhenSpaceIsLimited': false,
        },
        null,
        2,
      ),
    );
    server = await timed('checkpoints UI: start code-server', () =>
      h.startCodeServer({
        codeServerBin: o.codeServerBin,
        workspace: ws,
        home: dirs.home,
        userDataDir: dirs.userData,
        extensionsDir: dirs.extensions,
        verbose: o.verbose,
      }),
    );
    context = await o.browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    if (o.verbose) page.on('console', (m) => h.log(`checkpoints page [${m.type()}] ${m.text()}`));
    const p = page;
    const srv = server;
    const fk = fake;
    const base = before;

    // ---- 1. The agent changes notes.txt; checkpoints are taken
    await o.check(CHECKPOINT_CHECKS.agent, () =>
      timed(CHECKPOINT_CHECKS.agent, async () => {
        const t0 = Date.now();
        const since = (): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
        const payload: [string, string][] | undefined = o.devExtensionPath ? [['extensionDevelopmentPath', srv.remoteUri(o.devExtensionPath)]] : undefined;
        await h.openWorkbench(p, srv.workbenchUrl({ folder: ws, payload }));
        h.log(`checkpoints UI: workbench ready after ${since()}`);
        await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
        const view = (await h.waitForWebview(p, VOX_WEBVIEW, { within: '.part.sidebar', timeoutMs: 20_000, retries: 2 })).content;
        h.log(`checkpoints UI: chat view rendered after ${since()}`);
        await h.waitFor(`the model picker to show ${OPENAI_MODEL}`, 20_000, async () => (await view.locator('.model-row select').inputValue({ timeout: 2_000 })) === OPENAI_MODEL);
        assert(readNotes(ws) === ORIGINAL, `${NOTES} is not "original" before the prompt`);
        assert(refsUnder(ws, 'refs/vox/').length === 0, 'checkpoint refs exist before the prompt');

        await view.locator('vscode-button.new-thread').click({ timeout: 10_000 });
        await view.locator('section.empty').waitFor({ timeout: 10_000 });
        await view.locator('vscode-textarea textarea').fill(PROMPT, { timeout: 10_000 });
        await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
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
        assert(git(ws, 'show', `${first}:${NOTES}`) === ORIGINAL, `checkpoint #1 does not hold the original ${NOTES}`);
        const now = userRepoState(ws);
        assert(now.head === base.head && now.branch === base.branch, `HEAD moved: ${base.branch}@${base.head} -> ${now.branch}@${now.head}`);
        assert(now.index === base.index, 'the index changed while checkpoints were taken');
        state.agent = true;
      }), p);

    // ---- 2. The Vox Checkpoints view in Source Control
    await o.check(CHECKPOINT_CHECKS.view, () =>
      timed(CHECKPOINT_CHECKS.view, async () => {
        requireState('agent');
        // Shows the Source Control container and focuses the view (its title is the view's name).
        await h.runCommand(p, 'Source Control: Focus on Vox Checkpoints View', 20_000);
        const pane = checkpointsPane(p);
        try {
          await pane.waitFor({ state: 'visible', timeout: 20_000 });
        } catch {
          const titles = await p.locator('.part.sidebar .pane-header h3.title').allTextContents().catch(() => []);
          throw new Error(`no "Vox Checkpoints" pane in the side bar (panes: ${titles.join(' | ') || 'none'})`);
        }
        const header = pane.locator('.pane-header').first();
        if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click({ timeout: 5_000 });
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
      }), p);

    // ---- 3. Compare #1 with the working tree (inline action)
    await o.check(CHECKPOINT_CHECKS.compare, () =>
      timed(CHECKPOINT_CHECKS.compare, async () => {
        requireState('agent', 'view');
        const pane = checkpointsPane(p);
        await clickInlineAction(await waitRow(pane, '#1 before write_file'), 'Compare Checkpoint with Working Tree');
        const tab = p.locator('.part.editor .tab', { hasText: 'Checkpoint #1' }).first();
        try {
          await tab.waitFor({ state: 'visible', timeout: 15_000 });
        } catch {
          const tabs = await p.locator('.part.editor .tab').allTextContents().catch(() => []);
          throw new Error(`no editor tab titled "…Checkpoint #1…" (tabs: ${tabs.map((t) => t.trim()).join(' | ') || 'none'})`);
        }
        const title = ((await tab.textContent()) ?? '').trim();
        assert(title.includes(NOTES) && title.includes('Working Tree'), `the diff tab is titled ${JSON.stringify(title)}`);
        await p.locator('.part.editor .monaco-diff-editor').first().waitFor({ state: 'visible', timeout: 10_000 });
        let sides = { original: '', modified: '' };
        try {
          await h.waitFor('both sides of the diff', 10_000, async () => {
            sides = { original: await diffSide(p, 'original'), modified: await diffSide(p, 'modified') };
            return sides.original.includes(ORIGINAL.trim()) && sides.modified.includes(CHANGED.trim());
          }, 200);
        } catch {
          throw new Error(`the diff shows ${JSON.stringify(sides.original)} ↔ ${JSON.stringify(sides.modified)}, expected "original" ↔ "${CHANGED.trim()}"`);
        }
        assert(!sides.original.includes(CHANGED.trim()), 'the checkpoint side of the diff shows the agent\'s text');
        await p.mouse.move(5, 5);
        await h.sleep(300); // the diff decorations settle (cosmetic)
        await shot('e2e-checkpoints-diff');
        shots[README_SHOT] = await h.screenshot(p, README_SHOT);
      }), p);

    // ---- 4. Restore #1, files only (context menu)
    await o.check(CHECKPOINT_CHECKS.restore, () =>
      timed(CHECKPOINT_CHECKS.restore, async () => {
        requireState('agent', 'view');
        await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
        const pane = checkpointsPane(p);
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
        assert(git(ws, 'show', `${points[0]}:${NOTES}`) === CHANGED, 'the restore point does not hold the agent\'s text');
        assert(git(ws, 'status', '--porcelain') === '', `the restored workspace is not clean: ${git(ws, 'status', '--porcelain')}`);
        await shot('e2e-checkpoints-restored');
        state.restored = true;
      }), p);

    // ---- 5. Undo in the notification
    await o.check(CHECKPOINT_CHECKS.undo, () =>
      timed(CHECKPOINT_CHECKS.undo, async () => {
        requireState('restored');
        const notice = restoreNotice!;
        let undo = notice.getByRole('button', { name: 'Undo' });
        if (!(await undo.isVisible())) {
          // The toast timed out: the same notification is in the notification center.
          h.log('checkpoints UI: restore toast gone; using the notification center');
          await h.runCommand(p, 'Notifications: Show Notifications');
          undo = p.locator('.notifications-center .notification-list-item', { hasText: 'to checkpoint #1' }).first().getByRole('button', { name: 'Undo' });
        }
        await undo.click({ timeout: 5_000 });
        await waitForNotes(ws, CHANGED, `Undo to bring back the agent's ${NOTES}`);
        await toast(p, /restore undone \(1 file\(s\)/).waitFor({ state: 'visible', timeout: 15_000 });
        const now = userRepoState(ws);
        assert(now.branch === base.branch, `branch changed: ${base.branch} -> ${now.branch}`);
        assert(now.head === base.head, `HEAD moved: ${base.head} -> ${now.head}`);
        assert(now.index === base.index, `the index changed:\n${base.index}\n->\n${now.index}`);
        assert(now.stash === '', `git stash list is not empty: ${now.stash}`);
        const status = git(ws, 'status', '--porcelain');
        assert(status === ` M ${NOTES}\n`, `git status after Undo: ${JSON.stringify(status)}, expected " M ${NOTES}"`);
        assert(refsUnder(ws, 'refs/vox/checkpoints/').length === 2, 'checkpoint refs changed through restore + undo');
      }), p);

    // ---- 6. The open view follows new checkpoints by itself, also after the engine restarted
    await o.check(CHECKPOINT_CHECKS.live, () =>
      timed(CHECKPOINT_CHECKS.live, async () => {
        requireState('agent', 'view');
        await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
        // Setting a key rebuilds the engine (EngineHost.restart); the toast comes after that.
        await h.runCommand(p, 'Vox: Set API Key', 20_000, { opensQuickInput: true });
        await p.locator('.quick-input-widget .quick-input-list .label-name', { hasText: exactly('openai') }).waitFor({ timeout: 10_000 });
        await h.answerQuickInput(p, 'openai');
        await p.locator('.quick-input-widget .quick-input-message', { hasText: 'openai API key' }).waitFor({ timeout: 10_000 });
        await h.answerQuickInput(p, API_KEY);
        await toast(p, 'Vox: openai key saved.').waitFor({ state: 'visible', timeout: 15_000 });

        const pane = checkpointsPane(p);
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
        await tab.locator('vscode-button.new-thread').click({ timeout: 10_000 });
        await tab.locator('section.empty').waitFor({ timeout: 10_000 });
        await tab.locator('vscode-textarea textarea').fill(PROMPT2, { timeout: 10_000 });
        await tab.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
        await h.waitFor(`the agent to write ${TODO}`, 30_000, async () => fs.existsSync(path.join(ws, TODO)) && fs.readFileSync(path.join(ws, TODO), 'utf8') === TODO_CONTENT, 100);
        const end = await h.waitFor('the second run to end', 30_000, async () => {
          const r = await lastRun(tab);
          return r.status !== null && r.status !== 'running' ? r : undefined;
        }, 100);
        assert(end.status === 'completed', `the second run ended ${end.status}`);
        await h.waitFor('the second thread\'s turn-end checkpoint ref', 15_000, async () => refsUnder(ws, 'refs/vox/checkpoints/').length === 4);

        // No refresh clicked: the view must pick the new thread up from the engine's events.
        try {
          await treeRow(pane, PROMPT2).waitFor({ state: 'visible', timeout: 10_000 });
          await h.waitFor('two "#2 turn end" rows', 5_000, async () => (await turnEnds.count()) === 2, 200);
        } catch {
          throw new Error(`the open view did not show the new thread's checkpoints within 15 s of them being taken (rows: ${(await rowLabels(pane)).join(' | ')})`);
        }
        await shot('e2e-checkpoints-live');
      }), p);

    // ---- 7. Screenshots: artifacts + the README picture
    await o.check(CHECKPOINT_CHECKS.screenshots, async () => {
      const wanted = ['e2e-checkpoints', 'e2e-checkpoints-diff', 'e2e-checkpoints-restore-pick', 'e2e-checkpoints-restored', 'e2e-checkpoints-live', README_SHOT];
      const missing = wanted.filter((n) => !shots[n] || !fs.existsSync(shots[n]!));
      assert(missing.length === 0, `missing screenshots: ${missing.join(', ')}`);
      for (const n of wanted) assert(fs.readFileSync(shots[n]!).subarray(0, 8).equals(PNG_MAGIC), `${shots[n]} is not a PNG`);
      const readme = fs.readFileSync(shots[README_SHOT]!);
      assert(readme.length <= DOCS_SCREENSHOT_MAX_BYTES, `${shots[README_SHOT]} is ${readme.length} bytes (> ${DOCS_SCREENSHOT_MAX_BYTES})`);
      if (o.updateDocsScreenshot) {
        fs.mkdirSync(path.dirname(DOCS_SCREENSHOT), { recursive: true });
        fs.copyFileSync(shots[README_SHOT]!, DOCS_SCREENSHOT);
        h.log(`README picture updated: ${DOCS_SCREENSHOT} (${readme.length} bytes)`);
      }
    }, p);
  } finally {
    if (context) await context.close().catch(() => {});
    if (server) await server.stop();
    if (fake) await fake.close().catch(() => {});
  }
}
