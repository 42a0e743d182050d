/** Handlers of the context handoff commands (../../../protocol/commands/handoff.ts): the preview of SPEC 5.1's preamble. */
import { checkChoice, collectTurns, handoffFor, modelChanged, summaryOf } from '../../handoff/apply';
import { DEFAULT_HANDOFF_STRATEGY } from '../../handoff/build';
import { HandoffError } from '../../handoff/errors';
import type { HandlerTable } from './types';

export const handoffHandlers: HandlerTable<'previewHandoff'> = {
  async previewHandoff({ services: { store, providers, host } }, cmd) {
    if (!store.hasThread(cmd.threadId)) throw new HandoffError('unknownThread', `thread ${cmd.threadId} does not exist`);
    const strategy = cmd.strategy ?? DEFAULT_HANDOFF_STRATEGY;
    checkChoice({ strategy, manualContext: cmd.manualContext });
    const ref = cmd.model ?? host.model();
    const model = await providers.resolve(ref);
    // The next prompt follows the thread's head: every run of the path up to it is before that prompt.
    const head = store.headMessageId(cmd.threadId);
    const collected = head ? collectTurns(store, cmd.threadId, head, null) : { turns: [], forkIndex: null };
    const target = { threadId: cmd.threadId, runId: '', userMessageId: head ?? '', model };
    const built = collected.turns.length > 0 ? await handoffFor(store, target, { strategy, ...(cmd.manualContext !== undefined ? { manualContext: cmd.manualContext } : {}) }, collected) : null;
    return { model: ref, modelChanged: modelChanged(collected.turns, model), handoff: built ? { ...summaryOf(built), preamble: built.preamble } : null };
  },
};
