/** The conversation module: the history a turn's request starts from (./history.ts, ./stages.ts). */
import type { EngineModule } from '../module';
import { installConversationStages } from './stages';

export const conversationModule: EngineModule = {
  name: 'conversation', deps: ['sanitize'],
  install: ({ hooks, store }) => void installConversationStages(hooks, store),
};
