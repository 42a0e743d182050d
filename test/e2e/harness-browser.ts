/**
 * e2e harness, the browser and screenshots: Debian's Chromium launched headless through
 * playwright-core with a fresh profile and the flags that keep it off the network (closed by the
 * harness's teardown), and page screenshots in test-results/. docs/TESTING.md says why these flags.
 *
 * Part of test/e2e/harness.ts (import that, not this module).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { withTimeout } from '../support/wait';
import { installExitHooks, log, registerCleanup, REPO_ROOT } from './harness-process';

export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
export const CHROMIUM = process.env.VOX_CHROMIUM ?? '/usr/bin/chromium';

/** Flags that keep Debian's Chromium quiet on a machine with no internet (docs/TESTING.md). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Launches Debian Chromium (headless, fresh profile) and opens one page. */
export async function launchBrowser(opts: { viewport?: { width: number; height: number }; onConsole?: (line: string) => void } = {}): Promise<BrowserSession> {
  installExitHooks();
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install chromium (scripts/setup-code-server.sh does)`);
  // launch() gives Chromium a fresh temporary --user-data-dir of its own and removes it on close.
  const browser = await withTimeout(
    'chromium launch',
    60_000,
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 }),
  );
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
  const page = await context.newPage();
  if (opts.onConsole) {
    const cb = opts.onConsole;
    page.on('console', (m) => cb(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => cb(`[pageerror] ${e.message}`));
  }
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await withTimeout('browser close', 10_000, browser.close()).catch((e) => log(`browser close: ${String(e)}`));
  };
  registerCleanup(close);
  return { browser, context, page, close };
}

/** test-results/<name>.png of the page; returns the file. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await withTimeout(`screenshot ${name}`, 20_000, page.screenshot({ path: file }));
  return file;
}
