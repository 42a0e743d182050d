/**
 * The store's delivery order and its view of other processes' writes. VS Code and the CLI share
 * one database file: an event another process appends (a `vox chat` in a terminal, a second
 * window) must reach this process's subscribers (the chat's thread list, an open thread) as
 * surely as one appended here. The tail keeps one watermark — every event with a sequence number
 * at or below it was delivered — and guarantees that subscribers see events in sequence order,
 * with no gap and none twice:
 *
 *   - a local append first delivers what other processes committed before it (the gap between the
 *     watermark and the append's first number);
 *   - while anyone listens, a poll every EXTERNAL_POLL_MS asks SQLite whether another connection
 *     committed (`PRAGMA data_version`, which changes only then: a few microseconds when nothing
 *     did) and delivers what arrived;
 *   - a new subscription catches up first, so its replay and the next poll never overlap.
 *
 * The timer is unref'd: it never keeps a CLI process alive. `fanOut` hands a batch to the
 * store's subscribers: every append listener, and each thread's listeners its own events.
 */
import type { SqlDatabase } from './driver';
import type { StoredEvent } from '../../protocol/events';

/** How often a process with subscribers looks for events other processes appended (ms). */
export const EXTERNAL_POLL_MS = 500;

export interface EventTailPorts {
  db: SqlDatabase;
  /** The newest sequence number in the log. */
  lastSeq(): number;
  /** Every event after `afterSeq`, in order (paged by the store). */
  after(afterSeq: number): StoredEvent[];
  /** Hands events (in order) to the subscribers. */
  deliver(events: StoredEvent[]): void;
  /** Whether anyone subscribes (the poll runs only then). */
  listening(): boolean;
  pollMs?: number;
}

export class EventTail {
  private watermark: number;
  private dataVersion: number;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly ports: EventTailPorts) {
    this.watermark = ports.lastSeq();
    this.dataVersion = this.readDataVersion();
  }

  /** Delivers events this process just committed, after whatever other processes committed before them. */
  local(stored: StoredEvent[]): void {
    if (stored.length === 0) return;
    const first = stored[0]!.seq;
    const gap = first > this.watermark + 1 ? this.ports.after(this.watermark).filter((e) => e.seq < first) : [];
    const fresh = stored.filter((e) => e.seq > this.watermark);
    const all = gap.length > 0 ? [...gap, ...fresh] : fresh;
    this.watermark = Math.max(this.watermark, stored[stored.length - 1]!.seq);
    if (all.length > 0) this.ports.deliver(all);
  }

  /** Delivers what other processes appended since the watermark (a no-op when no one committed). */
  catchUp(): void {
    const version = this.readDataVersion();
    if (version === this.dataVersion) return;
    this.dataVersion = version;
    if (this.ports.lastSeq() <= this.watermark) return;
    const arrived = this.ports.after(this.watermark);
    if (arrived.length === 0) return;
    this.watermark = arrived[arrived.length - 1]!.seq;
    this.ports.deliver(arrived);
  }

  /** Starts or stops the poll to match whether anyone listens. */
  update(): void {
    if (this.ports.listening() && this.timer === null) {
      this.timer = setInterval(() => {
        try {
          this.catchUp();
        } catch {
          // A closed or busy database: the next tick tries again; close() stops the timer.
        }
      }, this.ports.pollMs ?? EXTERNAL_POLL_MS);
      this.timer.unref?.();
    } else if (!this.ports.listening() && this.timer !== null) {
      this.stop();
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private readDataVersion(): number {
    return Number(this.ports.db.pragma('data_version'));
  }
}

type Listener = (events: StoredEvent[]) => void;

/** Hands `stored` to every listener and each thread's listeners their thread's events; a listener that throws is dropped (it never breaks the writer). */
export function fanOut(stored: StoredEvent[], listeners: Set<Listener>, threadListeners: Map<string, Set<Listener>>): void {
  const deliver = (l: Listener, evs: StoredEvent[], from: Set<Listener>) => {
    try {
      l(evs);
    } catch {
      from.delete(l);
    }
  };
  for (const l of [...listeners]) deliver(l, stored, listeners);
  if (threadListeners.size === 0) return;
  const byThread = new Map<string, StoredEvent[]>();
  for (const e of stored) if (threadListeners.has(e.threadId)) byThread.set(e.threadId, [...(byThread.get(e.threadId) ?? []), e]);
  for (const [threadId, evs] of byThread) {
    const set = threadListeners.get(threadId)!;
    for (const l of [...set]) deliver(l, evs, set);
  }
}
