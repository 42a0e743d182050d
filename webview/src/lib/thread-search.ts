/**
 * The webview's side of search (SPEC 6.4): `searchThreads` requests and their answers
 * (SearchRequests — only the newest query's answer is delivered, so a slow answer to an older
 * prefix never overwrites a newer one), the entry a search result reveals in the open thread
 * (`revealIndex`), and the merged, ordered list the search box shows (`mergeResults`). Pure: no
 * DOM, no Svelte; ../components/ThreadSearch.svelte and MessageReveal.svelte use it.
 */
import type { ClientCommand, CommandResult } from '../../../src/protocol/commands/index';
import type { Entry, ThreadState } from './thread-model';

export type SearchResult = CommandResult<'searchThreads'>;

/** Results asked per list by the search box. */
export const SEARCH_BOX_LIMIT = 20;
/** Quiet time after a keystroke before the box searches (ms). */
export const SEARCH_DEBOUNCE_MS = 150;

/** What the open thread should scroll to and highlight (set by a search result or the host). */
export interface RevealRequest { threadId: string; messageId: string; n: number }

type Send = (c: ClientCommand) => string;
type Listener = (result: SearchResult | null, error: string | null) => void;

export class SearchRequests {
  private latest: { requestId: string; listener: Listener } | null = null;
  constructor(private readonly send: Send) {}

  /** Searches; `listener` gets the answer unless a newer search was asked meanwhile. */
  search(query: string, listener: Listener, limit: number = SEARCH_BOX_LIMIT): void {
    const requestId = this.send({ type: 'searchThreads', query, limit });
    this.latest = { requestId, listener };
  }

  /** Forgets the pending search (the box was cleared). */
  cancel(): void {
    this.latest = null;
  }

  /** The answer to a request; true when it was a search (delivered or dropped as stale). */
  onResult(inReplyTo: string | undefined, type: string, value: unknown): boolean {
    if (type !== 'searchThreads') return false;
    if (this.latest && this.latest.requestId === inReplyTo) {
      const l = this.latest.listener;
      this.latest = null;
      l(value as SearchResult, null);
    }
    return true;
  }

  onError(inReplyTo: string | undefined, type: string | undefined, message: string): boolean {
    if (type !== 'searchThreads') return false;
    if (this.latest && this.latest.requestId === inReplyTo) {
      const l = this.latest.listener;
      this.latest = null;
      l(null, message);
    }
    return true;
  }
}

/** The entry of `thread` that shows message `messageId` (a message row, or the run it closed / was the prompt of); -1 when not on the open branch. */
export function revealIndex(thread: Pick<ThreadState, 'entries' | 'runs'>, messageId: string): number {
  return thread.entries.findIndex((e: Entry) => {
    if (e.kind === 'message') return e.messageId === messageId;
    const run = thread.runs[e.runId];
    return run !== undefined && run.final?.messageId === messageId;
  });
}

export type SearchRow =
  | { kind: 'title'; key: string; threadId: string; title: string; score: number }
  | { kind: 'message'; key: string; threadId: string; messageId: string | null; title: string; snippet: string; ranges: { start: number; end: number }[]; tool: boolean; score: number };

/** Titles and messages in one list, best score first (the scores share a scale); a title ties ahead. */
export function mergeResults(r: SearchResult): SearchRow[] {
  const rows: SearchRow[] = [
    ...r.titles.map((t): SearchRow => ({ kind: 'title', key: `t:${t.threadId}`, threadId: t.threadId, title: t.title, score: t.score })),
    ...r.messages.map((m, i): SearchRow => ({
      kind: 'message', key: `m:${m.threadId}:${m.messageId ?? ''}:${m.itemId ?? ''}:${i}`, threadId: m.threadId, messageId: m.messageId,
      title: m.threadTitle, snippet: m.snippet, ranges: m.ranges, tool: m.source === 'tool', score: m.score,
    })),
  ];
  return rows.sort((a, b) => b.score - a.score || (a.kind === b.kind ? 0 : a.kind === 'title' ? -1 : 1));
}

/** A snippet cut into plain and highlighted parts, for rendering without HTML. */
export function snippetParts(snippet: string, ranges: readonly { start: number; end: number }[]): { text: string; hit: boolean }[] {
  const parts: { text: string; hit: boolean }[] = [];
  let at = 0;
  for (const r of ranges) {
    if (r.start < at || r.end > snippet.length || r.end <= r.start) continue;
    if (r.start > at) parts.push({ text: snippet.slice(at, r.start), hit: false });
    parts.push({ text: snippet.slice(r.start, r.end), hit: true });
    at = r.end;
  }
  if (at < snippet.length) parts.push({ text: snippet.slice(at), hit: false });
  return parts;
}
