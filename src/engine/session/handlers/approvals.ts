/** Handlers of the approval commands (../../../protocol/commands/approvals.ts). */
import type { HandlerTable } from './types';

export const approvalHandlers: HandlerTable<'listApprovals' | 'respondToApproval'> = {
  listApprovals({ services: { gate } }, cmd) {
    return { approvals: gate.pending(cmd.threadId) };
  },
  respondToApproval({ services: { gate } }, cmd) {
    gate.respond(cmd.callId, cmd.decision);
    return {};
  },
};
