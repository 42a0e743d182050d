/**
 * What the agent loop (./runner.ts) is given: its dependencies, the spec of one turn a run hands
 * it (ids, model, hooks, cancel signal and the run's optional capabilities: steering, rate-limit
 * recovery, resumption, background work, sampling, rules, handoff) and what a turn returns.
 */
import type { ChatMessage, ResolvedModel, ToolSpec, Usage } from '../providers/types';
import type { VoxStore } from '../store/store';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { ToolRegistry } from '../tools/registry';
import type { AgentTool, BackgroundPort } from '../tools/types';
import type { ApprovalGate, ApprovalPolicy } from '../approvals/approval';
import type { EndedRunStatus } from '../../protocol/events';
import type { CommandOutputHub } from '../terminal/hub';
import type { HookBus } from './hooks';
import type { PermissionDecision } from '../permissions/decide';
import type { PlanService } from '../plans/service';
import type { SamplingSettings } from '../../protocol/posture';
import type { HandoffChoice } from '../handoff/apply';

export interface AgentRunnerDeps {
  store: VoxStore;
  streams: TurnStreamRegistry;
  tools: ToolRegistry;
  /** The policy in force now (read per call: settings changes apply to the next call). */
  policy: () => ApprovalPolicy;
  gate: ApprovalGate;
  systemPrompt?: string;
  /** The turn's system prompt, $variables resolved (../rules/); without it, systemPrompt or the default and the Plan-mode text. */
  systemPromptFor?: (threadId: string) => Promise<string>;
  /** Host facilities every tool call gets (see ToolContext). */
  toolEnv?: { ripgrepPath?: string };
  /** Live command output (run_command) streams through this hub into the turn (./command-output.ts). */
  terminals?: CommandOutputHub;
  /**
   * The permission decision of one call (../permissions/): allow, ask (the gate) or deny (never
   * runs). Without it, `policy` alone decides (ask or run).
   */
  permissions?: (threadId: string, call: { toolName: string; toolClass: AgentTool['toolClass']; args: unknown; workspaceRoot: string }) => PermissionDecision;
  /** Plan / Act of threads and their plans (../plans/): what a turn offers and is told. */
  plans?: PlanService;
  /** Automatic compaction (../compaction/auto.ts): may compact the thread and rewrite the request's history in place before a model call. */
  compactBeforeCall?: (t: TurnSpec, messages: ChatMessage[], specs: ToolSpec[]) => Promise<void>;
  /** The tool-catalog threshold setting (`vox.mcp.toolCatalogThreshold`, ../mcp-catalog/), read per turn; absent or invalid: the default. */
  toolCatalogThreshold?: () => unknown;
}

/** A run the registry has started: its ids, model, workspace, hooks and cancel signal. */
export interface TurnSpec {
  threadId: string;
  runId: string;
  userMessageId: string;
  model: ResolvedModel;
  workspaceRoot: string;
  hooks: HookBus;
  signal: AbortSignal;
  /**
   * Takes the prompts the user asked to steer this turn with (the thread queue's steer requests,
   * ../runs/queue.ts), removing them from the queue; called at every boundary — before each
   * model call and before each tool batch, never while a tool runs.
   */
  takeSteers?: () => SteerPrompt[];
  /**
   * Called when a model call fails: resolves true when the call should be retried (after a
   * rate-limit wait, ../runs/rate-limit.ts), false when the error stands; it may throw a clearer
   * error. `attempt` counts the waits of this call so far.
   */
  recover?: (error: unknown, attempt: number, usageSoFar: Usage) => Promise<boolean>;
  /**
   * A run taken over after a restart, where it waited for a rate limit: the loop rebuilds its
   * conversation from the store (./resume.ts), waits out the rest of the wait, then goes on.
   */
  resume?: { waitOut: () => Promise<unknown> };
  /**
   * True when a stop is a suspension, not a cancel: the engine shut down while the run waited for
   * a rate limit. The run is then left as it stands in the store — running, waiting — for the next
   * engine to re-arm, and nothing (no message, no `run.ended`) is written.
   */
  suspended?: () => boolean;
  /** The run's background work (../runs/background.ts): the tools' port, reports at the start, settlement at the end. */
  background?: TurnBackground;
  /** Sampling settings of every model call of the turn (its posture; absent or null: the provider's default). */
  sampling?: SamplingSettings;
  /**
   * The turn's `<user_rules>` block (../rules/): what the model sees after this turn's user
   * message, not stored in it (a regenerate of the turn does not double it).
   */
  userRules?: string;
  /** The context handoff the prompt chose (../handoff/); without it, one is built when the model changed. */
  handoff?: HandoffChoice;
}

export interface TurnBackground {
  port: BackgroundPort;
  /** Finished background work of the thread not yet given to a model, as a message (null: none). */
  takeReport(): string | null;
  /** Waits for the run's awaited work, then its report (null: the turn may end). */
  settle(signal: AbortSignal, onWaiting: (titles: string[]) => void): Promise<string | null>;
}

export interface SteerPrompt { entryId: string; prompt: string }

/** What the model is told in place of a tool call that a steering prompt pre-empted. */
export const STEERED_TOOL_RESULT = 'Not run: the user sent new instructions before this call started. Read them, then decide again what to do.';

export interface TurnResult { threadId: string; runId: string; status: EndedRunStatus; text: string; error: string | null; usage: Usage }
