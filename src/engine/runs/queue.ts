/**
 * ThreadRunQueue (SPEC 2.4): a prompt sent while its thread runs waits in the thread's queue —
 * persisted as `queue.*` events, so it survives a reload, a restart, and is seen by every process
 * on the database — and starts when the run ends. Entries can be edited, reordered and cancelled;
 * `steer` asks the running turn to take one at its next boundary (the agent loop calls
 * `VoxStore.takeSteers` before every model call and before every tool batch) without aborting.
 *
 * Who starts the next entry: the process that queued it, while it lives (the CLI waits for its
 * prompt's turn and runs it itself, streaming in its terminal); an entry whose owner is gone is
 * started by an engine that drains every thread ('all' policy, VS Code), never by one that only
 * runs its own ('own' policy, the CLI). Starting an entry marks it started in the same transaction
 * that starts the run, so two engines can never both start it. A run ending in this engine drains
 * its thread at once — unless the user stopped it: then the queue waits (paused) until the user
 * sends another prompt or steers/runs an entry; a run ending in another process is noticed by
 * polling (`QUEUE_POLL_MS`) while this process has prompts waiting.
 */
import { isOwnerAlive, selfStartMs } from '../platform/process-identity';
import type { ResolvedModel } from '../providers/types';
import type { QueueRow, VoxStore } from '../store/store';
import { StoreError } from '../store/errors';
import { allocate } from '../ids/ids';
import { RunError } from './errors';
import { isLiveRun, type RunHandle, type RunRegistry } from './registry';
import { startTurn } from './start-turn';
import { MAX_QUEUED_PER_THREAD } from './turn-start';

export { MAX_QUEUED_PER_THREAD };
/** How often an engine with prompts waiting checks whether their threads have freed up (a run ending in another process). */
export const QUEUE_POLL_MS = 500;

/** Which queued entries this engine starts when a thread frees up. */
export type DrainPolicy = 'all' | 'own';

export interface ThreadRunQueueDeps {
  store: VoxStore;
  runs: RunRegistry;
  resolveModel: (ref: string) => Promise<ResolvedModel>;
  /** The model of an entry queued without one (the host's default at start time). */
  defaultModel: () => string;
  policy: DrainPolicy;
  /** Failures of a background drain (a model that no longer resolves): for the host's notices. */
  onError: (e: unknown, threadId: string) => void;
  pollMs?: number;
  /** The rules of a queued prompt as it starts (../rules/): a synchronous preparer for the thread, run in the start's transaction. */
  rulesFor?: (threadId: string) => Promise<(prompt: string) => { prompt: string; names: string[]; block: string }>;
}

const mine = (r: QueueRow) => r.ownerPid === process.pid && (r.ownerStartedAt === null || r.ownerStartedAt === selfStartMs());

export class ThreadRunQueue {
  private readonly draining = new Map<string, Promise<RunHandle | null>>();
  /** Threads whose run the user stopped: their queue waits for an explicit send, steer or run (in this engine). */
  private readonly paused = new Set<string>();
  private readonly stopListening: () => void;
  private timer: ReturnType<typeof setInterval> | null = null;
  private disposed = false;

  constructor(private readonly deps: ThreadRunQueueDeps) {
    this.stopListening = deps.runs.onRunEnded((threadId, status) => {
      // Stop means stop: the queue waits until the user sends, steers or runs an entry.
      if (status === 'cancelled') this.paused.add(threadId);
      else this.drainInBackground(threadId);
    });
  }

  list(threadId: string): QueueRow[] {
    this.deps.store.getThread(threadId);
    return this.deps.store.queue(threadId);
  }

  /** One entry and what became of it; `run/unknownEntry` when it never existed. */
  entry(entryId: string): QueueRow {
    const row = this.deps.store.queueEntry(entryId);
    if (!row) throw new RunError('unknownEntry', `no queued prompt ${entryId}`);
    return row;
  }

  /** Queues a prompt (and, with `steer`, asks the running turn to take it). */
  enqueue(threadId: string, prompt: string, model: string | null, steer = false): { entry: QueueRow; position: number } {
    const { store } = this.deps;
    store.getThread(threadId);
    if (store.queue(threadId).length >= MAX_QUEUED_PER_THREAD) {
      throw new RunError('queueFull', `this thread already has ${MAX_QUEUED_PER_THREAD} prompts waiting; cancel some or wait`, { threadId });
    }
    const entryId = allocate('queued');
    store.append(
      { type: 'queue.added', threadId, entryId, prompt, model, ownerPid: process.pid, ownerStartedAt: selfStartMs() },
      ...(steer ? [{ type: 'queue.steerRequested' as const, threadId, entryId }] : []),
    );
    this.watch();
    this.paused.delete(threadId); // sending again resumes a queue that Stop paused
    const all = store.queue(threadId);
    const position = all.findIndex((r) => r.entryId === entryId);
    // The run may have ended between the caller's busy check and the append: nothing would drain then.
    this.drainInBackground(threadId);
    return { entry: all[position]!, position };
  }

  edit(threadId: string, entryId: string, prompt: string): void {
    this.guard(threadId, entryId, () => this.deps.store.append({ type: 'queue.edited', threadId, entryId, prompt }));
  }

  move(threadId: string, entryId: string, toIndex: number): void {
    this.guard(threadId, entryId, () => this.deps.store.append({ type: 'queue.moved', threadId, entryId, toIndex }));
  }

  cancel(threadId: string, entryId: string): void {
    this.guard(threadId, entryId, () => this.deps.store.append({ type: 'queue.removed', threadId, entryId, reason: 'cancelled', runId: null }));
  }

  /**
   * `promoteToSteer`: asks the thread's running turn to take the entry at its next boundary.
   * When nothing runs the thread, the entry starts now instead ('started').
   */
  async steer(threadId: string, entryId: string): Promise<{ outcome: 'steering' | 'started'; runId: string | null }> {
    this.guard(threadId, entryId, () => this.deps.store.append({ type: 'queue.steerRequested', threadId, entryId }));
    this.paused.delete(threadId);
    if (this.threadRunning(threadId)) return { outcome: 'steering', runId: this.deps.store.running(threadId)[0]?.id ?? null };
    const h = await this.start(threadId, this.deps.store.queue(threadId).find((r) => r.entryId === entryId), true);
    return h ? { outcome: 'started', runId: h.runId } : { outcome: 'steering', runId: this.deps.store.running(threadId)[0]?.id ?? null };
  }

  /**
   * Starts the thread's next entry if the thread is idle and the entry is this engine's to start
   * (steering entries first: they were meant to go now); one drain per thread at a time.
   */
  drain(threadId: string): Promise<RunHandle | null> {
    const inFlight = this.draining.get(threadId);
    if (inFlight) return inFlight;
    const p = (async () => {
      if (this.paused.has(threadId) || this.threadRunning(threadId)) return null;
      const waiting = this.deps.store.queue(threadId);
      return this.start(threadId, waiting.find((r) => r.steer) ?? waiting[0], false);
    })().finally(() => this.draining.delete(threadId));
    this.draining.set(threadId, p);
    return p;
  }

  /** Drains every thread with queued prompts (an engine starting up). */
  drainAll(): void {
    for (const t of this.deps.store.queuedThreads()) this.drainInBackground(t);
    this.watch();
  }

  dispose(): void {
    this.disposed = true;
    this.stopListening();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private drainInBackground(threadId: string): void {
    if (this.disposed) return;
    this.drain(threadId).catch((e: unknown) => this.deps.onError(e, threadId));
  }

  /** Polls while this process has prompts waiting (their thread may free up in another process). */
  private watch(): void {
    if (this.timer || this.disposed) return;
    this.timer = setInterval(() => {
      const threads = this.deps.store.queuedThreads(process.pid);
      if (threads.length === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
      for (const t of threads) this.drainInBackground(t);
    }, this.deps.pollMs ?? QUEUE_POLL_MS);
    this.timer.unref?.();
  }

  private threadRunning(threadId: string): boolean {
    return this.deps.store.running(threadId).some((r) => isLiveRun(r));
  }

  private async start(threadId: string, entry: QueueRow | undefined, asked: boolean): Promise<RunHandle | null> {
    if (!entry || !this.deps.runs.accepting) return null;
    // Someone else's entry waits for its owner — unless asked for it now, or its owner is gone and this engine drains all.
    if (!asked && !mine(entry) && (this.deps.policy === 'own' || isOwnerAlive(entry.ownerPid, entry.ownerStartedAt))) return null;
    const { store, runs, resolveModel, defaultModel } = this.deps;
    try {
      const prepareRules = await this.deps.rulesFor?.(threadId);
      // The entry's rules are prepared in the start's transaction (its latest edit); a busy thread keeps it waiting.
      const out = await startTurn({ store, runs, resolveModel, defaultModel }, {
        threadId, prompt: entry.prompt, model: entry.model, ifBusy: 'wait', what: `start queued prompt ${entry.entryId}`,
        run: { fromQueue: entry.entryId, ...(prepareRules ? { prepareRules } : {}) },
      });
      return out.kind === 'started' ? out.handle : null;
    } catch (e) {
      if (e instanceof RunError && e.code === 'threadBusy') return null; // still running: the entry waits (or steers)
      if (e instanceof RunError && e.code === 'queueEntryGone') return asked ? null : this.drainNext(threadId);
      throw e;
    }
  }

  private drainNext(threadId: string): Promise<RunHandle | null> {
    const waiting = this.deps.store.queue(threadId);
    return this.start(threadId, waiting.find((r) => r.steer) ?? waiting[0], false);
  }

  private guard(threadId: string, entryId: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (e instanceof StoreError && e.code === 'notFound') {
        throw new RunError('unknownEntry', `prompt ${entryId} is not queued in thread ${threadId} (it started, steered, or was cancelled)`, { threadId });
      }
      throw e;
    }
  }
}
