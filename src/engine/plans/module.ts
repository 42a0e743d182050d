/** The plans module: Plan / Act in a turn (./stages.ts) and the plan tools; the PlanService itself is the engine's (permissions and rules read it). */
import type { EngineModule } from '../module';
import type { AgentTool } from '../tools/types';
import type { PlanService } from './service';
import { installPlanStages } from './stages';
import { submitPlanTool, updatePlanStepTool } from './tools';

export const plansModule: EngineModule = {
  name: 'plans', deps: [],
  tools: [submitPlanTool as AgentTool, updatePlanStepTool as AgentTool],
  install: ({ hooks, services }) => void installPlanStages(hooks, services.plans as PlanService),
};
