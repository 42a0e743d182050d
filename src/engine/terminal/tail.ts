/**
 * Bounded text of a terminal: the frozen scrollback as a tail of lines within a limit (in
 * characters or in bytes of UTF-8), counting what it cut, and the assembly of the final text —
 * scrollback plus screen, trailing empty lines dropped, cut from the front to the limit with a
 * note of what was cut. A single line longer than the limit keeps its end, cut where no surrogate
 * pair and no SGR sequence is split (styled text restarts with the style in force there).
 */
import { utf8ByteLength } from '../../protocol/wire/utf8';

export type Measure = 'chars' | 'bytes';

/** Lines a LineTail may hold in its array before it drops the slots of lines it cut. */
const COMPACT_AFTER = 4_096;

/** UTF-8 length of a string (lone surrogates count 3, as they encode to U+FFFD). */
export const utf8Length = utf8ByteLength;

export function measureOf(s: string, measure: Measure): number {
  return measure === 'chars' ? s.length : utf8Length(s);
}

/** The frozen lines of one rendering (plain or styled), within `limit` (each line costs its length + 1 for its newline). */
export class LineTail {
  private lines: string[] = [];
  private head = 0;
  private size = 0;
  /** Lines ever pushed: the absolute index the next line gets. */
  total = 0;
  /** Lines and units (chars or bytes, newlines included) dropped to stay within the limit. */
  cutLines = 0;
  cutUnits = 0;

  constructor(readonly limit: number, readonly measure: Measure) {}

  push(line: string): void {
    this.lines.push(line);
    this.size += measureOf(line, this.measure) + 1;
    this.total++;
    while (this.size > this.limit && this.head < this.lines.length) {
      const cost = measureOf(this.lines[this.head]!, this.measure) + 1;
      this.lines[this.head++] = '';
      this.size -= cost;
      this.cutLines++;
      this.cutUnits += cost;
    }
    if (this.head > COMPACT_AFTER && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  /** The program cleared the scrollback (`ESC [ 3 J`, `ESC c`): nothing of it is shown any more, and nothing was cut. */
  clear(): void {
    this.lines = [];
    this.head = 0;
    this.size = 0;
  }

  /** Absolute index of the oldest line kept. */
  get first(): number {
    return this.total - (this.lines.length - this.head);
  }

  /** The kept lines from absolute index `from` on. */
  from(from: number): string[] {
    return this.lines.slice(this.head + Math.max(0, from - this.first));
  }
}

/** The note that replaces what was cut. */
export function cutNote(lines: number, units: number, measure: Measure): string {
  return `[terminal: ${lines} earlier line${lines === 1 ? '' : 's'} cut (${units} ${measure === 'chars' ? 'characters' : 'bytes'})]`;
}

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

/** The end of `line` within `room` units, cut safely (see the header). */
function lineTail(line: string, room: number, measure: Measure): string {
  let start = line.length;
  let used = 0;
  while (start > 0) {
    const c = line.charCodeAt(start - 1);
    const cost = measure === 'chars' ? 1 : c < 0x80 ? 1 : c < 0x800 ? 2 : (c & 0xfc00) === 0xdc00 || (c & 0xfc00) === 0xd800 ? 2 : 3;
    if (used + cost > room) break;
    used += cost;
    start--;
  }
  if ((line.charCodeAt(start) & 0xfc00) === 0xdc00) start++;
  let prefix = '';
  SGR.lastIndex = 0;
  for (let m = SGR.exec(line); m !== null && m.index < start; m = SGR.exec(line)) {
    const end = m.index + m[0].length;
    if (end > start) start = end; // never inside a sequence
    prefix = m[0] === '\x1b[0m' ? '' : m[0];
  }
  const tail = line.slice(start);
  return prefix && measureOf(prefix + tail, measure) <= room ? prefix + tail : tail.replace(SGR, '');
}

/**
 * The text of a screen: `frozen` then `live` lines, trailing empty lines dropped, within `limit`
 * units including the note; `priorCut` is what the scrollback already cut.
 */
export function assembleText(frozen: readonly string[], live: readonly string[], limit: number, measure: Measure, priorCut: { lines: number; units: number }): string {
  const all = frozen.length ? frozen.concat(live) : live.slice();
  while (all.length && all[all.length - 1] === '') all.pop();
  let cutLines = priorCut.lines;
  let cutUnits = priorCut.units;
  let size = -1;
  for (const l of all) size += measureOf(l, measure) + 1;
  const noteCost = (): number => (cutLines > 0 || cutUnits > 0 ? measureOf(cutNote(cutLines, cutUnits, measure), measure) + 1 : 0);
  let first = 0;
  while (all.length - first > 1 && size + noteCost() > limit) {
    const cost = measureOf(all[first]!, measure) + 1;
    size -= cost;
    cutUnits += cost;
    cutLines++;
    first++;
  }
  let kept = all.slice(first);
  if (kept.length === 1 && size + noteCost() > limit) {
    const line = kept[0]!;
    const room = Math.max(0, limit - measureOf(cutNote(cutLines, cutUnits + measureOf(line, measure), measure), measure) - 1);
    const cut = lineTail(line, room, measure);
    cutUnits += measureOf(line, measure) - measureOf(cut, measure);
    kept = [cut];
  }
  const text = kept.join('\n');
  return cutLines > 0 || cutUnits > 0 ? `${cutNote(cutLines, cutUnits, measure)}\n${text}` : text;
}
