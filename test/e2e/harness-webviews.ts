/**
 * e2e harness, webview frames: a webview's content lives two frames down (`iframe.webview`, VS
 * Code's shell, then `#active-frame`, the extension's HTML). Finds them by their host iframe's
 * src and by the workbench part they sit over, tells a rendered one from a blank one, and waits
 * for a rendered one with the remedy for the blank-webview race ("Developer: Reload Webviews";
 * docs/TESTING.md).
 *
 * Part of test/e2e/harness.ts (import that, not this module).
 */
import type { Frame, Page } from 'playwright-core';
import { waitFor } from '../support/wait';
import { log } from './harness-process';
import { runCommand } from './harness-workbench';

export interface WebviewFrame {
  /** The `iframe.webview` host frame (VS Code's webview shell). */
  outer: Frame;
  /** `#active-frame` inside it: the extension's HTML. */
  content: Frame;
  /** The outer iframe's src (holds extensionId=… and purpose=…). */
  src: string;
}

/**
 * Which webviews to look at: a substring of the host iframe's src (e.g. `extensionId=pub.name`),
 * or a predicate over the src (e.g. to tell a view, `purpose=webviewView`, from an editor panel).
 */
export type WebviewFilter = string | ((src: string) => boolean);

function matchesFilter(src: string, filter: WebviewFilter | undefined): boolean {
  if (filter === undefined) return true;
  return typeof filter === 'string' ? src.includes(filter) : filter(src);
}

function describeFilter(filter: WebviewFilter): string {
  return typeof filter === 'string' ? filter : filter.name || 'matching a predicate';
}

/**
 * The webview frames on the page whose host iframe src matches `filter`. With `within` (a CSS
 * selector of a workbench part, e.g. `.part.sidebar` or `.part.editor`), only webviews shown
 * inside that part: webviews are overlays positioned over their part, and their iframe src does
 * not reliably tell a view from an editor panel (VS Code drops `purpose=webviewView` when it
 * re-creates a view's webview after the view was hidden).
 */
export async function findWebviews(page: Page, filter?: WebviewFilter, opts: { within?: string } = {}): Promise<WebviewFrame[]> {
  const found: WebviewFrame[] = [];
  const part = opts.within ? await page.locator(opts.within).first().boundingBox().catch(() => null) : undefined;
  if (part === null) return found; // the part is not on screen
  for (const el of await page.$$('iframe.webview')) {
    const src = (await el.getAttribute('src')) ?? '';
    if (!matchesFilter(src, filter)) continue;
    if (part) {
      const box = await el.boundingBox();
      if (!box || box.width === 0 || box.height === 0) continue;
      const cx = box.x + box.width / 2;
      const cy = box.y + box.height / 2;
      if (cx < part.x || cx > part.x + part.width || cy < part.y || cy > part.y + part.height) continue;
    }
    const outer = await el.contentFrame();
    if (!outer) continue;
    const inner = await outer.$('#active-frame');
    const content = inner ? await inner.contentFrame() : null;
    if (content) found.push({ outer, content, src });
  }
  return found;
}

/** True when the webview's document has rendered something (text, or any element in body). */
export async function webviewHasContent(w: WebviewFrame): Promise<boolean> {
  try {
    return (await w.content.evaluate(
      `(() => { const b = document.body; if (!b) return false; return b.innerText.trim().length > 0 || b.querySelectorAll('*:not(script):not(style)').length > 0; })()`,
    )) as boolean;
  } catch {
    return false;
  }
}

/**
 * Waits for a non-blank webview matching `filter`. About 1 run in 7 a webview stays blank
 * (webviews share one origin and race for the service worker; docs/TESTING.md): then runs
 * "Developer: Reload Webviews" and looks again, up to `retries` times.
 */
export async function waitForWebview(
  page: Page,
  filter: WebviewFilter,
  opts: { timeoutMs?: number; retries?: number; within?: string } = {},
): Promise<WebviewFrame> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const retries = opts.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await waitFor(`webview ${describeFilter(filter)}${opts.within ? ` in ${opts.within}` : ''}`, timeoutMs, async () => {
        for (const w of await findWebviews(page, filter, { within: opts.within })) if (await webviewHasContent(w)) return w;
        return undefined;
      }, 300);
    } catch (e) {
      if (attempt >= retries) throw e;
      log(`webview ${describeFilter(filter)} blank or missing; running "Developer: Reload Webviews" (retry ${attempt + 1}/${retries})`);
      await runCommand(page, 'Developer: Reload Webviews');
    }
  }
}
