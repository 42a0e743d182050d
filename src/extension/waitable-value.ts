/**
 * A value that appears later, awaited with an upper bound instead of polled: the chat views keep
 * the side bar chat's connection in one (VS Code resolves the view some time after it is focused),
 * and a palette command waits for it. No VS Code API, so it is unit-tested on its own.
 */
export class WaitableValue<T> {
  private current: T | undefined;
  private readonly waiters = new Set<(v: T) => void>();

  get value(): T | undefined {
    return this.current;
  }

  /** Sets (or clears, with undefined) the value; a value set resolves every pending `wait`. */
  set(v: T | undefined): void {
    this.current = v;
    if (v === undefined) return;
    for (const resolve of [...this.waiters]) resolve(v);
  }

  /** The value now if there is one, else the first one set within `timeoutMs`, else undefined. */
  wait(timeoutMs: number): Promise<T | undefined> {
    if (this.current !== undefined) return Promise.resolve(this.current);
    return new Promise((resolve) => {
      const done = (v: T | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(v);
      };
      const timer = setTimeout(() => done(this.current), timeoutMs);
      this.waiters.add(done);
    });
  }

  /** Waits in progress (tests check none is left behind). */
  get pending(): number {
    return this.waiters.size;
  }
}
