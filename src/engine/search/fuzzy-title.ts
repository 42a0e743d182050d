/**
 * Thread-title search (SPEC 6.4): the weighted fuzzy score of one title for one query, and the
 * ranking of many titles. Pure: no database, no clock (the caller passes `now`).
 *
 * Folding: both strings are NFKC-normalised, lower-cased (locale-independent `toLowerCase`),
 * trimmed, and runs of white space become one space; `q` and `t` below are the folded lengths.
 * Words are the runs of letters and digits (`/[\p{L}\p{N}]+/u`), so "fix: login-bug" has the
 * words fix, login, bug. Diacritics are kept (é ≠ e).
 *
 * Tiers (each one's score when its condition holds; a title gets the MAX over the tiers that hold,
 * so matching more never scores lower than matching less):
 *   exact           folded query = folded title                                  1.0
 *   substring       folded query occurs in the folded title                      0.8 + 0.2·q/t
 *   all words       every query word equals a title word                         0.9
 *   partial words   some query words equal title words                           0.7·matched/total (total: query words)
 *   prefix          every query word starts some title word                      0.6
 *   in-order chars  the query's characters (spaces dropped) found left to right   0.5·matched/q + 0.2·maxRun/q
 *                   in the title, greedily: each character is taken at its next
 *                   occurrence after the previous match, a character not found
 *                   further on is skipped; maxRun is the longest run of matches
 *                   adjacent both in the query and in the title; q here is the
 *                   query's length without spaces.
 * A title whose best tier scores under MIN_TITLE_SCORE (0.3) does not match. A thread updated in
 * the last RECENT_MS (24 h) then gets RECENT_BONUS (+0.05), and the sum is multiplied by
 * TITLE_WEIGHT (×1.4), the weight of a title match against a message match (./search.ts merges
 * both on one scale). Ties: higher score, then the more recently updated thread, then the id.
 */

/** Below this best-tier score a title does not match (SPEC 6.4: "min 0.3"). */
export const MIN_TITLE_SCORE = 0.3;
/** Added for a thread updated within RECENT_MS of now. */
export const RECENT_BONUS = 0.05;
/** What "recent" means for RECENT_BONUS: the last 24 hours. */
export const RECENT_MS = 24 * 60 * 60 * 1000;
/** A title match's weight against a message-body match (SPEC 6.4: "title ×1.4"). */
export const TITLE_WEIGHT = 1.4;

export type TitleTier = 'exact' | 'substring' | 'allWords' | 'partialWords' | 'prefix' | 'inOrder';

export interface TierScore {
  tier: TitleTier;
  /** The best tier's score, before the recency bonus and the title weight. */
  base: number;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Folded titles kept between searches (a pure function's memo: the same string folds the same way). */
const FOLD_CACHE_MAX = 50_000;
const foldCache = new Map<string, string>();
/** Anything but printable ASCII and common white space (which NFKC leaves as they are). */
const NON_ASCII = /[^\t\n\r -~]/;

/** The folding every comparison uses (see the file header). */
export function foldText(s: string): string {
  const cached = foldCache.get(s);
  if (cached !== undefined) return cached;
  const folded = (NON_ASCII.test(s) ? s.normalize('NFKC') : s).toLowerCase().replace(/\s+/g, ' ').trim();
  if (foldCache.size >= FOLD_CACHE_MAX) foldCache.clear();
  foldCache.set(s, folded);
  return folded;
}

const wordCache = new Map<string, string[]>();

/** The words of a folded text (see the file header). */
export function words(folded: string): string[] {
  const cached = wordCache.get(folded);
  if (cached) return cached;
  const ws = folded.match(WORD) ?? [];
  if (wordCache.size >= FOLD_CACHE_MAX) wordCache.clear();
  wordCache.set(folded, ws);
  return ws;
}

/** The in-order tier's parts for a folded query and title (see the file header). */
export function inOrderMatch(query: string, title: string): { matched: number; maxRun: number; q: number } {
  const q = query.replace(/ /g, '');
  let pos = 0;
  let matched = 0;
  let run = 0;
  let maxRun = 0;
  let lastAt = -2;
  let lastQi = -2;
  for (let qi = 0; qi < q.length; qi++) {
    const at = title.indexOf(q[qi]!, pos);
    if (at < 0) continue;
    matched++;
    run = at === lastAt + 1 && qi === lastQi + 1 ? run + 1 : 1;
    if (run > maxRun) maxRun = run;
    lastAt = at;
    lastQi = qi;
    pos = at + 1;
  }
  return { matched, maxRun, q: q.length };
}

/** Every tier that holds for a folded query and title, with its score (the file header's table). */
export function tierScores(query: string, title: string): TierScore[] {
  const out: TierScore[] = [];
  if (query.length === 0 || title.length === 0) return out;
  if (query === title) out.push({ tier: 'exact', base: 1.0 });
  if (title.includes(query)) out.push({ tier: 'substring', base: 0.8 + (0.2 * query.length) / title.length });
  const qWords = words(query);
  const tWords = words(title);
  if (qWords.length > 0 && tWords.length > 0) {
    const matched = qWords.filter((w) => tWords.includes(w)).length;
    if (matched === qWords.length) out.push({ tier: 'allWords', base: 0.9 });
    else if (matched > 0) out.push({ tier: 'partialWords', base: (0.7 * matched) / qWords.length });
    if (qWords.every((w) => tWords.some((tw) => tw.startsWith(w)))) out.push({ tier: 'prefix', base: 0.6 });
  }
  const io = inOrderMatch(query, title);
  if (io.q > 0 && io.matched > 0) out.push({ tier: 'inOrder', base: (0.5 * io.matched) / io.q + (0.2 * io.maxRun) / io.q });
  return out;
}

/** The best tier for `query` against `title` (raw strings, folded here), or null under MIN_TITLE_SCORE. */
export function bestTier(query: string, title: string): TierScore | null {
  let best: TierScore | null = null;
  for (const s of tierScores(foldText(query), foldText(title))) if (!best || s.base > best.base) best = s;
  return best && best.base >= MIN_TITLE_SCORE ? best : null;
}

/** The final title score: (best tier + recency bonus) × TITLE_WEIGHT, or null when the title does not match. */
export function titleScore(query: string, title: string, updatedAt: number, now: number): number | null {
  const best = bestTier(query, title);
  if (!best) return null;
  const recent = now - updatedAt <= RECENT_MS && updatedAt <= now ? RECENT_BONUS : 0;
  return (best.base + recent) * TITLE_WEIGHT;
}

export interface TitleCandidate {
  id: string;
  title: string;
  updatedAt: number;
  /** foldText(title) and its words, when the caller keeps them (a cache of many titles). */
  folded?: string;
  words?: readonly string[];
}

export interface TitleMatch<T extends TitleCandidate> {
  thread: T;
  score: number;
  tier: TitleTier;
}

/** A query folded once for many titles. */
export interface PreparedQuery { q: string; words: string[]; compact: string }

export function prepareQuery(query: string): PreparedQuery {
  const q = foldText(query);
  return { q, words: words(q), compact: q.replace(/ /g, '') };
}

const TIERS: readonly TitleTier[] = ['exact', 'substring', 'allWords', 'partialWords', 'prefix', 'inOrder'];
/** bestBase's tier, as an index into TIERS (a scratch slot: the hot loop allocates nothing per title). */
let bestTierIndex = 0;

/**
 * The best tier's score for a prepared query and a folded title (0 when no tier holds), its tier
 * left in `bestTierIndex`: the same result as the maximum of `tierScores` (a property test holds
 * them equal; ties keep the table's order), computed without allocating — the hot loop of a
 * search over thousands of titles.
 */
function bestBase(pq: PreparedQuery, title: string, titleWords?: readonly string[]): number {
  const { q } = pq;
  if (q.length === 0 || title.length === 0) return 0;
  bestTierIndex = 0;
  if (q === title) return 1.0;
  let best = 0;
  if (title.includes(q)) {
    best = 0.8 + (0.2 * q.length) / title.length;
    bestTierIndex = 1;
  }
  const qw = pq.words;
  if (qw.length > 0 && best < 0.9) {
    const tWords = titleWords ?? words(title);
    if (tWords.length > 0) {
      let matched = 0;
      let prefixed = 0;
      for (let i = 0; i < qw.length; i++) {
        const w = qw[i]!;
        let equal = false;
        let starts = false;
        for (let j = 0; j < tWords.length && !equal; j++) {
          const tw = tWords[j]!;
          if (tw.startsWith(w)) {
            starts = true;
            if (tw.length === w.length) equal = true;
          }
        }
        if (equal) matched++;
        if (starts) prefixed++;
      }
      if (matched === qw.length) {
        if (0.9 > best) { best = 0.9; bestTierIndex = 2; }
      } else if (matched > 0) {
        const b = (0.7 * matched) / qw.length;
        if (b > best) { best = b; bestTierIndex = 3; }
      }
      if (prefixed === qw.length && 0.6 > best) { best = 0.6; bestTierIndex = 4; }
    }
  }
  const cq = pq.compact;
  if (cq.length > 0 && best < 0.7) {
    // in-order: at most 0.7, so skipped when a tier already scores that
    let pos = 0, matched = 0, run = 0, maxRun = 0, lastAt = -2, lastQi = -2;
    const floor = Math.max(MIN_TITLE_SCORE, best);
    for (let qi = 0; qi < cq.length; qi++) {
      // Stop when even matching every remaining character could not beat what is already known
      // (the title would be rejected, or another tier wins): the result is unchanged.
      const rest = cq.length - qi;
      if (pos >= title.length || (0.5 * (matched + rest) + 0.2 * Math.max(maxRun, run + rest)) / cq.length < floor) break;
      const at = title.indexOf(cq[qi]!, pos);
      if (at < 0) continue;
      matched++;
      run = at === lastAt + 1 && qi === lastQi + 1 ? run + 1 : 1;
      if (run > maxRun) maxRun = run;
      lastAt = at;
      lastQi = qi;
      pos = at + 1;
    }
    const b = matched > 0 ? (0.5 * matched) / cq.length + (0.2 * maxRun) / cq.length : 0;
    if (b > best) { best = b; bestTierIndex = 5; }
  }
  return best;
}

/** The best tier for a prepared query and a folded title, or null under MIN_TITLE_SCORE (bestBase, as an object). */
export function bestTierPrepared(pq: PreparedQuery, title: string): TierScore | null {
  const base = bestBase(pq, title);
  return base >= MIN_TITLE_SCORE ? { tier: TIERS[bestTierIndex]!, base } : null;
}

function byRank<T extends TitleCandidate>(a: TitleMatch<T>, b: TitleMatch<T>): number {
  return b.score - a.score || b.thread.updatedAt - a.thread.updatedAt || (a.thread.id < b.thread.id ? -1 : a.thread.id > b.thread.id ? 1 : 0);
}

/** The candidates that match, best first (ties: newer, then id), at most `limit` (kept as a bounded best-first list while scanning). */
export function rankTitles<T extends TitleCandidate>(query: string, candidates: Iterable<T>, now: number, limit: number): TitleMatch<T>[] {
  const pq = prepareQuery(query);
  const top: TitleMatch<T>[] = [];
  if (pq.q.length === 0 || limit <= 0) return top;
  for (const c of candidates) {
    const base = bestBase(pq, c.folded ?? foldText(c.title), c.words);
    if (base < MIN_TITLE_SCORE) continue;
    const recent = now - c.updatedAt <= RECENT_MS && c.updatedAt <= now ? RECENT_BONUS : 0;
    const score = (base + recent) * TITLE_WEIGHT;
    if (top.length === limit) {
      const worst = top[limit - 1]!;
      if (score < worst.score || (score === worst.score && byRank(worst, { thread: c, score, tier: 'exact' }) <= 0)) continue;
    }
    const m: TitleMatch<T> = { thread: c, score, tier: TIERS[bestTierIndex]! };
    let i = top.length;
    while (i > 0 && byRank(top[i - 1]!, m) > 0) i--;
    top.splice(i, 0, m);
    if (top.length > limit) top.pop();
  }
  return top;
}
