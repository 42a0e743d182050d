/**
 * Handlers of the prompt history (../../../protocol/commands/history.ts, SPEC 6.3): the list, and
 * the step sendPrompt (./runs.ts) ends with — the prompt as typed added to the history
 * (../../store/prompt-history.ts), also when it fails (it can be recalled, fixed and sent again).
 * Prompts the engine writes itself (the plan's "act" prompt) and a client's own prompt
 * ("Continue") say `history: false` and are not recorded.
 */
import type { CommandOf } from '../../../protocol/commands/index';
import type { VoxStore } from '../../store/store';
import type { HandlerTable } from './types';

/** sendPrompt's history step: records the prompt as typed under the thread it went to (or was meant for). */
export function recordSentPrompt(store: VoxStore, cmd: CommandOf<'sendPrompt'>, threadId: string | null): void {
  if (cmd.history !== false) store.recordPrompt(cmd.prompt, threadId);
}

export const historyHandlers: HandlerTable<'listPromptHistory'> = {
  listPromptHistory({ services: { store } }, cmd) {
    return { prompts: store.promptHistory(cmd.limit) };
  },
};
