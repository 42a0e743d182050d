/**
 * The store's writes that check and change in one step, each in one IMMEDIATE transaction
 * (`VoxStore.transact`), so they hold across processes on one database file: starting a run
 * (`beginRun`: a new thread if asked, the user message and `run.started`, after checking that the
 * thread has no live run and, for a queued prompt, that it is still queued), taking the prompts
 * that steer a running turn, claiming a rate-limit wait left by a dead process, and closing runs
 * whose process died as interrupted (their streamed text kept).
 */
import { OWNER_ENDED_ERROR, type StoredEvent, type VoxEvent } from '../../protocol/events';
import type { Posture } from '../../protocol/posture';
import type { SqlDatabase } from './driver';
import { selfStartMs } from '../platform/process-identity';
import { queueEntry, queuedEntries } from './queue-reads';
import { RUN_COLUMNS, type PersistedChunk, type QueueRow, type RunRow, type ThreadRow } from './rows';
import { activeWait, waitingRuns } from './wait-reads';

/** What these writes need of the store (VoxStore, which calls them with itself). */
export interface LifecycleStore {
  readonly db: SqlDatabase;
  transact<T>(fn: (append: (...events: VoxEvent[]) => StoredEvent[]) => T): T;
  append(...events: VoxEvent[]): StoredEvent[];
  getThread(id: string): ThreadRow;
  running(threadId: string): RunRow[];
  run(runId: string): RunRow | undefined;
  headMessageId(threadId: string): string | null;
  nextRunOrdinal(threadId: string): number;
  chunksAfter(turnId: string, afterSeq: number): PersistedChunk[];
}

export interface BeginRunInput {
  /** The thread to prompt; null creates `newThreadId` titled `title`. */
  threadId: string | null;
  newThreadId: string;
  title: string;
  prompt: string;
  userMessageId: string;
  /** The message the prompt answers (null: a new root, as the thread's first message); default the thread's head. */
  parentMessageId?: string | null;
  /** What the run generates with (protocol/posture.ts), recorded on `run.started`. */
  posture?: Posture;
  provider: string;
  model: string;
  ownerPid: number;
  /** The owner process's start time (ms since the epoch), null when this system cannot tell. */
  ownerStartedAt: number | null;
  runIdFor(threadId: string, ordinal: number): string;
  /** Whether a run the store lists as running is really running (its owner alive and running it). */
  isLive(run: RunRow): boolean;
  /** The queued entry this run takes (marked started in the same transaction; `gone` when it is no longer queued). */
  fromQueue?: string;
  /** Rewrites the prompt that runs (a queued entry's latest edit included) inside the transaction: its rule tokens stripped (../rules/). */
  rewritePrompt?: (prompt: string) => string;
  /** A new thread's parent (a subagent's): listed under it. */
  parent?: { threadId: string; runId: string };
}

export type BeginRunOutcome =
  | { started: true; threadId: string; runId: string; ordinal: number; userMessageId: string }
  | { started: false; busy: RunRow }
  | { started: false; gone: true };

export function beginRun(store: LifecycleStore, input: BeginRunInput): BeginRunOutcome {
  return store.transact((append): BeginRunOutcome => {
    const threadId = input.threadId ?? input.newThreadId;
    if (input.threadId === null) {
      const parent = input.parent ? { parentThreadId: input.parent.threadId, parentRunId: input.parent.runId } : {};
      append({ type: 'thread.created', threadId, title: input.title, ...parent });
    } else store.getThread(threadId);
    for (const r of store.running(threadId)) {
      if (input.isLive(r)) return { started: false, busy: r };
      append(...interruptedEvents(store, r));
    }
    const entry = input.fromQueue === undefined ? undefined : queueEntry(store.db, input.fromQueue);
    if (input.fromQueue !== undefined && (entry?.status !== 'queued' || entry.threadId !== threadId)) {
      return { started: false, gone: true }; // cancelled, steered or started by another engine meanwhile
    }
    const parentId = input.parentMessageId !== undefined ? input.parentMessageId : store.headMessageId(threadId);
    const ordinal = store.nextRunOrdinal(threadId);
    const runId = input.runIdFor(threadId, ordinal);
    append(
      // A queued entry's latest edit is the prompt that runs.
      { type: 'message.added', threadId, messageId: input.userMessageId, parentId, role: 'user', content: input.rewritePrompt ? input.rewritePrompt(entry?.prompt ?? input.prompt) : (entry?.prompt ?? input.prompt), runId: null, status: 'complete' },
      {
        type: 'run.started', threadId, runId, ordinal, provider: input.provider, model: input.model, ownerPid: input.ownerPid,
        ownerStartedAt: input.ownerStartedAt, userMessageId: input.userMessageId, ...(input.posture ? { posture: input.posture } : {}),
      },
      ...(input.fromQueue !== undefined ? [{ type: 'queue.removed' as const, threadId, entryId: input.fromQueue, reason: 'started' as const, runId }] : []),
    );
    return { started: true, threadId, runId, ordinal, userMessageId: input.userMessageId };
  });
}

/**
 * Takes the entries asked to steer the thread's running turn (in queue order), marking them
 * steered into `runId`: exactly one turn takes each, whichever process runs it.
 */
export function takeSteers(store: LifecycleStore, threadId: string, runId: string): QueueRow[] {
  return store.transact((append) => {
    const rows = queuedEntries(store.db, threadId).filter((r) => r.steer);
    for (const r of rows) append({ type: 'queue.removed', threadId, entryId: r.entryId, reason: 'steered', runId });
    return rows;
  });
}

/**
 * Takes over an orphaned waiting run for this process (`run.claimed`): of two engines starting at
 * once, one gets it. False when it is no longer orphaned (ended, resumed, or claimed by another).
 */
export function claimRun(store: LifecycleStore, runId: string, ownerPid: number, ownerStartedAt: number | null, alive: (r: RunRow) => boolean): boolean {
  return store.transact((append) => {
    const r = store.run(runId);
    if (!r || r.status !== 'running' || alive(r) || !activeWait(store.db, runId)) return false;
    append({ type: 'run.claimed', threadId: r.threadId, runId, ownerPid, ownerStartedAt });
    return true;
  });
}

/** The events that close a run whose owner is gone: its streamed text kept as an interrupted message. */
function interruptedEvents(store: LifecycleStore, r: Pick<RunRow, 'id' | 'threadId' | 'userMessageId'>): VoxEvent[] {
  const text = store.chunksAfter(r.id, 0).filter((c) => c.kind === 'text').map((c) => c.data).join('');
  const events: VoxEvent[] = [];
  if (text.length > 0) {
    events.push({
      type: 'message.added', threadId: r.threadId, messageId: `${r.id}:partial`, parentId: r.userMessageId,
      role: 'assistant', content: text, runId: r.id, status: 'interrupted',
    });
  }
  events.push({ type: 'run.ended', threadId: r.threadId, runId: r.id, status: 'interrupted', error: OWNER_ENDED_ERROR, cause: 'ownerEnded', usage: { inputTokens: 0, outputTokens: 0 } });
  return events;
}

/**
 * Marks runs left `running` by a process that no longer exists as interrupted. The text that had
 * streamed is kept as an interrupted assistant message, so nothing is lost. Runs that were
 * waiting for a rate limit are left alone: they are re-armed (`orphanedWaits`, `claimRun`).
 */
export function recoverInterrupted(store: LifecycleStore, alive: (pid: number, startedAtMs: number | null) => boolean): string[] {
  const waiting = new Set(waitingRuns(store.db).map((r) => r.id));
  const stale = (store.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE status = 'running'`).all() as RunRow[]).filter((r) => {
    if (waiting.has(r.id)) return false;
    if (r.ownerPid === null) return true;
    // Our pid, but recorded by an earlier process that had it: not ours.
    if (r.ownerPid === process.pid) return r.ownerStartedAt !== null && selfStartMs() !== null && r.ownerStartedAt !== selfStartMs();
    return !alive(r.ownerPid, r.ownerStartedAt);
  });
  for (const r of stale) store.append(...interruptedEvents(store, r));
  return stale.map((r) => r.id);
}
