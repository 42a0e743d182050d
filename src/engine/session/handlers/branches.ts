/** Handlers of the conversation-tree commands (../../../protocol/commands/branches.ts); the work is in ../../branches/service.ts. */
import { compareBranches, editMessage, regenerate, retry, switchBranch, threadTree, type BranchDeps } from '../../branches/service';
import type { EngineServices } from '../../services';
import type { HandlerTable } from './types';

type BranchCommand = 'getThreadTree' | 'switchBranch' | 'regenerate' | 'retry' | 'editMessage' | 'compareBranches';

const deps = ({ store, runs, providers, host }: EngineServices): BranchDeps => ({
  store, runs, resolveModel: (ref) => providers.resolve(ref), defaultModel: () => host.model(),
});

export const branchHandlers: HandlerTable<BranchCommand> = {
  getThreadTree({ services: { store } }, cmd) {
    return threadTree(store, cmd.threadId);
  },
  switchBranch({ services: { store } }, cmd) {
    return switchBranch(store, cmd.threadId, cmd.toMessageId);
  },
  regenerate({ services }, cmd) {
    return regenerate(deps(services), {
      threadId: cmd.threadId,
      ...(cmd.messageId !== undefined ? { messageId: cmd.messageId } : {}),
      ...(cmd.runId !== undefined ? { runId: cmd.runId } : {}),
      ...(cmd.model !== undefined ? { model: cmd.model } : {}),
    });
  },
  retry({ services }, cmd) {
    return retry(deps(services), { threadId: cmd.threadId, runId: cmd.runId, ...(cmd.model !== undefined ? { model: cmd.model } : {}) });
  },
  editMessage({ services }, cmd) {
    return editMessage(deps(services), { threadId: cmd.threadId, messageId: cmd.messageId, content: cmd.content, ...(cmd.model !== undefined ? { model: cmd.model } : {}) });
  },
  compareBranches({ services: { store } }, cmd) {
    return compareBranches(store, cmd.threadId, cmd.leafIds);
  },
};
