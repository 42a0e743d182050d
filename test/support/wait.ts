/**
 * The one wait/poll helper of the tests (and of the e2e harness, which re-exports it): `until`
 * polls a condition until it holds or a bound passes (`waitFor` is the same poll with the name and
 * the bound in front), `withTimeout` bounds a promise, `sleep` pauses. Waits are on conditions
 * with bounded timeouts; a timeout throws an Error naming what was waited for.
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Settles like `p`, or rejects with "`what` timed out after `ms` ms"; a rejection that is not an
 * Error becomes one. The timer never keeps the process alive.
 */
export async function withTimeout<T>(what: string, ms: number, p: PromiseLike<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
        timer.unref?.();
      }),
    ]);
  } catch (e) {
    throw e instanceof Error ? e : new Error(String(e));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export interface WaitOptions {
  /** Pause between two polls (default 250 ms). */
  everyMs?: number;
  /** Appended to the timeout message: what the condition saw last. */
  detail?: () => string;
  /** An exception from `fn` ends the wait at once (default: it counts as "not yet", and the last one is reported). */
  failFast?: boolean;
}

type Falsy = undefined | false | null | 0 | '';

/**
 * Polls `fn` until it returns a truthy value (returned) or `ms` elapse (throws "`what`: not ready
 * after `ms` ms", with the last error or `detail()`). `fn` runs at least once.
 */
export async function waitFor<T>(what: string, ms: number, fn: () => T | Falsy | Promise<T | Falsy>, opts: number | WaitOptions = {}): Promise<T> {
  const o: WaitOptions = typeof opts === 'number' ? { everyMs: opts } : opts;
  const deadline = Date.now() + ms;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      if (o.failFast) throw e;
      lastErr = e;
    }
    if (Date.now() > deadline) {
      const why = lastErr ? ` (last error: ${String(lastErr)})` : o.detail ? ` (${o.detail()})` : '';
      throw new Error(`${what}: not ready after ${ms} ms${why}`);
    }
    await sleep(o.everyMs ?? 250);
  }
}

export interface UntilOptions extends WaitOptions {
  /** The bound (default 20 s). */
  timeoutMs?: number;
  /** What is waited for, named by the timeout's message (default "the condition"). */
  what?: string;
}

/**
 * Polls `cond` until it returns a truthy value (returned) or `timeoutMs` elapse (throws "`what`:
 * not ready after … ms", with the last error or `detail()`); every `everyMs` (default 20 ms).
 */
export function until<T>(cond: () => T | Falsy | Promise<T | Falsy>, opts: UntilOptions = {}): Promise<T> {
  return waitFor(opts.what ?? 'the condition', opts.timeoutMs ?? 20_000, cond, { ...opts, everyMs: opts.everyMs ?? 20 });
}
