/**
 * Plan mode and permission modes in the built chat webview (headless Chromium, strict CSP, fake
 * host; see ./support/page.ts): the mode bar (Plan / Act, permission mode) posts its commands, a
 * first prompt in Plan mode creates the thread in Plan mode before the prompt goes, tool cards
 * say which rule or mode allowed or refused a call, the plan checklist renders from events, is
 * edited (updatePlan), acted on (actOnPlan) and ticks live. Screenshot: test-results/webview-plan.png.
 * Skipped (with a message) when /usr/bin/chromium is absent.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { RESULTS, openWebviewPage, type WebviewPage } from './support/browser';

const T = 'thread:plan';
const R = 'run:plan:0';
const PLAN = 'plan:1';

const PERMISSIONS = {
  mode: 'ask', modeLabel: 'Ask every time', modeSource: 'default', workspaceFile: '.vox/permissions.json', workMode: null, errors: [],
  rules: [{ origin: '.vox/permissions.json rules[0]', action: 'deny', tool: '*', command: 'rm -rf *', path: null, reason: null, label: 'deny * command "rm -rf *"' }],
};

describe('chat webview in Chromium: Plan mode and permission modes', function () {
  this.timeout(120_000);
  let w: WebviewPage;
  let page: Page;
  let pageErrors: string[] = [];
  let eventSeq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++eventSeq, time: Date.now(), threadId: T, ...e });
  const host = (message: unknown) => w.host(message);
  const posted = () => w.posted();
  const waitPosted = (what: string, pred: (m: Record<string, unknown>) => boolean) => w.waitPosted(what, pred);
  const eventually = (what: string, check: () => Promise<boolean>) => w.eventually(what, check);

  before(async function () {
    w = await openWebviewPage(this, { nonce: 'test-nonce-plan', profilePrefix: 'vox-chromium-plan-', viewport: { width: 420, height: 900 } });
    page = w.page;
    pageErrors = w.pageErrors;
  });

  after(async () => {
    await w?.close();
  });

  it('asks for the permissions at start and shows the workspace mode; choosing one writes no setting, "Make default…" does, saying where', async () => {
    const req = await waitPosted('getPermissions', (m) => m.type === 'getPermissions');
    await host({ type: 'settings', model: 'openai:gpt-4o-mini', demoNotice: null, models: [{ ref: 'openai:gpt-4o-mini', label: 'GPT-4o mini', isDemo: false }] });
    await host({ type: 'result', inReplyTo: req.requestId, value: PERMISSIONS });
    const select = page.locator('select.perm-select');
    await eventually('the workspace mode', async () => (await select.locator('option[value=""]').innerText()) === 'Workspace default (Ask every time)');
    assert.match((await page.locator('label.perm').getAttribute('title')) ?? '', /deny \* command "rm -rf \*"/);
    await eventually('the workspace default shown', async () => (await select.inputValue()) === '');
    await select.selectOption('autoEdits');
    await eventually('the chosen mode shown', async () => (await select.inputValue()) === 'autoEdits');
    assert.ok(!(await posted()).some((m) => m.type === 'setPermissionMode'), 'choosing a mode for the next thread writes no setting');
    await page.locator('button.make-default').click();
    const item = page.locator('.default-menu button[data-target="workspace"]');
    assert.match(await item.innerText(), /\.vscode\/settings\.json/);
    await item.click();
    const sent = await waitPosted('setPermissionMode', (m) => m.type === 'setPermissionMode');
    assert.deepEqual([sent.scope, sent.mode], ['workspace', 'autoEdits']);
    await host({ type: 'result', inReplyTo: sent.requestId, value: { ...PERMISSIONS, mode: 'autoEdits', modeLabel: 'Auto-approve edits', modeSource: 'settings' } });
    await eventually('the default updated, the choice kept', async () => (await select.inputValue()) === 'autoEdits' && !(await page.locator('button.make-default').count()));
    await select.selectOption('');
  });

  it('a first prompt in Plan mode creates the thread, switches it to Plan, then sends the prompt — in that order', async () => {
    await page.locator('.segmented button[data-mode="plan"]').click();
    assert.equal(await page.locator('.segmented button[data-mode="plan"]').getAttribute('aria-checked'), 'true');
    await page.locator('vscode-textarea textarea').fill('Plan how to add a greeting');
    await page.locator('vscode-button.send:not([disabled])').click();
    await waitPosted('sendPrompt', (m) => m.type === 'sendPrompt');
    const all = await posted();
    const send = all.find((m) => m.type === 'sendPrompt')!;
    const create = all.find((m) => m.type === 'createThread')!;
    const mode = all.find((m) => m.type === 'setWorkMode')!;
    assert.ok(create && mode, 'createThread and setWorkMode were posted');
    assert.equal(mode.threadId, create.threadId);
    assert.equal(send.threadId, create.threadId);
    assert.equal(mode.mode, 'plan');
    assert.ok(all.indexOf(create) < all.indexOf(mode) && all.indexOf(mode) < all.indexOf(send), 'in order');
    assert.match(String(create.title), /^Plan how to add a greeting$/);
  });

  it('tool cards say which mode or rule allowed or refused a call; the plan shows as a checklist; edit posts updatePlan', async () => {
    // Open our thread as the engine would show it (the test's own thread id).
    await host({ type: 'hostCommand', command: 'openThread', threadId: T });
    await waitPosted('subscribeThread', (m) => m.type === 'subscribeThread' && m.threadId === T);
    const args = JSON.stringify({ path: 'hello.txt', content: 'hi' });
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.created', title: 'Greeting' }),
      ev({ type: 'thread.workModeSet', mode: 'plan' }),
      ev({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'Plan how to add a greeting', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt-4o-mini', ownerPid: 1, userMessageId: 'm:u' }),
      ev({ type: 'item.started', runId: R, itemId: 'item:r', ordinal: 0, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"README.md"}',
        permission: { decision: 'allow', source: 'rule', rule: '.vox/permissions.json rules[1]: allow read path "*.md"', reason: 'Allowed by .vox/permissions.json rules[1]: allow read path "*.md".' } }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:r', status: 'completed', content: 'hello', isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'item:w', ordinal: 1, kind: 'toolCall', toolName: 'write_file', arguments: args,
        permission: { decision: 'deny', source: 'plan', rule: null, reason: 'The thread is in Plan mode: only read tools run, write_file does not.' } }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:w', status: 'denied', content: 'Not run: The thread is in Plan mode…', isError: true }),
      ev({ type: 'plan.submitted', runId: R, planId: PLAN, title: 'Add a greeting', steps: [{ id: 's1', text: 'Read README.md' }, { id: 's2', text: 'Write hello.txt' }] }),
      ev({ type: 'message.added', messageId: 'm:a', parentId: 'm:u', role: 'assistant', content: 'Here is the plan.', runId: R, status: 'complete' }),
      ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
    ] });
    const readCard = page.locator('section.tool[data-call-id="item:r"] .permission');
    await readCard.waitFor();
    assert.equal(await readCard.innerText(), 'Auto-approved by .vox/permissions.json rules[1]: allow read path "*.md"');
    const writeCard = page.locator('section.tool[data-call-id="item:w"] .permission');
    assert.equal(await writeCard.innerText(), 'Refused: Plan mode (read tools only)');
    assert.equal(await writeCard.getAttribute('data-decision'), 'deny');
    assert.equal(await page.locator('.segmented button[data-mode="plan"]').getAttribute('aria-checked'), 'true');

    const card = page.locator(`section.plan[data-plan-id="${PLAN}"]`);
    await card.waitFor();
    assert.equal(await card.locator('.title').innerText(), 'Add a greeting');
    assert.deepEqual(await card.locator('li.step .text').allInnerTexts(), ['Read README.md', 'Write hello.txt']);
    assert.equal(await card.locator('.progress').innerText(), '0/2');

    await card.locator('vscode-button.edit-button').click();
    await card.locator('input[aria-label="Step 1"]').fill('Read README.md and package.json');
    await card.locator('button[aria-label="Remove step 2"]').click();
    await card.locator('vscode-button.add').click();
    await card.locator('input[aria-label="Step 2"]').fill('Write hello.txt with a test');
    await card.locator('vscode-button.save').click();
    const upd = await waitPosted('updatePlan', (m) => m.type === 'updatePlan');
    assert.deepEqual([upd.threadId, upd.planId, upd.title, upd.steps], [T, PLAN, 'Add a greeting', [{ id: 's1', text: 'Read README.md and package.json' }, { text: 'Write hello.txt with a test' }]]);
    await host({ type: 'events', threadId: T, events: [ev({ type: 'plan.edited', planId: PLAN, title: 'Add a greeting', steps: [{ id: 's1', text: 'Read README.md and package.json' }, { id: 's3', text: 'Write hello.txt with a test' }] })] });
    await eventually('the edited plan', async () => (await card.locator('li.step .text').allInnerTexts()).join('|') === 'Read README.md and package.json|Write hello.txt with a test');
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'webview-plan.png') });
  });

  it('"Act on this plan" posts actOnPlan; the thread goes to Act and steps tick live; ticking a step posts setPlanStep; the thread mode select posts its own mode', async () => {
    const card = page.locator(`section.plan[data-plan-id="${PLAN}"]`);
    await card.locator('vscode-button.act').click();
    const act = await waitPosted('actOnPlan', (m) => m.type === 'actOnPlan');
    assert.deepEqual([act.threadId, act.planId], [T, PLAN]);
    await host({ type: 'events', threadId: T, events: [
      ev({ type: 'thread.workModeSet', mode: 'act' }),
      ev({ type: 'plan.actedOn', planId: PLAN }),
      ev({ type: 'plan.stepUpdated', runId: 'run:plan:1', planId: PLAN, stepId: 's1', status: 'done', note: null }),
      ev({ type: 'plan.stepUpdated', runId: 'run:plan:1', planId: PLAN, stepId: 's3', status: 'inProgress', note: null }),
    ] });
    await eventually('step 1 ticked', async () => (await card.locator('li.step[data-step-id="s1"] input').isChecked()));
    assert.equal(await card.locator('li.step[data-step-id="s3"]').getAttribute('data-status'), 'inProgress');
    assert.equal(await card.locator('.progress').innerText(), '1/2');
    assert.equal(await card.locator('vscode-button.act').count(), 0, 'no second Act once acting');
    assert.equal(await page.locator('.segmented button[data-mode="act"]').getAttribute('aria-checked'), 'true');
    await card.locator('li.step[data-step-id="s3"] input').click();
    const tick = await waitPosted('setPlanStep', (m) => m.type === 'setPlanStep');
    assert.deepEqual([tick.stepId, tick.status], ['s3', 'done']);
    // In a thread the select offers "Workspace default (…)" and sets the thread's own mode.
    const select = page.locator('select.perm-select');
    assert.equal(await select.inputValue(), '');
    assert.match(await select.locator('option').first().innerText(), /Workspace default \(Auto-approve edits\)/);
    await select.selectOption('fullAuto');
    const mode = await waitPosted('setPermissionMode thread', (m) => m.type === 'setPermissionMode' && m.scope === 'thread');
    assert.deepEqual([mode.threadId, mode.mode], [T, 'fullAuto']);
    await host({ type: 'events', threadId: T, events: [ev({ type: 'thread.permissionModeSet', mode: 'fullAuto' })] });
    await eventually('the thread mode', async () => (await select.inputValue()) === 'fullAuto');
    assert.deepEqual(pageErrors, []);
  });
});
