/**
 * The search of SPEC 6.4 as one call: thread titles by the fuzzy score (./fuzzy-title.ts) and
 * message bodies / tool output by the trigram index (./body-search.ts), each list best first,
 * both scores on one scale (titles × TITLE_WEIGHT) so a client may merge them. Titles of every
 * live thread (subagent threads included) are scored in memory from a per-connection cache of
 * (id, title, update time) that is read again when the database changed — `PRAGMA data_version`
 * moves when another connection commits, `total_changes()` when this one writes — so a search
 * after no change reads no rows for titles, and a change anywhere is seen by the next search.
 */
import type { SqlDatabase } from '../store/driver';
import { foldText, rankTitles, words, type TitleCandidate, type TitleTier } from './fuzzy-title';
import { searchBodies, type BodyHit } from './body-search';

/** Results per list when the caller does not say. */
export const DEFAULT_SEARCH_LIMIT = 20;

export interface TitleHit {
  threadId: string;
  title: string;
  updatedAt: number;
  score: number;
  tier: TitleTier;
}

export interface MessageHit extends BodyHit {
  threadTitle: string;
}

export interface SearchResults {
  titles: TitleHit[];
  messages: MessageHit[];
}

interface ThreadTitles { version: string; threads: TitleCandidate[]; titleOf: Map<string, string> }

const titleCache = new WeakMap<SqlDatabase, ThreadTitles>();

/** The live threads' titles, from the cache while the database has not changed. */
function threadTitles(db: SqlDatabase): ThreadTitles {
  const changes = (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
  const version = `${String(db.pragma('data_version'))}:${changes}`;
  const cached = titleCache.get(db);
  if (cached && cached.version === version) return cached;
  const threads = (db.prepare('SELECT id, title, updated_at AS updatedAt FROM threads WHERE deleted = 0').all() as TitleCandidate[]).map((t) => {
    const folded = foldText(t.title);
    return { ...t, folded, words: words(folded) };
  });
  const fresh = { version, threads, titleOf: new Map(threads.map((t) => [t.id, t.title])) };
  titleCache.set(db, fresh);
  return fresh;
}

/** `keep`: only threads it keeps are searched (a workspace-bound session's: its workspace's). */
export function searchThreads(db: SqlDatabase, query: string, opts: { limit?: number; now: number; keep?: (threadId: string) => boolean }): SearchResults {
  const limit = opts.limit ?? DEFAULT_SEARCH_LIMIT;
  const { threads: all, titleOf } = threadTitles(db);
  const keep = opts.keep;
  const threads = keep ? all.filter((t) => keep(t.id)) : all;
  const titles = rankTitles(query, threads, opts.now, limit).map((m) => ({
    threadId: m.thread.id, title: m.thread.title, updatedAt: m.thread.updatedAt, score: m.score, tier: m.tier,
  }));
  const messages = searchBodies(db, query, limit, keep)
    .filter((h) => titleOf.has(h.threadId))
    .map((h) => ({ ...h, threadTitle: titleOf.get(h.threadId)! }));
  return { titles, messages };
}
