/**
 * UI end to end of Vox variants in a real VS Code: code-server + Debian Chromium driven through
 * playwright-core, one code-server session with a fresh profile (user data, HOME, browser
 * context) on a sample git workspace holding a committed `notes.txt` ("original\n"), and scripted
 * OpenAI-compatible servers (test/support/fake-openai-server.ts) on 127.0.0.1.
 *
 * The two variants run at the same time, so the order of their model requests is not fixed: a
 * small router in front of the fake servers sends each request to the script of the model it
 * names (`muse-alpha` → one fake server, `muse-beta` → another), so variant #0 and variant #1
 * deterministically write different text to notes.txt with `write_file`.
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
 *      `Variant #1 (openai:muse-beta) vs base` with "original" on the left and variant #1's text
 *      on the right; screenshot test-results/screenshot-variants.png (the README picture);
 *   4. the inline action "Adopt Variant" on #1 → "Adopt" in the confirmation dialog: the main
 *      notes.txt holds exactly variant #1's text (read from disk here), HEAD, branch, index
 *      (`git ls-files -s`) and stash are unchanged, `git worktree list` shows only the main
 *      worktree (the other variant's worktree is removed too), the view no longer lists the set;
 *   5. screenshots are PNGs, the README picture is small enough (copied to
 *      docs/screenshot-variants.png with `updateDocsScreenshot`).
 *
 * Waits are condition-based with bounded timeouts; git is run from this process, read-only.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import * as h from './harness';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';

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
/** The picture the README shows (copied from test-results/ with `updateDocsScreenshot`). */
export const DOCS_SCREENSHOT = path.join(h.REPO_ROOT, 'docs', 'screenshot-variants.png');
/** Largest PNG accepted as the README picture. */
const DOCS_SCREENSHOT_MAX_BYTES = 300 * 1024;
/** test-results/<README_SHOT>.png is what `updateDocsScreenshot` copies to the docs. */
const README_SHOT = 'screenshot-variants';

const variantLabel = (i: number): string => `#${i} ${MODELS[i]!.ref}`;

/** The names the runner reports, in order. */
export const VARIANT_CHECKS = {
  start: 'variants UI: "Vox: Run Prompt as Variants…" with two models runs each in its own worktree, writing different notes.txt',
  view: 'variants UI: Source Control shows Vox Variants: #0 and #1 completed with their diff stats',
  diff: 'variants UI: Open Variant Diff on #1 opens the diff "original" ↔ variant #1\'s text',
  adopt: 'variants UI: Adopt #1 puts exactly its text in the workspace; HEAD, branch, index unchanged; worktrees removed',
  screenshots: 'variants UI: screenshots in test-results/ and the README picture',
} as const;

export interface VariantUiOptions {
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
  /** Copy the README picture to docs/screenshot-variants.png (otherwise test-results/ only). */
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

/** What the user's repository looks like to them: variants and adoption must not change it. */
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

function assertRepoUnchanged(before: UserRepoState, now: UserRepoState): void {
  assert(now.branch === before.branch, `branch changed: ${before.branch} -> ${now.branch}`);
  assert(now.head === before.head, `HEAD moved: ${before.head} -> ${now.head}`);
  assert(now.index === before.index, `the index changed:\n${before.index}\n->\n${now.index}`);
  assert(now.stash === before.stash, `git stash list changed: ${JSON.stringify(now.stash)}`);
}

/** `git worktree list --porcelain` as paths (the main worktree first). */
function worktreePaths(ws: string): string[] {
  return git(ws, 'worktree', 'list', '--porcelain')
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

/** The sample workspace plus a committed notes.txt. */
function createWorkspace(dir: string): void {
  h.createSampleWorkspace(dir);
  fs.writeFileSync(path.join(dir, NOTES), ORIGINAL);
  git(dir, 'add', NOTES);
  git(dir, 'commit', '-q', '-m', 'Add notes');
  assert(git(dir, 'status', '--porcelain') === '', 'the sample workspace is not clean after its commits');
}

// ---------------------------------------------------------------------------------------------
// A router in front of one fake server per model

interface ModelRouter {
  /** Hand this to `vox.openaiBaseUrl` (ends in `/v1`). */
  baseUrl: string;
  /** Requests that named no known model (answered 404). */
  unrouted: string[];
  close(): Promise<void>;
}

/**
 * Forwards each request to the fake server of the model its JSON body names. The variants' turns
 * run concurrently, so one shared script queue would hand out answers in a racy order; per model
 * queues make "variant #i writes text i" deterministic.
 */
async function startModelRouter(backends: Record<string, FakeServer>): Promise<ModelRouter> {
  const unrouted: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let model: unknown;
      try {
        model = (JSON.parse(body.toString('utf8')) as { model?: unknown }).model;
      } catch {
        model = undefined;
      }
      const backend = typeof model === 'string' ? backends[model] : undefined;
      if (!backend) {
        unrouted.push(`${req.method} ${req.url} model=${String(model)}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: `router: no fake server for model ${String(model)}`, type: 'invalid_request_error', param: null, code: 'model_not_found' } }));
      }
      const target = new URL(backend.baseUrl);
      const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`router: ${e.message}`);
      });
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    unrouted,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The variants tree, seen from the page

/** The "Vox Variants" pane in the side bar (a view pane of the Source Control container). */
function variantsPane(page: Page): Locator {
  return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: exactly('Vox Variants') }) }).first();
}

/** The first tree row whose label is exactly `label`. */
function treeRow(pane: Locator, label: string): Locator {
  return pane.locator('.monaco-list-row', { has: pane.page().locator('.label-name', { hasText: exactly(label) }) }).first();
}

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
  const t = await page.locator(`.part.editor .monaco-diff-editor .editor.${side} .view-lines`).first().innerText({ timeout: 2_000 });
  return t.replace(/\u00a0/g, ' ');
}

/** No hover highlight and no focus outline (a collapsed pane's header keeps one) in a picture. */
async function settleForPicture(page: Page): Promise<void> {
  await page.mouse.move(5, 5);
  await page.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()').catch(() => {});
}

/** A notification toast containing `text`. */
function toast(page: Page, text: string | RegExp): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
}

/** Visible error toasts, for error messages (a failed command shows "Vox: …" there). */
async function errorToasts(page: Page): Promise<string[]> {
  return (await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => [])).map((t) => t.replace(/\s+/g, ' ').trim());
}

// ---------------------------------------------------------------------------------------------
// The checks

export async function runVariantChecks(o: VariantUiOptions): Promise<void> {
  const timed = o.timed ?? (<T>(_l: string, fn: () => Promise<T>) => fn());
  const dirs = {
    home: path.join(o.rootDir, 'var-home'),
    userData: path.join(o.rootDir, 'var-user-data'),
    workspace: path.join(o.rootDir, 'var-workspace'),
    extensions: o.devExtensionPath ? path.join(o.rootDir, 'var-extensions') : o.extensionsDir,
  };
  const ws = dirs.workspace;
  const shots: Record<string, string> = {};
  const state = { started: false, view: false };
  const fakes: FakeServer[] = [];
  let router: ModelRouter | undefined;
  let server: h.CodeServer | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  /** Worktree of variant i (from `git worktree list`, by its `variant-<i>` folder). */
  const worktrees: string[] = [];

  const requireState = (...keys: (keyof typeof state)[]): void => {
    const missing = keys.filter((k) => !state[k]);
    if (missing.length) throw new Error(`not run: an earlier step failed (${missing.join(', ')})`);
  };
  const shot = async (name: string): Promise<void> => {
    shots[name] = await h.screenshot(page!, name);
  };

  try {
    // ---- Session: fake servers + router, workspace, settings, code-server, browser context
    const backends: Record<string, FakeServer> = {};
    for (const m of MODELS) {
      const fk = await startFakeOpenAI({
        responses: [
          toolCallTurn([{ name: 'write_file', args: { path: NOTES, content: m.content } }], { eventDelayMs: 10, usage: { inputTokens: 100, outputTokens: 20 } }),
          textTurn(m.answer, { eventDelayMs: 10, usage: { inputTokens: 130, outputTokens: 8 } }),
        ],
      });
      fakes.push(fk);
      backends[m.wire] = fk;
    }
    router = await startModelRouter(backends);
    createWorkspace(ws);
    const base = userRepoState(ws);
    fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(dirs.userData, 'User', 'settings.json'),
      JSON.stringify(
        {
          ...h.QUIET_WORKBENCH_SETTINGS,
          'vox.model': MODELS[0].ref,
          'vox.models': MODELS.map((m) => m.ref),
          'vox.openaiBaseUrl': router.baseUrl,
          'vox.approval': { read: 'auto', write: 'auto', execute: 'ask' },
          // The diff stays side by side at this window size (cosmetic: the screenshots).
          'diffEditor.useInlineViewWhenSpaceIsLimited': false,
        },
        null,
        2,
      ),
    );
    server = await timed('variants UI: start code-server', () =>
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
    if (o.verbose) page.on('console', (m) => h.log(`variants page [${m.type()}] ${m.text()}`));
    const p = page;
    const srv = server;
    const rt = router;

    // ---- 1. Start the variants from the command palette
    await o.check(VARIANT_CHECKS.start, () =>
      timed(VARIANT_CHECKS.start, async () => {
        const t0 = Date.now();
        const since = (): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
        const payload: [string, string][] | undefined = o.devExtensionPath ? [['extensionDevelopmentPath', srv.remoteUri(o.devExtensionPath)]] : undefined;
        await h.openWorkbench(p, srv.workbenchUrl({ folder: ws, payload }));
        h.log(`variants UI: workbench ready after ${since()}`);
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
        assertRepoUnchanged(base, userRepoState(ws));
        const status = git(ws, 'status', '--porcelain');
        assert(status === '', `git status of the main workspace is not clean: ${JSON.stringify(status)}`);
        state.started = true;
      }), p);

    // ---- 2. The Vox Variants view in Source Control
    await o.check(VARIANT_CHECKS.view, () =>
      timed(VARIANT_CHECKS.view, async () => {
        requireState('started');
        // The start command focuses the view itself; the palette is the fallback.
        const pane = variantsPane(p);
        if (!(await pane.isVisible())) {
          h.log('variants UI: Vox Variants not on screen after the start; focusing it from the palette');
          await h.runCommand(p, 'Source Control: Focus on Vox Variants View', 20_000);
        }
        try {
          await pane.waitFor({ state: 'visible', timeout: 20_000 });
        } catch {
          const titles = await p.locator('.part.sidebar .pane-header h3.title').allTextContents().catch(() => []);
          throw new Error(`no "Vox Variants" pane in the side bar (panes: ${titles.join(' | ') || 'none'})`);
        }
        const header = pane.locator('.pane-header').first();
        if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click({ timeout: 5_000 });
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
      }), p);

    // ---- 3. Open Diff on variant #1 (inline action)
    await o.check(VARIANT_CHECKS.diff, () =>
      timed(VARIANT_CHECKS.diff, async () => {
        requireState('started', 'view');
        const pane = variantsPane(p);
        await clickInlineAction(treeRow(pane, variantLabel(ADOPT)), 'Open Variant Diff');
        const title = `Variant #${ADOPT} (${MODELS[ADOPT].ref}) vs base`;
        const tab = p.locator('.part.editor .tab', { hasText: `Variant #${ADOPT}` }).first();
        try {
          await tab.waitFor({ state: 'visible', timeout: 15_000 });
        } catch {
          const tabs = await p.locator('.part.editor .tab').allTextContents().catch(() => []);
          throw new Error(`no editor tab titled "${title}" (tabs: ${tabs.map((t) => t.trim()).join(' | ') || 'none'}; toasts: ${(await errorToasts(p)).join(' | ') || 'none'})`);
        }
        const tabText = ((await tab.textContent()) ?? '').trim();
        assert(tabText.includes(title), `the diff tab is titled ${JSON.stringify(tabText)}, expected ${JSON.stringify(title)}`);
        await p.locator('.part.editor .monaco-diff-editor').first().waitFor({ state: 'visible', timeout: 15_000 });
        const want = MODELS[ADOPT].content.trim().split('\n');
        let sides = { original: '', modified: '' };
        try {
          await h.waitFor('both sides of the diff', 15_000, async () => {
            sides = { original: await diffSide(p, 'original'), modified: await diffSide(p, 'modified') };
            return sides.original.includes(ORIGINAL.trim()) && want.every((l) => sides.modified.includes(l));
          }, 200);
        } catch {
          throw new Error(`the diff shows ${JSON.stringify(sides.original)} ↔ ${JSON.stringify(sides.modified)}, expected "original" ↔ ${JSON.stringify(MODELS[ADOPT].content)}`);
        }
        assert(!sides.modified.includes(ORIGINAL.trim()), 'the variant side of the diff still shows "original"');
        for (const other of MODELS.filter((_, i) => i !== ADOPT)) assert(!sides.modified.includes(other.content.trim()), `the diff shows ${other.ref}'s text`);
        // The file in the diff is the variant's own (in its worktree), not the main workspace's.
        const fileLabel = await p.locator('.part.editor').innerText({ timeout: 2_000 }).catch(() => '');
        assert(fileLabel.includes(NOTES), `the diff editor does not name ${NOTES}`);
        await settleForPicture(p);
        await h.sleep(300); // the diff decorations settle (cosmetic)
        await shot('e2e-variants-diff');
        shots[README_SHOT] = await h.screenshot(p, README_SHOT);
      }), p);

    // ---- 4. Adopt variant #1 (inline action + the confirmation dialog)
    await o.check(VARIANT_CHECKS.adopt, () =>
      timed(VARIANT_CHECKS.adopt, async () => {
        requireState('started', 'view');
        await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
        const pane = variantsPane(p);
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
        assertRepoUnchanged(base, userRepoState(ws));
        const status = git(ws, 'status', '--porcelain');
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
      }), p);

    // ---- 5. Screenshots: artifacts + the README picture
    await o.check(VARIANT_CHECKS.screenshots, async () => {
      const wanted = ['e2e-variants-pick', 'e2e-variants', 'e2e-variants-diff', 'e2e-variants-adopt-confirm', 'e2e-variants-adopted', README_SHOT];
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
    if (router) await router.close().catch(() => {});
    for (const f of fakes) await f.close().catch(() => {});
  }
}
