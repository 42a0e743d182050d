/**
 * The search of SPEC 6.4 as one call: thread titles by the fuzzy score (./fuzzy-title.ts) and
 * message bodies / tool output by the trigram index (./body-search.ts), each list best first,
 * both scores on one scale (titles × TITLE_WEIGHT) so a client may merge them. Titles of every
 * live thread (subagent threads included) are scored in memory: one query reads id, title and
 * update time only.
 */
import type { SqlDatabase } from '../store/driver';
import { rankTitles, type TitleTier } from './fuzzy-title';
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

export function searchThreads(db: SqlDatabase, query: string, opts: { limit?: number; now: number }): SearchResults {
  const limit = opts.limit ?? DEFAULT_SEARCH_LIMIT;
  const threads = db.prepare('SELECT id, title, updated_at AS updatedAt FROM threads WHERE deleted = 0').all() as { id: string; title: string; updatedAt: number }[];
  const titles = rankTitles(query, threads, opts.now, limit).map((m) => ({
    threadId: m.thread.id, title: m.thread.title, updatedAt: m.thread.updatedAt, score: m.score, tier: m.tier,
  }));
  const titleOf = new Map(threads.map((t) => [t.id, t.title]));
  const messages = searchBodies(db, query, limit)
    .filter((h) => titleOf.has(h.threadId))
    .map((h) => ({ ...h, threadTitle: titleOf.get(h.threadId)! }));
  return { titles, messages };
}
