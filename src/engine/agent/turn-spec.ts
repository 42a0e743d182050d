/**
 * What the agent loop (./runner.ts) is given: its dependencies, the spec of one turn a run hands
 * it (ids, model, hooks, cancel signal and the run's optional capabilities: steering, rate-limit
 * recovery, resumption, background work, sampling, rules, handoff) and what a turn returns.
 * Capabilities read the optional fields in their stage handlers (./hooks.ts); the loop does not.
 */
import type { Usage } from '../providers/types';
import type { VoxStore } from '../store/store';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { ToolRegistry } from '../tools/registry';
import type { AgentTool } from '../tools/types';
import type { ApprovalGate, ApprovalPolicy } from '../approvals/approval';
import type { EndedRunStatus } from '../../protocol/events';
import type { CommandOutputHub } from '../terminal/hub';
export type { SteerPrompt, TurnBackground, TurnSpec } from './hooks';
import type { PermissionInfo } from '../../protocol/events';

export interface AgentRunnerDeps {
  store: VoxStore;
  streams: TurnStreamRegistry;
  tools: ToolRegistry;
  /** The policy in force now (read per call: settings changes apply to the next call). */
  policy: () => ApprovalPolicy;
  gate: ApprovalGate;
  /** The system prompt a turn starts from (prepareRequest's handlers may replace or extend it; empty: the conversation's default). */
  systemPrompt?: string;
  /** Host facilities every tool call gets (see ToolContext). */
  toolEnv?: { ripgrepPath?: string };
  /** Live command output (run_command) streams through this hub into the turn (./command-output.ts). */
  terminals?: CommandOutputHub;
  /**
   * The permission decision of one call (the permissions module): allow, ask (the gate) or deny
   * (never runs); `runId` names the turn, whose start rules hold for all its calls. Without it,
   * `policy` alone decides (ask or run).
   */
  permissions?: (threadId: string, call: { toolName: string; toolClass: AgentTool['toolClass']; args: unknown; workspaceRoot: string; runId: string }) => PermissionInfo;
}

/** What the model is told in place of a tool call that a steering prompt pre-empted. */
export const STEERED_TOOL_RESULT = 'Not run: the user sent new instructions before this call started. Read them, then decide again what to do.';

export interface TurnResult { threadId: string; runId: string; status: EndedRunStatus; text: string; error: string | null; usage: Usage }
