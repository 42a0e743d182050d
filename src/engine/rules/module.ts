/** The rules module (SPEC 6.1, 6.2): the system prompt with $variables and the turn's rules block (./stages.ts); the RulesService is the engine's. */
import type { EngineModule } from '../module';
import type { RulesService } from './service';
import { installRuleStages } from './stages';

export const rulesModule: EngineModule = {
  name: 'rules', deps: ['plans', 'conversation'],
  install: ({ hooks, services }) => void installRuleStages(hooks, services.rules as RulesService),
};
