/**
 * The core's projections: how each event type of the core updates the query tables (threads,
 * messages, runs, turn_items, queue, waits, background work). One typed handler per event type in
 * a table — no switch; the capability modules add theirs (./schema.ts). Handlers run inside the
 * same transaction that appends the event, so tables and log never disagree.
 */
import type { RunResult, SqlDatabase } from './driver';
import type { EventOf, VoxEvent, VoxEventType } from '../../protocol/events';
import { StoreError } from './errors';
import { PLAN_PROJECTORS } from './plan-projections';

export type Projector<K extends VoxEventType> = (db: SqlDatabase, e: EventOf<K>, time: number) => void;

function mustChange(info: RunResult, what: string): void {
  if (info.changes === 0) throw new StoreError('notFound', `${what} does not exist`);
}

export const CORE_PROJECTORS: { [K in VoxEventType]?: Projector<K> } = {
  'thread.created'(db, e, time) {
    try {
      db.prepare('INSERT INTO threads (id, title, created_at, updated_at, parent_thread_id, parent_run_id, source, source_id, source_meta, workspace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(e.threadId, e.title, time, time, e.parentThreadId ?? null, e.parentRunId ?? null, e.source ?? null, e.sourceId ?? null, e.sourceMeta ?? null, e.workspace ?? null);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new StoreError('conflict', `thread ${e.threadId} already exists`, err);
      }
      throw err;
    }
  },
  'thread.renamed'(db, e, time) {
    mustChange(db.prepare('UPDATE threads SET title = ?, updated_at = ? WHERE id = ? AND deleted = 0').run(e.title, time, e.threadId), `thread ${e.threadId}`);
  },
  'thread.deleted'(db, e, time) {
    mustChange(db.prepare('UPDATE threads SET deleted = 1, updated_at = ? WHERE id = ?').run(time, e.threadId), `thread ${e.threadId}`);
  },
  'thread.imported'(db, e) {
    // Read from the event log by the bundle importer (../bundles/guard.ts); the thread must exist.
    if (!db.prepare('SELECT 1 FROM threads WHERE id = ?').get(e.threadId)) throw new StoreError('notFound', `thread ${e.threadId} does not exist`);
  },
  'message.added'(db, e, time) {
    db.prepare(
      'INSERT INTO messages (id, thread_id, parent_id, role, content, run_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(e.messageId, e.threadId, e.parentId, e.role, e.content, e.runId, e.status, time);
    db.prepare('UPDATE threads SET head_message_id = ?, head_set = 1 WHERE id = ?').run(e.messageId, e.threadId);
  },
  'thread.rewound'(db, e) {
    if (e.toMessageId !== null) {
      const m = db.prepare('SELECT 1 FROM messages WHERE id = ? AND thread_id = ?').get(e.toMessageId, e.threadId);
      if (!m) throw new StoreError('notFound', `message ${e.toMessageId} is not in thread ${e.threadId}`);
    }
    mustChange(db.prepare('UPDATE threads SET head_message_id = ?, head_set = 1 WHERE id = ?').run(e.toMessageId, e.threadId), `thread ${e.threadId}`);
  },
  'thread.branchSwitched'(db, e) {
    const m = db.prepare('SELECT 1 FROM messages WHERE id = ? AND thread_id = ?').get(e.toMessageId, e.threadId);
    if (!m) throw new StoreError('notFound', `message ${e.toMessageId} is not in thread ${e.threadId}`);
    mustChange(db.prepare('UPDATE threads SET head_message_id = ?, head_set = 1 WHERE id = ?').run(e.toMessageId, e.threadId), `thread ${e.threadId}`);
  },
  'message.edited'(db, e, time) {
    mustChange(
      db.prepare("UPDATE messages SET content = ?, edited_at = ? WHERE id = ? AND thread_id = ? AND role = 'assistant'").run(e.content, time, e.messageId, e.threadId),
      `assistant message ${e.messageId} of thread ${e.threadId}`,
    );
  },
  'checkpoint.captured'(db, e, time) {
    db.prepare(
      `INSERT OR REPLACE INTO checkpoints (thread_id, ordinal, ref, run_id, trigger, tool_name, changed, skipped, over_budget_ms, rewind_to, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(e.threadId, e.ordinal, e.ref, e.runId, e.trigger, e.toolName, e.changedCount, e.skippedCount, e.overBudgetMs, e.rewindTo, time);
  },
  'checkpoint.pruned'(db, e) {
    const del = db.prepare('DELETE FROM checkpoints WHERE thread_id = ? AND ref = ?');
    for (const ref of e.refs) del.run(e.threadId, ref);
  },
  'checkpoint.restored'() {
    // History only: the files live in git; a thread rewind is its own `thread.rewound` event.
  },
  'run.started'(db, e, time) {
    db.prepare(
      `INSERT INTO runs (id, thread_id, ordinal, provider, model, status, owner_pid, owner_started_at, user_message_id, started_at, posture)
       VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)`,
    ).run(e.runId, e.threadId, e.ordinal, e.provider, e.model, e.ownerPid, e.ownerStartedAt ?? null, e.userMessageId, time, e.posture ? JSON.stringify(e.posture) : null);
  },
  'item.started'(db, e, time) {
    db.prepare(
      `INSERT INTO turn_items (id, run_id, ordinal, kind, status, tool_name, arguments, permission, thought_signature, created_at)
       VALUES (?, ?, ?, ?, 'started', ?, ?, ?, ?, ?)`,
    ).run(e.itemId, e.runId, e.ordinal, e.kind, e.toolName, e.arguments, e.permission ? JSON.stringify(e.permission) : null, e.thoughtSignature ?? null, time);
  },
  'item.completed'(db, e) {
    mustChange(
      db.prepare('UPDATE turn_items SET status = ?, content = ?, is_error = ? WHERE id = ?').run(e.status, e.content, e.isError ? 1 : 0, e.itemId),
      `turn item ${e.itemId}`,
    );
  },
  'queue.added'(db, e, time) {
    const next = db.prepare("SELECT COALESCE(MAX(position), -1) + 1 AS n FROM queue WHERE thread_id = ? AND status = 'queued'").get(e.threadId) as { n: number };
    db.prepare(
      'INSERT INTO queue (entry_id, thread_id, prompt, model, position, owner_pid, owner_started_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(e.entryId, e.threadId, e.prompt, e.model, next.n, e.ownerPid, e.ownerStartedAt, time);
  },
  'queue.edited'(db, e) {
    mustChange(db.prepare("UPDATE queue SET prompt = ? WHERE entry_id = ? AND thread_id = ? AND status = 'queued'").run(e.prompt, e.entryId, e.threadId), `queued prompt ${e.entryId}`);
  },
  'queue.moved'(db, e) {
    const ids = (db.prepare("SELECT entry_id AS id FROM queue WHERE thread_id = ? AND status = 'queued' ORDER BY position, created_at").all(e.threadId) as { id: string }[]).map((r) => r.id);
    const from = ids.indexOf(e.entryId);
    if (from < 0) throw new StoreError('notFound', `queued prompt ${e.entryId} is not in thread ${e.threadId}`);
    ids.splice(from, 1);
    ids.splice(Math.max(0, Math.min(e.toIndex, ids.length)), 0, e.entryId);
    const set = db.prepare('UPDATE queue SET position = ? WHERE entry_id = ?');
    ids.forEach((id, i) => set.run(i, id));
  },
  'queue.steerRequested'(db, e) {
    mustChange(db.prepare("UPDATE queue SET steer = 1 WHERE entry_id = ? AND thread_id = ? AND status = 'queued'").run(e.entryId, e.threadId), `queued prompt ${e.entryId}`);
  },
  'queue.removed'(db, e, time) {
    mustChange(
      db.prepare("UPDATE queue SET status = ?, run_id = ?, ended_at = ? WHERE entry_id = ? AND thread_id = ? AND status = 'queued'").run(e.reason, e.runId, time, e.entryId, e.threadId),
      `queued prompt ${e.entryId}`,
    );
  },
  'run.steered'(db, e, time) {
    db.prepare(
      `INSERT INTO turn_items (id, run_id, ordinal, kind, status, tool_name, arguments, content, created_at)
       VALUES (?, ?, ?, 'steer', 'completed', NULL, NULL, ?, ?)`,
    ).run(e.itemId, e.runId, e.ordinal, e.prompt, time);
  },
  'run.refusalRetried'(db, e, time) {
    // The discarded reply, readable in the note (`arguments`: the tools the reminder named, as JSON).
    db.prepare(
      `INSERT INTO turn_items (id, run_id, ordinal, kind, status, tool_name, arguments, content, created_at)
       VALUES (?, ?, ?, 'refusalRetry', 'completed', NULL, ?, ?, ?)`,
    ).run(e.itemId, e.runId, e.ordinal, JSON.stringify(e.tools), e.discarded, time);
  },
  'run.waitingRateLimit'(db, e, time) {
    db.prepare(
      `INSERT OR REPLACE INTO rate_limit_waits (run_id, thread_id, reset_at, source, attempt, message, auto_resume, snoozed_until, resume_requested, usage_so_far, since, ended_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL)`,
    ).run(e.runId, e.threadId, e.resetAtMs, e.source, e.attempt, e.message, e.autoResume ? 1 : 0, e.snoozedUntilMs, JSON.stringify(e.usageSoFar), time);
  },
  'run.rateLimitChanged'(db, e) {
    mustChange(
      db.prepare('UPDATE rate_limit_waits SET auto_resume = ?, snoozed_until = ?, resume_requested = ? WHERE run_id = ? AND ended_at IS NULL')
        .run(e.autoResume ? 1 : 0, e.snoozedUntilMs, e.resumeRequested ? 1 : 0, e.runId),
      `rate-limit wait of run ${e.runId}`,
    );
  },
  'run.resumed'(db, e, time) {
    db.prepare('UPDATE rate_limit_waits SET ended_at = ? WHERE run_id = ? AND ended_at IS NULL').run(time, e.runId);
  },
  'run.claimed'(db, e) {
    mustChange(db.prepare("UPDATE runs SET owner_pid = ?, owner_started_at = ? WHERE id = ? AND status = 'running'").run(e.ownerPid, e.ownerStartedAt, e.runId), `run ${e.runId}`);
  },
  'background.started'(db, e, time) {
    db.prepare('INSERT INTO background_work (handle, thread_id, run_id, kind, title, awaited, child_thread_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(e.handle, e.threadId, e.runId, e.kind, e.title, e.awaited ? 1 : 0, e.childThreadId, time);
  },
  'background.ended'(db, e, time) {
    mustChange(
      db.prepare("UPDATE background_work SET status = ?, result = ?, ended_at = ? WHERE handle = ? AND status = 'running'").run(e.status, e.result, time, e.handle),
      `background work ${e.handle}`,
    );
  },
  'background.reported'(db, e) {
    const mark = db.prepare('UPDATE background_work SET reported_by = ? WHERE handle = ? AND reported_by IS NULL');
    for (const h of e.handles) mark.run(e.runId, h);
  },
  'run.settling'() {
    // Shown by clients (the run waits for its awaited background work); nothing to project.
  },
  'handoff.built'() {
    // Shown by clients (the chat's handoff note, engine/handoff/); nothing to project.
  },
  ...PLAN_PROJECTORS,
  'run.ended'(db, e, time) {
    db.prepare('UPDATE rate_limit_waits SET ended_at = ? WHERE run_id = ? AND ended_at IS NULL').run(time, e.runId);
    mustChange(
      db
        .prepare(
          `UPDATE runs SET status = ?, error = ?, ended_at = ?, input_tokens = ?, output_tokens = ?,
             cache_read_tokens = ?, cache_write_tokens = ?, reasoning_tokens = ? WHERE id = ?`,
        )
        .run(
          e.status, e.error, time, e.usage.inputTokens, e.usage.outputTokens,
          e.usage.cacheReadTokens ?? 0, e.usage.cacheWriteTokens ?? 0, e.usage.reasoningTokens ?? 0, e.runId,
        ),
      `run ${e.runId}`,
    );
    // Items still open when the run ends are closed with the run's fate.
    const fate = e.status === 'completed' ? 'completed' : 'interrupted';
    db.prepare("UPDATE turn_items SET status = ? WHERE run_id = ? AND status = 'started'").run(fate, e.runId);
  },
};

/** Every event of a thread moves its `updated_at` (a new thread has it already). */
export function touchThread(db: SqlDatabase, e: VoxEvent, time: number): void {
  if (e.type !== 'thread.created') db.prepare('UPDATE threads SET updated_at = ? WHERE id = ?').run(time, e.threadId);
}
