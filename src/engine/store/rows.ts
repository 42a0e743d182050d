/**
 * The rows the store's queries return (projections of the event log), and the SQL that reads
 * them, in one place so every query selects the same columns with the same names.
 */
import type { ItemKind, ItemStatus, MessageStatus, Role, RunStatus, UsageTotals } from '../../protocol/events';

export interface ThreadRow { id: string; title: string; createdAt: number; updatedAt: number; lastSeq: number; parentThreadId: string | null; childCount: number }
export interface MessageRow {
  id: string; threadId: string; parentId: string | null; role: Role; content: string;
  runId: string | null; status: MessageStatus; createdAt: number;
  /** Set when an assistant message was edited in place (`message.edited`). */
  editedAt: number | null;
}
export interface RunRow {
  id: string; threadId: string; ordinal: number; provider: string; model: string; status: RunStatus;
  ownerPid: number | null; ownerStartedAt: number | null; userMessageId: string | null; startedAt: number; endedAt: number | null;
  error: string | null; inputTokens: number; outputTokens: number;
  cacheReadTokens: number; cacheWriteTokens: number; reasoningTokens: number;
  /** The run's posture as JSON (protocol/posture.ts); null for runs recorded before it existed. */
  postureJson: string | null;
}
export interface TurnItemRow {
  id: string; runId: string; ordinal: number; kind: ItemKind; status: ItemStatus; toolName: string | null;
  arguments: string | null; content: string; isError: boolean;
  /** Tool calls: the provider's opaque signature (Gemini thoughtSignature), or null. */
  thoughtSignature: string | null;
}
export interface CheckpointRow {
  threadId: string; ordinal: number; ref: string; runId: string | null; trigger: 'tool' | 'turnEnd' | 'manual'; toolName: string | null;
  changedCount: number; skippedCount: number; overBudgetMs: number | null; rewindTo: string | null; createdAt: number;
}
export interface PersistedChunk { turnId: string; seq: number; kind: string; data: string }
/** Where a queued prompt is: waiting, or what became of it (and the run that took it). */
export type QueueStatus = 'queued' | 'started' | 'steered' | 'cancelled';
/** `position`: the place among the thread's waiting entries (0 = next), -1 once it left the queue. */
export interface QueueRow {
  entryId: string; threadId: string; prompt: string; model: string | null; position: number;
  ownerPid: number; ownerStartedAt: number | null; steer: boolean; createdAt: number;
  status: QueueStatus; runId: string | null;
}

/** One page of threads and the cursor of the next (null on the last page). */
export interface ThreadPage { threads: ThreadRow[]; nextCursor: string | null }

export const THREAD_COLUMNS = `id, title, created_at AS createdAt, updated_at AS updatedAt, last_seq AS lastSeq, parent_thread_id AS parentThreadId,
  (SELECT COUNT(*) FROM threads c WHERE c.parent_thread_id = threads.id AND c.deleted = 0) AS childCount`;
export const MESSAGE_COLUMNS = 'id, thread_id AS threadId, parent_id AS parentId, role, content, run_id AS runId, status, created_at AS createdAt, edited_at AS editedAt';
export const RUN_COLUMNS = `id, thread_id AS threadId, ordinal, provider, model, status, owner_pid AS ownerPid, owner_started_at AS ownerStartedAt,
  user_message_id AS userMessageId,
  started_at AS startedAt, ended_at AS endedAt, error, input_tokens AS inputTokens, output_tokens AS outputTokens,
  cache_read_tokens AS cacheReadTokens, cache_write_tokens AS cacheWriteTokens, reasoning_tokens AS reasoningTokens, posture AS postureJson`;
export const ITEM_COLUMNS = 'id, run_id AS runId, ordinal, kind, status, tool_name AS toolName, arguments, content, is_error AS isError, thought_signature AS thoughtSignature';
export const QUEUE_COLUMNS = `entry_id AS entryId, thread_id AS threadId, prompt, model, position, owner_pid AS ownerPid,
  owner_started_at AS ownerStartedAt, steer, created_at AS createdAt, status, run_id AS runId`;
export const CHECKPOINT_COLUMNS = `thread_id AS threadId, ordinal, ref, run_id AS runId, trigger, tool_name AS toolName, changed AS changedCount,
  skipped AS skippedCount, over_budget_ms AS overBudgetMs, rewind_to AS rewindTo, created_at AS createdAt`;

/** A run's usage as the protocol carries it (the optional figures only when non-zero). */
export function usageOf(r: RunRow): UsageTotals {
  return {
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    ...(r.cacheReadTokens ? { cacheReadTokens: r.cacheReadTokens } : {}),
    ...(r.cacheWriteTokens ? { cacheWriteTokens: r.cacheWriteTokens } : {}),
    ...(r.reasoningTokens ? { reasoningTokens: r.reasoningTokens } : {}),
  };
}

/** `updatedAt:id` of the last row of a page, the position the next page starts after. */
export function threadCursor(t: ThreadRow): string {
  return `${t.updatedAt}:${t.id}`;
}

export function parseThreadCursor(cursor: string): { updatedAt: number; id: string } | null {
  const i = cursor.indexOf(':');
  if (i <= 0) return null;
  const updatedAt = Number(cursor.slice(0, i));
  return Number.isSafeInteger(updatedAt) ? { updatedAt, id: cursor.slice(i + 1) } : null;
}
