/**
 * Highlights in-thread find matches in rendered DOM (the rows the virtual list rendered, or the
 * plan card) with the CSS Custom Highlight API: every occurrence of the query in the element's
 * visible text as `vox-find`, the selected one as `vox-find-current` (styled in ../styles.css).
 * The DOM Svelte owns is never modified. The stored text is markdown and the rendered text is not,
 * so the n-th occurrence in the source maps to the n-th rendered one (the last when fewer render).
 * Where the API is missing (an old engine) the selected match becomes the document selection.
 * A match inside a closed `<details>` (a tool card's arguments or result) opens it.
 */
import { occurrenceRanges } from './thread-find';

/** Names of the two highlights (see styles.css `::highlight(...)`). */
export const FIND_HIGHLIGHT = 'vox-find';
export const FIND_CURRENT_HIGHLIGHT = 'vox-find-current';

/** Elements whose text is not shown (screen-reader prefixes) are skipped. */
const HIDDEN_SELECTOR = '.vox-visually-hidden';

function textNodes(root: Element): Text[] {
  const out: Text[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement?.closest(HIDDEN_SELECTOR) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  for (let n = walker.nextNode(); n; n = walker.nextNode()) out.push(n as Text);
  return out;
}

/** The DOM Range of [start, end) in the concatenated text of `nodes`. */
function rangeOf(nodes: readonly Text[], starts: readonly number[], start: number, end: number): Range | null {
  const locate = (pos: number, isEnd: boolean): [Text, number] | null => {
    for (let i = 0; i < nodes.length; i++) {
      const from = starts[i]!;
      const to = from + nodes[i]!.data.length;
      if (isEnd ? pos > from && pos <= to : pos >= from && pos < to) return [nodes[i]!, pos - from];
    }
    return null;
  };
  const a = locate(start, false);
  const b = locate(end, true);
  if (!a || !b) return null;
  const r = document.createRange();
  r.setStart(a[0], a[1]);
  r.setEnd(b[0], b[1]);
  return r;
}

function highlights(): HighlightRegistry | null {
  return typeof CSS !== 'undefined' && 'highlights' in CSS && typeof Highlight !== 'undefined' ? CSS.highlights : null;
}

/** Removes the find highlights. */
export function clearFindHighlights(): void {
  const reg = highlights();
  reg?.delete(FIND_HIGHLIGHT);
  reg?.delete(FIND_CURRENT_HIGHLIGHT);
}

/**
 * Highlights `query` in `root` with occurrence `occurrence` as the current one; returns that
 * occurrence's Range (to scroll to), or null when the rendered text has none.
 */
export function highlightMatches(root: Element, query: string, occurrence: number): Range | null {
  const nodes = textNodes(root);
  const starts: number[] = [];
  let text = '';
  for (const n of nodes) {
    starts.push(text.length);
    text += n.data;
  }
  const ranges = occurrenceRanges(text, query).map(([s, e]) => rangeOf(nodes, starts, s, e)).filter((r): r is Range => r !== null);
  clearFindHighlights();
  if (ranges.length === 0) return null;
  const current = ranges[Math.min(occurrence, ranges.length - 1)]!;
  revealRange(current);
  const reg = highlights();
  if (reg) {
    reg.set(FIND_HIGHLIGHT, new Highlight(...ranges));
    reg.set(FIND_CURRENT_HIGHLIGHT, new Highlight(current));
  } else {
    const sel = window.getSelection();
    sel?.removeAllRanges();
    sel?.addRange(current);
  }
  return current;
}

/** Opens the closed `<details>` (a tool's arguments or result) that hold the range, so the match shows. */
function revealRange(range: Range): void {
  for (let el = range.startContainer.parentElement; el; el = el.parentElement) {
    if (el instanceof HTMLDetailsElement && !el.open) el.open = true;
  }
}

/** The text of the current match's highlight, or null when none is registered. */
export function currentHighlightText(): string | null {
  const h = highlights()?.get(FIND_CURRENT_HIGHLIGHT);
  if (!h) return null;
  for (const r of h) return r.toString();
  return null;
}
