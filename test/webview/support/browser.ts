/**
 * The one Chromium harness of the webview browser tests: builds dist/webview.js (or the compare
 * tab's dist/compare.js, `entry`), serves it from a loopback server inside the strict-CSP page of ./page.ts (with the fake VS Code host script),
 * opens it in headless Debian chromium and gives the tests the page plus the helpers they all
 * need: post a host message, read what the webview posted, wait for a condition (bounded). A
 * missing browser skips the suite locally and fails it in CI.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { until } from '../../support/wait';
import { FAKE_HOST_SCRIPT, LIGHT_THEME_CSS, THEME_CSS, compareHtml, webviewHtml } from './page';

export const CHROMIUM = '/usr/bin/chromium';
export const ROOT = path.resolve(__dirname, '../../..');
/** Where the browser tests' screenshots go. */
export const RESULTS = path.join(ROOT, 'test-results');
/** axe-core's browser build (a devDependency), served to the page for ./axe.ts. */
const AXE_SCRIPT = path.join(ROOT, 'node_modules/axe-core/axe.min.js');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** How long a UI expectation may take to come true (rendering is throttled to ~80 ms). */
export const EXPECT_TIMEOUT_MS = 5_000;
/** How often a wait looks again (ms). */
const POLL_MS = 20;

export type Posted = Record<string, unknown>;

export interface WebviewPage {
  readonly page: Page;
  readonly origin: string;
  /** Uncaught errors of the page, in order. */
  readonly pageErrors: string[];
  /** Posts a message to the webview as the extension host would. */
  host(message: unknown): Promise<void>;
  /** Everything the webview posted to its host so far. */
  posted(): Promise<Posted[]>;
  /** The first posted message matching `pred`, waited for. */
  waitPosted(what: string, pred: (m: Posted) => boolean): Promise<Posted>;
  /** Waits until `check` is true; its errors (an element not there yet) count as not yet. */
  eventually(what: string, check: () => Promise<boolean>): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The CSP nonce of the page. */
  nonce: string;
  /** The temp-dir prefix of the browser profile. */
  profilePrefix: string;
  viewport: { width: number; height: number };
  /** Extra listeners before the page loads (dialogs, console). */
  setup?(page: Page): void;
  /** Which page to open: the chat (default), the compare tab (dist/compare.js) or the Usage tab (dist/usage.js), each with its own CSP. */
  entry?: 'webview' | 'compare' | 'usage';
}

/** Opens the built webview in Chromium, or skips `suite` when the browser is missing outside CI. */
export async function openWebviewPage(suite: Mocha.Context, opts: OpenOptions): Promise<WebviewPage> {
  if (!fs.existsSync(CHROMIUM)) {
    // In CI the runner installs chromium first: a missing browser there is a failure, not a skip.
    if (process.env.CI) throw new Error(`${CHROMIUM} is missing in CI (scripts/setup-code-server.sh installs it)`);
    console.log(`      (skipped: ${CHROMIUM} is not installed; apt-get install chromium to run the webview browser tests)`);
    suite.skip();
  }
  const entry = opts.entry ?? 'webview';
  const build = spawnSync(process.execPath, ['esbuild.mjs', `--only=${entry}`], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(build.status, 0, `${entry} build failed:\n${build.stdout}\n${build.stderr}`);
  const files: Record<string, [string, string]> = {
    [`/dist/${entry}.js`]: [path.join(ROOT, `dist/${entry}.js`), 'text/javascript'],
    [`/dist/${entry}.css`]: [path.join(ROOT, `dist/${entry}.css`), 'text/css'],
    // axe-core for the accessibility checks (./axe.ts injects it; the page never loads it itself).
    '/axe.min.js': [AXE_SCRIPT, 'text/javascript'],
  };
  const html = entry === 'webview' ? webviewHtml : (o: string, n: string) => compareHtml(o, n, entry);
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(origin, opts.nonce));
    else if (url === '/theme.css') res.writeHead(200, { 'content-type': 'text/css' }).end(THEME_CSS);
    else if (url === '/theme-light.css') res.writeHead(200, { 'content-type': 'text/css' }).end(LIGHT_THEME_CSS); // ./axe.ts useLightTheme
    else if (files[url]) res.writeHead(200, { 'content-type': files[url]![1] }).end(fs.readFileSync(files[url]![0]));
    else if (/^\/dist\/webview-chunks\/[\w.-]+\.js$/.test(url) && fs.existsSync(path.join(ROOT, url))) {
      // The webview's lazily loaded chunks (code highlighting), as VS Code serves them from dist/.
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(ROOT, url)));
    }
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), opts.profilePrefix));
  let context: BrowserContext | undefined;
  const close = async (): Promise<void> => {
    await context?.close();
    await new Promise((r) => server.close(r));
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: opts.viewport, colorScheme: 'dark' });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(EXPECT_TIMEOUT_MS);
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    if (process.env.VOX_DEBUG_PAGE) page.on('console', (m) => console.log(`[page] ${m.text()}`));
    opts.setup?.(page);
    await page.addInitScript(FAKE_HOST_SCRIPT);
    await page.goto(`${origin}/`);
    await page.locator(entry === 'webview' ? '.app' : `.${entry}`).waitFor();
    const posted = async (): Promise<Posted[]> => (await page.evaluate('window.__posted')) as Posted[];
    // A check that throws (e.g. the element is not there yet) counts as "not yet"; the last error is reported.
    const eventually = async (what: string, check: () => Promise<boolean>): Promise<void> => {
      await until(check, { what, timeoutMs: EXPECT_TIMEOUT_MS, everyMs: POLL_MS });
    };
    return {
      page, origin, pageErrors, posted, eventually, close,
      host: async (message) => void (await page.evaluate(`window.postMessage(${JSON.stringify(message)}, '*')`)),
      waitPosted: async (what, pred) => {
        let seen: Posted[] = [];
        return until(async () => (seen = await posted()).find(pred), {
          what: `the webview to post ${what}`, timeoutMs: EXPECT_TIMEOUT_MS, everyMs: POLL_MS, failFast: true, detail: () => `it posted ${JSON.stringify(seen)}`,
        });
      },
    };
  } catch (e) {
    await close();
    throw e;
  }
}
