/**
 * Reads of thread families and background work (SPEC 2.4): the subagent threads under a thread
 * (with the status of their latest run), a run's or thread's background work, and the finished
 * work whose result no run has been given yet.
 */
import type { SqlDatabase } from './driver';
import type { RunStatus } from '../../protocol/events';
import { THREAD_COLUMNS, type ThreadRow } from './rows';

export interface ChildThreadRow extends ThreadRow { status: RunStatus | null }

export type BackgroundStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
export interface BackgroundRow {
  handle: string; threadId: string; runId: string; kind: 'command' | 'subagent'; title: string; awaited: boolean;
  childThreadId: string | null; status: BackgroundStatus; result: string | null; reportedBy: string | null; startedAt: number; endedAt: number | null;
}

const BACKGROUND_COLUMNS = `handle, thread_id AS threadId, run_id AS runId, kind, title, awaited, child_thread_id AS childThreadId, status, result,
  reported_by AS reportedBy, started_at AS startedAt, ended_at AS endedAt`;
const decode = (r: Omit<BackgroundRow, 'awaited'> & { awaited: number }): BackgroundRow => ({ ...r, awaited: r.awaited === 1 });

/** The live subagent threads of `parentId`, oldest first, each with its latest run's status. */
export function childThreads(db: SqlDatabase, parentId: string): ChildThreadRow[] {
  return db.prepare(
    `SELECT ${THREAD_COLUMNS}, (SELECT status FROM runs r WHERE r.thread_id = threads.id ORDER BY r.ordinal DESC LIMIT 1) AS status
     FROM threads WHERE parent_thread_id = ? AND deleted = 0 ORDER BY created_at, id`,
  ).all(parentId) as ChildThreadRow[];
}

export function backgroundItem(db: SqlDatabase, handle: string): BackgroundRow | undefined {
  const r = db.prepare(`SELECT ${BACKGROUND_COLUMNS} FROM background_work WHERE handle = ?`).get(handle) as (Omit<BackgroundRow, 'awaited'> & { awaited: number }) | undefined;
  return r && decode(r);
}

/** A thread's background work, oldest first (`unreported`: finished work no run has been given). */
export function backgroundOf(db: SqlDatabase, threadId: string, opts: { unreported?: boolean } = {}): BackgroundRow[] {
  const where = opts.unreported ? "AND status != 'running' AND reported_by IS NULL" : '';
  return (db.prepare(`SELECT ${BACKGROUND_COLUMNS} FROM background_work WHERE thread_id = ? ${where} ORDER BY started_at, handle`).all(threadId) as (Omit<BackgroundRow, 'awaited'> & { awaited: number })[]).map(decode);
}

/** Background work still marked running, with the owner of the run that started it (to find what a dead process left). */
export function runningBackground(db: SqlDatabase): (BackgroundRow & { ownerPid: number | null; ownerStartedAt: number | null })[] {
  type Raw = Omit<BackgroundRow, 'awaited'> & { awaited: number; ownerPid: number | null; ownerStartedAt: number | null };
  const rows = db.prepare(
    `SELECT ${BACKGROUND_COLUMNS}, (SELECT owner_pid FROM runs WHERE id = background_work.run_id) AS ownerPid,
       (SELECT owner_started_at FROM runs WHERE id = background_work.run_id) AS ownerStartedAt
     FROM background_work WHERE status = 'running'`,
  ).all() as Raw[];
  return rows.map((r) => ({ ...decode(r), ownerPid: r.ownerPid, ownerStartedAt: r.ownerStartedAt }));
}
