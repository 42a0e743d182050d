/**
 * What a turn offers and is told, by the thread's mode: in Plan mode the read tools and
 * `submit_plan` only (write and execute tools are not even offered; a call to one anyway is
 * refused by the permission decision), and the Plan-mode instructions after the system prompt;
 * in Act mode every tool but `submit_plan`, with `update_plan_step` only while the thread has a
 * plan. Also the run's PlanPort for the plan tools.
 */
import type { ToolRegistry } from '../tools/registry';
import { ToolError, type AgentTool, type PlanPort, type PlanPortView } from '../tools/types';
import { PLAN_MODE_PROMPT, PlanError, type PlanService } from './service';
import type { PlanRow } from '../store/plan-reads';
import { SUBMIT_PLAN, UPDATE_PLAN_STEP } from './tools';
import { allowedInPlanMode } from '../permissions/decide';

export function offeredTools(tools: ToolRegistry, plans: PlanService | undefined, threadId: string): AgentTool[] {
  return offeredOf(tools.list(), plans, threadId);
}

/** `offeredTools` over a given list (the turn's offer so far). */
export function offeredOf(all: AgentTool[], plans: PlanService | undefined, threadId: string): AgentTool[] {
  if (!plans) return all.filter((t) => t.spec.name !== SUBMIT_PLAN && t.spec.name !== UPDATE_PLAN_STEP);
  if (plans.workMode(threadId) === 'plan') return all.filter((t) => allowedInPlanMode(t.spec.name, t.toolClass) && t.spec.name !== UPDATE_PLAN_STEP);
  const hasPlan = plans.current(threadId) !== undefined;
  return all.filter((t) => t.spec.name !== SUBMIT_PLAN && (hasPlan || t.spec.name !== UPDATE_PLAN_STEP));
}

/** The turn's system prompt: `base`, followed in Plan mode by the Plan-mode instructions. */
export function turnSystemPrompt(plans: PlanService | undefined, threadId: string, base: string): string {
  if (!plans || plans.workMode(threadId) !== 'plan') return base;
  return `${base}\n\n${PLAN_MODE_PROMPT}`;
}

function view(p: PlanRow): PlanPortView {
  return { planId: p.planId, title: p.title, steps: p.steps.map((s) => ({ id: s.id, text: s.text, status: s.status })) };
}

/** The plan tools' access to the thread's plan; plan errors reach the model as invalid arguments. */
export function planPort(plans: PlanService, threadId: string, runId: string): PlanPort {
  const wrap = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof PlanError) throw new ToolError('invalidArguments', e.message);
      throw e;
    }
  };
  return {
    submit: (title, steps) => wrap(() => view(plans.submit(threadId, runId, title, steps))),
    updateStep: (planId, stepId, status, note) => wrap(() => view(plans.updateStep(threadId, runId, planId, stepId, status, note))),
  };
}
