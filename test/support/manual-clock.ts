/**
 * A manual clock for tests and benchmarks: setTimeout/clearTimeout that fire only when the test
 * advances time, in due-time order (ties in scheduling order). Satisfies ChunkBatcher's BatchTimer.
 */
interface Pending { id: number; at: number; fn: () => void }

export class ManualClock {
  now = 0;
  private nextId = 1;
  private timers: Pending[] = [];

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, at: this.now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that comes due (including ones scheduled meanwhile). */
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let due: Pending | undefined;
      for (const t of this.timers) if (t.at <= target && (!due || t.at < due.at || (t.at === due.at && t.id < due.id))) due = t;
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.now = due.at;
      due.fn();
    }
    this.now = target;
  }
}
