/**
 * How `vox search` prints its hits for people: one line per hit — the thread's short id
 * (../protocol/short-ids.ts), its title — and for a message hit a one-line snippet under it,
 * white space collapsed, cut to the width, the match in bold when the output is a terminal and
 * plain otherwise (no escape codes in a pipe or a file).
 */
import type { MessageHit, TitleHit } from '../protocol/commands/search';
import { shortIds } from '../protocol/short-ids';

/** The width lines are cut to when the output is not a terminal (or it does not say). */
export const DEFAULT_SEARCH_WIDTH = 100;
/** Indent of a snippet under its hit's line. */
const SNIPPET_INDENT = '    ';
const BOLD = '\u001b[1m';
const PLAIN = '\u001b[22m';

export interface SearchOutputOptions { tty: boolean; width: number }

/** `text` with white space runs as one space, cut to `width` characters with "…". */
function fit(text: string, width: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= width ? one : `${one.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * The snippet on one line, at most `width` characters: white space collapsed (the match ranges
 * moved with it), the text cut around the first match so that it shows, each match in bold on a
 * terminal.
 */
export function snippetLine(hit: Pick<MessageHit, 'snippet' | 'ranges'>, width: number, tty: boolean): string {
  // Collapse white space, keeping for each kept character whether it is inside a match.
  const chars: string[] = [];
  const marked: boolean[] = [];
  const inMatch = (i: number) => hit.ranges.some((r) => i >= r.start && i < r.end);
  for (let i = 0; i < hit.snippet.length; i++) {
    const c = hit.snippet[i]!;
    if (/\s/.test(c)) {
      if (chars.length === 0 || chars[chars.length - 1] === ' ') continue;
      chars.push(' ');
    } else chars.push(c);
    marked.push(inMatch(i));
  }
  while (chars[chars.length - 1] === ' ') {
    chars.pop();
    marked.pop();
  }
  let from = 0;
  let to = chars.length;
  if (to > width) {
    const first = Math.max(0, marked.indexOf(true));
    from = Math.max(0, Math.min(first - Math.floor(width / 4), chars.length - width));
    to = from + width;
  }
  // An ellipsis takes the place of the first (last) character shown when the text goes on before (after) it.
  const start = from > 0 ? from + 1 : from;
  const end = to < chars.length ? to - 1 : to;
  let out = from > 0 ? '…' : '';
  let bold = false;
  for (let i = start; i < end; i++) {
    if (tty && marked[i] !== bold) {
      out += marked[i] ? BOLD : PLAIN;
      bold = marked[i]!;
    }
    out += chars[i];
  }
  if (bold) out += PLAIN;
  return to < chars.length ? `${out}…` : out;
}

/** The human output of a search: title matches, then message matches with their snippets. */
export function searchLines(result: { titles: TitleHit[]; messages: MessageHit[] }, opts: SearchOutputOptions): string[] {
  const short = shortIds([...result.titles.map((t) => t.threadId), ...result.messages.map((m) => m.threadId)]);
  const lines: string[] = [];
  const head = (threadId: string, title: string, extra = '') => {
    const id = short.get(threadId)!;
    return `  ${id}  ${fit(`${extra}${title}`, Math.max(1, opts.width - id.length - 4))}`;
  };
  if (result.titles.length > 0) {
    lines.push('Threads:');
    for (const t of result.titles) lines.push(head(t.threadId, t.title));
  }
  if (result.messages.length > 0) {
    lines.push('Messages:');
    for (const m of result.messages) {
      lines.push(head(m.threadId, m.threadTitle, m.source === 'tool' ? '[tool output] ' : ''));
      lines.push(`${SNIPPET_INDENT}${snippetLine(m, Math.max(1, opts.width - SNIPPET_INDENT.length), opts.tty)}`);
    }
  }
  return lines;
}
