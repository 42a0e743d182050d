/** Handlers of the conversation-tree commands (../../../protocol/commands/branches.ts). */
import { BranchError } from '../../../protocol/branches';
import type { HandlerTable } from './types';

type BranchCommand = 'getThreadTree' | 'switchBranch' | 'regenerate' | 'retry' | 'editMessage' | 'compareBranches';

const notYet = (): never => {
  throw new BranchError('badLeaves', 'not implemented yet (contract only)');
};

export const branchHandlers: HandlerTable<BranchCommand> = {
  getThreadTree: notYet,
  switchBranch: notYet,
  regenerate: notYet,
  retry: notYet,
  editMessage: notYet,
  compareBranches: notYet,
};
