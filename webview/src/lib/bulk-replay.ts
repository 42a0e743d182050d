/**
 * Opening a long thread fast: the first batch of a thread's events (the replay from seq 0 after
 * `subscribeThread`) can hold tens of thousands of events. Applied one by one to the app's
 * `$state` proxy, every push and field write goes through Svelte's proxy traps and signals (about
 * 0.5 s for 2,000 messages); applied to a plain copy that then replaces the proxied thread, they
 * cost plain-object writes, and Svelte proxies the result lazily, only as far as it is read (the
 * virtualised list reads the rows it shows). Only an empty state qualifies: a thread that already
 * has entries keeps its identity (its rows, its subscriptions) and takes events in place.
 *
 * `SlicedReplay` applies such a replay in slices of at most REPLAY_SLICE_MS, yielding to the
 * browser between them, so no frame waits for the whole decode (10,000 messages decode in about
 * 0.2 s). Batches that arrive meanwhile queue behind it, in order; the caller swaps the finished
 * state in once, when the queue is empty and the last batch did not say `more` (the engine sends a
 * long replay as several messages, ../../../src/protocol/updates.ts replayChunks).
 */
import { applyEvents, type EventsResult, type ThreadState, type Warn } from './thread-state';
import { DEFAULT_REGISTRY } from './features/index';
import type { FeatureRegistry } from './features/registry';

/** Events in one batch from which an empty thread is replayed into a plain copy. */
export const BULK_REPLAY_EVENTS = 200;
/** Longest slice of a replay before it yields to the browser (ms): frames stay well under 100 ms apart. */
export const REPLAY_SLICE_MS = 30;
/** Events applied between two looks at the clock. */
const EVENTS_PER_STEP = 100;

/** A plain copy of `thread` to apply `eventCount` events to, or null to apply them in place. */
export function replayTarget(thread: ThreadState, eventCount: number, more = false): ThreadState | null {
  if ((eventCount < BULK_REPLAY_EVENTS && !more) || thread.lastEventSeq !== 0 || thread.entries.length !== 0) return null;
  return JSON.parse(JSON.stringify(thread)) as ThreadState; // empty: a few fields
}

function merge(into: EventsResult, r: EventsResult): void {
  into.applied += r.applied;
  into.startedRuns.push(...r.startedRuns);
  into.endedRuns.push(...r.endedRuns);
  into.completedItems.push(...r.completedItems);
  into.userMessages.push(...r.userMessages);
}

export interface ReplayScheduler {
  /** Runs `fn` in a later task. */
  later(fn: () => void): void;
  now(): number;
}

const browserScheduler: ReplayScheduler = { later: (fn) => void setTimeout(fn, 0), now: () => performance.now() };

/** Applies queued event batches to `state` in time slices; `onDone` gets the state and what all the batches did. */
export class SlicedReplay {
  private readonly queue: unknown[][] = [];
  private readonly result: EventsResult = { applied: 0, startedRuns: [], endedRuns: [], completedItems: [], userMessages: [] };
  private at = 0;
  private running = false;
  private cancelled = false;
  /** The last batch said more of the replay follows: finishing waits for it. */
  private awaitingMore = false;

  constructor(
    readonly state: ThreadState,
    private readonly onDone: (state: ThreadState, result: EventsResult) => void,
    private readonly warn: Warn,
    private readonly scheduler: ReplayScheduler = browserScheduler,
    /** Whose reducers apply the events (the controller's features). */
    private readonly registry: FeatureRegistry = DEFAULT_REGISTRY,
  ) {}

  get threadId(): string {
    return this.state.threadId;
  }

  /** Queues a batch (applied after everything queued before it); `more`: another batch of the replay follows. */
  add(events: unknown[], more = false): void {
    this.queue.push(events);
    this.awaitingMore = more;
    if (!this.running) {
      this.running = true;
      this.scheduler.later(() => this.slice());
    }
  }

  /** Stops: onDone is never called (the thread was left). */
  cancel(): void {
    this.cancelled = true;
  }

  /** Applies one slice now (the first runs in the task after `add`). */
  private slice(): void {
    if (this.cancelled) return;
    const t0 = this.scheduler.now();
    while (this.queue.length > 0) {
      const batch = this.queue[0]!;
      const end = Math.min(batch.length, this.at + EVENTS_PER_STEP);
      merge(this.result, applyEvents(this.state, batch.slice(this.at, end), this.warn, this.registry));
      this.at = end;
      if (this.at >= batch.length) {
        this.queue.shift();
        this.at = 0;
      }
      if (this.queue.length > 0 && this.scheduler.now() - t0 >= REPLAY_SLICE_MS) {
        this.scheduler.later(() => this.slice());
        return;
      }
    }
    this.running = false;
    if (!this.awaitingMore) this.onDone(this.state, this.result);
  }
}

/**
 * The controller's intake of a thread's event batches: a long first replay (or a batch behind it)
 * goes to a SlicedReplay and `swapIn` gets the finished state; anything else is the caller's to
 * apply in place.
 */
export class ReplayIntake {
  private replay: SlicedReplay | null = null;

  constructor(
    private readonly warn: Warn,
    private readonly swapIn: (state: ThreadState, result: EventsResult) => void,
    private readonly registry: FeatureRegistry = DEFAULT_REGISTRY,
  ) {}

  /** True when a replay took the batch (started now or queued behind the running one). */
  take(thread: ThreadState, events: unknown[], more: boolean): boolean {
    if (this.replay?.threadId === thread.threadId) {
      this.replay.add(events, more); // behind the replay, in order
      return true;
    }
    const plain = replayTarget(thread, events.length, more);
    if (!plain) return false;
    const replay = new SlicedReplay(plain, (state, res) => {
      if (this.replay !== replay) return;
      this.replay = null;
      this.swapIn(state, res);
    }, this.warn, undefined, this.registry);
    this.replay = replay;
    replay.add(events, more);
    return true;
  }

  /** The thread was left: a running replay never finishes. */
  cancel(): void {
    this.replay?.cancel();
    this.replay = null;
  }
}
