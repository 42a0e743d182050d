/**
 * UI end to end of rules and $variables (SPEC 6.1, 6.2) in a real VS Code (code-server + Chromium,
 * own session with a fresh profile on the sample workspace plus a workspace rule file
 * `.vox/rules/house-style.md`), the model `compat:rules-e2e` on a scripted OpenAI-compatible
 * server on 127.0.0.1. Called by test/e2e/run-e2e.mjs (`--set rules`); each check is one named,
 * counted check there:
 *   1. autocomplete: typing `@hou` in the composer lists the manual rule with its "rule" badge;
 *      Enter inserts `@house-style `; Send: the request the server got has the stripped prompt and
 *      the `<user_rules>` block with the rule's body ($workspace_root resolved), and the thread's
 *      message shows the prompt without the block;
 *   2. the "Vox Rules" view (in the Explorer) lists the rule with its attach mode; its tooltip previews the body;
 *   3. "Vox: Show System Prompt" opens a document with the $variables resolved
 *      (vox.systemPrompt.append names $workspace_root, $git_branch and $active_spoke);
 *   4. screenshots (docs/screenshot-rules.png with --update-screenshot).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as h from './harness';
import { textTurn } from '../support/fake-openai-server';
import { SIDEBAR } from './ui-chat-context';
import { assert, checkScreenshots, readmePicture } from './ui-session';
import { widenSideBar } from './ui-workbench';
import { defineUiSet } from './ui-set';

export const RULES_CHECKS = {
  autocomplete: 'rules UI: @ + part of a rule\'s name offers it, Enter inserts it, the request sent has the stripped prompt and the <user_rules> block',
  view: 'rules UI: the Vox Rules view lists the workspace rule with its attach mode and previews what it adds',
  systemPrompt: 'rules UI: "Vox: Show System Prompt" opens a document with the $variables resolved',
  screenshots: 'rules UI: screenshots in test-results/ and the README picture',
} as const;

const README = readmePicture('screenshot-rules', 250 * 1024);
const RULE = 'house-style';
const RULE_BODY = 'Answer in short sentences and name files in backticks. Workspace: $workspace_root.';
const PROMPT = 'Explain src/math.js';
const ANSWER = 'It has add and mean.';
const APPEND = 'Rules e2e: workspace=$workspace_root branch=$git_branch spoke=$active_spoke';

export const runRulesChecks = defineUiSet({
  name: 'rules UI',
  dir: 'rules',
  checks: RULES_CHECKS,
  state: { sent: false },
  fake: { responses: [] },
  prepare: ({ dirs }) => {
    fs.mkdirSync(path.join(dirs.workspace, '.vox/rules'), { recursive: true });
    fs.writeFileSync(path.join(dirs.workspace, '.vox/rules', `${RULE}.md`), `---\nname: ${RULE}\nattach: manual\ndescription: How answers look here\n---\n${RULE_BODY}\n`);
  },
  settings: ({ fake }) => ({ 'vox.model': 'compat:rules-e2e', 'vox.compatBaseUrl': fake.baseUrl, 'vox.systemPrompt.append': APPEND, 'vox.approval': { read: 'auto', write: 'auto', execute: 'auto' } }),
  run: async ({ o, page: p, shots, shot, openWorkbench, sidebar, check, requireState, state, dirs, fake: fk }) => {
    const workspaceName = path.basename(dirs.workspace);
    const branch = execFileSync('git', ['symbolic-ref', '--short', 'HEAD'], { cwd: dirs.workspace, encoding: 'utf8' }).trim();

    // ---- 1. Autocomplete, send, the block in the request
    await check(RULES_CHECKS.autocomplete, async () => {
      await openWorkbench();
      await h.runCommand(p, 'Vox: Focus on Chat View', 45_000);
      await widenSideBar(p, 520);
      const view = await sidebar();
      const area = view.locator('vscode-textarea textarea');
      await area.waitFor({ timeout: 30_000 });
      await area.click();
      await area.pressSequentially(`${PROMPT} @hou`);
      const row = view.locator('#vox-mention-popup [role="option"][data-kind="rule"]', { hasText: RULE });
      await row.first().waitFor({ timeout: 20_000 });
      assert((await row.first().locator('.badge').innerText()).trim() === 'rule', 'the rule row has no "rule" badge');
      await shot(README.shot);
      await shot('e2e-rules-popup');
      await area.press('Enter');
      await view.locator('#vox-mention-popup').waitFor({ state: 'detached', timeout: 10_000 });
      const draft = await area.inputValue();
      assert(draft === `${PROMPT} @${RULE} `, `the draft is ${JSON.stringify(draft)}`);
      const before = fk.requests.length;
      fk.push(textTurn(ANSWER));
      await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
      await h.waitFor('the scripted server to get the prompt', 30_000, async () => fk.requests.length > before, 200);
      const last = (fk.requests[before]!.body?.messages as { role: string; content: string }[] | undefined)?.at(-1);
      assert(last?.role === 'user', 'the last message of the request is not the user\'s');
      const expected = `${PROMPT}\n\n<user_rules>\n`;
      assert(last.content.startsWith(expected), `the request's prompt is ${JSON.stringify(last.content.slice(0, 120))}`);
      assert(last.content.includes(`<rule name="${RULE}">\n${RULE_BODY.replace('$workspace_root', workspaceName)}\n</rule>\n</user_rules>`), `the block is ${JSON.stringify(last.content.slice(-300))}`);
      await view.locator('.rules-note .rule', { hasText: RULE }).waitFor({ timeout: 15_000 });
      await h.waitFor('the answer', 30_000, async () => (await view.locator('[data-role="assistant"]').last().innerText().catch(() => '')).includes(ANSWER), 200);
      const sent = (await view.locator('[data-role="user"]').last().innerText()).trim();
      assert(sent.includes(PROMPT) && !sent.includes('user_rules') && !sent.includes(`@${RULE}`), `the sent message shows ${JSON.stringify(sent.slice(0, 200))}`);
      await shot('e2e-rules-sent');
      state.sent = true;
    });

    // ---- 2. The Vox Rules view
    await check(RULES_CHECKS.view, async () => {
      // The view lives in the Explorer (collapsed by default): its focus command opens and expands it.
      await h.runCommand(p, 'Explorer: Focus on Vox Rules View', 30_000);
      const row = p.locator(`${SIDEBAR} .monaco-list-row`, { hasText: RULE }).first();
      await row.waitFor({ timeout: 20_000 });
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      assert(/manual/.test(text) && /workspace/.test(text), `the row reads ${JSON.stringify(text)}`);
      await row.hover();
      const hover = p.locator('.monaco-hover, .workbench-hover', { hasText: 'What it adds' }).first();
      await hover.waitFor({ state: 'visible', timeout: 15_000 });
      const tip = await hover.innerText();
      assert(tip.includes(RULE_BODY.replace('$workspace_root', workspaceName)), `the tooltip reads ${JSON.stringify(tip.slice(0, 300))}`);
      await shot('e2e-rules-view');
    });

    // ---- 3. Show System Prompt
    await check(RULES_CHECKS.systemPrompt, async () => {
      await h.runCommand(p, 'Vox: Show System Prompt', 30_000);
      const editor = p.locator('.editor-instance .monaco-editor .view-lines').first();
      const want = `Rules e2e: workspace=${workspaceName} branch=${branch} spoke=coding`;
      await h.waitFor('the system prompt document', 30_000, async () => ((await editor.innerText().catch(() => '')).replace(/\u00a0/g, ' ')).includes(want), 250);
      const text = (await editor.innerText()).replace(/\u00a0/g, ' ');
      assert(text.includes('You are Vox'), 'the document does not start with the system prompt');
      assert(!/\$(workspace_root|git_branch|active_spoke)/.test(text), `variables left unresolved: ${JSON.stringify(text.slice(0, 400))}`);
      await shot('e2e-rules-system-prompt');
    });

    await o.check(RULES_CHECKS.screenshots, async () => {
      requireState('sent');
      checkScreenshots(o, shots, ['e2e-rules-popup', 'e2e-rules-sent', 'e2e-rules-view', 'e2e-rules-system-prompt'], README);
    }, p);
  },
});
