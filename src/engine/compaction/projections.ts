/**
 * Projection of `thread.compacted` (SPEC 3.7): one row per compaction in `compactions`
 * (migration 11), and the earlier compactions it supersedes marked so. The messages it covers
 * are not touched: the raw conversation stays as it was. The compaction module's part of the
 * store (./module.ts).
 */
import type { SqlDatabase } from '../store/driver';
import type { StoreSchema } from '../store/schema';
import type { EventOf } from '../../protocol/events';
import { StoreError } from '../store/errors';

export const COMPACTION_PROJECTORS = {
  'thread.compacted'(db: SqlDatabase, e: EventOf<'thread.compacted'>, time: number): void {
    for (const id of [e.fromMessageId, e.upToMessageId]) {
      if (!db.prepare('SELECT 1 FROM messages WHERE id = ? AND thread_id = ?').get(id, e.threadId)) throw new StoreError('notFound', `message ${id} is not in thread ${e.threadId}`);
    }
    db.prepare(
      `INSERT INTO compactions (compaction_id, thread_id, mode, trigger, from_message_id, up_to_message_id, compact_message_index, covered_messages,
         summary, model, input_tokens, output_tokens, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(e.compactionId, e.threadId, e.mode, e.trigger, e.fromMessageId, e.upToMessageId, e.compactMessageIndex, e.coveredMessages,
      e.summary, e.model, e.usage.inputTokens, e.usage.outputTokens, e.runId, time);
    const mark = db.prepare('UPDATE compactions SET superseded_by = ? WHERE compaction_id = ? AND thread_id = ?');
    for (const id of e.supersedes) mark.run(e.compactionId, id, e.threadId);
  },
};

/** The compaction module's part of the store (the table is migration 11, from before modules had migrations). */
export const COMPACTION_SCHEMA: StoreSchema = { module: 'compaction', projectors: COMPACTION_PROJECTORS };
