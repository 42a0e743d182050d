/**
 * Reads of the thread run queue's table (projected from `queue.*` events, ./projections.ts):
 * the waiting prompts of a thread in order, the threads that have some, one entry's fate, and
 * the prompts that steered a run. The writes are events appended through VoxStore.
 */
import type { SqlDatabase } from './driver';
import { QUEUE_COLUMNS, type QueueRow } from './rows';

type RawQueueRow = Omit<QueueRow, 'steer'> & { steer: number };
const decode = (r: RawQueueRow): QueueRow => ({ ...r, steer: r.steer === 1 });

/** The thread's waiting prompts, next first; `position` is the place in that order (0 = next). */
export function queuedEntries(db: SqlDatabase, threadId: string): QueueRow[] {
  const rows = db.prepare(`SELECT ${QUEUE_COLUMNS} FROM queue WHERE thread_id = ? AND status = 'queued' ORDER BY position, created_at`).all(threadId) as RawQueueRow[];
  return rows.map((r, i) => ({ ...decode(r), position: i }));
}

/** One entry, waiting (with its place) or not (position -1); undefined when it never existed. */
export function queueEntry(db: SqlDatabase, entryId: string): QueueRow | undefined {
  const r = db.prepare(`SELECT ${QUEUE_COLUMNS} FROM queue WHERE entry_id = ?`).get(entryId) as RawQueueRow | undefined;
  if (!r) return undefined;
  if (r.status !== 'queued') return { ...decode(r), position: -1 };
  return queuedEntries(db, r.threadId).find((q) => q.entryId === entryId);
}

const WAITING_IN_LIVE_THREADS = "SELECT DISTINCT q.thread_id AS t FROM queue q JOIN threads th ON th.id = q.thread_id WHERE q.status = 'queued' AND th.deleted = 0";

/** Threads (not deleted) with waiting prompts; with `ownerPid`, only those where that process queued one. */
export function threadsWithQueue(db: SqlDatabase, ownerPid?: number): string[] {
  const rows = ownerPid === undefined
    ? db.prepare(WAITING_IN_LIVE_THREADS).all()
    : db.prepare(`${WAITING_IN_LIVE_THREADS} AND q.owner_pid = ?`).all(ownerPid);
  return (rows as { t: string }[]).map((r) => r.t);
}

/** The steering prompts a run took, in the order they landed. */
export function steerPrompts(db: SqlDatabase, runId: string): string[] {
  return (db.prepare("SELECT content FROM turn_items WHERE run_id = ? AND kind = 'steer' ORDER BY ordinal").all(runId) as { content: string }[]).map((r) => r.content);
}
