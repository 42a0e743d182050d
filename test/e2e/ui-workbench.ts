/**
 * Workbench helpers of the UI checks in code-server (test/e2e/ui-chat.ts, ui-checkpoints.ts,
 * ui-variants.ts), over test/e2e/harness.ts: side bar panes and their tree rows, inline actions
 * and context menus, notification toasts, editor tabs and the diff editor, "Vox: Set API Key"
 * through the command palette, and the Vox chat composer. Each waits with a bounded timeout and
 * names what the page showed instead when it fails.
 */
import type { Frame, Locator, Page } from 'playwright-core';
import * as h from './harness';

/** Matches text that is exactly `s` (surrounding white space aside). */
export const exactly = (s: string): RegExp => new RegExp(`^\\s*${h.escapeRegExp(s)}\\s*$`);

/** A view pane of the side bar (e.g. "Vox Checkpoints" in the Source Control container) by its title. */
export function sideBarPane(page: Page, title: string): Locator {
  return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: exactly(title) }) }).first();
}

/** Waits for a side bar pane to show and expands it; the error lists the panes on screen. */
export async function expandPane(page: Page, title: string, ms = 20_000): Promise<Locator> {
  const pane = sideBarPane(page, title);
  try {
    await pane.waitFor({ state: 'visible', timeout: ms });
  } catch {
    const titles = await page.locator('.part.sidebar .pane-header h3.title').allTextContents().catch(() => []);
    throw new Error(`no "${title}" pane in the side bar (panes: ${titles.join(' | ') || 'none'})`);
  }
  const header = pane.locator('.pane-header').first();
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click({ timeout: 5_000 });
  return pane;
}

/** Collapses a view pane of the side bar by its title (no-op when collapsed or absent). */
export async function collapsePane(page: Page, title: string): Promise<void> {
  const header = page.locator('.part.sidebar .pane-header', { has: page.locator('h3.title', { hasText: exactly(title) }) }).first();
  if ((await header.count()) === 0 || (await header.getAttribute('aria-expanded')) !== 'true') return;
  // The title, not the header's middle: the header also holds the view's action buttons.
  await header.locator('h3.title').click({ timeout: 5_000 });
  await h.waitFor(`the ${title} pane to collapse`, 5_000, async () => (await header.getAttribute('aria-expanded')) === 'false', 100);
}

/**
 * Drags the side bar's edge to `to` px so its content fits (cosmetic: screenshots). Returns the
 * widths before and after, or undefined when it was wide enough (or not on screen).
 */
export async function widenSideBar(page: Page, to: number): Promise<{ from: number; to: number } | undefined> {
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar || bar.width >= to) return undefined;
  const x = bar.x + bar.width;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + (to - bar.width), y, { steps: 8 });
  await page.mouse.up();
  const after = await page.locator('.part.sidebar').boundingBox();
  return { from: bar.width, to: after?.width ?? 0 };
}

/** The tree rows whose label is exactly `label`. */
export function rowsLabelled(pane: Locator, label: string): Locator {
  return pane.locator('.monaco-list-row', { has: pane.page().locator('.label-name', { hasText: exactly(label) }) });
}

/** The first tree row whose label is exactly `label`. */
export function treeRow(pane: Locator, label: string): Locator {
  return rowsLabelled(pane, label).first();
}

/** Expands a collapsed tree row through its twistie (no-op when already expanded). */
export async function expandRow(row: Locator): Promise<void> {
  if ((await row.getAttribute('aria-expanded')) === 'true') return;
  await row.locator('.monaco-tl-twistie').click({ timeout: 5_000 });
  await h.waitFor('the row to expand', 5_000, async () => (await row.getAttribute('aria-expanded')) === 'true', 100);
}

/** Clicks an inline action of a row: hovering the row reveals its action bar. */
export async function clickInlineAction(row: Locator, title: string): Promise<void> {
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

/** Clicks on a context menu item before it listens for them; each one dropped is clicked again. */
const MENU_CLICK_ATTEMPTS = 3;
/** How long a menu whose item ran may take to close (it closes as the item's action starts). */
const MENU_CLOSE_MS = 3_000;

/**
 * Right-clicks a row and picks `item` from its context menu. VS Code's menu items listen for the
 * mouse only 100 ms after they render (base/browser/ui/menu/menu.ts: "Add mouse up listener later
 * to avoid accidental clicks"): a click that comes sooner, as Playwright's can, is dropped and the
 * menu stays open with the item highlighted. The menu closing is what shows the item ran, so the
 * click is repeated until it does (a dropped click ran nothing, so nothing runs twice).
 */
export async function clickContextMenuItem(page: Page, row: Locator, item: string): Promise<void> {
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
  for (let attempt = 1; ; attempt++) {
    await entry.click({ timeout: 5_000 });
    const closed = await menu.waitFor({ state: 'hidden', timeout: MENU_CLOSE_MS }).then(() => true, () => false);
    if (closed) return;
    if (attempt === MENU_CLICK_ATTEMPTS) {
      await page.keyboard.press('Escape');
      throw new Error(`the context menu stayed open after ${attempt} clicks on "${item}"`);
    }
    h.log(`context menu: the click on "${item}" was dropped (the menu is still open); clicking again (${attempt}/${MENU_CLICK_ATTEMPTS - 1})`);
  }
}

/** A notification toast containing `text`. */
export function toast(page: Page, text: string | RegExp): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
}

/** Visible toasts' texts, for error messages (a failed command shows "Vox: …" there). */
export async function errorToasts(page: Page): Promise<string[]> {
  return (await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => [])).map((t) => t.replace(/\s+/g, ' ').trim());
}

/** Waits for an editor tab containing `hasText`; the error lists the open tabs (and `extra()`). */
export async function waitForEditorTab(page: Page, hasText: string, describe: string, extra = async (): Promise<string> => ''): Promise<Locator> {
  const tab = page.locator('.part.editor .tab', { hasText }).first();
  try {
    await tab.waitFor({ state: 'visible', timeout: 15_000 });
  } catch {
    const tabs = await page.locator('.part.editor .tab').allTextContents().catch(() => []);
    throw new Error(`no editor tab titled "${describe}" (tabs: ${tabs.map((t) => t.trim()).join(' | ') || 'none'}${await extra()})`);
  }
  return tab;
}

/** Text of one side of the open diff editor, line by line (Monaco renders spaces as U+00A0). */
async function diffSide(page: Page, side: 'original' | 'modified'): Promise<string> {
  const t = await page.locator(`.part.editor .monaco-diff-editor .editor.${side} .view-lines`).first().innerText({ timeout: 2_000 });
  return t.replace(/\u00a0/g, ' ');
}

/**
 * "Vox: Set API Key" from the command palette: waits for `listed` (default `provider`) in the
 * provider pick, picks `provider`, types `key`, waits for the "key saved" toast.
 */
export async function setApiKey(page: Page, provider: string, key: string, opts: { listed?: string; timeoutMs?: number } = {}): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  await h.runCommand(page, 'Vox: Set API Key', opts.timeoutMs ?? 30_000, { opensQuickInput: true });
  await widget.locator('.quick-input-list .label-name', { hasText: exactly(opts.listed ?? provider) }).waitFor({ timeout: 10_000 });
  await h.answerQuickInput(page, provider);
  await widget.locator('.quick-input-message', { hasText: `${provider} API key` }).waitFor({ timeout: 10_000 });
  await h.answerQuickInput(page, key);
  await toast(page, `Vox: ${provider} key saved.`).waitFor({ state: 'visible', timeout: 15_000 });
}

/**
 * Waits for the open diff editor to show sides for which `ok` holds (each read line by line);
 * the error shows both sides and `expected`.
 */
export async function waitForDiff(
  page: Page,
  ok: (sides: { original: string; modified: string }) => boolean,
  expected: string,
  ms: number,
): Promise<{ original: string; modified: string }> {
  await page.locator('.part.editor .monaco-diff-editor').first().waitFor({ state: 'visible', timeout: ms });
  let sides = { original: '', modified: '' };
  try {
    await h.waitFor('both sides of the diff', ms, async () => {
      sides = { original: await diffSide(page, 'original'), modified: await diffSide(page, 'modified') };
      return ok(sides);
    }, 200);
  } catch {
    throw new Error(`the diff shows ${JSON.stringify(sides.original)} ↔ ${JSON.stringify(sides.modified)}, expected ${expected}`);
  }
  return sides;
}

/** In a Vox chat webview: New Thread, the prompt typed into the composer, Send. */
export async function sendInNewThread(frame: Frame, prompt: string): Promise<void> {
  await frame.locator('vscode-button.new-thread').click({ timeout: 10_000 });
  await frame.locator('section.empty').waitFor({ timeout: 10_000 });
  await frame.locator('vscode-textarea textarea').fill(prompt, { timeout: 10_000 });
  await frame.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
}
