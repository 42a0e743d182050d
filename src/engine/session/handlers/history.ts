/**
 * Handlers of the prompt history (../../../protocol/commands/history.ts, SPEC 6.3): the list, and
 * `sendPrompt` as clients call it — the run handler (./runs.ts) plus the prompt as typed added to
 * the history (../../store/prompt-history.ts), also when it fails (it can be recalled, fixed and
 * sent again). Prompts the engine writes itself (the plan's "act" prompt) call the run handler
 * directly and are not recorded; a client's own prompt ("Continue") says `history: false`.
 */
import { runHandlers } from './runs';
import type { HandlerTable } from './types';

export const historyHandlers: HandlerTable<'listPromptHistory' | 'sendPrompt'> = {
  listPromptHistory({ services: { store } }, cmd) {
    return { prompts: store.promptHistory(cmd.limit) };
  },
  async sendPrompt(ctx, cmd) {
    const record = (threadId: string | null): void => {
      if (cmd.history !== false) ctx.services.store.recordPrompt(cmd.prompt, threadId);
    };
    try {
      const out = await runHandlers.sendPrompt(ctx, cmd);
      record(out.threadId);
      return out;
    } catch (e) {
      record(cmd.threadId);
      throw e;
    }
  },
};
