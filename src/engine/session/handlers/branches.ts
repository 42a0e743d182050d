/** Handlers of the conversation-tree commands (../../../protocol/commands/branches.ts); the work is in ../../branches/service.ts. */
import { compareBranches, editMessage, regenerate, retry, switchBranch, threadTree, type BranchDeps } from '../../branches/service';
import type { EngineServices } from '../../services';
import type { Grant } from '../../../protocol/commands/grants';
import { sessionTurnPorts } from '../turn-ports';
import type { HandlerTable } from './types';

type BranchCommand = 'getThreadTree' | 'switchBranch' | 'regenerate' | 'retry' | 'editMessage' | 'compareBranches';

/** The session's turn ports (its grant's ceiling included; reruns do not wait for MCP servers) and the rules of reruns. */
const deps = (services: EngineServices, grant: Grant): BranchDeps => {
  const { rules } = services;
  return {
    ...sessionTurnPorts(services, grant, { waitForMcp: false }),
    rules: { blockFor: (threadId, names) => rules.blockFor(threadId, names), storedPreparer: (threadId) => rules.storedPreparer(threadId) },
  };
};

export const branchHandlers: HandlerTable<BranchCommand> = {
  getThreadTree({ services: { store } }, cmd) {
    return threadTree(store, cmd.threadId);
  },
  switchBranch({ services: { store } }, cmd) {
    return switchBranch(store, cmd.threadId, cmd.toMessageId);
  },
  regenerate({ services, session }, cmd) {
    return regenerate(deps(services, session.grant), {
      threadId: cmd.threadId,
      ...(cmd.messageId !== undefined ? { messageId: cmd.messageId } : {}),
      ...(cmd.runId !== undefined ? { runId: cmd.runId } : {}),
      ...(cmd.model !== undefined ? { model: cmd.model } : {}),
    });
  },
  retry({ services, session }, cmd) {
    return retry(deps(services, session.grant), { threadId: cmd.threadId, runId: cmd.runId, ...(cmd.model !== undefined ? { model: cmd.model } : {}) });
  },
  editMessage({ services, session }, cmd) {
    return editMessage(deps(services, session.grant), { threadId: cmd.threadId, messageId: cmd.messageId, content: cmd.content, ...(cmd.model !== undefined ? { model: cmd.model } : {}) });
  },
  compareBranches({ services: { store } }, cmd) {
    return compareBranches(store, cmd.threadId, cmd.leafIds);
  },
};
