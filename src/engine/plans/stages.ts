/**
 * Plan / Act in a turn (./offer.ts): the tools the thread's mode offers, the Plan-mode
 * instructions after the system prompt, and the plan tools' port to the thread's plan.
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import { offeredOf, planPort, turnSystemPrompt } from './offer';
import type { PlanService } from './service';

export function installPlanStages(bus: HookBus, plans: PlanService): () => void {
  const off = [
    bus.on('prepareRequest', ({ threadId }, out) => {
      out.tools.offered = offeredOf(out.tools.offered, plans, threadId);
    }, { name: 'plans: tools of the mode', order: PREPARE_ORDER.tools, failure: 'stopsTurn' }),
    bus.on('prepareRequest', ({ threadId }, out) => {
      out.system = turnSystemPrompt(plans, threadId, out.system);
    }, { name: 'plans: Plan-mode prompt', order: PREPARE_ORDER.system, failure: 'stopsTurn' }),
    bus.on('beforeTool', ({ threadId, runId }, out) => {
      out.context.plan = planPort(plans, threadId, runId);
    }, { name: 'plans: plan port', failure: 'stopsTurn' }),
  ];
  return () => off.forEach((f) => f());
}
