/**
 * The conversation module's stage: the request's history. Before anything else shapes the
 * request, the thread's active path (compaction summaries in place, steering prompts before the
 * answers they steered, sanitised: ./history.ts) follows the system message, and a prompt the
 * user adds mid-turn is escaped like any user input.
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import type { VoxStore } from '../store/store';
import { escapeUserInput } from '../sanitize/history';
import { buildHistory, DEFAULT_SYSTEM_PROMPT } from './history';

export function installConversationStages(bus: HookBus, store: VoxStore): () => void {
  return bus.on('prepareRequest', ({ threadId, turn }, out) => {
    if (out.system === '') out.system = DEFAULT_SYSTEM_PROMPT;
    const history = buildHistory(store.activePath(threadId, turn.userMessageId), out.system, (r) => store.steers(r), store.compactions(threadId));
    out.messages.push(...history.slice(1));
    out.userMessage = (text) => ({ role: 'user', content: escapeUserInput(text) });
  }, { name: 'conversation: history', order: PREPARE_ORDER.history, failure: 'stopsTurn' });
}
