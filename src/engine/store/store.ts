/**
 * VoxStore: the one event log plus its projections, over a better-sqlite3 database.
 * Appending an event and projecting it happen in one transaction. In-process listeners
 * subscribe from a sequence number (replay + registration in one synchronous step). Turn chunks
 * are persisted as they stream so a killed process loses nothing; `recoverInterrupted` turns
 * runs whose owner process died into interrupted runs with their partial text kept.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent, VoxEvent, MessageStatus, Role, RunStatus, ItemKind, ItemStatus } from '../../protocol/events';
import { openDatabase, type OpenOptions } from './database';
import { StoreError } from './errors';
import { project } from './projections';

/** Most events returned by one `eventsAfter` call. */
export const EVENT_PAGE_LIMIT = 5_000;

export interface ThreadRow { id: string; title: string; createdAt: number; updatedAt: number; lastSeq: number }
export interface MessageRow {
  id: string; threadId: string; parentId: string | null; role: Role; content: string;
  runId: string | null; status: MessageStatus; createdAt: number;
}
export interface RunRow {
  id: string; threadId: string; ordinal: number; provider: string; model: string; status: RunStatus;
  ownerPid: number | null; userMessageId: string | null; startedAt: number; endedAt: number | null;
  error: string | null; inputTokens: number; outputTokens: number;
}
export interface TurnItemRow {
  id: string; runId: string; ordinal: number; kind: ItemKind; status: ItemStatus; toolName: string | null;
  arguments: string | null; content: string; isError: boolean;
}
export interface CheckpointRow {
  threadId: string; ordinal: number; ref: string; runId: string | null; trigger: 'tool' | 'turnEnd' | 'manual'; toolName: string | null;
  changedCount: number; skippedCount: number; overBudgetMs: number | null; rewindTo: string | null; createdAt: number;
}
export interface PersistedChunk { turnId: string; seq: number; kind: string; data: string }
export type EventListener = (events: StoredEvent[]) => void;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class VoxStore {
  private readonly listeners = new Set<EventListener>();
  private readonly insertEvent;
  private readonly insertChunk;

  constructor(readonly db: Database.Database, private readonly now: () => number = Date.now) {
    this.insertEvent = db.prepare('INSERT INTO events (thread_id, type, payload, time) VALUES (?, ?, ?, ?)');
    this.insertChunk = db.prepare('INSERT INTO turn_chunks (turn_id, seq, kind, data) VALUES (?, ?, ?, ?)');
  }

  static open(file: string, opts?: OpenOptions): VoxStore {
    return new VoxStore(openDatabase(file, opts));
  }

  close(): void {
    this.listeners.clear();
    if (this.db.open) this.db.close();
  }

  /** Appends events atomically (all or none), projects them, then notifies listeners. */
  append(...events: VoxEvent[]): StoredEvent[] {
    const time = this.now();
    const stored = this.db.transaction(() =>
      events.map((e) => {
        const threadId = 'threadId' in e ? e.threadId : null;
        const { type, ...rest } = e;
        const info = this.insertEvent.run(threadId, type, JSON.stringify(rest), time);
        const seq = Number(info.lastInsertRowid);
        project(this.db, e, time);
        if (threadId) this.db.prepare('UPDATE threads SET last_seq = ? WHERE id = ?').run(seq, threadId);
        return { ...e, seq, time } as StoredEvent;
      }),
    )();
    for (const l of [...this.listeners]) {
      try {
        l(stored);
      } catch {
        this.listeners.delete(l); // a broken listener never breaks the writer
      }
    }
    return stored;
  }

  eventsAfter(afterSeq: number, opts: { threadId?: string; limit?: number } = {}): StoredEvent[] {
    const limit = Math.min(opts.limit ?? EVENT_PAGE_LIMIT, EVENT_PAGE_LIMIT);
    const rows = (
      opts.threadId
        ? this.db.prepare('SELECT * FROM events WHERE seq > ? AND thread_id = ? ORDER BY seq LIMIT ?').all(afterSeq, opts.threadId, limit)
        : this.db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit)
    ) as { seq: number; type: string; payload: string; time: number }[];
    return rows.map((r) => ({ ...(JSON.parse(r.payload) as object), type: r.type, seq: r.seq, time: r.time }) as StoredEvent);
  }

  lastSeq(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM events').get() as { s: number }).s;
  }

  /**
   * Replays events after `afterSeq` (up to the current end) and registers `listener` for every
   * later append, in one synchronous step: no append can fall between the two.
   */
  subscribe(afterSeq: number, listener: EventListener): { replay: StoredEvent[]; unsubscribe(): void } {
    const replay: StoredEvent[] = [];
    for (let after = afterSeq; ; ) {
      const page = this.eventsAfter(after);
      replay.push(...page);
      if (page.length < EVENT_PAGE_LIMIT) break;
      after = page[page.length - 1]!.seq;
    }
    this.listeners.add(listener);
    return { replay, unsubscribe: () => void this.listeners.delete(listener) };
  }

  persistChunk(c: PersistedChunk): void {
    this.insertChunk.run(c.turnId, c.seq, c.kind, c.data);
  }

  chunksAfter(turnId: string, afterSeq: number): PersistedChunk[] {
    return this.db
      .prepare('SELECT turn_id AS turnId, seq, kind, data FROM turn_chunks WHERE turn_id = ? AND seq > ? ORDER BY seq')
      .all(turnId, afterSeq) as PersistedChunk[];
  }

  listThreads(): ThreadRow[] {
    return this.db
      .prepare('SELECT id, title, created_at AS createdAt, updated_at AS updatedAt, last_seq AS lastSeq FROM threads WHERE deleted = 0 ORDER BY updated_at DESC, id')
      .all() as ThreadRow[];
  }

  getThread(id: string): ThreadRow {
    const row = this.db
      .prepare('SELECT id, title, created_at AS createdAt, updated_at AS updatedAt, last_seq AS lastSeq FROM threads WHERE id = ? AND deleted = 0')
      .get(id) as ThreadRow | undefined;
    if (!row) throw new StoreError('notFound', `thread ${id} does not exist`);
    return row;
  }

  messages(threadId: string): MessageRow[] {
    return this.db
      .prepare(
        `SELECT id, thread_id AS threadId, parent_id AS parentId, role, content, run_id AS runId, status, created_at AS createdAt
         FROM messages WHERE thread_id = ? ORDER BY created_at, rowid`,
      )
      .all(threadId) as MessageRow[];
  }

  /** The thread's head: the message new prompts follow (moved back by `thread.rewound`). */
  headMessageId(threadId: string): string | null {
    const row = this.db.prepare('SELECT head_message_id AS h, head_set AS s FROM threads WHERE id = ?').get(threadId) as { h: string | null; s: number } | undefined;
    if (!row) throw new StoreError('notFound', `thread ${threadId} does not exist`);
    if (row.s) return row.h;
    return this.messages(threadId).at(-1)?.id ?? null;
  }

  /** The message path from the root to `leafId` (default: the thread's head). */
  activePath(threadId: string, leafId?: string): MessageRow[] {
    const all = this.messages(threadId);
    const byId = new Map(all.map((m) => [m.id, m]));
    const head = leafId ?? this.headMessageId(threadId);
    let cur = head ? byId.get(head) : undefined;
    const path: MessageRow[] = [];
    while (cur) {
      path.push(cur);
      cur = cur.parentId ? byId.get(cur.parentId) : undefined;
    }
    return path.reverse();
  }

  runs(threadId: string): RunRow[] {
    return this.db
      .prepare(
        `SELECT id, thread_id AS threadId, ordinal, provider, model, status, owner_pid AS ownerPid, user_message_id AS userMessageId,
                started_at AS startedAt, ended_at AS endedAt, error, input_tokens AS inputTokens, output_tokens AS outputTokens
         FROM runs WHERE thread_id = ? ORDER BY ordinal`,
      )
      .all(threadId) as RunRow[];
  }

  items(runId: string): TurnItemRow[] {
    const rows = this.db
      .prepare(
        `SELECT id, run_id AS runId, ordinal, kind, status, tool_name AS toolName, arguments, content, is_error AS isError
         FROM turn_items WHERE run_id = ? ORDER BY ordinal`,
      )
      .all(runId) as (Omit<TurnItemRow, 'isError'> & { isError: number })[];
    return rows.map((r) => ({ ...r, isError: r.isError === 1 }));
  }

  /** Thread that recorded checkpoint `ref`, if any. */
  checkpointOwner(ref: string): string | null {
    const row = this.db.prepare('SELECT thread_id AS t FROM checkpoints WHERE ref = ?').get(ref) as { t: string } | undefined;
    return row?.t ?? null;
  }

  checkpoints(threadId: string): CheckpointRow[] {
    return this.db
      .prepare(
        `SELECT thread_id AS threadId, ordinal, ref, run_id AS runId, trigger, tool_name AS toolName, changed AS changedCount, skipped AS skippedCount,
                over_budget_ms AS overBudgetMs, rewind_to AS rewindTo, created_at AS createdAt
         FROM checkpoints WHERE thread_id = ? ORDER BY ordinal`,
      )
      .all(threadId) as CheckpointRow[];
  }

  nextRunOrdinal(threadId: string): number {
    const r = this.db.prepare('SELECT COALESCE(MAX(ordinal), -1) + 1 AS n FROM runs WHERE thread_id = ?').get(threadId) as { n: number };
    return r.n;
  }

  /**
   * Marks runs left `running` by a process that no longer exists as interrupted. The text that
   * had streamed is kept as an interrupted assistant message, so nothing is lost.
   */
  recoverInterrupted(alive: (pid: number) => boolean = isAlive): string[] {
    const stale = (this.db.prepare("SELECT id, thread_id AS threadId, owner_pid AS ownerPid, user_message_id AS userMessageId FROM runs WHERE status = 'running'").all() as {
      id: string; threadId: string; ownerPid: number | null; userMessageId: string | null;
    }[]).filter((r) => r.ownerPid === null || (r.ownerPid !== process.pid && !alive(r.ownerPid)));
    for (const r of stale) {
      const text = this.chunksAfter(r.id, 0).filter((c) => c.kind === 'text').map((c) => c.data).join('');
      const events: VoxEvent[] = [];
      if (text.length > 0) {
        events.push({
          type: 'message.added', threadId: r.threadId, messageId: `${r.id}:partial`, parentId: r.userMessageId,
          role: 'assistant', content: text, runId: r.id, status: 'interrupted',
        });
      }
      events.push({ type: 'run.ended', threadId: r.threadId, runId: r.id, status: 'interrupted', error: 'the process running this turn ended unexpectedly', usage: { inputTokens: 0, outputTokens: 0 } });
      this.append(...events);
    }
    return stale.map((r) => r.id);
  }
}
