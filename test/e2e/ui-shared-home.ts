/**
 * UI end to end of the one database VS Code and the CLI share (~/.vox/vox.db, or $VOX_HOME), in a
 * real VS Code (code-server + Chromium, own session with a fresh profile on the sample
 * workspace) and the built CLI (dist/cli.js) as separate processes with the same HOME, the model
 * `compat:shared-e2e` on a scripted OpenAI-compatible server on 127.0.0.1. Called by
 * test/e2e/run-e2e.mjs (UI set `shared`); each check is one named, counted check:
 *   1. window → CLI: a prompt sent in the chat view; `vox threads --json` lists its thread and
 *      `vox show <id> --json` has the answer;
 *   2. CLI → window, live: `vox chat --thread <id>` continues that thread from a terminal; the
 *      open thread in the window shows the terminal's prompt and answer without a reload; a new
 *      thread `vox chat` starts shows in the window's thread list, and opens with its answer;
 *   3. the spend: a price set with `vox prices set`, a paid turn sent in the window — the status
 *      bar shows today's exact micro-dollars (1,000 in × $1/M + 100 out × $2/M = $0.001200) and
 *      `vox usage --json` has the same `todayMicroUsd`;
 *   4. a click on that spend opens the "Vox: Usage" tab: today's figure, the thread's row and the
 *      chart's canvas;
 *   5. screenshots.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { EDITOR } from './ui-chat-context';
import { assert, checkScreenshots, VOX_WEBVIEW } from './ui-session';
import { widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const SHARED_CHECKS = {
  windowToCli: 'shared database: a thread sent in the window is listed by `vox threads` and shown by `vox show` (same HOME, no VOX_HOME)',
  cliToWindow: 'shared database: `vox chat --thread` from a terminal shows live in the open thread; a new CLI thread shows in the thread list and opens',
  spend: 'shared database: after a paid turn in the window, the status bar and `vox usage --json` show the exact spend ($0.001200)',
  usageTab: 'shared database: a click on the spend opens the Usage tab with today\'s $0.001200, the thread\'s row and the chart',
  screenshots: 'shared database: screenshots in test-results/',
} as const;
const PRICED_PROMPT = 'From the window: a priced turn';
const PRICED_ANSWER = 'This one has a price.';
/** The priced turn's usage and what it costs at $1 / $2 per million tokens: 1,000 + 200 µ$. */
const PRICED_USAGE = { inputTokens: 1_000, outputTokens: 100 };
const PRICED_MICRO_USD = 1_200;

const MODEL = 'compat:shared-e2e';
const WINDOW_PROMPT = 'From the window: name the file that exports add';
const WINDOW_ANSWER = 'src/math.js exports add.';
const CLI_FOLLOW_UP = 'From the terminal: and mean?';
const CLI_FOLLOW_ANSWER = 'It exports mean too.';
const CLI_PROMPT = 'From the terminal: a thread of its own';
const CLI_ANSWER = 'Started in the terminal.';
const CLI = path.join(h.REPO_ROOT, 'dist', 'cli.js');

interface CliOut { code: number | null; out: string; err: string }

/** The built CLI with the window's HOME (so ~/.vox is the window's) and no VOX_HOME. */
function vox(args: string[], env: { home: string; cwd: string; baseUrl: string }): Promise<CliOut> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOME: env.home, VOX_COMPAT_BASE_URL: env.baseUrl, VOX_COMPAT_API_KEY: 'sk-shared-e2e' };
  delete childEnv.VOX_HOME;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: env.cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** The texts of the open thread's messages, in order, as the webview shows them. */
async function shownMessages(view: Frame): Promise<string[]> {
  return view.evaluate(`Array.from(document.querySelectorAll('.message')).map((el) => (el.innerText || '').trim())`) as Promise<string[]>;
}

export const runSharedChecks = defineUiSet({
  name: 'shared database',
  dir: 'shared',
  checks: SHARED_CHECKS,
  state: { sent: false, priced: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': MODEL, 'vox.compatBaseUrl': fake.baseUrl, 'vox.approval': { read: 'auto', write: 'ask', execute: 'ask' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, fake: fk, dirs }) => {
    const env = { home: dirs.home, cwd: dirs.workspace, baseUrl: fk.baseUrl };
    let threadId = '';

    // ---- 1. Window → CLI
    await check(SHARED_CHECKS.windowToCli, async () => {
      assert(fs.existsSync(CLI), `${CLI} is missing: run npm run build first`);
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      await area.waitFor({ timeout: 30_000 });
      fk.push(textTurn(WINDOW_ANSWER));
      await area.click();
      await area.fill(WINDOW_PROMPT);
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await h.waitFor('the answer in the window', 30_000, async () => (await shownMessages(view)).includes(WINDOW_ANSWER), 200);
      const listed = await vox(['threads', '--json'], env);
      assert(listed.code === 0, `vox threads exited ${listed.code}: ${listed.err}`);
      const threads = JSON.parse(listed.out) as { id: string; title: string }[] | { threads: { id: string; title: string }[] };
      const rows = Array.isArray(threads) ? threads : threads.threads;
      const mine = rows.find((t) => t.title === WINDOW_PROMPT);
      assert(mine, `vox threads --json does not list the window's thread: ${JSON.stringify(rows.map((t) => t.title))}`);
      threadId = mine.id;
      const shown = await vox(['show', threadId, '--json'], env);
      assert(shown.code === 0 && shown.out.includes(WINDOW_ANSWER), `vox show ${threadId} --json (exit ${shown.code}) lacks the answer: ${shown.out.slice(0, 300)} ${shown.err.slice(0, 300)}`);
      await shot('e2e-shared-window');
      state.sent = true;
    });

    // ---- 2. CLI → window, live
    await check(SHARED_CHECKS.cliToWindow, async () => {
      requireState('sent');
      const view = await sidebar();
      fk.push(textTurn(CLI_FOLLOW_ANSWER));
      const follow = await vox(['chat', '--thread', threadId, '--model', MODEL, CLI_FOLLOW_UP], env);
      assert(follow.code === 0, `vox chat --thread exited ${follow.code}: ${follow.err.slice(0, 400)}`);
      await h.waitFor('the terminal\'s prompt and answer in the open thread, without a reload', 20_000, async () => {
        const m = await shownMessages(view);
        return m.some((x) => x.endsWith(CLI_FOLLOW_UP)) && m.includes(CLI_FOLLOW_ANSWER); // a user message reads "You said: …" to a screen reader
      }, 200).catch(async (e: Error) => { throw new Error(`${e.message}; the thread shows ${JSON.stringify(await shownMessages(view))}`); });
      await shot('e2e-shared-follow-up');

      fk.push(textTurn(CLI_ANSWER));
      const fresh = await vox(['chat', '--model', MODEL, CLI_PROMPT], env);
      assert(fresh.code === 0, `vox chat exited ${fresh.code}: ${fresh.err.slice(0, 400)}`);
      await view.locator('button.threads-toggle').click({ timeout: 10_000 });
      const row = view.locator('ul.threads button.open', { hasText: CLI_PROMPT });
      await row.waitFor({ timeout: 20_000 });
      await shot('e2e-shared-list');
      await row.click();
      await h.waitFor('the CLI thread\'s answer', 20_000, async () => (await shownMessages(view)).includes(CLI_ANSWER), 200);
    });

    // ---- 3. The spend in the status bar
    await check(SHARED_CHECKS.spend, async () => {
      requireState('sent');
      const price = await vox(['prices', 'set', 'shared-e2e', '--input', '1', '--output', '2'], env);
      assert(price.code === 0, `vox prices set exited ${price.code}: ${price.err.slice(0, 400)}`);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      fk.push(textTurn(PRICED_ANSWER, { usage: PRICED_USAGE }));
      await area.click();
      await area.fill(PRICED_PROMPT);
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await h.waitFor('the priced answer in the window', 30_000, async () => (await shownMessages(view)).includes(PRICED_ANSWER), 200);
      const spend = p.locator('.statusbar-item', { hasText: '$0.001200 today' });
      await spend.first().waitFor({ timeout: 20_000 }).catch(async (e: Error) => {
        const items = await p.locator('.statusbar-item').allInnerTexts();
        throw new Error(`${e.message}; the status bar shows ${JSON.stringify(items)}`);
      });
      const usage = await vox(['usage', '--json'], env);
      assert(usage.code === 0, `vox usage exited ${usage.code}: ${usage.err.slice(0, 400)}`);
      const today = (JSON.parse(usage.out) as { todayMicroUsd: number }).todayMicroUsd;
      assert(today === PRICED_MICRO_USD, `vox usage --json says todayMicroUsd ${today}, expected ${PRICED_MICRO_USD}`);
      await shot('e2e-shared-spend');
      state.priced = true;
    });

    // ---- 4. The Usage tab, from the status bar
    await check(SHARED_CHECKS.usageTab, async () => {
      requireState('priced');
      await p.locator('.statusbar-item', { hasText: '$0.001200 today' }).first().click({ timeout: 10_000 });
      await p.locator('.part.editor .tab', { hasText: 'Vox: Usage' }).first().waitFor({ timeout: 20_000 });
      const tab = (await h.waitForWebview(p, VOX_WEBVIEW, { within: EDITOR, timeoutMs: 20_000, retries: 2 })).content;
      await tab.locator('.usage .today').waitFor({ timeout: 20_000 });
      const today = await tab.locator('.usage .today').innerText();
      assert(today === '$0.001200', `the Usage tab says today ${JSON.stringify(today)}`);
      const rows = await tab.locator('.by-thread tbody tr').allInnerTexts();
      assert(rows.some((r) => r.includes(PRICED_PROMPT.slice(0, 20)) || r.includes('$0.001200')), `the Usage tab's threads: ${JSON.stringify(rows)}`);
      await tab.locator('.spend-chart canvas').waitFor({ timeout: 10_000 });
      await shot('e2e-shared-usage');
      await h.runCommand(p, 'View: Close All Editors').catch(() => {});
    });

    await o.check(SHARED_CHECKS.screenshots, async () => {
      requireState('sent');
      checkScreenshots(o, shots, ['e2e-shared-window', 'e2e-shared-follow-up', 'e2e-shared-list', 'e2e-shared-spend', 'e2e-shared-usage'], []);
    }, p);
  },
});
