/**
 * UI end to end of importing other agents' sessions in a real VS Code
 * (code-server + Chromium, own session). The session's private HOME holds the recorded fixtures
 * where the tools keep them — `~/.claude/projects/…` (Claude Code 2.1.332), `~/.codex/sessions/…`
 * (Codex 0.171.0) — and a Cursor `~/.cursor/chats/<md5>/<agent>/store.db` written in WAL mode.
 * Called by test/e2e/run-e2e.mjs (`--set importers`); each check is one named, counted check there:
 *   1. scan: "Vox: Import Sessions…" lists the three sessions with their source, project and
 *      "not imported", and "Choose a folder…" last (README picture docs/screenshot-import.png);
 *   2. import: accepting imports them under a progress notification that ends with the counts;
 *   3. again: the picker now says "imported" for each (nothing is imported twice);
 *   4. folder: "Choose a folder…" → the folder dialog → a Claude Code 2.0 home outside the
 *      standard places (its kind read from its projects/) → its sessions listed and imported;
 *   5. screenshots.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import * as h from './harness';
import { VoxStore } from '../../src/engine/store/store';
import { STORE_SCHEMAS } from '../../src/engine/modules';

import { CURSOR_CONVERSATION, CursorWriter } from '../support/cursor-store';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { defineUiSet } from './ui-set';

export const IMPORTER_CHECKS = {
  scan: 'importers UI: "Vox: Import Sessions…" lists the Claude Code, Codex and Cursor sessions found, not imported, then "Choose a folder…"',
  import: 'importers UI: accepting imports them with a progress notification that ends with the counts',
  again: 'importers UI: run again, every session shows as imported',
  folder: 'importers UI: "Choose a folder…" opens a folder dialog; a Claude Code folder elsewhere (kind read from projects/) is scanned and imported',
  screenshots: 'importers UI: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-import', 250 * 1024);
const FIXTURES = path.join(h.REPO_ROOT, 'test/fixtures/importers');
const CURSOR_WORKSPACE = '/home/dev/shop';
/** A Claude Code home outside the standard places (under HOME), for "Choose a folder…". */
const ELSEWHERE = 'old-laptop/claude';

/** The tools' homes inside the session's HOME, as each tool lays them out. */
function plantHistory(home: string): { cursorDb: Database.Database } {
  fs.cpSync(path.join(FIXTURES, 'claude-code-2.1'), path.join(home, '.claude'), { recursive: true, filter: (p) => !p.endsWith('requests.log.json') });
  fs.cpSync(path.join(FIXTURES, 'codex-0.171'), path.join(home, '.codex'), { recursive: true, filter: (p) => !p.endsWith('requests.log.json') });
  fs.cpSync(path.join(FIXTURES, 'claude-code-2.0'), path.join(home, ELSEWHERE), { recursive: true, filter: (p) => !p.endsWith('requests.log.json') });
  const chat = path.join(home, '.cursor', 'chats', crypto.createHash('md5').update(CURSOR_WORKSPACE).digest('hex'), 'e2e-agent');
  fs.mkdirSync(chat, { recursive: true });
  const db = new Database(path.join(chat, 'store.db'));
  new CursorWriter(db, 'e2e-agent', CURSOR_WORKSPACE).add(...CURSOR_CONVERSATION);
  return { cursorDb: db };
}

export const runImporterChecks = defineUiSet({
  name: 'importers UI',
  dir: 'importers',
  checks: IMPORTER_CHECKS,
  state: { scanned: false, imported: false },
  prepare: ({ dirs, onClose }) => {
    fs.mkdirSync(dirs.home, { recursive: true });
    const { cursorDb } = plantHistory(dirs.home);
    onClose(() => cursorDb.close());
  },
  settings: {},
  run: async ({ o, page: p, shots, shot, openWorkbench, check, requireState, state, dirs }) => {
    const rows = p.locator('.quick-input-widget .quick-input-list .monaco-list-row');
    const rowText = async (): Promise<string[]> => (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    const openPicker = async (): Promise<string[]> => {
      await h.runCommand(p, 'Vox: Import Sessions…', 45_000, { opensQuickInput: true });
      await h.waitFor('the import picker with three sessions', 45_000, async () => (await rowText()).length >= 3, 250);
      return rowText();
    };

    await check(IMPORTER_CHECKS.scan, async () => {
      await openWorkbench();
      const texts = await openPicker();
      const find = (re: RegExp) => texts.find((t) => re.test(t));
      const claude = find(/FIXTURE-START: look at hello\.txt.*Claude Code/);
      const codex = find(/FIXTURE-START: look at hello\.txt.*Codex/);
      const cursor = find(/Why does the build fail\?.*Cursor · \/home\/dev\/shop/);
      assert(claude && codex && cursor, `the picker rows read ${JSON.stringify(texts)}`);
      assert([claude, codex, cursor].every((t) => /not imported/.test(t)), `a row is not "not imported": ${JSON.stringify(texts)}`);
      assert(/Choose a folder…/.test(texts[texts.length - 1] ?? ''), `the last row is not "Choose a folder…": ${JSON.stringify(texts)}`);
      await shot(README.shot);
      await shot('e2e-import-picker');
      state.scanned = true;
    });

    const claudeThreads = (): number => {
      const dbFile = path.join(dirs.home, '.vox', 'vox.db');
      if (!fs.existsSync(dbFile)) return 0;
      const s = VoxStore.open(dbFile, { readonly: true, schema: STORE_SCHEMAS });
      try {
        return (s.db.prepare("SELECT COUNT(*) AS n FROM threads WHERE source = 'claude-code'").get() as { n: number }).n;
      } finally {
        s.close();
      }
    };

    await check(IMPORTER_CHECKS.import, async () => {
      requireState('scanned');
      await p.locator('.quick-input-widget .quick-input-box input').focus();
      await p.keyboard.press('Enter'); // accept the preselected (not yet imported) sessions
      await p.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
      // The store says what was imported (the extension's own database, read-only).
      // The one database the window shares with the CLI: $VOX_HOME, else ~/.vox (the server's HOME here).
      const dbFile = path.join(dirs.home, '.vox', 'vox.db');
      const imported = (): { source: string; n: number }[] => {
        if (!fs.existsSync(dbFile)) return [];
        const s = VoxStore.open(dbFile, { readonly: true, schema: STORE_SCHEMAS });
        try {
          return s.db.prepare('SELECT source, COUNT(*) AS n FROM threads WHERE source IS NOT NULL GROUP BY source ORDER BY source').all() as { source: string; n: number }[];
        } finally {
          s.close();
        }
      };
      const toasts = () => p.locator('.notifications-toasts .notification-toast').allInnerTexts();
      let seen: string[] = [];
      await h.waitFor('the import to finish', 60_000, async () => {
        seen = [...new Set([...seen, ...(await toasts()).map((t) => t.replace(/\s+/g, ' '))])];
        return seen.some((t) => t.includes('Vox imported 3 of 3 sessions'));
      }, 100).catch(async (e: Error) => {
        await h.runCommand(p, 'Notifications: Show Notifications', 10_000).catch(() => {});
        const center = await p.locator('.notifications-center .notification-list-item-message').allInnerTexts().catch(() => []);
        throw new Error(`${e.message}; toasts seen: ${JSON.stringify(seen)}; notification center: ${JSON.stringify(center)}; imported threads: ${JSON.stringify(imported())}`);
      });
      assert(!seen.some((t) => /Vox finished/.test(t)), `imported runs were announced as finished: ${JSON.stringify(seen)}`);
      await shot('e2e-import-done');
      const text = seen.find((t) => t.includes('Vox imported 3 of 3 sessions'))!;
      assert(/Claude Code: 2 threads/.test(text) && /Codex: 1 threads/.test(text) && /Cursor: 1 threads, 2 messages, 2 tool calls/.test(text), `the notification reads ${JSON.stringify(text)}`);
      const rows = imported();
      assert(JSON.stringify(rows) === JSON.stringify([{ source: 'claude-code', n: 2 }, { source: 'codex', n: 1 }, { source: 'cursor', n: 1 }]), `the store holds ${JSON.stringify(rows)}`);
      state.imported = true;
    });

    await check(IMPORTER_CHECKS.again, async () => {
      requireState('imported');
      const texts = await openPicker();
      const sessions = texts.slice(0, -1);
      assert(/Choose a folder…/.test(texts[texts.length - 1] ?? ''), `the last row is not "Choose a folder…": ${JSON.stringify(texts)}`);
      assert(sessions.length === 3 && sessions.every((t) => /· imported/.test(t) && !/not imported/.test(t)), `after the import the rows read ${JSON.stringify(texts)}`);
      await shot('e2e-import-again');
      await p.keyboard.press('Escape');
    });

    await check(IMPORTER_CHECKS.folder, async () => {
      requireState('imported');
      const before = claudeThreads();
      await openPicker();
      await p.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Choose a folder…' }).click();
      await p.keyboard.press('Enter');
      // The folder dialog (code-server's own): the path typed into its input, then OK.
      await h.waitFor('the folder dialog', 20_000, async () => /old-laptop|\//.test(await p.locator('.quick-input-widget .quick-input-box input').inputValue().catch(() => '')), 250);
      await p.locator('.quick-input-widget .quick-input-box input').fill(`${path.join(dirs.home, ELSEWHERE)}/`);
      // The dialog lists the typed folder before its button takes the click (a click while it re-reads is lost on a busy machine).
      await h.waitFor('the typed folder listed in the dialog', 20_000, async () => (await rowText()).some((t) => t === 'projects'), 250);
      const importHere = p.locator('.quick-input-widget .monaco-button', { hasText: 'Import from here' });
      await importHere.click();
      await h.waitFor('the picker of the chosen folder', 45_000, async () => {
        if ((await rowText()).some((t) => /Claude Code/.test(t) && /not imported/.test(t))) return true;
        // Still the dialog, its folder shown: the click was lost; click again (the button exists only in the dialog).
        if (await importHere.isVisible().catch(() => false)) await importHere.click({ timeout: 2_000 }).catch(() => undefined);
        return false;
      }, 1_000);
      const placeholder = await p.locator('.quick-input-widget .quick-input-box input').getAttribute('placeholder');
      assert(/found in .*old-laptop\/claude/.test(placeholder ?? ''), `the picker says where it looked: ${JSON.stringify(placeholder)}`);
      await p.keyboard.press('Enter');
      await h.waitFor('the chosen folder imported', 60_000, async () => claudeThreads() > before, 250);
    });

    await o.check(IMPORTER_CHECKS.screenshots, async () => {
      requireState('imported');
      checkScreenshots(o, shots, ['e2e-import-picker', 'e2e-import-done', 'e2e-import-again'], README);
    }, p);
  },
});
