/**
 * A view of a database whose `prepare` keeps each statement by its SQL, for the projections
 * (./projections.ts), which prepare the same few statements for every event appended: preparing
 * costs more than running them. Only for callers that run statements to completion (`run`, `get`,
 * `all`) one at a time, never holding an `iterate()` open across another use of the same SQL.
 */
import type { SqlDatabase, SqlStatement } from './driver';

/** Most distinct statements kept per database (the projections use a few dozen). */
const MAX_CACHED_STATEMENTS = 256;

export function cachingStatements(db: SqlDatabase): SqlDatabase {
  const cache = new Map<string, SqlStatement>();
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') {
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return (sql: string): SqlStatement => {
        let s = cache.get(sql);
        if (!s) {
          if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
          s = target.prepare(sql);
          cache.set(sql, s);
        }
        return s;
      };
    },
  });
}
