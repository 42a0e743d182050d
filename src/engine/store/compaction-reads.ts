/** Reads of a thread's compactions (migration 11, ./compaction-projections.ts), oldest first. */
import type { SqlDatabase } from './driver';
import type { CompactionMode } from '../../protocol/compaction';

export interface CompactionRow {
  compactionId: string; threadId: string; mode: CompactionMode; trigger: 'manual' | 'auto';
  fromMessageId: string; upToMessageId: string; compactMessageIndex: number; coveredMessages: number;
  summary: string; model: string; inputTokens: number; outputTokens: number; runId: string | null;
  supersededBy: string | null; createdAt: number;
}

const COLUMNS = `compaction_id AS compactionId, thread_id AS threadId, mode, trigger, from_message_id AS fromMessageId,
  up_to_message_id AS upToMessageId, compact_message_index AS compactMessageIndex, covered_messages AS coveredMessages, summary, model,
  input_tokens AS inputTokens, output_tokens AS outputTokens, run_id AS runId, superseded_by AS supersededBy, created_at AS createdAt`;

/** Every compaction of the thread, oldest first (superseded ones included: `supersededBy` says so). */
export function threadCompactions(db: SqlDatabase, threadId: string): CompactionRow[] {
  return db.prepare(`SELECT ${COLUMNS} FROM compactions WHERE thread_id = ? ORDER BY created_at, rowid`).all(threadId) as CompactionRow[];
}
