/**
 * Thread view state: a pure, JSON-serialisable reducer that builds the view of one thread from
 * the engine's stored events (message.added, run.started, item.*, run.ended) and the live turn
 * chunks of its runs. No DOM, no Svelte: the app wraps the state in a `$state` proxy and calls
 * these functions, which mutate it in place; tests call them on plain objects.
 *
 * Exactly-once: the state remembers the last event seq of the thread and, per run (turn), the
 * last chunk seq. Anything at or below those is a duplicate (a replay after a re-subscribe, or a
 * message still in flight from the old subscription) and is skipped, so a client may re-subscribe
 * with `subscribeThread{afterSeq: lastEventSeq}` / `subscribeTurn{afterSeq: lastChunkSeq}` at any
 * time without losing or doubling text. Batched chunks carry the seq of their last merged chunk.
 *
 * Every event is decoded through `eventEnvelope`: unknown variants are skipped (forward
 * compatibility), broken ones are reported through `warn` and skipped; nothing here throws on
 * wire data.
 */
import { eventEnvelope, type StoredEvent } from '../../../src/protocol/events';
import { applyUpdate, emptyView } from '../../../src/protocol/terminal';
import { applyAppStateSaved } from './mcp-app-state';
import { commandOutputData, steerData, toolCallData, toolResultData, type ChunkKind, type ToolCallData, type WireChunk } from '../../../src/protocol/chunks';
import { applyQueueEvent, isQueueEvent, type QueuedView } from './queue-state';
import { applyRefusalRetryChunk, applyTextRevisedChunk } from './salvage-state';
import { applyPlanEvent, isPlanEvent, type PlanFields } from './plan-state';
import { applyCompactionEvent, isCompactionEvent, type CompactionFields } from './compaction-state';
import { handoffView } from './handoff-note';
import { addMessage, addRun, createTree, editMessage, finishBatch, isTree, moveHead, type Entry, type TreeFields } from './tree-state';

export type { QueuedView };

/** A decoded stored event, as `eventEnvelope` produces it. */
export type WireEvent = StoredEvent;
export type ChunkKindName = ChunkKind;
/** `kind` is open: chunks of kinds this build does not know are skipped (a newer engine may add some). */
export type { WireChunk, ToolCallData };
export type TurnEndStatus = 'completed' | 'cancelled' | 'failed' | 'interrupted';
export type Warn = (message: string) => void;


export type { BackgroundView, FinalMessage, ItemView, RunView, StreamSegment, ToolResultView, WaitingView } from './run-views';
import type { ItemView, RunView, StreamSegment, ToolResultView } from './run-views';

/** One row of the open branch (derived from the tree: ./tree-state.ts). */
export type { Entry };

export interface ThreadState extends PlanFields, CompactionFields {
  threadId: string;
  title: string | null;
  deleted: boolean;
  lastEventSeq: number;
  /** The path from the root to the head (./tree-state.ts derives it; other branches stay in `tree`). */
  entries: Entry[];
  runs: Record<string, RunView>;
  /** Messages below the head (a checkpoint restore moved it back): a branch the user can open. */
  rewoundEntries: number;
  /** Every message of every branch, and the head (./tree-state.ts). */
  tree: TreeFields;
  /** Prompts waiting for the running turn, next first (./queue-state.ts). */
  queue: QueuedView[];
}

const noWarn: Warn = () => {};

export function createThreadState(threadId: string): ThreadState {
  return { threadId, title: null, deleted: false, lastEventSeq: 0, entries: [], runs: {}, rewoundEntries: 0, queue: [], tree: createTree() };
}

function seqOf(raw: unknown): number | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const seq = (raw as { seq?: unknown }).seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : null;
}

/** Result of applying an `events` batch: what changed, for the caller's follow-up work. */
export interface EventsResult {
  applied: number;
  /** Runs that started in this batch. */
  startedRuns: string[];
  /** Runs that ended in this batch. */
  endedRuns: string[];
  /** Item ids that completed in this batch (their approvals, if any, are over). */
  completedItems: string[];
  /** User messages added in this batch. */
  userMessages: string[];
}

/** Applies the raw events of one `events` update (each decoded through `eventEnvelope`). */
export function applyEvents(state: ThreadState, rawEvents: readonly unknown[], warn: Warn = noWarn): EventsResult {
  const result: EventsResult = { applied: 0, startedRuns: [], endedRuns: [], completedItems: [], userMessages: [] };
  for (const raw of rawEvents) {
    const seq = seqOf(raw);
    if (seq !== null && seq <= state.lastEventSeq) continue; // already seen: replay overlap
    const decoded = eventEnvelope.tryDecode(raw);
    if (!decoded.ok) {
      warn(`ignoring a broken event: ${decoded.error.message}`);
    } else if (decoded.message.kind === 'unknown') {
      // A newer engine's event: skip it, but count it as seen.
    } else {
      const ev = decoded.message.value;
      if (ev.threadId === state.threadId) {
        applyEvent(state, ev, result);
        result.applied++;
      }
    }
    if (seq !== null && seq > state.lastEventSeq) state.lastEventSeq = seq;
  }
  finishBatch(state); // the open branch, recomputed once per batch if the head moved off it
  return result;
}

function newRun(ev: Extract<WireEvent, { type: 'run.started' }>): RunView {
  return {
    runId: ev.runId, ordinal: ev.ordinal, provider: ev.provider, model: ev.model, userMessageId: ev.userMessageId,
    status: 'running', error: null, usage: null, items: [], stream: [], lastChunkSeq: 0,
    streamEnded: false, streamUnavailable: false, statusText: null, final: null, waiting: null, background: [], settling: false,
    ...(ev.posture ? { posture: ev.posture } : {}),
  };
}

/** Puts an item in its place by ordinal (events of one run arrive in order, but a replay may overlap). */
function insertItem(run: RunView, item: ItemView): void {
  const at = run.items.findIndex((i) => i.ordinal > item.ordinal);
  if (at < 0) run.items.push(item);
  else run.items.splice(at, 0, item);
}

function applyEvent(state: ThreadState, ev: WireEvent, result: EventsResult): void {
  if (isPlanEvent(ev)) {
    applyPlanEvent(state, ev);
    return;
  }
  if (isQueueEvent(ev)) {
    applyQueueEvent((state.queue ??= []), ev); // a state saved by an older build has no queue
    return;
  }
  if (isCompactionEvent(ev)) {
    applyCompactionEvent(state, ev);
    return;
  }
  switch (ev.type) {
    case 'thread.created':
    case 'thread.renamed':
      state.title = ev.title;
      return;
    case 'thread.deleted':
      state.deleted = true;
      return;
    case 'thread.rewound':
      // The head goes back (an unknown target is ignored: show everything rather than guess); the later messages stay a branch.
      moveHead(state, ev.toMessageId);
      return;
    case 'thread.branchSwitched':
      moveHead(state, ev.toMessageId); // the user picked a branch: its tip is the head
      return;
    case 'message.edited':
      editMessage(state, ev.messageId, ev.content, ev.time);
      return;
    case 'message.added': {
      const run = ev.runId !== null ? state.runs[ev.runId] : undefined;
      if (run && ev.role === 'assistant') run.final = { messageId: ev.messageId, content: ev.content, status: ev.status };
      addMessage(state, ev, ev.time);
      if (ev.role === 'user') result.userMessages.push(ev.messageId);
      return;
    }
    case 'run.started':
      if (state.runs[ev.runId]) return;
      state.runs[ev.runId] = newRun(ev);
      addRun(state, ev.runId, ev.userMessageId);
      result.startedRuns.push(ev.runId);
      return;
    case 'item.started': {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: ev.kind, toolName: ev.toolName, arguments: ev.arguments,
        status: 'started', content: null, isError: false, ...(ev.permission ? { permission: ev.permission } : {}),
      });
      return;
    }
    case 'item.completed': {
      const item = state.runs[ev.runId]?.items.find((i) => i.itemId === ev.itemId);
      if (!item) return;
      item.status = ev.status;
      item.content = ev.content;
      item.isError = ev.isError;
      if (ev.app) item.app = ev.app;
      result.completedItems.push(ev.itemId);
      return;
    }
    case 'mcpApp.stateSaved':
      applyAppStateSaved(state.runs, ev.itemId, ev.state);
      return;
    case 'run.steered': {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: 'steer', skippedTools: ev.skippedTools, toolName: null, arguments: null,
        status: 'completed', content: ev.prompt, isError: false,
      });
      return;
    }
    case 'run.refusalRetried': {
      const run = state.runs[ev.runId];
      if (!run || run.items.some((i) => i.itemId === ev.itemId)) return;
      insertItem(run, {
        itemId: ev.itemId, ordinal: ev.ordinal, kind: 'refusalRetry', tools: ev.tools, toolName: null, arguments: null,
        status: 'completed', content: ev.discarded, isError: false,
      });
      return;
    }
    case 'run.waitingRateLimit': {
      const run = state.runs[ev.runId];
      if (run) run.waiting = { resetAtMs: ev.resetAtMs, autoResume: ev.autoResume, snoozedUntilMs: ev.snoozedUntilMs, attempt: ev.attempt, source: ev.source, message: ev.message };
      return;
    }
    case 'run.rateLimitChanged': {
      const w = state.runs[ev.runId]?.waiting;
      if (w) Object.assign(w, { autoResume: ev.autoResume, snoozedUntilMs: ev.snoozedUntilMs });
      return;
    }
    case 'background.started': {
      const run = state.runs[ev.runId];
      if (!run || run.background?.some((b) => b.handle === ev.handle)) return;
      run.background ??= []; // a state saved by an older build has none
      run.background.push({ handle: ev.handle, kind: ev.kind, title: ev.title, awaited: ev.awaited, childThreadId: ev.childThreadId, status: 'running' });
      return;
    }
    case 'background.ended': {
      const b = state.runs[ev.runId]?.background?.find((x) => x.handle === ev.handle);
      if (b) b.status = ev.status;
      if (state.runs[ev.runId]?.settling && !state.runs[ev.runId]!.background!.some((x) => x.awaited && x.status === 'running')) state.runs[ev.runId]!.settling = false;
      return;
    }
    case 'run.settling': {
      const run = state.runs[ev.runId];
      if (run) run.settling = true;
      return;
    }
    case 'handoff.built': {
      const run = state.runs[ev.runId];
      if (run) run.handoff = handoffView(ev);
      return;
    }
    case 'run.resumed': {
      const run = state.runs[ev.runId];
      if (run) run.waiting = null;
      return;
    }
    case 'run.ended': {
      const run = state.runs[ev.runId];
      if (!run) return;
      run.waiting = null;
      run.settling = false;
      run.status = ev.status;
      run.error = ev.error;
      run.usage = { inputTokens: ev.usage.inputTokens, outputTokens: ev.usage.outputTokens, ...(ev.usage.estimated ? { estimated: true } : {}) };
      if (ev.stopReason) run.stopReason = ev.stopReason;
      result.endedRuns.push(ev.runId);
      return;
    }
  }
}

function toolsIn(stream: readonly StreamSegment[]): number {
  let n = 0;
  for (const s of stream) if (s.kind === 'tool') n++;
  return n;
}

/**
 * Applies one `turnChunks` batch to the run `turnId`. Returns false when the run is unknown to
 * this thread (the chunks are then dropped: the caller never subscribed to such a turn).
 */
export function applyChunks(state: ThreadState, turnId: string, chunks: readonly WireChunk[], warn: Warn = noWarn): boolean {
  const run = state.runs[turnId];
  if (!run) return false;
  for (const chunk of chunks) {
    if (chunk.seq <= run.lastChunkSeq) continue; // duplicate from a replay overlap
    run.lastChunkSeq = chunk.seq;
    applyChunk(run, chunk, warn);
  }
  return true;
}

function applyChunk(run: RunView, chunk: WireChunk, warn: Warn): void {
  const last = run.stream[run.stream.length - 1];
  const kind = chunk.kind as ChunkKindName;
  switch (kind) {
    case 'text':
    case 'reasoning':
      if (chunk.data.length === 0) return;
      if (last && last.kind === kind) last.text += chunk.data;
      else run.stream.push({ kind, text: chunk.data, toolsBefore: toolsIn(run.stream) });
      return;
    case 'toolCall': {
      const call = parseJson(chunk.data, toolCallData, warn, 'toolCall');
      if (!call) return;
      const existing = run.stream.find((s) => s.kind === 'tool' && s.itemId === call.itemId);
      if (existing) return;
      run.stream.push({ kind: 'tool', itemId: call.itemId, callId: call.callId, name: call.name, arguments: call.arguments, result: null, ...(call.permission ? { permission: call.permission } : {}) });
      return;
    }
    case 'toolResult': {
      const res = parseJson(chunk.data, toolResultData, warn, 'toolResult');
      if (!res) return;
      const view: ToolResultView = { status: res.status, content: res.content, changedPaths: res.changedPaths ?? [], ...(res.app ? { app: res.app } : {}) };
      const seg = run.stream.find((s) => s.kind === 'tool' && s.itemId === res.itemId);
      if (seg && seg.kind === 'tool') seg.result = view;
      else run.stream.push({ kind: 'tool', itemId: res.itemId, callId: res.callId ?? res.itemId, name: '', arguments: '', result: view });
      return;
    }
    case 'status':
      run.statusText = chunk.data.length > 0 ? chunk.data : null;
      return;
    case 'commandOutput': {
      const out = parseJson(chunk.data, commandOutputData, warn, 'commandOutput');
      const seg = out && run.stream.find((s) => s.kind === 'tool' && s.itemId === out.itemId);
      if (out && seg && seg.kind === 'tool') seg.output = applyUpdate(seg.output ?? emptyView(), out.update);
      return;
    }
    case 'steer': {
      const steer = parseJson(chunk.data, steerData, warn, 'steer');
      if (!steer || run.stream.some((s) => s.kind === 'steer' && s.itemId === steer.itemId)) return;
      run.stream.push({ kind: 'steer', itemId: steer.itemId, prompt: steer.prompt, skippedTools: steer.skippedTools });
      return;
    }
    case 'refusalRetry':
      applyRefusalRetryChunk(run, chunk.data, warn);
      return;
    case 'textRevised':
      applyTextRevisedChunk(run, chunk.data, warn);
      return;
    default:
      return; // unknown kind from a newer engine: its seq still counts as seen
  }
}

function parseJson<T>(data: string, validate: (v: unknown) => T, warn: Warn, what: string): T | null {
  try {
    return validate(JSON.parse(data));
  } catch (e) {
    warn(`ignoring a broken ${what} chunk: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** Records a `turnEnded` update. The run's own status still comes from its `run.ended` event. */
export function applyTurnEnded(state: ThreadState, turnId: string, status: TurnEndStatus, error?: string): boolean {
  const run = state.runs[turnId];
  if (!run) return false;
  run.streamEnded = true;
  if (run.status === 'running') {
    run.status = status;
    if (error !== undefined) run.error = error;
  }
  return true;
}

/** The engine refused to stream this turn; the view falls back to the run's events. */
export function markStreamUnavailable(state: ThreadState, turnId: string): void {
  const run = state.runs[turnId];
  if (run) run.streamUnavailable = true;
}

/** Runs whose chunks the client should be subscribed to. */
export function runsNeedingStream(state: ThreadState): RunView[] {
  return Object.values(state.runs).filter((r) => r.status === 'running' && !r.streamEnded && !r.streamUnavailable);
}

/** The newest run that is still going, if any (what Stop cancels). */
export function activeRun(state: ThreadState): RunView | null {
  // Only the newest run on the path can be running: a thread runs one turn at a time, a prompt
  // sent meanwhile is queued (no new run), and regenerate, retry, edit and branch switches are
  // refused while it runs — so this looks at the last run entry only (O(1): every row's actions
  // ask, and a scan of a long thread per row held its opening frame).
  for (let i = state.entries.length - 1; i >= 0; i--) {
    const e = state.entries[i]!;
    if (e.kind !== 'run') continue;
    const run = state.runs[e.runId];
    return run && run.status === 'running' ? run : null;
  }
  return null;
}

/** The subscriptions that resume this thread exactly where the state stands. */
export function resumePlan(state: ThreadState): { threadAfterSeq: number; turns: { turnId: string; afterSeq: number }[] } {
  return {
    threadAfterSeq: state.lastEventSeq,
    turns: runsNeedingStream(state).map((r) => ({ turnId: r.runId, afterSeq: r.lastChunkSeq })),
  };
}

/** A cheap structural check of a state restored from `vscode.getState` (our own data, maybe an older build's). */
export function isThreadState(v: unknown): v is ThreadState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<ThreadState>;
  if (typeof s.threadId !== 'string' || typeof s.lastEventSeq !== 'number' || !Array.isArray(s.entries)) return false;
  if (typeof s.runs !== 'object' || s.runs === null || !isTree(s.tree)) return false;
  return Object.values(s.runs).every((r) => typeof r === 'object' && r !== null && Array.isArray(r.items) && Array.isArray(r.stream) && typeof r.lastChunkSeq === 'number');
}
