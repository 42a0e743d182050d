/**
 * Message-body search over the trigram index (./index-sync.ts): the user's text made a literal
 * FTS5 query, the candidates ranked, and each result given a snippet with highlight ranges and
 * the message to jump to.
 *
 * Query: folded and split on white space into terms. Every term is literal text — each one is
 * quoted for FTS5 (`"` doubled), so quotes, `*`, `-`, `^`, `:`, parentheses, NEAR, AND, OR, NOT
 * mean themselves and never throw. Terms of 3 characters or more (the trigram minimum) go to
 * MATCH, joined by AND; shorter terms then filter the candidates' text (case-insensitive). A
 * query with no term of 3 characters scans only the newest SHORT_QUERY_SCAN_DOCS documents with
 * LIKE (trigram cannot index it), newest first.
 *
 * Ranking: the newest CANDIDATE_LIMIT matches (FTS5 walks its rowids downwards and stops) are
 * scored by bm25 with the tool-output column weighted TOOL_OUTPUT_WEIGHT against message text
 * (SPEC 6.4's "tool output weighted lower"), then sorted; the score is mapped to 0..1 by
 * x/(1+x) of -bm25 so that it sits on one scale with title scores (./fuzzy-title.ts, ×1.4).
 * Only documents on their thread's active branch are searched.
 */
import type { SqlDatabase } from '../store/driver';
import { foldText } from './fuzzy-title';

/** The trigram tokenizer's shortest searchable term. */
export const TRIGRAM_MIN_CHARS = 3;
/** Most matches one query scores (the newest ones), bounding a very common term's cost. */
export const CANDIDATE_LIMIT = 500;
/** Documents a query without a 3-character term scans with LIKE (the newest ones). */
export const SHORT_QUERY_SCAN_DOCS = 20_000;
/** bm25 weight of tool output against message text (1.0). */
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

interface Candidate { rowid: number; rank: number }
interface DocRow { threadId: string; messageId: string | null; runId: string | null; kind: 'message' | 'tool'; body: string; tool: string }

/** Lower-cases char by char, keeping a char whose lower case is longer (offsets stay those of the original). */
function lowerSameLength(s: string): string {
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

/** An FTS5 MATCH expression in which every term is a literal string. */
export function ftsLiteral(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
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

function docRow(db: SqlDatabase, rowid: number): DocRow | undefined {
  return db.prepare(
    `SELECT d.thread_id AS threadId, d.message_id AS messageId, d.run_id AS runId, d.kind, f.body, f.tool
       FROM search_docs d JOIN search_fts f ON f.rowid = d.rowid WHERE d.rowid = ?`,
  ).get(rowid) as DocRow | undefined;
}

function jumpTarget(db: SqlDatabase, runId: string | null): string | null {
  if (!runId) return null;
  const answer = db.prepare("SELECT id FROM messages WHERE run_id = ? AND role = 'assistant' ORDER BY created_at, rowid LIMIT 1").get(runId) as { id: string } | undefined;
  if (answer) return answer.id;
  const prompt = db.prepare('SELECT user_message_id AS id FROM runs WHERE id = ?').get(runId) as { id: string | null } | undefined;
  return prompt?.id ?? null;
}

function candidates(db: SqlDatabase, long: readonly string[]): Candidate[] {
  if (long.length > 0) {
    return db.prepare(
      `SELECT f.rowid AS rowid, bm25(search_fts, 1.0, ${TOOL_OUTPUT_WEIGHT}) AS rank
         FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid
        WHERE search_fts MATCH ? AND d.active = 1 ORDER BY f.rowid DESC LIMIT ${CANDIDATE_LIMIT}`,
    ).all(ftsLiteral(long)) as Candidate[];
  }
  return [];
}

function shortScan(db: SqlDatabase, short: readonly string[], limit: number): Candidate[] {
  const top = (db.prepare('SELECT COALESCE(MAX(rowid), 0) AS m FROM search_docs').get() as { m: number }).m;
  const where = short.map(() => "(f.body LIKE ? ESCAPE '\\' OR f.tool LIKE ? ESCAPE '\\')").join(' AND ');
  const rows = db.prepare(
    `SELECT f.rowid AS rowid FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid
      WHERE f.rowid > ? AND d.active = 1 AND ${where} ORDER BY f.rowid DESC LIMIT ?`,
  ).all(top - SHORT_QUERY_SCAN_DOCS, ...short.flatMap((t) => [likePattern(t), likePattern(t)]), limit) as { rowid: number }[];
  // No relevance without an index: newest first, scored just under any indexed match of equal standing.
  return rows.map((r, i) => ({ rowid: r.rowid, rank: -0.5 / (1 + i) }));
}

/** The best `limit` message / tool-output matches for `query`, best first (see the file header). */
export function searchBodies(db: SqlDatabase, query: string, limit: number): BodyHit[] {
  const { long, short } = queryTerms(query);
  if (long.length === 0 && short.length === 0) return [];
  const terms = [...long, ...short];
  const found = long.length > 0 ? candidates(db, long) : shortScan(db, short, limit);
  found.sort((a, b) => a.rank - b.rank || b.rowid - a.rowid);
  const hits: BodyHit[] = [];
  for (const c of found) {
    if (hits.length >= limit) break;
    const d = docRow(db, c.rowid);
    if (!d) continue;
    const text = d.kind === 'tool' ? d.tool : d.body;
    const lower = lowerSameLength(text);
    if (long.length > 0 && short.some((t) => !lower.includes(t))) continue;
    const x = -c.rank;
    const { snippet, ranges } = makeSnippet(text, terms);
    hits.push({
      threadId: d.threadId,
      messageId: d.kind === 'message' ? d.messageId : jumpTarget(db, d.runId),
      itemId: d.kind === 'tool' ? itemIdOf(db, c.rowid) : null,
      source: d.kind,
      snippet,
      ranges,
      score: x / (1 + x),
    });
  }
  return hits;
}

function itemIdOf(db: SqlDatabase, rowid: number): string | null {
  const r = db.prepare('SELECT doc_key AS k FROM search_docs WHERE rowid = ?').get(rowid) as { k: string } | undefined;
  return r && r.k.startsWith('i:') ? r.k.slice(2) : null;
}
