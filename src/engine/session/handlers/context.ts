/** Handlers of the context commands (../../../protocol/commands/context.ts): the context meter's estimate and @-mention suggestions. */
import type { HandlerTable } from './types';

export const contextHandlers: HandlerTable<'estimateContext' | 'suggestMentions'> = {
  estimateContext({ services: { context } }, cmd) {
    return context.estimate({ threadId: cmd.threadId, draft: cmd.draft, mentions: cmd.mentions, model: cmd.model });
  },
  async suggestMentions({ services: { context } }, cmd) {
    return { items: await context.suggest(cmd.query, cmd.limit) };
  },
};
