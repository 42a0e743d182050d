/**
 * Approval commands: the tool calls waiting for the user (each says its thread and run), and the
 * user's answer. Answering is the owner's decision: a guest or an MCP client can see approvals
 * but never approve one.
 */
import { arrayOf, bool, literal, object, optional, str, type Infer } from '../wire/validators';
import { name, nonEmpty } from './common';
import { ack, defineCommand } from './define';

export const toolClass = literal('read', 'write', 'execute');

/** Longest "always allow" value a client may send (a command prefix, a tool name, a path pattern). */
export const MAX_ALWAYS_ALLOW_CHARS = 1_000;
export const alwaysAllowKind = literal('commandPrefix', 'tool', 'pathPattern');
/** A narrow rule the engine suggests for a waiting call; `label` says what it would allow. */
export const alwaysAllowSuggestion = object({ kind: alwaysAllowKind, value: str, label: str });
/** "Always allow" with an approval: the rule (never a blanket one) and where it is kept. */
export const alwaysAllowChoice = object({ kind: alwaysAllowKind, value: nonEmpty(MAX_ALWAYS_ALLOW_CHARS), scope: literal('thread', 'workspace') });

export const approvalRequest = object({
  callId: str, threadId: str, runId: str, toolName: str, argumentsJson: str, toolClass,
  /** Why the call is asked: the permission decision's sentence (a protected path says which and why). */
  reason: optional(str),
  /** The call writes a protected path: asked in every mode, never covered by "Always allow". */
  protectedPath: optional(bool),
  /** The narrow rules offered for "Always allow" (none when no safe one exists, e.g. a chained command). */
  alwaysAllow: optional(arrayOf(alwaysAllowSuggestion)),
  /**
   * Why a call that would have run by itself waits for the user: a safeguard before it failed —
   * "the checkpoint failed: the disk is full". Approving goes on without it; denying stops the run.
   */
  safeguard: optional(str),
});
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
    summary: 'Approves or denies a waiting tool call; with alwaysAllow, approves it and adds that allow rule for the thread or the workspace (.vox/permissions.json).',
    requires: ['owner'],
    params: { callId: name, decision: literal('approved', 'denied'), alwaysAllow: optional(alwaysAllowChoice) },
    result: ack,
  }),
};
