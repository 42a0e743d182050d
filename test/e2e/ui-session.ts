/**
 * What the UI checks in code-server share (test/e2e/ui-chat.ts, ui-checkpoints.ts,
 * ui-variants.ts): the options the runners hand them, one code-server session per set of checks
 * with a fresh profile (user data, HOME, browser context) and its settings, screenshots and the
 * README picture, the "an earlier step failed" guard, the sample workspace with a notes file, and
 * what the checks compare of the user's repository (test/support/user-repo.ts's invariant, less
 * what the workbench itself rewrites). The workbench helpers (panes, rows, menus, toasts, diffs,
 * the palette) are test/e2e/ui-workbench.ts's.
 *
 * Built on test/e2e/harness.ts; nothing here counts checks: the runner's `check` does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { git } from '../support/git';
import type { UserRepoField } from '../support/user-repo';
import * as h from './harness';

export const EXTENSION_ID = 'vox-dev.vox';
/** Filter for Vox's webviews (h.waitForWebview / h.findWebviews). */
export const VOX_WEBVIEW = `extensionId=${EXTENSION_ID}`;
/**
 * Settings of the Source Control sets (checkpoints, variants): the agent's writes approved
 * without asking, and diffs kept side by side at the session's window size (cosmetic: the
 * screenshots).
 */
export const AGENT_EDITS_SETTINGS: Readonly<Record<string, unknown>> = {
  'vox.approval': { read: 'auto', write: 'auto', execute: 'ask' },
  'diffEditor.useInlineViewWhenSpaceIsLimited': false,
};
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export type Timed = <T>(label: string, fn: () => Promise<T>) => Promise<T>;

/** What run-e2e.mjs and run-checkpoints-e2e.mjs hand each set of UI checks. */
export interface UiCheckOptions {
  codeServerBin: string;
  /** Extensions dir holding the installed Vox (ignored with devExtensionPath). */
  extensionsDir: string;
  /** Load this folder as the extension under development instead (the runners' --dev, --extension-path). */
  devExtensionPath?: string;
  browser: Browser;
  /** Scratch directory (profile, HOME, workspace live under it); the caller removes it. */
  rootDir: string;
  /** The runner's named check: runs fn, counts pass/fail, screenshots `page` on failure. */
  check: (name: string, fn: () => Promise<unknown>, page?: Page) => Promise<void>;
  timed?: Timed;
  /** Copy the set's README picture to docs/ (otherwise test-results/ only). */
  updateDocsScreenshot?: boolean;
  verbose?: boolean;
  /** Extra environment for code-server and, through it, the extension host (run-e2e.mjs's passes). */
  env?: NodeJS.ProcessEnv;
  /** Prefix of the screenshot files (test-results/<prefix><name>.png), so a second pass keeps the first's. */
  shotPrefix?: string;
}

/** The runner's `timed`, or a pass-through. */
export function timedOf(o: UiCheckOptions): Timed {
  return o.timed ?? (<T>(_l: string, fn: () => Promise<T>) => fn());
}

export function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

/**
 * `requireState(...keys)` for checks that build on earlier ones: throws "not run: an earlier step
 * failed (…)" naming the keys not yet true (through `describe`, joined with `sep`).
 */
export function stateGuard<S extends Record<string, boolean>>(
  state: S,
  describe: (k: keyof S) => string = String,
  sep = ', ',
): (...keys: (keyof S)[]) => void {
  return (...keys) => {
    const missing = keys.filter((k) => !state[k]);
    if (missing.length) throw new Error(`not run: an earlier step failed (${missing.map(describe).join(sep)})`);
  };
}

// ---------------------------------------------------------------------------------------------
// The session: fresh profile, settings, code-server, browser context

export interface UiDirs {
  home: string;
  userData: string;
  workspace: string;
  /** The runner's extensions dir, or a fresh one under rootDir with devExtensionPath. */
  extensions: string;
}

/** The set's folders under rootDir: `<prefix>-home`, `<prefix>-user-data`, `<prefix>-workspace`. */
export function uiDirs(o: UiCheckOptions, prefix: string): UiDirs {
  return {
    home: path.join(o.rootDir, `${prefix}-home`),
    userData: path.join(o.rootDir, `${prefix}-user-data`),
    workspace: path.join(o.rootDir, `${prefix}-workspace`),
    extensions: o.devExtensionPath ? path.join(o.rootDir, `${prefix}-extensions`) : o.extensionsDir,
  };
}

export interface UiSession {
  dirs: UiDirs;
  server: h.CodeServer;
  context: BrowserContext;
  page: Page;
  /** Screenshots taken with `shot`, by name. */
  shots: Record<string, string>;
  /** test-results/<shotPrefix><name>.png of the page, remembered in `shots` under `name`. */
  shot(name: string): Promise<void>;
  /** Opens the workbench on the workspace (with --dev: the extension under development); returns "N s since the call". */
  openWorkbench(): Promise<() => string>;
  /** Closes the browser context and stops code-server. */
  close(): Promise<void>;
}

/**
 * Writes the profile's settings.json (the quiet defaults plus `settings`), starts code-server on
 * the workspace (timed as "<label>: start code-server") and opens a 1280×800 browser context.
 * The workspace must exist. `label` ("chat UI", …) prefixes the log lines.
 */
export async function startUiSession(
  o: UiCheckOptions,
  s: { label: string; dirs: UiDirs; settings: Record<string, unknown> },
): Promise<UiSession> {
  const { label, dirs } = s;
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify({ ...h.QUIET_WORKBENCH_SETTINGS, ...s.settings }, null, 2));
  const server = await timedOf(o)(`${label}: start code-server`, () =>
    h.startCodeServer({
      codeServerBin: o.codeServerBin,
      workspace: dirs.workspace,
      home: dirs.home,
      userDataDir: dirs.userData,
      extensionsDir: dirs.extensions,
      env: o.env,
      verbose: o.verbose,
    }),
  );
  let context: BrowserContext | undefined;
  let page: Page;
  try {
    context = await o.browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  } catch (e) {
    if (context) await context.close().catch(() => {});
    await server.stop();
    throw e;
  }
  const ctx = context;
  const pageLabel = label.replace(/ UI$/, '');
  if (o.verbose) page.on('console', (m) => h.log(`${pageLabel} page [${m.type()}] ${m.text()}`));
  const shots: Record<string, string> = {};
  return {
    dirs,
    server,
    context: ctx,
    page,
    shots,
    shot: async (name) => {
      shots[name] = await h.screenshot(page, `${o.shotPrefix ?? ''}${name}`);
    },
    openWorkbench: async () => {
      const t0 = Date.now();
      const since = (): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
      const payload: [string, string][] | undefined = o.devExtensionPath ? [['extensionDevelopmentPath', server.remoteUri(o.devExtensionPath)]] : undefined;
      await h.openWorkbench(page, server.workbenchUrl({ folder: dirs.workspace, payload }));
      h.log(`${label}: workbench ready after ${since()}`);
      return since;
    },
    close: async () => {
      await ctx.close().catch(() => {});
      await server.stop();
    },
  };
}

/** A set's README picture: test-results/<shot>.png, at most `maxBytes`, copied to docs/<shot>.png with `updateDocsScreenshot`. */
export interface ReadmePicture {
  shot: string;
  maxBytes: number;
  docsFile: string;
}

export function readmePicture(shot: string, maxBytes: number): ReadmePicture {
  return { shot, maxBytes, docsFile: path.join(h.REPO_ROOT, 'docs', `${shot}.png`) };
}

/**
 * The "screenshots" check: every `shots` name in `taken` and the README picture(s) exist and are
 * PNGs, each README picture is small enough; with `updateDocsScreenshot` they are copied to docs/.
 */
export function checkScreenshots(o: UiCheckOptions, shots: Record<string, string>, taken: string[], readme: ReadmePicture | ReadmePicture[]): void {
  const pictures = Array.isArray(readme) ? readme : [readme];
  const wanted = [...taken, ...pictures.map((r) => r.shot)];
  const missing = wanted.filter((n) => !shots[n] || !fs.existsSync(shots[n]!));
  assert(missing.length === 0, `missing screenshots: ${missing.join(', ')}`);
  for (const n of wanted) assert(fs.readFileSync(shots[n]!).subarray(0, 8).equals(PNG_MAGIC), `${shots[n]} is not a PNG`);
  for (const r of pictures) {
    const png = fs.readFileSync(shots[r.shot]!);
    assert(png.length <= r.maxBytes, `${shots[r.shot]} is ${png.length} bytes (> ${r.maxBytes})`);
  }
  if (o.updateDocsScreenshot) {
    for (const r of pictures) {
      fs.mkdirSync(path.dirname(r.docsFile), { recursive: true });
      fs.copyFileSync(shots[r.shot]!, r.docsFile);
      h.log(`README picture updated: ${r.docsFile} (${fs.statSync(r.docsFile).size} bytes)`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The user's repository (git through test/support/git.ts, run from this process, never through
// the extension)

/**
 * What the UI checks compare of the user's repository: the invariant of test/support/user-repo.ts
 * (HEAD, branch, staged entries, stash, branches, tags), except the index file's bytes: while the
 * workbench is open, VS Code's git extension runs `git status`, which rewrites the index's stat
 * data. The staged entries themselves (`index`) must not change.
 */
export const WORKBENCH_REPO_EXCEPT: readonly UserRepoField[] = ['indexSha256'];

/** The sample workspace (h.createSampleWorkspace) plus a committed notes file; clean after. */
export function createNotesWorkspace(dir: string, file: string, content: string): void {
  h.createSampleWorkspace(dir);
  fs.writeFileSync(path.join(dir, file), content);
  git(dir, ['add', file]);
  git(dir, ['commit', '-q', '-m', 'Add notes']);
  assert(git(dir, ['status', '--porcelain']) === '', 'the sample workspace is not clean after its commits');
}
