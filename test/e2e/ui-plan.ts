/**
 * Plan mode in the real chat, in the chat UI session's side bar after the
 * command-output check: a new thread switched to Plan before its first prompt; the scripted
 * model is offered only read tools and submit_plan (checked in the request it got) and submits a
 * two-step plan, which shows as a checklist (screenshot test-results/screenshot-plan.png, copied to
 * docs/ with --update-screenshot). The thread's permission mode is set to Auto-approve edits in
 * the mode bar, "Act on this plan" sends the plan (the model's prompt carries it with its step
 * ids), the model ticks step 1, writes plan-out.txt (auto-approved: its tool card says by which
 * mode) and ticks step 2; the checklist shows 2/2 and the file is in the workspace (screenshot
 * e2e-plan-acted.png, docs/screenshot-plan-act.png with --update-screenshot). One check.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import * as h from './harness';
import type { ChatContext } from './ui-chat-context';
import { watch, words } from './ui-chat-stream';
import { assert } from './ui-session';

export const PLAN_CHECKS = {
  plan: 'chat UI: Plan mode offers read tools only and answers with a plan checklist; Act on this plan carries it out, ticking its steps live',
} as const;

const PROMPT = 'Plan mode: plan a greeting file';
const OUT_FILE = 'plan-out.txt';
const OUT_CONTENT = 'Hello from the plan.\n';
const STEPS = ['Check whether a greeting file exists', `Write ${OUT_FILE} with a greeting`];
/** Largest README picture accepted. */
const README_MAX_BYTES = 300 * 1024;

function toolNames(body: { tools?: Array<{ function: { name: string } }> } | undefined): string[] {
  return (body?.tools ?? []).map((t) => t.function.name).sort();
}

/** `workspace`: the session's workspace folder (where plan-out.txt must appear). */
export async function runPlanCheck(c: ChatContext, workspace: string, names = PLAN_CHECKS): Promise<void> {
  const { o, timed, page: p, fake: fk, requireState, sidebar, scripted } = c;
  await o.check(names.plan, () =>
    timed(names.plan, async () => {
      requireState('view', 'model');
      const view = await sidebar();
      const before = fk.requests.length;
      await scripted([
        toolCallTurn([{ name: 'submit_plan', args: { title: 'Add a greeting file', steps: STEPS.map((text) => ({ text })) } }]),
        textTurn(words('Here is my plan; switch to Act to carry it out.'), { eventDelayMs: 10 }),
      ], async () => {
        await view.locator('vscode-button.new-thread').click({ timeout: 10_000 });
        await view.locator('section.empty').waitFor({ timeout: 10_000 });
        await view.locator('.segmented button[data-mode="plan"]').click({ timeout: 10_000 });
        await view.locator('vscode-textarea textarea').fill(PROMPT, { timeout: 10_000 });
        await view.locator('vscode-button.send:not([disabled])').click({ timeout: 10_000 });
        await view.locator('section.plan li.step').nth(1).waitFor({ timeout: 30_000 });
        const samples = await watch(view, 'the plan turn to end', 20_000, (s) => s.status !== null && s.status !== 'running');
        assert(samples[samples.length - 1]!.status === 'completed', `the plan turn ended ${samples[samples.length - 1]!.status}`);
      });
      const offered = toolNames(fk.requests[before]?.body);
      assert(offered.includes('submit_plan') && !offered.includes('write_file') && !offered.includes('run_command'), `Plan mode offered ${offered.join(', ')}`);
      const texts = await view.locator('section.plan li.step .text').allInnerTexts();
      assert(JSON.stringify(texts) === JSON.stringify(STEPS), `the checklist shows ${JSON.stringify(texts)}`);
      assert((await view.locator('.segmented button[data-mode="plan"]').getAttribute('aria-checked')) === 'true', 'the thread is not shown in Plan mode');
      const picture = await h.screenshot(p, `${o.shotPrefix ?? ''}screenshot-plan`);
      assert(fs.statSync(picture).size <= README_MAX_BYTES, `${picture} is larger than ${README_MAX_BYTES} bytes`);
      if (o.updateDocsScreenshot) fs.copyFileSync(picture, path.join(h.REPO_ROOT, 'docs', 'screenshot-plan.png'));

      const planId = await view.locator('section.plan').getAttribute('data-plan-id');
      assert(planId, 'the plan card has no plan id');
      await view.locator('select.perm-select').selectOption('autoEdits', { timeout: 10_000 });
      await h.waitFor('the thread mode Auto-approve edits', 10_000, async () => (await view.locator('select.perm-select').inputValue()) === 'autoEdits', 50);
      const actAt = fk.requests.length;
      const outPath = path.join(workspace, OUT_FILE);
      await scripted([
        toolCallTurn([{ name: 'update_plan_step', args: { planId, stepId: 's1', status: 'done' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: OUT_FILE, content: OUT_CONTENT } }]),
        toolCallTurn([{ name: 'update_plan_step', args: { planId, stepId: 's2', status: 'done', note: 'written' } }]),
        textTurn(words('Both steps are done.'), { eventDelayMs: 10 }),
      ], async () => {
        await view.locator('section.plan vscode-button.act').click({ timeout: 10_000 });
        await h.waitFor('both plan steps ticked', 30_000, async () => (await view.locator('section.plan .progress').innerText()) === '2/2', 50);
        const samples = await watch(view, 'the act turn to end', 20_000, (s) => s.status !== null && s.status !== 'running');
        assert(samples[samples.length - 1]!.status === 'completed', `the act turn ended ${samples[samples.length - 1]!.status}`);
      });
      const prompt = (fk.requests[actAt]?.body?.messages as { role: string; content: unknown }[] | undefined)?.at(-1);
      assert(prompt?.role === 'user' && /Carry out this plan: Add a greeting file/.test(String(prompt.content)) && String(prompt.content).includes(`1. [s1] ${STEPS[0]}`), `the Act prompt was ${JSON.stringify(prompt)}`);
      assert((await view.locator('.segmented button[data-mode="act"]').getAttribute('aria-checked')) === 'true', 'the thread did not switch to Act');
      const line = await view.locator('section.tool[data-status="completed"]', { hasText: 'write_file' }).locator('.permission').innerText({ timeout: 10_000 });
      assert(line.includes('Auto-approve edits'), `the write_file card says ${JSON.stringify(line)}`);
      const actual = fs.existsSync(outPath) ? fs.readFileSync(outPath, 'utf8') : null;
      assert(actual === OUT_CONTENT, `${OUT_FILE} holds ${JSON.stringify(actual)}`);
      const acted = await h.screenshot(p, `${o.shotPrefix ?? ''}e2e-plan-acted`);
      if (o.updateDocsScreenshot) fs.copyFileSync(acted, path.join(h.REPO_ROOT, 'docs', 'screenshot-plan-act.png'));
    }));
}
