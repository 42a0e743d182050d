/**
 * Applying imported events inside the store's IMMEDIATE transaction: an event whose entity the
 * store already holds (a thread, message, run or item with that derived id; a result already
 * given; a run already ended) is dropped, so importing twice — or two processes importing the
 * same files at once — never duplicates anything: the transaction decides, and the second writer
 * finds the first one's rows. Ordinals (`UNIQUE (thread_id, ordinal)`, `(run_id, ordinal)`) and
 * message parents are settled here against what the thread already holds (a session resumed into
 * a second file continues the same thread). Each event keeps the source's time.
 */
import type { SqlDatabase } from '../store/driver';
import type { StoredEvent, VoxEvent } from '../../protocol/events';
import type { TimedEvent } from './types';

export type AppendAt = (time: number, ...events: VoxEvent[]) => StoredEvent[];

export interface ApplyCounts { appended: number; dropped: number; threads: number; messages: number; toolCalls: number; toolErrors: number }

/** Prepared lookups for one import (statements are reused across files). */
export function applier(db: SqlDatabase) {
  const q = {
    thread: db.prepare('SELECT 1 FROM threads WHERE id = ?'),
    message: db.prepare('SELECT 1 FROM messages WHERE id = ?'),
    head: db.prepare('SELECT head_message_id AS h FROM threads WHERE id = ?'),
    run: db.prepare('SELECT status FROM runs WHERE id = ?'),
    runOrdinalTaken: db.prepare('SELECT 1 FROM runs WHERE thread_id = ? AND ordinal = ?'),
    nextRunOrdinal: db.prepare('SELECT COALESCE(MAX(ordinal), -1) + 1 AS n FROM runs WHERE thread_id = ?'),
    item: db.prepare("SELECT status, kind, content FROM turn_items WHERE id = ?"),
    itemOrdinalTaken: db.prepare('SELECT 1 FROM turn_items WHERE run_id = ? AND ordinal = ?'),
    nextItemOrdinal: db.prepare('SELECT COALESCE(MAX(ordinal), -1) + 1 AS n FROM turn_items WHERE run_id = ?'),
    title: db.prepare('SELECT title FROM threads WHERE id = ?'),
  };
  return (events: readonly TimedEvent[], appendAt: AppendAt): ApplyCounts => {
    const c: ApplyCounts = { appended: 0, dropped: 0, threads: 0, messages: 0, toolCalls: 0, toolErrors: 0 };
    for (const { event, time } of events) {
      const e = fix(event);
      if (!e) {
        c.dropped++;
        continue;
      }
      appendAt(time, e);
      c.appended++;
      if (e.type === 'thread.created') c.threads++;
      else if (e.type === 'message.added') c.messages++;
      else if (e.type === 'item.started' && e.kind === 'toolCall') c.toolCalls++;
      else if (e.type === 'item.completed' && e.isError) c.toolErrors++;
    }
    return c;
  };

  function fix(e: VoxEvent): VoxEvent | null {
    switch (e.type) {
      case 'thread.created':
        return q.thread.get(e.threadId) ? null : e;
      case 'thread.renamed': {
        const row = q.title.get(e.threadId) as { title: string } | undefined;
        return !row || row.title === e.title ? null : e;
      }
      case 'message.added': {
        if (q.message.get(e.messageId)) return null;
        if (!q.thread.get(e.threadId)) return null;
        const parentOk = e.parentId !== null && q.message.get(e.parentId);
        if (parentOk) return e;
        const head = (q.head.get(e.threadId) as { h: string | null } | undefined)?.h ?? null;
        return { ...e, parentId: head };
      }
      case 'run.started': {
        if (q.run.get(e.runId) || !q.thread.get(e.threadId)) return null;
        const taken = q.runOrdinalTaken.get(e.threadId, e.ordinal);
        return taken ? { ...e, ordinal: (q.nextRunOrdinal.get(e.threadId) as { n: number }).n } : e;
      }
      case 'item.started': {
        if (q.item.get(e.itemId) || !q.run.get(e.runId)) return null;
        const taken = q.itemOrdinalTaken.get(e.runId, e.ordinal);
        return taken ? { ...e, ordinal: (q.nextItemOrdinal.get(e.runId) as { n: number }).n } : e;
      }
      case 'item.completed': {
        // Open, or a tool call its run's end closed before the result arrived (a grown file): content still empty.
        const row = q.item.get(e.itemId) as { status: string; kind: string; content: string } | undefined;
        if (!row) return null;
        return row.status === 'started' || (row.kind === 'toolCall' && row.content === '' && e.content !== '') ? e : null;
      }
      case 'run.ended': {
        const row = q.run.get(e.runId) as { status: string } | undefined;
        return row && row.status === 'running' ? e : null;
      }
      default:
        return e;
    }
  }
}
