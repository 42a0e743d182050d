/** The store reads the conversation tree needs beyond VoxStore's own (one message by id, counts, a run's stop reason). */
import type { SqlDatabase } from '../store/driver';
import { MESSAGE_COLUMNS, RUN_COLUMNS, type MessageRow, type RunRow } from '../store/rows';

export function messageById(db: SqlDatabase, id: string): MessageRow | undefined {
  return db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ?`).get(id) as MessageRow | undefined;
}

export function countMessages(db: SqlDatabase, threadId: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM messages WHERE thread_id = ?').get(threadId) as { n: number }).n;
}

/** The latest run that answered user message `messageId` (its posture is the prompt's). */
export function lastRunOfMessage(db: SqlDatabase, messageId: string): RunRow | undefined {
  return db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE user_message_id = ? ORDER BY ordinal DESC LIMIT 1`).get(messageId) as RunRow | undefined;
}

/** How a run's last reply stopped (`run.ended.stopReason`), if it ended and said. */
export function runEndedStopReason(db: SqlDatabase, threadId: string, runId: string): 'end' | 'length' | undefined {
  const rows = db.prepare("SELECT payload FROM events WHERE thread_id = ? AND type = 'run.ended' ORDER BY seq DESC").iterate(threadId) as Iterable<{ payload: string }>;
  for (const r of rows) {
    const e = JSON.parse(r.payload) as { runId?: string; stopReason?: 'end' | 'length' };
    if (e.runId === runId) return e.stopReason;
  }
  return undefined;
}
