/**
 * Fuzzy ranking of @-mention candidates (paths, thread titles, the special mentions): the query's
 * characters must appear in order (case-insensitive); a match scores higher when it is a
 * substring, lies in the last path segment (the file name), starts segments (`/`, `-`, `_`, `.`,
 * a camelCase hump) or runs consecutively, and when the candidate is short. Greedy, linear in the
 * candidate's length, so a workspace of tens of thousands of files ranks in milliseconds.
 */

/** Score of a query that is a plain substring of the file name (before position and length adjustments). */
const BASENAME_SUBSTRING_BONUS = 100;
/** … of the whole path. */
const PATH_SUBSTRING_BONUS = 40;
/** A file name that starts with the query. */
const PREFIX_BONUS = 30;
const CONSECUTIVE_BONUS = 5;
const SEGMENT_START_BONUS = 8;
const IN_BASENAME_BONUS = 3;

function isSegmentStart(s: string, i: number): boolean {
  if (i === 0) return true;
  const prev = s[i - 1]!;
  if ('/\\-_. '.includes(prev)) return true;
  const c = s[i]!;
  return prev === prev.toLowerCase() && c !== c.toLowerCase(); // camelCase hump
}

/** The candidate's score for the query (higher is better), or null when it does not match. An empty query matches everything with 0. */
export function fuzzyScore(query: string, candidate: string): number | null {
  const q = query.toLowerCase();
  if (q.length === 0) return 0;
  const c = candidate.toLowerCase();
  const base = c.lastIndexOf('/') + 1;
  let score = 0;
  const inBase = c.indexOf(q, base);
  if (inBase >= 0) score += BASENAME_SUBSTRING_BONUS - (inBase - base) + (inBase === base ? PREFIX_BONUS : 0);
  else if (c.includes(q)) score += PATH_SUBSTRING_BONUS;
  // In-order match, greedy, preferring segment starts: every query character must be found.
  let qi = 0;
  let last = -2;
  for (let i = 0; i < c.length && qi < q.length; i++) {
    if (c[i] !== q[qi]) continue;
    score += 1;
    if (i === last + 1) score += CONSECUTIVE_BONUS;
    if (isSegmentStart(candidate, i)) score += SEGMENT_START_BONUS;
    if (i >= base) score += IN_BASENAME_BONUS;
    last = i;
    qi++;
  }
  if (qi < q.length) return null;
  return score - candidate.length / 100;
}

/** The candidates that match, best first (ties: shorter, then alphabetical), at most `limit`. */
export function rankFuzzy<T>(query: string, items: readonly T[], text: (item: T) => string, limit: number): T[] {
  const scored: Array<{ item: T; score: number; key: string }> = [];
  for (const item of items) {
    const key = text(item);
    const score = fuzzyScore(query, key);
    if (score !== null) scored.push({ item, score, key });
  }
  scored.sort((a, b) => b.score - a.score || a.key.length - b.key.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.item);
}
