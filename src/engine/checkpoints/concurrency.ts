/**
 * Bounded concurrency and late inputs for checkpoint work (SPEC §4.2): how many nested
 * repositories are handled at once, `mapLimit`/`settleLimit`, and `deferred` (the input of a git
 * process started before that input is known). Imports nothing from `capture/`.
 */

/** Nested repositories snapshotted, captured, committed or restored at once. */
export const NESTED_CONCURRENCY = 4;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Like `mapLimit`, but waits for every item and then throws the first failure — so a caller can
 * clean up what the successful ones created (`onFulfilled` receives each success first).
 */
export async function settleLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>, onFulfilled: (r: R) => void = () => undefined): Promise<R[]> {
  const settled = await mapLimit(items, limit, (item) => fn(item).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error })));
  for (const r of settled) if (r.ok) onFulfilled(r.value);
  const failed = settled.find((r) => !r.ok);
  if (failed && !failed.ok) throw failed.error;
  return settled.map((r) => (r as { value: R }).value);
}

/** A promise with its resolve function exposed (inputs of processes started before they are known). */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
