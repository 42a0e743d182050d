/**
 * The lock of `exclusive` commands (../../protocol/commands/define.ts): per engine (every session
 * of it shares one table), commands with the same key run one after another in arrival order —
 * each starts when the one before it answered (or failed). Within this process only; what must
 * hold across processes (a thread's one run, the workspace's git) stays in the store's
 * transactions and the workspace leases.
 */
import type { EngineServices } from '../services';

const tables = new WeakMap<EngineServices, Map<string, Promise<unknown>>>();

/** Runs `fn` once every earlier command under `key` settled; the key is forgotten when its last command settles. */
export function runExclusive<T>(services: EngineServices, key: string, fn: () => T | Promise<T>): Promise<T> {
  let table = tables.get(services);
  if (!table) tables.set(services, (table = new Map()));
  const before = table.get(key) ?? Promise.resolve();
  const mine = before.then(fn, fn) as Promise<T>;
  const tail = mine.then(() => undefined, () => undefined);
  table.set(key, tail);
  void tail.then(() => {
    if (table.get(key) === tail) table.delete(key);
  });
  return mine;
}
