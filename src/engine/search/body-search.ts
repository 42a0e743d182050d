/**
 * Message-body search over the trigram index (./index-sync.ts): the user's text made literal
 * patterns, the candidates ranked, and each result given a snippet with highlight ranges and the
 * message to jump to.
 *
 * Query: folded and split on white space into terms; every term is literal text. Each term of 3
 * characters or more (the trigram minimum) is looked up by its covering trigrams (MATCH on quoted
 * single trigrams: `indexed` below) and checked with `text LIKE '%term%'`, all joined by AND, so
 * quotes, `*`, `-`, `^`, `:`, parentheses, NEAR, AND, OR, NOT are plain characters (no FTS5
 * operator is ever built from input). LIKE's own wildcards `%` and `_` split a term into its literal pieces for the index;
 * every candidate is then checked in JavaScript to contain every whole term (case-insensitive),
 * so they match only themselves. Shorter terms filter the candidates the same way. A query with
 * no 3-character piece scans only the newest SHORT_QUERY_SCAN_DOCS documents (LIKE without the
 * index), newest first.
 *
 * Ranking: the newest CANDIDATE_LIMIT matches (FTS5 walks its rowids downwards and stops) are
 * scored by BM25 (k1 = 1.2, b = 0.75; term frequency per term, length against the candidates'
 * mean; IDF is left out: every candidate of an AND query holds every term) × TOOL_OUTPUT_WEIGHT
 * for tool output (SPEC 6.4's "weighted lower"), then sorted (ties: newer first); the score is
 * mapped to 0..1 by s/(1+s) so that it sits on one scale with title scores (./fuzzy-title.ts,
 * ×1.4). Only documents on their thread's active branch are searched.
 */
import type { SqlDatabase } from '../store/driver';
import { foldText } from './fuzzy-title';

/** The trigram tokenizer's shortest searchable term. */
export const TRIGRAM_MIN_CHARS = 3;
/** Most matches one query scores (the newest ones), bounding a very common term's cost. */
export const CANDIDATE_LIMIT = 200;
/** BM25's term-frequency saturation. */
const BM25_K1 = 1.2;
/** BM25's length normalisation. */
const BM25_B = 0.75;
/** Documents a query without a 3-character term scans with LIKE (the newest ones). */
export const SHORT_QUERY_SCAN_DOCS = 20_000;
/** Score weight of tool output against message text (1.0). */
export const TOOL_OUTPUT_WEIGHT = 0.4;
/** Characters of context a snippet shows before the first match. */
export const SNIPPET_LEAD_CHARS = 40;
/** A snippet's length in characters (before the ellipses). */
export const SNIPPET_CHARS = 160;

export interface HighlightRange { start: number; end: number }

export interface BodyHit {
  threadId: string;
  /** The message to jump to: the message itself, or for tool output the answer of its run (its prompt before the answer exists). */
  messageId: string | null;
  /** The tool call whose output matched; null for message text. */
  itemId: string | null;
  source: 'message' | 'tool';
  snippet: string;
  /** Matched spans in `snippet` (UTF-16 offsets, end exclusive), in order, not overlapping. */
  ranges: HighlightRange[];
  /** 0..1, higher is better. */
  score: number;
}

interface Candidate { rowid: number; text: string; kind: 'message' | 'tool'; key: string; threadId: string; messageId: string | null; runId: string | null }

/** Lower-cases keeping offsets: char by char (a char whose lower case is longer stays as it is) when lower-casing changed the length. */
function lowerSameLength(s: string): string {
  const fast = s.toLowerCase();
  if (fast.length === s.length) return fast;
  let out = '';
  for (const ch of s) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

/** The query's distinct terms (folded), split by the trigram minimum. */
export function queryTerms(query: string): { long: string[]; short: string[] } {
  const terms = [...new Set(foldText(query).split(' ').filter((t) => t.length > 0))].map(lowerSameLength);
  return {
    long: terms.filter((t) => [...t].length >= TRIGRAM_MIN_CHARS),
    short: terms.filter((t) => [...t].length < TRIGRAM_MIN_CHARS),
  };
}

/** The pieces of the terms the trigram index can answer: each term split at LIKE's wildcards, pieces of 3+ characters. */
export function indexPieces(terms: readonly string[]): string[] {
  return [...new Set(terms.flatMap((t) => t.split(/[%_]/)).filter((p) => [...p].length >= TRIGRAM_MIN_CHARS))];
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function countOf(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** Every occurrence of every term in `text`, merged into sorted, non-overlapping ranges. */
export function matchRanges(text: string, terms: readonly string[]): HighlightRange[] {
  const lower = lowerSameLength(text);
  const found: HighlightRange[] = [];
  for (const t of terms) {
    if (t.length === 0) continue;
    for (let at = lower.indexOf(t); at >= 0; at = lower.indexOf(t, at + t.length)) found.push({ start: at, end: at + t.length });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: HighlightRange[] = [];
  for (const r of found) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  return merged;
}

/** A window of `text` around its first match, white space shown as spaces, with the ranges inside it. */
export function makeSnippet(text: string, terms: readonly string[]): { snippet: string; ranges: HighlightRange[] } {
  const all = matchRanges(text, terms);
  const first = all[0]?.start ?? 0;
  let start = Math.max(0, first - SNIPPET_LEAD_CHARS);
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space >= 0 && space < first) start = space + 1;
  }
  const end = Math.min(text.length, start + SNIPPET_CHARS);
  const lead = start > 0 ? '…' : '';
  const snippet = lead + text.slice(start, end).replace(/\s/g, ' ') + (end < text.length ? '…' : '');
  const ranges = all
    .filter((r) => r.start < end && r.end > start)
    .map((r) => ({ start: Math.max(r.start, start) - start + lead.length, end: Math.min(r.end, end) - start + lead.length }));
  return { snippet, ranges };
}

function jumpTarget(db: SqlDatabase, runId: string | null): string | null {
  if (!runId) return null;
  const answer = db.prepare("SELECT id FROM messages WHERE run_id = ? AND role = 'assistant' ORDER BY created_at, rowid LIMIT 1").get(runId) as { id: string } | undefined;
  if (answer) return answer.id;
  const prompt = db.prepare('SELECT user_message_id AS id FROM runs WHERE id = ?').get(runId) as { id: string | null } | undefined;
  return prompt?.id ?? null;
}

const CANDIDATE_COLUMNS = 'f.rowid AS rowid, f.text AS text, d.kind AS kind, d.doc_key AS key, d.thread_id AS threadId, d.message_id AS messageId, d.run_id AS runId';

/**
 * The trigrams that cover a piece without overlap (positions 0, 3, 6, … and the last three
 * characters), by code point: enough for the index to narrow to rows holding the piece's
 * letters, a third of the doclists that LIKE's every-trigram lookup intersects.
 */
export function coverTrigrams(piece: string): string[] {
  const cps = Array.from(piece);
  const out: string[] = [];
  for (let i = 0; i + TRIGRAM_MIN_CHARS <= cps.length; i += TRIGRAM_MIN_CHARS) out.push(cps.slice(i, i + TRIGRAM_MIN_CHARS).join(''));
  if (cps.length % TRIGRAM_MIN_CHARS !== 0) out.push(cps.slice(-TRIGRAM_MIN_CHARS).join(''));
  return [...new Set(out)];
}

/**
 * Candidates from the index: MATCH on the pieces' covering trigrams, each a quoted single-token
 * string (the only FTS5 syntax built here, from trigrams of the input with `"` doubled), then
 * `+text LIKE` per ASCII piece as a row filter (the unary + keeps it out of the index lookup) so the
 * LIMIT counts real matches. SQLite's LIKE folds ASCII case only, so a piece with other letters
 * is left to the JavaScript check (the trigram tokenizer itself folds Unicode case).
 */
function indexed(db: SqlDatabase, pieces: readonly string[]): Candidate[] {
  const match = [...new Set(pieces.flatMap(coverTrigrams))].map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
  const likes = pieces.filter((p) => ASCII_ONLY.test(p));
  return db.prepare(
    `SELECT ${CANDIDATE_COLUMNS} FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid
      WHERE search_fts MATCH ? ${likes.map(() => 'AND +f.text LIKE ? ').join('')}AND d.active = 1 ORDER BY f.rowid DESC LIMIT ${CANDIDATE_LIMIT}`,
  ).all(match, ...likes.map((p) => `%${p}%`)) as Candidate[];
}

const ASCII_ONLY = /^[\t\n\r -~]*$/;

function shortScan(db: SqlDatabase, terms: readonly string[]): Candidate[] {
  const top = (db.prepare('SELECT COALESCE(MAX(rowid), 0) AS m FROM search_docs').get() as { m: number }).m;
  return db.prepare(
    `SELECT ${CANDIDATE_COLUMNS} FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid
      WHERE f.rowid > ? AND d.active = 1 AND ${terms.map(() => "f.text LIKE ? ESCAPE '\\'").join(' AND ')} ORDER BY f.rowid DESC LIMIT ${CANDIDATE_LIMIT}`,
  ).all(top - SHORT_QUERY_SCAN_DOCS, ...terms.map(likePattern)) as Candidate[];
}

/** BM25 of each candidate that holds every term (the others are dropped: a LIKE wildcard matched something else). */
function score(cands: readonly Candidate[], terms: readonly string[]): { c: Candidate; lower: string; score: number }[] {
  const held = cands.map((c) => ({ c, lower: lowerSameLength(c.text) })).filter((x) => terms.every((t) => x.lower.includes(t)));
  const avg = held.reduce((n, x) => n + x.lower.length, 0) / Math.max(1, held.length);
  return held.map((x) => {
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * x.lower.length) / Math.max(1, avg));
    let sum = 0;
    for (const t of terms) {
      const tf = countOf(x.lower, t);
      sum += (tf * (BM25_K1 + 1)) / (tf + norm);
    }
    return { ...x, score: sum * (x.c.kind === 'tool' ? TOOL_OUTPUT_WEIGHT : 1) };
  });
}

/** The best `limit` message / tool-output matches for `query`, best first (see the file header); with `keep`, of the threads it keeps only. */
export function searchBodies(db: SqlDatabase, query: string, limit: number, keep?: (threadId: string) => boolean): BodyHit[] {
  const { long, short } = queryTerms(query);
  const terms = [...long, ...short];
  if (terms.length === 0) return [];
  const pieces = indexPieces(long);
  const found = pieces.length > 0 ? indexed(db, pieces) : shortScan(db, terms);
  const ranked = score(keep ? found.filter((c) => keep(c.threadId)) : found, terms);
  ranked.sort((a, b) => b.score - a.score || b.c.rowid - a.c.rowid);
  return ranked.slice(0, limit).map(({ c, score: s }) => {
    const { snippet, ranges } = makeSnippet(c.text, terms);
    return {
      threadId: c.threadId,
      messageId: c.kind === 'message' ? c.messageId : jumpTarget(db, c.runId),
      itemId: c.kind === 'tool' && c.key.startsWith('i:') ? c.key.slice(2) : null,
      source: c.kind,
      snippet,
      ranges,
      score: s / (1 + s),
    };
  });
}
