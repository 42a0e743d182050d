/**
 * PlanService: Plan / Act per thread and the thread's plan. In Plan mode a turn offers only read
 * tools and `submit_plan`; the plan (title, steps) is an event (`plan.submitted`) projected into
 * the plans table; the user edits it (`plan.edited`) and acts on it: the thread goes to Act and
 * the prompt carries the plan (`actPrompt`), and the agent ticks steps with `update_plan_step`
 * (`plan.stepUpdated`). Everything goes through the store, so every client sees it live.
 */
import { allocate } from '../ids/ids';
import type { VoxStore } from '../store/store';
import { currentPlan, planById, threadModes, type PlanRow } from '../store/plan-reads';
import { checkWithinCeiling, clampToCeiling, threadCeiling } from '../permissions/thread-ceiling';
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import type { PlanStepStatus, WorkMode } from '../../protocol/events';

/** Most steps in a plan. */
export const MAX_PLAN_STEPS = 50;
/** Longest step text and plan title. */
export const MAX_PLAN_TEXT_CHARS = 2_000;

/** What a Plan-mode turn is told, after the system prompt. */
export const PLAN_MODE_PROMPT = [
  'The thread is in Plan mode. You may only use read tools (read_file, list_files, search_text); nothing that changes files or runs commands.',
  'Investigate as needed, then call submit_plan once with a short title and concrete, ordered steps. Do not carry the plan out: the user reviews it and switches to Act.',
].join(' ');

export class PlanError extends VoxError<'plan'> {
  override readonly name = 'PlanError';
  readonly domain = 'plan' as const;
  constructor(code: ErrorCode<'plan'>, message: string) {
    super(code, message);
  }
}

export interface PlanStepInput { id?: string; text: string }

function cleanSteps(steps: readonly PlanStepInput[], keepIds: Set<string> | null): Array<{ id: string; text: string }> {
  if (!Array.isArray(steps) || steps.length === 0) throw new PlanError('invalidPlan', 'A plan needs at least one step.');
  if (steps.length > MAX_PLAN_STEPS) throw new PlanError('invalidPlan', `A plan has at most ${MAX_PLAN_STEPS} steps, got ${steps.length}.`);
  const seen = new Set<string>();
  let n = 0;
  const fresh = () => {
    for (;;) {
      const id = `s${++n}`;
      if (!seen.has(id) && !(keepIds?.has(id) ?? false)) return id;
    }
  };
  return steps.map((s, i) => {
    const text = typeof s?.text === 'string' ? s.text.trim() : '';
    if (text.length === 0) throw new PlanError('invalidPlan', `Step ${i + 1} has no text.`);
    if (text.length > MAX_PLAN_TEXT_CHARS) throw new PlanError('invalidPlan', `Step ${i + 1} is longer than ${MAX_PLAN_TEXT_CHARS} characters.`);
    let id = typeof s.id === 'string' && s.id.length > 0 && s.id.length <= 64 && (keepIds === null || keepIds.has(s.id)) ? s.id : '';
    if (!id || seen.has(id)) id = fresh();
    seen.add(id);
    return { id, text };
  });
}

function cleanTitle(title: unknown): string {
  const t = typeof title === 'string' ? title.trim() : '';
  if (t.length === 0) throw new PlanError('invalidPlan', 'A plan needs a title.');
  if (t.length > MAX_PLAN_TEXT_CHARS) throw new PlanError('invalidPlan', `The title is longer than ${MAX_PLAN_TEXT_CHARS} characters.`);
  return t;
}

export class PlanService {
  constructor(private readonly store: VoxStore) {}

  /** The thread's work mode; Plan whatever it says when its ceiling is Plan (../permissions/thread-ceiling.ts). */
  workMode(threadId: string): WorkMode {
    const own = threadModes(this.store.db, threadId)?.workMode ?? 'act';
    return clampToCeiling(threadCeiling(this.store, threadId), { permissionMode: 'ask', workMode: own }).workMode;
  }

  /** Switches Plan / Act; Act above the thread's ceiling is refused (`protocol/capabilityDenied`). */
  setWorkMode(threadId: string, mode: WorkMode): void {
    this.store.getThread(threadId); // a typed store/notFound for an unknown thread
    if (mode === 'act') checkWithinCeiling(this.store, threadId, { permissionMode: 'ask', workMode: 'act' }, `switch thread ${threadId} to Act`);
    if (this.workMode(threadId) === mode) return;
    this.store.append({ type: 'thread.workModeSet', threadId, mode });
  }

  current(threadId: string): PlanRow | undefined {
    return currentPlan(this.store.db, threadId);
  }

  get(threadId: string, planId: string): PlanRow {
    const p = planById(this.store.db, planId);
    if (!p || p.threadId !== threadId) throw new PlanError('unknownPlan', `No plan ${planId} in thread ${threadId}.`);
    return p;
  }

  /** The agent's plan (Plan mode only): replaces the thread's earlier plan. */
  submit(threadId: string, runId: string | null, title: unknown, steps: readonly PlanStepInput[]): PlanRow {
    if (this.workMode(threadId) !== 'plan') throw new PlanError('notInPlanMode', 'submit_plan works in Plan mode only; the thread is in Act mode.');
    const planId = allocate('plan');
    this.store.append({ type: 'plan.submitted', threadId, runId, planId, title: cleanTitle(title), steps: cleanSteps(steps, new Set()) });
    return this.get(threadId, planId);
  }

  /** The user's edit: the title and the steps as they are now (ids kept for kept steps, new ones get fresh ids). */
  edit(threadId: string, planId: string, title: unknown, steps: readonly PlanStepInput[]): PlanRow {
    const before = this.get(threadId, planId);
    if (before.status === 'superseded') throw new PlanError('unknownPlan', `Plan ${planId} was replaced by a newer plan.`);
    this.store.append({ type: 'plan.edited', threadId, planId, title: cleanTitle(title), steps: cleanSteps(steps, new Set(before.steps.map((s) => s.id))) });
    return this.get(threadId, planId);
  }

  updateStep(threadId: string, runId: string | null, planId: string, stepId: string, status: PlanStepStatus, note: string | null): PlanRow {
    const plan = this.get(threadId, planId);
    if (!plan.steps.some((s) => s.id === stepId)) {
      throw new PlanError('unknownStep', `Plan ${planId} has no step ${JSON.stringify(stepId)}; its steps are ${plan.steps.map((s) => s.id).join(', ')}.`);
    }
    this.store.append({ type: 'plan.stepUpdated', threadId, runId, planId, stepId, status, note: note === null ? null : note.slice(0, MAX_PLAN_TEXT_CHARS) });
    return this.get(threadId, planId);
  }

  /** "Act on this plan": the thread goes to Act, the plan is marked acted on; returns the prompt that carries it. */
  actOn(threadId: string, planId: string, extra?: string): string {
    const plan = this.get(threadId, planId);
    if (plan.status === 'superseded') throw new PlanError('unknownPlan', `Plan ${planId} was replaced by a newer plan.`);
    this.setWorkMode(threadId, 'act');
    this.store.append({ type: 'plan.actedOn', threadId, planId });
    return actPrompt(plan, extra);
  }
}

/** The prompt of "Act on this plan": the plan with its step ids, and how to report progress. */
export function actPrompt(plan: Pick<PlanRow, 'planId' | 'title' | 'steps'>, extra?: string): string {
  const lines = [
    `Carry out this plan: ${plan.title}`,
    '',
    ...plan.steps.map((s, i) => `${i + 1}. [${s.id}] ${s.text}`),
    '',
    `Work through the steps in order. When you start a step and when it is done, call update_plan_step with planId "${plan.planId}", the step id and status "inProgress" or "done" (or "skipped", with a note why).`,
  ];
  if (extra && extra.trim().length > 0) lines.push('', extra.trim());
  return lines.join('\n');
}
