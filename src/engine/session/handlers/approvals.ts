/**
 * Handlers of the approval commands (../../../protocol/commands/approvals.ts). "Always allow" is
 * checked against the waiting call and written (the thread's rules, or .vox/permissions.json)
 * before the call is approved: a refused rule leaves the call waiting, nothing is lost.
 */
import { alwaysAllowRule, UnsafeRuleError, withSuggestions } from '../../permissions/always-allow';
import { addThreadRule, addWorkspaceRule } from '../../permissions/rule-writes';
import { ApprovalGateError } from '../../approvals/approval';
import type { HandlerTable } from './types';

export const approvalHandlers: HandlerTable<'listApprovals' | 'respondToApproval'> = {
  listApprovals({ services: { gate, workspaceRoot } }, cmd) {
    return { approvals: gate.pending(cmd.threadId).map((r) => withSuggestions(r, workspaceRoot)) };
  },
  respondToApproval({ services }, cmd) {
    const { gate } = services;
    if (cmd.alwaysAllow) {
      if (cmd.decision !== 'approved') throw new UnsafeRuleError('"Always allow" goes with approving the call, not with denying it.');
      const call = gate.pending().find((p) => p.callId === cmd.callId);
      if (!call) throw new ApprovalGateError('unknownCall', `No tool call ${cmd.callId} is waiting for approval (unknown, or already answered or cancelled).`, cmd.callId);
      if (call.protectedPath) throw new UnsafeRuleError(`The ${call.toolName} call writes a protected path, which is asked every time whatever the rules say; approve it once instead.`);
      let args: unknown;
      try {
        args = JSON.parse(call.argumentsJson);
      } catch {
        throw new UnsafeRuleError(`The ${call.toolName} call's arguments are not JSON; approve it once instead.`);
      }
      const rule = alwaysAllowRule(cmd.alwaysAllow, { toolName: call.toolName, toolClass: call.toolClass, args }, services.workspaceRoot);
      if (cmd.alwaysAllow.scope === 'thread') addThreadRule(services.store, call.threadId, rule);
      else {
        addWorkspaceRule(services.workspaceRoot, rule);
        services.permissions.noteUserAllowRule(rule); // the user's own rule applies to the running turn at once
      }
    }
    gate.respond(cmd.callId, cmd.decision);
    return {};
  },
};
