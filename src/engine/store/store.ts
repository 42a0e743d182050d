/**
 * VoxStore: the one event log plus its projections, over a SQLite database (./driver.ts: better-sqlite3
 * or the N-API fallback).
 * Appending an event and projecting it happen in one transaction. In-process listeners
 * subscribe to one thread's events (or to every append) from a sequence number, replay and
 * registration in one synchronous step; a thread subscription reads only that thread's rows
 * (`events_by_thread`), so its cost does not grow with the number of threads. Turn chunks are
 * persisted as they stream so a killed process loses nothing; `recoverInterrupted` turns runs
 * whose owner process died into interrupted runs with their partial text kept. Every event and
 * chunk is redacted before it is written (../platform/secrets.ts `redactDeep`: the maintained
 * secret rule set), so no credential enters the database whichever path wrote it.
 *
 * Events other processes on the same file append reach this process's subscribers too, in
 * sequence order, none twice (./event-tail.ts).
 *
 * `beginRun` is the one way a run starts: thread creation (if asked), the user message and
 * `run.started` are written in one IMMEDIATE transaction, after checking that the thread has no
 * live run — a second writer (another process on the same file) waits for the lock and then sees
 * the first's run, so two prompts can never both start on one thread nor collide on an ordinal.
 */
import type { SqlDatabase } from './driver';
import type { StoredEvent, VoxEvent } from '../../protocol/events';
import { openDatabase, readOnlyError, removeReadOnlyCopy, storeErrorOf, type OpenOptions } from './database';
import { StoreError } from './errors';
import { keepDiskReserve, withDiskReserve } from './disk-reserve';
import { ResolvedSchema, defaultStoreSchemas, type StoreSchema } from './schema';
import { cachingStatements } from './statement-cache';
import { queueEntry, queuedEntries, steerPrompts, threadsWithQueue } from './queue-reads';
import { activeWait, waitingRuns, type WaitRow } from './wait-reads';
import { promptHistory, recordPrompt, type PromptHistoryRow } from './prompt-history';
import { threadCompactions, type CompactionRow } from './compaction-reads';
import { beginRun, claimRun, recoverInterrupted, takeSteers, type BeginRunInput, type BeginRunOutcome } from './run-lifecycle';

export type { BeginRunInput, BeginRunOutcome } from './run-lifecycle';
import { isOwnerAlive } from '../platform/process-identity';
import { EventTail, fanOut } from './event-tail';
import { listThreadsPage, stampWorkspace } from './workspace-reads';
import { redactDeep } from '../platform/secrets';
import {
  CHECKPOINT_COLUMNS, ITEM_COLUMNS, MESSAGE_COLUMNS, RUN_COLUMNS, THREAD_COLUMNS,
  type CheckpointRow, type MessageRow, type PersistedChunk, type QueueRow, type RunRow, type ThreadPage, type ThreadRow, type TurnItemRow,
} from './rows';

export type { WaitRow } from './wait-reads';
export type { PromptHistoryRow } from './prompt-history';
export type { CompactionRow } from './compaction-reads';
export type { CheckpointRow, MessageRow, PersistedChunk, QueueRow, QueueStatus, RunRow, ThreadPage, ThreadRow, TurnItemRow } from './rows';

/** Most events returned by one `eventsAfter` call. */
export const EVENT_PAGE_LIMIT = 5_000;
export { THREAD_PAGE_LIMIT } from './workspace-reads';

export type EventListener = (events: StoredEvent[]) => void;

export class VoxStore {
  private readonly listeners = new Set<EventListener>();
  private readonly threadListeners = new Map<string, Set<EventListener>>();
  private readonly insertEvent;
  private readonly insertChunk;
  private readonly touchThread;
  /** The database as the projections see it: their statements prepared once (./statement-cache.ts). */
  private readonly projectionDb: SqlDatabase;

  /** The migrations and projections of the core and of the modules the store was opened with (./schema.ts). */
  readonly schema: ResolvedSchema;

  constructor(readonly db: SqlDatabase, private readonly now: () => number = Date.now, schema: ResolvedSchema = new ResolvedSchema(defaultStoreSchemas())) {
    this.schema = schema;
    this.insertEvent = db.prepare('INSERT INTO events (thread_id, type, payload, time) VALUES (?, ?, ?, ?)');
    this.insertChunk = db.prepare('INSERT INTO turn_chunks (turn_id, seq, kind, data) VALUES (?, ?, ?, ?)');
    this.touchThread = db.prepare('UPDATE threads SET last_seq = ? WHERE id = ?');
    this.projectionDb = cachingStatements(db);
    this.tail = new EventTail({
      db,
      lastSeq: () => this.lastSeq(),
      after: (seq) => this.replay(seq),
      deliver: (events) => this.deliver(events),
      listening: () => this.listeners.size > 0 || this.threadListeners.size > 0,
    });
  }

  /** Delivery in sequence order, with what other processes append (./event-tail.ts). */
  private readonly tail: EventTail;

  /** Opens (creating and migrating) the database with the core's schema and the given modules' (`schema`). */
  static open(file: string, opts: OpenOptions & { schema?: readonly StoreSchema[]; workspace?: string } = {}): VoxStore {
    const schema = new ResolvedSchema(opts.schema ?? defaultStoreSchemas());
    const store = new VoxStore(openDatabase(file, opts, schema.migrations), Date.now, schema);
    if (opts.readonly) store.readOnlyFile = file;
    else if (file !== ':memory:') keepDiskReserve(file);
    if (opts.workspace !== undefined) store.workspace = opts.workspace;
    return store;
  }

  /** The workspace (canonical root) this store's engine acts in: stamped on the threads it creates (./workspace-reads.ts); null: none. */
  workspace: string | null = null;

  /** The file, when opened read-only (`OpenOptions.readonly`): the session refuses commands that write before they run. */
  private readOnlyFile: string | null = null;

  get readOnly(): boolean {
    return this.readOnlyFile !== null;
  }

  /** The typed refusal of a write to this store (opened read-only). */
  readOnlyError(): StoreError {
    return readOnlyError(this.readOnlyFile ?? this.db.name);
  }

  close(): void {
    this.tail.stop();
    this.listeners.clear();
    this.threadListeners.clear();
    if (this.db.open) {
      this.db.close();
      removeReadOnlyCopy(this.db.name);
    }
  }

  /** Appends events atomically (all or none), projects them, then notifies listeners. */
  append(...events: VoxEvent[]): StoredEvent[] {
    const stored = this.write(() => this.db.transaction(() => this.appendInTransaction(events)));
    this.notify(stored);
    return stored;
  }

  /** Appends events that must land even on a full disk (a run's end): the disk reserve (./disk-reserve.ts) is freed for them. */
  appendEnding(...events: VoxEvent[]): StoredEvent[] {
    return withDiskReserve(this.db.name, () => this.append(...events));
  }

  /**
   * Appends events with the times they were first recorded at (a bundle import, ../bundles/), all
   * in one transaction inside `prepare` (which runs first, in it: reads that decide what to
   * append), then notifies listeners once it committed. A thread's `updated_at` ends at its
   * newest event's time, whatever order older events arrived in.
   */
  appendRecorded<T>(prepare: () => { events: ReadonlyArray<{ event: VoxEvent; time: number }>; result: T }): { stored: StoredEvent[]; result: T } {
    const out = this.write(() => this.db.transaction(() => {
      const { events, result } = prepare();
      const stored: StoredEvent[] = [];
      const threads = new Set<string>();
      for (const { event: given, time } of events) {
        const event = redactDeep(stampWorkspace(given, this.workspace, true));
        const threadId = 'threadId' in event ? event.threadId : null;
        const { type, ...rest } = event;
        const seq = Number(this.insertEvent.run(threadId, type, JSON.stringify(rest), time).lastInsertRowid);
        this.schema.project(this.db, event, time);
        if (threadId) {
          this.touchThread.run(seq, threadId);
          threads.add(threadId);
        }
        stored.push({ ...event, seq, time } as StoredEvent);
      }
      const newest = this.db.prepare('UPDATE threads SET updated_at = (SELECT MAX(time) FROM events WHERE thread_id = ?) WHERE id = ?');
      for (const id of threads) newest.run(id, id);
      return { stored, result };
    }, 'immediate'));
    this.notify(out.stored);
    return out;
  }

  /** Runs a write; SQLite's failures become typed errors naming the file (locked, read-only: StoreError; disk full: DiskFullError). */
  private write<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw storeErrorOf(this.db.name, e);
    }
  }

  private appendInTransaction(events: VoxEvent[], time: number = this.now()): StoredEvent[] {
    return events.map((given) => {
      const e = redactDeep(stampWorkspace(given, this.workspace, false));
      const threadId = 'threadId' in e ? e.threadId : null;
      const { type, ...rest } = e;
      const info = this.insertEvent.run(threadId, type, JSON.stringify(rest), time);
      const seq = Number(info.lastInsertRowid);
      this.schema.project(this.projectionDb, e, time);
      if (threadId) this.touchThread.run(seq, threadId);
      return { ...e, seq, time } as StoredEvent;
    });
  }

  private notify(stored: StoredEvent[]): void {
    this.tail.local(stored);
  }

  private deliver(stored: StoredEvent[]): void {
    fanOut(stored, this.listeners, this.threadListeners);
  }

  eventsAfter(afterSeq: number, opts: { threadId?: string; limit?: number } = {}): StoredEvent[] {
    const limit = Math.min(opts.limit ?? EVENT_PAGE_LIMIT, EVENT_PAGE_LIMIT);
    const rows = (
      opts.threadId
        ? this.db.prepare('SELECT * FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(opts.threadId, afterSeq, limit)
        : this.db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit)
    ) as { seq: number; type: string; payload: string; time: number }[];
    return rows.map((r) => ({ ...(JSON.parse(r.payload) as object), type: r.type, seq: r.seq, time: r.time }) as StoredEvent);
  }

  lastSeq(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM events').get() as { s: number }).s;
  }

  private replay(afterSeq: number, threadId?: string): StoredEvent[] {
    const replay: StoredEvent[] = [];
    for (let after = afterSeq; ; ) {
      const page = this.eventsAfter(after, threadId === undefined ? {} : { threadId });
      replay.push(...page);
      if (page.length < EVENT_PAGE_LIMIT) break;
      after = page[page.length - 1]!.seq;
    }
    return replay;
  }

  /**
   * Replays every event after `afterSeq` (up to the current end) and registers `listener` for
   * every later append, in one synchronous step: no append can fall between the two.
   */
  subscribe(afterSeq: number, listener: EventListener): { replay: StoredEvent[]; unsubscribe(): void } {
    this.tail.catchUp(); // what others appended goes to the earlier subscribers first, not twice to this one
    const replay = this.replay(afterSeq);
    this.listeners.add(listener);
    this.tail.update();
    return {
      replay,
      unsubscribe: () => {
        this.listeners.delete(listener);
        this.tail.update();
      },
    };
  }

  /** `subscribe` for one thread: reads and delivers only that thread's events. */
  subscribeThread(threadId: string, afterSeq: number, listener: EventListener): { replay: StoredEvent[]; unsubscribe(): void } {
    this.tail.catchUp();
    const replay = this.replay(afterSeq, threadId);
    let set = this.threadListeners.get(threadId);
    if (!set) this.threadListeners.set(threadId, (set = new Set()));
    set.add(listener);
    this.tail.update();
    return {
      replay,
      unsubscribe: () => {
        const s = this.threadListeners.get(threadId);
        s?.delete(listener);
        if (s && s.size === 0) this.threadListeners.delete(threadId);
        this.tail.update();
      },
    };
  }

  persistChunk(c: PersistedChunk): void {
    this.write(() => this.insertChunk.run(c.turnId, c.seq, c.kind, redactDeep(c.data)));
  }

  chunksAfter(turnId: string, afterSeq: number): PersistedChunk[] {
    return this.db
      .prepare('SELECT turn_id AS turnId, seq, kind, data FROM turn_chunks WHERE turn_id = ? AND seq > ? ORDER BY seq')
      .all(turnId, afterSeq) as PersistedChunk[];
  }

  /** Every live thread, most recently updated first (tools and tests; clients page with `listThreadsPage`). */
  listThreads(): ThreadRow[] {
    return this.db.prepare(`SELECT ${THREAD_COLUMNS} FROM threads WHERE deleted = 0 ORDER BY updated_at DESC, id`).all() as ThreadRow[];
  }

  /** One page of live top-level threads (subagent threads are listed under their parent: ./family-reads.ts), most recently updated first, after `before` (a previous page's cursor). */
  listThreadsPage(opts: { limit: number; before?: string; workspace?: string }): ThreadPage {
    return listThreadsPage(this.db, opts);
  }

  getThread(id: string): ThreadRow {
    const row = this.db.prepare(`SELECT ${THREAD_COLUMNS} FROM threads WHERE id = ? AND deleted = 0`).get(id) as ThreadRow | undefined;
    if (!row) throw new StoreError('notFound', `thread ${id} does not exist`);
    return row;
  }

  hasThread(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM threads WHERE id = ? AND deleted = 0').get(id) !== undefined;
  }

  messages(threadId: string): MessageRow[] {
    return this.db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = ? ORDER BY created_at, rowid`).all(threadId) as MessageRow[];
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
    return this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? ORDER BY ordinal`).all(threadId) as RunRow[];
  }

  run(runId: string): RunRow | undefined {
    return this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`).get(runId) as RunRow | undefined;
  }

  items(runId: string): TurnItemRow[] {
    const rows = this.db.prepare(`SELECT ${ITEM_COLUMNS} FROM turn_items WHERE run_id = ? ORDER BY ordinal`).all(runId) as (Omit<TurnItemRow, 'isError'> & { isError: number })[];
    return rows.map((r) => ({ ...r, isError: r.isError === 1 }));
  }

  /** Thread that recorded checkpoint `ref`, if any. */
  checkpointOwner(ref: string): string | null {
    const row = this.db.prepare('SELECT thread_id AS t FROM checkpoints WHERE ref = ?').get(ref) as { t: string } | undefined;
    return row?.t ?? null;
  }

  checkpoints(threadId: string): CheckpointRow[] {
    return this.db.prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? ORDER BY ordinal`).all(threadId) as CheckpointRow[];
  }

  /** Checkpoints of every live thread, by thread then ordinal. */
  allCheckpoints(): CheckpointRow[] {
    return this.db
      .prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id IN (SELECT id FROM threads WHERE deleted = 0) ORDER BY thread_id, ordinal`)
      .all() as CheckpointRow[];
  }

  nextRunOrdinal(threadId: string): number {
    const r = this.db.prepare('SELECT COALESCE(MAX(ordinal), -1) + 1 AS n FROM runs WHERE thread_id = ?').get(threadId) as { n: number };
    return r.n;
  }

  /** The thread's runs the log lists as running (live or left behind by a dead process). */
  running(threadId: string): RunRow[] {
    return this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? AND status = 'running'`).all(threadId) as RunRow[];
  }

  /** The thread's waiting prompts, next first (./queue-reads.ts). */
  queue(threadId: string): QueueRow[] {
    return queuedEntries(this.db, threadId);
  }

  /** One queued prompt, waiting or not (status says what became of it). */
  queueEntry(entryId: string): QueueRow | undefined {
    return queueEntry(this.db, entryId);
  }

  /** Threads with waiting prompts (queued by `ownerPid` only, when given). */
  queuedThreads(ownerPid?: number): string[] {
    return threadsWithQueue(this.db, ownerPid);
  }

  /** The steering prompts a run took, in order (for the history later turns see). */
  steers(runId: string): string[] {
    return steerPrompts(this.db, runId);
  }

  /** The run's rate-limit wait while it lasts (./wait-reads.ts). */
  rateLimitWait(runId: string): WaitRow | undefined {
    return activeWait(this.db, runId);
  }

  /** Runs waiting for a rate limit, in any process. */
  waitingRuns(): RunRow[] {
    return waitingRuns(this.db);
  }

  /** Runs waiting for a rate limit whose process is gone: an engine that starts re-arms them (runs/registry.ts). */
  orphanedWaits(alive: (r: RunRow) => boolean): RunRow[] {
    return waitingRuns(this.db).filter((r) => !alive(r));
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction: the events it appends are projected at once and
   * announced to listeners after the commit; SQLite failures become typed StoreErrors. For the
   * store's writes that check and change in one step (./run-lifecycle.ts).
   */
  transact<T>(fn: (append: (...events: VoxEvent[]) => StoredEvent[], appendAt: (time: number, ...events: VoxEvent[]) => StoredEvent[]) => T): T {
    const pending: StoredEvent[] = [];
    const out = this.write(() => this.db.transaction(() => fn((...events) => {
      const stored = this.appendInTransaction(events);
      pending.push(...stored);
      return stored;
    }, (time, ...events) => {
      // Imported history keeps the source's own times (src/engine/importers/apply.ts).
      const stored = this.appendInTransaction(events, time);
      pending.push(...stored);
      return stored;
    }), 'immediate'));
    this.notify(pending);
    return out;
  }

  /** The thread's compactions, oldest first (./compaction-reads.ts); history applies those on its path. */
  compactions(threadId: string): CompactionRow[] {
    return threadCompactions(this.db, threadId);
  }

  /** Adds a prompt as typed to the prompt history (./prompt-history.ts: duplicates collapsed, bounded). */
  recordPrompt(prompt: string, threadId: string | null): void {
    this.write(() => recordPrompt(this.db, prompt, threadId, this.now()));
  }

  /** The newest prompts of the history, newest last. */
  promptHistory(limit?: number): PromptHistoryRow[] {
    return promptHistory(this.db, limit);
  }

  /** Starts a run atomically, or reports the live run that holds the thread; see the file header. */
  beginRun(input: BeginRunInput): BeginRunOutcome {
    return beginRun(this, input);
  }

  /** Takes the prompts asked to steer the thread's running turn (exactly one turn takes each). */
  takeSteers(threadId: string, runId: string): QueueRow[] {
    return takeSteers(this, threadId, runId);
  }

  /** Takes over an orphaned rate-limit wait for this process; false when another engine has it. */
  claimRun(runId: string, ownerPid: number, ownerStartedAt: number | null, alive: (r: RunRow) => boolean): boolean {
    return claimRun(this, runId, ownerPid, ownerStartedAt, alive);
  }

  /** Closes runs whose process is gone as interrupted, their streamed text kept (waiting runs are re-armed instead). */
  recoverInterrupted(alive: (pid: number, startedAtMs: number | null) => boolean = isOwnerAlive): string[] {
    return recoverInterrupted(this, alive);
  }
}
