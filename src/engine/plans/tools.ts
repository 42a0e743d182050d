/**
 * The plan tools: `submit_plan` (Plan mode: the agent's answer, a title and ordered steps) and
 * `update_plan_step` (Act mode: a step started, done or skipped). Both are read-class (they
 * change no file) and act through the run's PlanPort (../tools/types.ts), so they are recorded as
 * events of the thread. The runner offers each only in its mode (./offer.ts).
 */
import { ToolError, type AgentTool, type PlanPortView } from '../tools/types';
import { MAX_PLAN_STEPS, MAX_PLAN_TEXT_CHARS } from './service';

export const SUBMIT_PLAN = 'submit_plan';
export const UPDATE_PLAN_STEP = 'update_plan_step';
const STEP_STATUSES = ['pending', 'inProgress', 'done', 'skipped'] as const;
type StepStatus = (typeof STEP_STATUSES)[number];

function parseObject(tool: string, json: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(json.trim() === '' ? '{}' : json);
  } catch {
    throw new ToolError('invalidArguments', `${tool}: the arguments are not valid JSON.`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ToolError('invalidArguments', `${tool}: the arguments must be a JSON object.`);
  return v as Record<string, unknown>;
}

function checklist(p: PlanPortView): string {
  const mark: Record<string, string> = { pending: ' ', inProgress: '~', done: 'x', skipped: '-' };
  return p.steps.map((s) => `[${mark[s.status] ?? ' '}] ${s.id}: ${s.text}`).join('\n');
}

function port(ctx: Parameters<AgentTool['run']>[1], tool: string) {
  if (!ctx.plan) throw new ToolError('notAvailable', `${tool} is only available inside a thread's turn.`);
  return ctx.plan;
}

interface SubmitArgs { title: string; steps: Array<{ text: string }> }

export const submitPlanTool: AgentTool<SubmitArgs> = {
  spec: {
    name: SUBMIT_PLAN,
    description: 'Plan mode: submit your plan (a short title and concrete, ordered steps). The user reviews and edits it, then switches to Act to carry it out.',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'What the plan achieves, in one line.', minLength: 1 },
        steps: {
          type: 'array', minItems: 1, maxItems: MAX_PLAN_STEPS, description: 'The steps, in order.',
          items: { type: 'object', properties: { text: { type: 'string', description: 'One step.', minLength: 1 } }, required: ['text'], additionalProperties: false },
        },
      },
      required: ['title', 'steps'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  parseArgs(json) {
    const o = parseObject(SUBMIT_PLAN, json);
    if (typeof o.title !== 'string' || o.title.trim() === '') throw new ToolError('invalidArguments', `${SUBMIT_PLAN}: "title" must be a non-empty string.`);
    if (!Array.isArray(o.steps) || o.steps.length === 0) throw new ToolError('invalidArguments', `${SUBMIT_PLAN}: "steps" must be a non-empty array of {"text": "…"}.`);
    const steps = o.steps.map((s, i) => {
      const text = typeof s === 'string' ? s : (s as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || text.trim() === '') throw new ToolError('invalidArguments', `${SUBMIT_PLAN}: steps[${i}] needs a non-empty "text".`);
      if (text.length > MAX_PLAN_TEXT_CHARS) throw new ToolError('invalidArguments', `${SUBMIT_PLAN}: steps[${i}] is longer than ${MAX_PLAN_TEXT_CHARS} characters.`);
      return { text };
    });
    return { title: o.title, steps };
  },
  async run(args, ctx) {
    const plan = port(ctx, SUBMIT_PLAN).submit(args.title, args.steps);
    return { content: `Plan ${plan.planId} recorded and shown to the user:\n${checklist(plan)}\nStop here: the user reviews it and switches to Act to carry it out.` };
  },
};

interface StepArgs { planId: string; stepId: string; status: StepStatus; note: string | null }

export const updatePlanStepTool: AgentTool<StepArgs> = {
  spec: {
    name: UPDATE_PLAN_STEP,
    description: 'Act mode: report progress on a step of the plan you are carrying out (inProgress when you start it, done when finished, skipped with a note).',
    parameters: {
      type: 'object',
      properties: {
        planId: { type: 'string', description: 'The plan id given with the plan.', minLength: 1 },
        stepId: { type: 'string', description: 'The step id, e.g. "s2".', minLength: 1 },
        status: { type: 'string', enum: [...STEP_STATUSES], description: 'The step\'s status now.' },
        note: { type: 'string', description: 'Optional: a short note (why it was skipped, what was found).' },
      },
      required: ['planId', 'stepId', 'status'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  parseArgs(json) {
    const o = parseObject(UPDATE_PLAN_STEP, json);
    for (const k of ['planId', 'stepId'] as const) {
      if (typeof o[k] !== 'string' || (o[k] as string).length === 0) throw new ToolError('invalidArguments', `${UPDATE_PLAN_STEP}: "${k}" must be a non-empty string.`);
    }
    if (!(STEP_STATUSES as readonly unknown[]).includes(o.status)) throw new ToolError('invalidArguments', `${UPDATE_PLAN_STEP}: "status" must be one of ${STEP_STATUSES.join(', ')}.`);
    if (o.note !== undefined && o.note !== null && typeof o.note !== 'string') throw new ToolError('invalidArguments', `${UPDATE_PLAN_STEP}: "note" must be a string.`);
    return { planId: o.planId as string, stepId: o.stepId as string, status: o.status as StepStatus, note: (o.note as string | undefined) ?? null };
  },
  async run(args, ctx) {
    const plan = port(ctx, UPDATE_PLAN_STEP).updateStep(args.planId, args.stepId, args.status, args.note);
    return { content: `Step ${args.stepId} is ${args.status}.\n${checklist(plan)}` };
  },
};
