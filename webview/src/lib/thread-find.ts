/**
 * In-thread find (SPEC 6.4), pure: what text each entry of a thread shows (user
 * prompts without their context block; a run's answer or streamed text, the prompts that steered
 * it, and its tool calls — name, arguments as the card pretty-prints them, a command's terminal
 * output as plain text, the result, the changed files — in the order the run renders them; the
 * plan card's title, steps and step notes), the case-insensitive matches of a query over all of it
 * — including entries the virtualised list has not rendered — and next/previous with wrap-around.
 * The find bar (../components/FindBar.svelte) scrolls the list to a match's entry and highlights
 * it there.
 *
 * While a run streams the matches are recomputed as its text grows; `followMatch` keeps the
 * selection on the same occurrence (same entry key and occurrence number), so new matches never
 * move what the user is looking at.
 *
 * Entry texts are cached by entry key with a signature of what can change them (a streaming run's
 * chunk seq, its final message, its finished items), so searching a 10,000-entry thread again
 * costs a scan, not a re-derivation of every run's blocks.
 */
import { splitContext } from '../../../src/protocol/mentions';
import { styledSpans } from '../../../src/protocol/terminal';
import { runBlocks, type ToolView } from './blocks';
import type { RunView } from './run-views';
import type { Entry, ThreadState } from './thread-model';

/** Longest query searched (longer input is cut): a find query is a phrase, not a document. */
export const MAX_QUERY_CHARS = 200;
/** Most matches counted and navigated; the bar shows "1000+" beyond. */
export const MAX_MATCHES = 1000;
/** The key of the plan card's matches (it is not an entry of the list). */
export const PLAN_KEY = 'plan';

/** The list key of an entry (stable across renders and branch switches). */
export function entryKey(entry: Entry): string {
  return entry.kind === 'run' ? `run:${entry.runId}` : `msg:${entry.messageId}`;
}

/** A tool call's arguments as its card shows them (pretty-printed JSON, else as written). */
export function prettyArguments(args: string): string {
  if (args.trim().length === 0) return '';
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** The text of one tool card, in the card's order: name, arguments, terminal output, result, changed files. */
export function toolSearchText(tool: ToolView): string {
  const parts = [tool.name];
  const args = prettyArguments(tool.arguments);
  if (args) parts.push(args);
  if (tool.output && tool.output.length > 0) parts.push(tool.output.map((l) => (styledSpans(l)[0] ?? []).map((sp) => sp.text).join('')).join('\n'));
  if (tool.result !== null) parts.push(tool.result);
  parts.push(...tool.changedPaths);
  return parts.join('\n');
}

/** The text a run shows: its answer (or the streamed text), the prompts that steered it, and its tool calls. */
export function runSearchText(run: RunView): string {
  const parts: string[] = [];
  for (const b of runBlocks(run)) {
    if (b.kind === 'text') parts.push(b.text);
    else if (b.kind === 'steer') parts.push(b.prompt);
    else if (b.kind === 'tool') parts.push(toolSearchText(b.tool));
  }
  return parts.join('\n');
}

/** The text the plan card shows: title, then each step and its note. */
export function planSearchText(plan: NonNullable<ThreadState['plan']>): string {
  return [plan.title, ...plan.steps.flatMap((s) => (s.note ? [s.text, s.note] : [s.text]))].join('\n');
}

/** The text an entry shows, for search and for height estimates. */
export function entrySearchText(entry: Entry, runs: ThreadState['runs']): string {
  if (entry.kind === 'message') return entry.role === 'user' ? splitContext(entry.content).prompt : entry.content;
  const run = runs[entry.runId];
  return run ? runSearchText(run) : '';
}

/** What an entry's text depends on: its run's progress, and the message text itself (an edit in place changes it). */
function signature(entry: Entry, runs: ThreadState['runs']): { sig: string; body: string | null } {
  if (entry.kind === 'message') return { sig: 'm', body: entry.content };
  const run = runs[entry.runId];
  if (!run) return { sig: 'none', body: null };
  let finished = 0; // an item.completed (a tool's result) changes the text without adding an item
  for (const it of run.items) if (it.status !== 'started') finished++;
  return { sig: `${run.status}:${run.lastChunkSeq}:${run.final?.messageId ?? ''}:${run.items.length}:${finished}`, body: run.final?.content ?? null };
}

/** Lower-cased entry texts by key, re-derived only when an entry changed. */
export class EntryTextIndex {
  private readonly cache = new Map<string, { sig: string; body: string | null; lower: string }>();

  /** The lower-cased text of `entry`. */
  lowerText(entry: Entry, runs: ThreadState['runs']): string {
    const key = entryKey(entry);
    const { sig, body } = signature(entry, runs);
    const hit = this.cache.get(key);
    if (hit && hit.sig === sig && hit.body === body) return hit.lower; // strings compare by value (same string: by reference)
    const lower = entrySearchText(entry, runs).toLowerCase();
    this.cache.set(key, { sig, body, lower });
    return lower;
  }
}

export interface FindMatch {
  /** The entry's list key, or PLAN_KEY for the plan card. */
  key: string;
  /** The entry's index in `thread.entries` (-1 for the plan card). */
  index: number;
  /** Which occurrence of the query inside that entry's text this is (0-based). */
  occurrence: number;
}

export interface FindResult {
  matches: FindMatch[];
  /** More matches than MAX_MATCHES exist. */
  truncated: boolean;
}

/** The normalised query: trimmed of nothing (spaces may matter), cut to MAX_QUERY_CHARS, lower-cased. */
export function normaliseQuery(query: string): string {
  return query.slice(0, MAX_QUERY_CHARS).toLowerCase();
}

function occurrences(haystack: string, needle: string, key: string, index: number, out: FindMatch[]): boolean {
  let from = 0;
  let occurrence = 0;
  for (;;) {
    const at = haystack.indexOf(needle, from);
    if (at < 0) return true;
    if (out.length >= MAX_MATCHES) return false;
    out.push({ key, index, occurrence: occurrence++ });
    from = at + needle.length;
  }
}

/** All matches of `query` in the thread, in reading order: the entries top to bottom, then the plan. Empty query: none. */
export function findInThread(thread: ThreadState, query: string, index: EntryTextIndex = new EntryTextIndex()): FindResult {
  const needle = normaliseQuery(query);
  const matches: FindMatch[] = [];
  if (needle.length === 0) return { matches, truncated: false };
  for (let i = 0; i < thread.entries.length; i++) {
    const entry = thread.entries[i]!;
    if (!occurrences(index.lowerText(entry, thread.runs), needle, entryKey(entry), i, matches)) return { matches, truncated: true };
  }
  const plan = thread.plan;
  if (plan) {
    const text = planSearchText(plan).toLowerCase();
    if (!occurrences(text, needle, PLAN_KEY, -1, matches)) return { matches, truncated: true };
  }
  return { matches, truncated: false };
}

/** The next (dir 1) or previous (dir -1) match index, wrapping around; -1 when there are none. */
export function stepMatch(current: number, total: number, dir: 1 | -1): number {
  if (total <= 0) return -1;
  if (current < 0 || current >= total) return dir === 1 ? 0 : total - 1;
  return (current + dir + total) % total;
}

/**
 * The match to select after the query changed: the first one at or after the entry the previous
 * selection was in (so refining a query stays where the user is), else the first.
 */
export function reselect(matches: readonly FindMatch[], previous: FindMatch | null): number {
  if (matches.length === 0) return -1;
  if (!previous) return 0;
  const at = matches.findIndex((m) => m.index >= previous.index && (m.index !== previous.index || m.occurrence >= previous.occurrence));
  return at < 0 ? 0 : at;
}

/**
 * The selection after the matches were recomputed for the same query (text streamed in, a tool
 * finished, a step changed): the same occurrence of the same entry when it is still there — so the
 * current match stays put while new ones appear around it — else as after a query change.
 */
export function followMatch(matches: readonly FindMatch[], previous: FindMatch | null): number {
  if (previous) {
    const same = matches.findIndex((m) => m.key === previous.key && m.occurrence === previous.occurrence);
    if (same >= 0) return same;
    // Gone (fewer occurrences now): the next match in reading order, the plan (index -1) last.
    const pos = (m: FindMatch): number => (m.key === PLAN_KEY ? Number.MAX_SAFE_INTEGER : m.index);
    const at = matches.findIndex((m) => pos(m) > pos(previous) || (pos(m) === pos(previous) && m.occurrence >= previous.occurrence));
    return at >= 0 ? at : matches.length - 1;
  }
  return reselect(matches, previous);
}

/** "3/17", "0/0", "3/1000+". */
export function matchLabel(current: number, result: FindResult): string {
  const n = result.matches.length;
  return `${n === 0 ? 0 : current + 1}/${n}${result.truncated ? '+' : ''}`;
}

/** Ranges [start, end) of every case-insensitive occurrence of `query` in `text` (for highlighting rendered text). */
export function occurrenceRanges(text: string, query: string): [number, number][] {
  const needle = normaliseQuery(query);
  const out: [number, number][] = [];
  if (needle.length === 0) return out;
  const lower = text.toLowerCase();
  let from = 0;
  for (;;) {
    const at = lower.indexOf(needle, from);
    if (at < 0) return out;
    out.push([at, at + needle.length]);
    from = at + needle.length;
  }
}
