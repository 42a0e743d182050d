/**
 * e2e harness, driving the workbench: open it and wait until it is usable (workbench DOM, the
 * webview service worker, the activity bar), run a command through the command palette (retrying
 * while a remote extension's contributions are still arriving), answer a quick input, and run an
 * in-extension-host mocha suite through `?payload=` and `window.codeAutomationExit`
 * (docs/TESTING.md).
 *
 * Part of test/e2e/harness.ts (import that, not this module).
 */
import type { Page } from 'playwright-core';
import { sleep, withTimeout } from '../support/wait';
import type { CodeServer } from './harness-code-server';

/** Opens the workbench and waits until it is usable (workbench DOM + service worker ready). */
export async function openWorkbench(page: Page, url: string, timeoutMs = 90_000): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
  await waitForWorkbench(page, timeoutMs);
}

export async function waitForWorkbench(page: Page, timeoutMs = 90_000): Promise<void> {
  await page.waitForSelector('.monaco-workbench .part.statusbar', { state: 'visible', timeout: timeoutMs });
  // Webviews are served through a service worker; commands that open webviews before it is
  // ready leave them blank (docs/TESTING.md).
  await withTimeout('navigator.serviceWorker.ready', timeoutMs, page.evaluate('navigator.serviceWorker.ready.then(() => true)'));
  // The remote extension host connection: the status bar shows the remote indicator when connected.
  await page.waitForSelector('.monaco-workbench .part.activitybar, .monaco-workbench .activitybar', { timeout: timeoutMs });
}

/** `s` with every RegExp special character escaped. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Runs a command through the command palette: F1, type the title, Enter (or a click on the row
 * whose label is exactly `title` when the focused row is another one). The palette lists the
 * commands known when it opens, and a remote extension's contributions can arrive a few seconds
 * after the workbench shows: so when no row matches, it closes the palette and tries again until
 * `timeoutMs`. Throws when no row ever matches.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000, opts: { opensQuickInput?: boolean } = {}): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  const exact = new RegExp(`^${escapeRegExp(title)}$`);
  const row = rows.filter({ has: page.locator('.label-name', { hasText: exact }) }).first();
  const deadline = Date.now() + timeoutMs;
  let labels: string[] = [];
  for (;;) {
    // Close whatever quick input is open, then open the palette.
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: Math.max(1_000, deadline - Date.now()) });
    await input.fill(`>${title}`);
    const found = await row
      .waitFor({ state: 'visible', timeout: 3_000 })
      .then(() => true)
      .catch(() => false);
    if (found) break;
    labels = await rows.locator('.label-name').allTextContents().catch(() => []);
    if (Date.now() > deadline) {
      await page.keyboard.press('Escape');
      throw new Error(`command palette has no "${title}" after ${timeoutMs} ms (rows: ${labels.slice(0, 8).join(' | ') || 'none'})`);
    }
    await sleep(1_000);
  }
  const focused = widget.locator('.quick-input-list .monaco-list-row.focused .label-name');
  const focusedText = (await focused.textContent({ timeout: 2_000 }).catch(() => null))?.trim();
  if (focusedText === title) await page.keyboard.press('Enter');
  else await row.click();
  // A command that opens a quick input of its own keeps the widget on screen: the caller waits
  // for that input's content instead.
  if (opts.opensQuickInput) return;
  await widget.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => {
    /* the command may open a quick input of its own */
  });
}

/** Types into an open quick input (input box or quick pick) and presses Enter. */
export async function answerQuickInput(page: Page, text: string, timeoutMs = 15_000): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(text);
  await page.keyboard.press('Enter');
}

// ---------------------------------------------------------------------------------------------
// In-extension-host test runs (what @vscode/test-electron does, through the web workbench)

export interface ExtensionHostRunResult {
  /** The exit code the extension host reported through window.codeAutomationExit. */
  exitCode: number;
  durationMs: number;
}

/**
 * Opens `/?folder=…&payload=[["extensionDevelopmentPath",…],["extensionTestsPath",…]]` and waits
 * for the workbench to call `window.codeAutomationExit(code)` when the suite's `run()` settles.
 * The suite must write its own report to a file: mocha's output is not forwarded.
 */
export async function runExtensionHostTests(
  page: Page,
  server: CodeServer,
  o: { extensionDevelopmentPath: string; extensionTestsPath: string; folder?: string; timeoutMs?: number },
): Promise<ExtensionHostRunResult> {
  const t0 = Date.now();
  let resolveExit!: (code: number) => void;
  const exitP = new Promise<number>((r) => (resolveExit = r));
  await page.exposeFunction('codeAutomationExit', (code: unknown) => {
    resolveExit(typeof code === 'number' ? code : Number(code));
  });
  const url = server.workbenchUrl({
    folder: o.folder,
    payload: [
      ['extensionDevelopmentPath', server.remoteUri(o.extensionDevelopmentPath)],
      ['extensionTestsPath', server.remoteUri(o.extensionTestsPath)],
    ],
  });
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  const exitCode = await withTimeout('extension host tests', o.timeoutMs ?? 120_000, exitP);
  return { exitCode, durationMs: Date.now() - t0 };
}
