/**
 * Approval commands: the tool calls waiting for the user (each says its thread and run), and the
 * user's answer. Answering is the owner's decision: a guest or an MCP client can see approvals
 * but never approve one.
 */
import { arrayOf, literal, object, optional, str, type Infer } from '../wire/validators';
import { name } from './common';
import { ack, defineCommand } from './define';

export const toolClass = literal('read', 'write', 'execute');

export const approvalRequest = object({ callId: str, threadId: str, runId: str, toolName: str, argumentsJson: str, toolClass });
export type ApprovalRequestView = Infer<typeof approvalRequest>;

export const approvalCommands = {
  listApprovals: defineCommand('listApprovals', {
    readOnly: true,
    summary: 'Tool calls waiting for approval, oldest first (of one thread, or all).',
    requires: ['read'],
    params: { threadId: optional(name) },
    result: object({ approvals: arrayOf(approvalRequest) }),
  }),
  respondToApproval: defineCommand('respondToApproval', {
    summary: 'Approves or denies a waiting tool call.',
    requires: ['owner'],
    params: { callId: name, decision: literal('approved', 'denied') },
    result: ack,
  }),
};
