/**
 * The shape of one thread's view state (./thread-state.ts applies events to it, ./turn-chunks.ts
 * chunks, the features in ./features/ own its parts) and the reads of it that the controller and
 * several features share. Types and small pure functions only: it imports no feature, so every
 * feature module may import it.
 */
import type { PlanFields } from './plan-state';
import type { CompactionFields } from './compaction-state';
import { createTree, type Entry, type TreeFields } from './tree-state';
import type { RunView } from './run-views';

/** One row of the open branch (derived from the tree: ./tree-state.ts). */
export type { Entry };

/** A prompt waiting for the running turn (./features/queue.ts folds them). */
export interface QueuedView {
  entryId: string;
  prompt: string;
  model: string | null;
  /** Promoted: the running turn takes it at its next boundary. */
  steer: boolean;
  /** Queued by another process (a `vox chat` in a terminal), which starts it when its turn comes. */
  ownerPid: number;
}

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
  /** Prompts waiting for the running turn, next first (./features/queue.ts). */
  queue: QueuedView[];
}

export function createThreadState(threadId: string): ThreadState {
  return { threadId, title: null, deleted: false, lastEventSeq: 0, entries: [], runs: {}, rewoundEntries: 0, queue: [], tree: createTree() };
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

/** Runs whose chunks the client should be subscribed to. */
export function runsNeedingStream(state: ThreadState): RunView[] {
  return Object.values(state.runs).filter((r) => r.status === 'running' && !r.streamEnded && !r.streamUnavailable);
}

/**
 * Of the runs a batch of events just started, at most this many that had already ended in the
 * same batch (a busy machine, a hidden view) are streamed anyway, while the engine still holds
 * their chunks: their reasoning lives only in the stream. Bounded so that opening an older thread
 * does not ask for every turn it has.
 */
export const LATE_STREAM_RUNS_MAX = 4;

/** The runs to stream after a batch of events: the running ones, and the newest few of `justStarted` that ended before their stream was asked for. */
export function runsToStream(state: ThreadState, justStarted: readonly string[]): RunView[] {
  const late = justStarted
    .map((id) => state.runs[id])
    .filter((r): r is RunView => !!r && r.status !== 'running' && !r.streamEnded && !r.streamUnavailable && r.lastChunkSeq === 0)
    .slice(-LATE_STREAM_RUNS_MAX);
  return [...runsNeedingStream(state), ...late];
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
