/**
 * The view types of one run in a thread (./thread-state.ts builds them): its items from stored
 * events, its live stream segments from chunks, its final message, wait, background work, posture
 * and handoff; and `insertItem`, which several features share (no imports but types, so any
 * feature module may use it).
 */
import type { ItemKind, ItemStatus, MessageStatus, PermissionInfo, RunStatus, UsageTotals } from '../../../src/protocol/events';
import type { CommandOutputView } from '../../../src/protocol/terminal';
import type { Posture } from '../../../src/protocol/posture';
import type { RefusalSegment } from './salvage-state';
import type { HandoffSummary } from './handoff-note';
import type { McpAppView } from '../../../src/protocol/mcp-apps';

export interface ItemView {
  itemId: string;
  ordinal: number;
  /** `steer`: a queued prompt the turn took at a boundary (`content` is the prompt). */
  kind: ItemKind | 'steer' | 'refusalRetry';
  /** refusalRetry items (SPEC 3.2): the tools the retry's reminder named (`content` is the discarded reply). */
  tools?: string[];
  /** Steer items: the tool calls the model had asked for that did not run because of it. */
  skippedTools?: string[];
  toolName: string | null;
  arguments: string | null;
  status: ItemStatus;
  /** Set by item.completed: the step's text, or the tool's result. */
  content: string | null;
  isError: boolean;
  /** Tool calls: what the permission rules or mode decided (the rule that allowed or denied it). */
  permission?: PermissionInfo;
  /** Tool calls: the MCP App the call returned (item.completed), and the state it saved (mcpApp.stateSaved; ./features/mcp-apps.ts). */
  app?: McpAppView;
  appState?: string;
}

export interface ToolResultView { status: string; content: string; changedPaths: string[]; app?: McpAppView }

/** One piece of a run's live stream, in chunk order. */
export type StreamSegment =
  | { kind: 'text' | 'reasoning'; text: string; /** tool segments before this one (for placement after the run ends) */ toolsBefore: number }
  | { kind: 'tool'; itemId: string; callId: string; name: string; arguments: string; result: ToolResultView | null; output?: CommandOutputView; permission?: PermissionInfo }
  | { kind: 'steer'; itemId: string; prompt: string; skippedTools: string[] }
  /** A false refusal was discarded here and the model asked again (./salvage-state.ts). */
  | RefusalSegment;

export interface FinalMessage { messageId: string; content: string; status: MessageStatus }

export interface RunView {
  runId: string;
  ordinal: number;
  provider: string;
  model: string;
  userMessageId: string;
  status: RunStatus;
  error: string | null;
  usage: UsageTotals | null;
  /** Items from events, ordered by ordinal. */
  items: ItemView[];
  /** Segments from live chunks, in seq order. */
  stream: StreamSegment[];
  lastChunkSeq: number;
  /** A `turnEnded` update arrived: no more chunks will come. */
  streamEnded: boolean;
  /** The engine could not stream this turn (e.g. it left memory): render from events only. */
  streamUnavailable: boolean;
  /** Latest `status` chunk text (e.g. "waiting for rate limit"), if any. */
  statusText: string | null;
  /** The assistant message that closed the run; it replaces the streamed text. */
  final: FinalMessage | null;
  /** Set while the run waits for a rate limit (from run.waitingRateLimit / run.rateLimitChanged; cleared by run.resumed). */
  waiting?: WaitingView | null;
  /** Subagents and background commands the run started (background.* events), in start order. */
  background?: BackgroundView[];
  /** The model answered; the run waits for its awaited background work (run.settling) before it goes on. */
  settling?: boolean;
  /** `length`: the reply stopped at the output-token limit (run.ended); the run offers Continue. */
  stopReason?: 'end' | 'length';
  /** `ownerEnded`: the run was interrupted because the window (or process) running it went away — a reload (run.ended `cause`). */
  cause?: 'ownerEnded';
  /** What the answer was generated with (run.started; absent for runs of older builds): Regenerate reuses it. */
  posture?: Posture;
  /** The run's request carried a context handoff from another model (handoff.built; ./handoff-note.ts). */
  handoff?: HandoffSummary;
  /** The ordinal of the checkpoint captured when the run ended (checkpoint.captured, turnEnd): "Restore to here" restores it. */
  checkpoint?: number;
}

export interface BackgroundView {
  handle: string; kind: 'command' | 'subagent'; title: string; awaited: boolean; childThreadId: string | null;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
}

export interface WaitingView { resetAtMs: number; autoResume: boolean; snoozedUntilMs: number | null; attempt: number; source: 'provider' | 'backoff'; message: string }

/** Puts an item in its place by ordinal (events of one run arrive in order, but a replay may overlap). */
export function insertItem(run: RunView, item: ItemView): void {
  const at = run.items.findIndex((i) => i.ordinal > item.ordinal);
  if (at < 0) run.items.push(item);
  else run.items.splice(at, 0, item);
}
