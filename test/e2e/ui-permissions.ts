/**
 * UI end to end of "Always allow" and "Vox: Permission Rules…" in a real VS Code (code-server +
 * Chromium, own session with a fresh profile on the sample workspace), the model
 * `compat:permissions-e2e` on a scripted OpenAI-compatible server on 127.0.0.1, commands asking
 * (`execute: ask`). Called by test/e2e/run-e2e.mjs (`--set permissions`); each check is one named,
 * counted check there:
 *   1. the scripted model runs `git status --short`: the approval bar offers "Always allow…",
 *      which opens the rule (commands starting with "git status") and its scope (screenshot, the
 *      README tour's picture); "This workspace" + "Approve and always allow" runs the command and
 *      writes the rule to .vox/permissions.json; in a new thread the next `git status` runs
 *      unasked (the run completes, its result reaches the model, no approval bar);
 *   2. "Vox: Permission Rules…" lists the rule as the workspace's; picking it asks in a modal
 *      dialog, Remove takes it out of .vox/permissions.json and says so;
 *   3. the next `git status` asks again (the approval bar shows it; Deny ends the turn);
 *   4. screenshots (docs/screenshot-always-allow.png with --update-screenshot).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import * as h from './harness';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { exactly, sendInNewThread, toast, widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const PERMISSION_CHECKS = {
  alwaysAllow: 'permissions UI: "Always allow…" → this command prefix for this workspace writes the rule; the next matching command runs unasked',
  rulesView: 'permissions UI: "Vox: Permission Rules…" lists the workspace rule and removes it (confirmed)',
  asksAgain: 'permissions UI: with the rule removed the next matching command asks again',
  screenshots: 'permissions UI: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-always-allow', 250 * 1024);
const PREFIX = 'git status';
const FIRST = 'git status --short';
const ANSWERS = ['The tree is clean.', 'Still clean, and nobody asked.', 'Denied, so I stopped.'];

/** The waiting call's approval bar in the chat frame. */
const bar = (view: Frame) => view.locator('.approval-bar');

/** Waits for the last run's assistant text to include `text`. */
async function answered(view: Frame, text: string): Promise<void> {
  await h.waitFor(`the answer "${text}"`, 45_000, async () => (await view.locator('article.run').last().locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes(text), 200);
}

export const runPermissionChecks = defineUiSet({
  name: 'permissions UI',
  dir: 'permissions',
  checks: PERMISSION_CHECKS,
  state: { allowed: false, removed: false },
  fake: { responses: [] },
  settings: ({ fake }) => ({ 'vox.model': 'compat:permissions-e2e', 'vox.compatBaseUrl': fake.baseUrl, 'vox.approval': { read: 'auto', write: 'ask', execute: 'ask' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, dirs, fake: fk }) => {
    const rulesFile = path.join(dirs.workspace, '.vox', 'permissions.json');
    const fileRules = (): string => (fs.existsSync(rulesFile) ? fs.readFileSync(rulesFile, 'utf8') : '(no file)');
    /** The tool result the model got in request `i` (the one after the call). */
    const toolResult = (i: number): string => {
      const messages = (fk.requests[i]?.body?.messages ?? []) as { role: string; content: string | null }[];
      return messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '(no tool result)';
    };

    // ---- 1. Always allow → this workspace; the next matching command runs unasked
    await check(PERMISSION_CHECKS.alwaysAllow, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 560);
      const view = await sidebar();
      await view.locator('vscode-textarea textarea').waitFor({ timeout: 30_000 });
      fk.push(toolCallTurn([{ name: 'run_command', args: { command: FIRST } }]), textTurn(ANSWERS[0]!));
      await sendInNewThread(view, 'What is the state of the tree?');
      const always = bar(view).locator('vscode-button.always');
      await always.waitFor({ timeout: 30_000 });
      assert((await bar(view).innerText()).includes(FIRST), `the approval bar reads ${JSON.stringify(await bar(view).innerText())}`);
      await always.click({ timeout: 10_000 });
      const panel = bar(view).locator('.always-allow');
      await panel.waitFor({ timeout: 10_000 });
      const rule = (await panel.locator('.rule').innerText()).replace(/\s+/g, ' ').trim();
      assert(rule === `Allow commands starting with "${PREFIX}": ${PREFIX}`, `the rule offered reads ${JSON.stringify(rule)}`);
      await panel.locator('vscode-button.scope-workspace').click({ timeout: 10_000 });
      await h.waitFor('"This workspace" to be chosen', 10_000, async () => (await panel.locator('vscode-button.scope-workspace').getAttribute('aria-checked')) === 'true', 100);
      await shot(README.shot);
      await shot('e2e-always-allow');
      const before = fk.requests.length;
      await panel.locator('vscode-button.confirm').click({ timeout: 10_000 });
      await answered(view, ANSWERS[0]!);
      const written = fileRules();
      assert(/"action":\s*"allow"/.test(written) && written.includes(`"${PREFIX}`) && written.includes('run_command'), `.vox/permissions.json reads ${written}`);
      // A new thread: the workspace rule applies there too; the command runs without asking.
      fk.push(toolCallTurn([{ name: 'run_command', args: { command: PREFIX } }]), textTurn(ANSWERS[1]!));
      const second = fk.requests.length;
      await sendInNewThread(view, 'And now?');
      await answered(view, ANSWERS[1]!);
      assert(fk.requests.length >= second + 2 && !toolResult(second + 1).includes('denied'), `the second command did not run: ${toolResult(second + 1)}`);
      assert((await bar(view).count()) === 0, 'an approval bar is showing after the allowed command ran');
      assert(fk.requests.length > before, 'the model was not called after the approval');
      await shot('e2e-always-allow-unasked');
      state.allowed = true;
    });

    // ---- 2. Vox: Permission Rules… removes it
    await check(PERMISSION_CHECKS.rulesView, async () => {
      requireState('allowed');
      const widget = p.locator('.quick-input-widget');
      await h.runCommand(p, 'Vox: Permission Rules…', 30_000, { opensQuickInput: true });
      const row = widget.locator('.quick-input-list .monaco-list-row', { hasText: PREFIX }).first();
      await row.waitFor({ timeout: 20_000 });
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      assert(text.includes('workspace · .vox/permissions.json') || text.includes('workspace ·'), `the rule's row reads ${JSON.stringify(text)}`);
      await shot('e2e-permission-rules');
      await row.click({ timeout: 10_000 });
      const dialog = p.locator('.monaco-dialog-box').first();
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      const question = (await dialog.innerText()).replace(/\s+/g, ' ');
      assert(question.includes('Remove the rule') && question.includes(PREFIX), `the confirmation reads ${JSON.stringify(question)}`);
      await dialog.locator('.monaco-button', { hasText: exactly('Remove') }).first().click({ timeout: 10_000 });
      await toast(p, 'the next such call asks again').waitFor({ state: 'visible', timeout: 20_000 });
      await h.waitFor('the rule to leave .vox/permissions.json', 10_000, async () => !fileRules().includes(`"${PREFIX}`), 100);
      await h.runCommand(p, 'Notifications: Clear All Notifications').catch(() => {});
      state.removed = true;
    });

    // ---- 3. Asks again
    await check(PERMISSION_CHECKS.asksAgain, async () => {
      requireState('removed');
      const view = await sidebar();
      fk.push(toolCallTurn([{ name: 'run_command', args: { command: PREFIX } }]), textTurn(ANSWERS[2]!));
      await sendInNewThread(view, 'Once more?');
      await bar(view).locator('vscode-button.deny').waitFor({ timeout: 30_000 });
      assert((await bar(view).innerText()).includes(PREFIX), `the approval bar reads ${JSON.stringify(await bar(view).innerText())}`);
      await shot('e2e-always-allow-asks-again');
      await bar(view).locator('vscode-button.deny').click({ timeout: 10_000 });
      await answered(view, ANSWERS[2]!);
    });

    await o.check(PERMISSION_CHECKS.screenshots, async () => {
      requireState('allowed');
      checkScreenshots(o, shots, ['e2e-always-allow', 'e2e-always-allow-unasked', 'e2e-permission-rules', 'e2e-always-allow-asks-again'], README);
    }, p);
  },
});
