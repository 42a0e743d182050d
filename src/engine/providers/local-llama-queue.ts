/**
 * Two small concurrency helpers for the local provider: a FIFO `SerialQueue` that gives one
 * request at a time the model's single context sequence (cancellable while waiting), and an
 * `EventChannel` that turns node-llama-cpp's callbacks into an async iterator.
 */

/** FIFO mutex. `acquire` resolves with a release function once every earlier holder released. */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  /**
   * Waits for the turn of this caller. If `signal` aborts first, rejects with `cancelled()`; the
   * slot is still taken and freed in order, so later callers keep their place.
   */
  async acquire(signal: AbortSignal | undefined, cancelled: () => Error): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.tail = previous.then(() => mine);
    if (!signal) {
      await previous;
      return release;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        void previous.then(release);
        reject(cancelled());
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void previous.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
    return release;
  }

  /** Settles when every current holder and waiter has released. */
  idle(): Promise<void> {
    return this.tail;
  }
}

/** Single-consumer async queue bridging callbacks to an async iterator. */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private error: unknown;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  /** Ends the stream; with an error, the consumer's iteration throws it after the queued items. */
  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
