/**
 * ThinkTagSplitter (SPEC 3.5): parses `<think>`, `<thinking>`, `<reason>` and `<reasoning>`
 * blocks out of a model's TEXT channel while it streams, sending their content to the reasoning
 * channel. Incremental: `push(delta)` returns the parts that are certain so far, `flush()` the
 * rest at the stream's end; the result never depends on how the stream was cut into deltas.
 *
 * The rules (each tested in test/unit/think-tags.test.ts):
 *   - A tag is `<name>` or `<name attr…>` (the name, then whitespace and anything but `<`, `>`
 *     and a newline, at most MAX_TAG_CHARS in all) or `</name>`; names are matched without regard
 *     to case. `<thinker`, `<reasons>`, `<think/>` or `< think>` are not tags: their text stays.
 *   - Tags are removed from the output; the content between an opening tag and its closing tag
 *     is reasoning. Nested blocks (any of the four names) count depth, and reasoning ends when the
 *     outermost one closes. A closing tag with no open block (a chat template that pre-filled
 *     `<think>` in the prompt) is removed and changes nothing: what streamed before it has
 *     already been shown as text.
 *   - Code is literal: outside a block, a tag inside a fenced code block (a line opening with
 *     three or more backticks or tildes, up to three spaces in, until a line with at least as
 *     many of the same) or an inline code span (a run of backticks, until a run of the same
 *     length or the end of the line) is text. Inside a block only tags matter.
 *   - Whitespace right after a closing tag, before the answer has any text, is dropped (models
 *     put "\n\n" between their thinking and their answer; the stored answer starts at its text).
 *   - Unclosed at the stream's end: the block's content stays reasoning (it streamed as such);
 *     a tag cut off by the end (`<thi`) is flushed as literal text of the channel it was in.
 */

/** The tag names whose blocks are reasoning. */
export const THINK_TAG_NAMES = ['think', 'thinking', 'reason', 'reasoning'] as const;
/** Longest tag, attributes included, that is still recognised (a longer `<think …` is text). */
export const MAX_TAG_CHARS = 256;

export type SplitKind = 'text' | 'reasoning';
export interface SplitPart { kind: SplitKind; delta: string }

const NAME_CHARS = /[a-z]/i;
const WS = /[ \t\r\n]/;

export class ThinkTagSplitter {
  private depth = 0;
  /** A `<…` that may still become a tag. */
  private pending = '';
  private out: SplitPart[] = [];
  /** Code tracking, outside blocks. */
  private lineStart = true;
  private indent = 0;
  private fence: { ch: string; len: number } | null = null;
  private inline = 0;
  /** The run of backticks or tildes being read (its char, length, whether it began a line). */
  private run: { ch: string; len: number; atLineStart: boolean } | null = null;
  private textStarted = false;
  private dropWhitespace = false;

  /** Feeds one delta; returns the parts known so far (consecutive parts of one kind merged). */
  push(delta: string): SplitPart[] {
    for (const ch of delta) this.step(ch);
    return this.take();
  }

  /** The end of the stream: whatever is pending is emitted as literal text of its channel. */
  flush(): SplitPart[] {
    const rest = this.pending;
    this.pending = '';
    this.emitLiteral(rest);
    this.endRun();
    return this.take();
  }

  /** True while inside a reasoning block. */
  get inBlock(): boolean {
    return this.depth > 0;
  }

  private take(): SplitPart[] {
    const parts = this.out;
    this.out = [];
    return parts;
  }

  private step(ch: string): void {
    if (this.pending.length > 0) {
      this.pending += ch;
      const verdict = classify(this.pending);
      if (verdict === 'maybe') return;
      const tag = this.pending;
      this.pending = '';
      if (verdict === 'no') {
        // Not a tag: its `<` is literal, and the rest is read again (it may hold another `<`).
        this.literal('<');
        for (const c of tag.slice(1)) this.step(c);
        return;
      }
      this.applyTag(verdict);
      return;
    }
    // A run of backticks ends at the first other character: the code state is known before `<` is judged.
    if (ch !== '`' && ch !== '~' && this.depth === 0) this.endRun();
    if (ch === '<' && !this.inCode()) {
      this.pending = ch;
      return;
    }
    this.literal(ch);
  }

  private applyTag(tag: { closing: boolean }): void {
    if (!tag.closing) {
      this.depth++;
      return;
    }
    if (this.depth > 0) {
      this.depth--;
      if (this.depth === 0 && !this.textStarted) this.dropWhitespace = true;
    }
  }

  private emitLiteral(s: string): void {
    for (const ch of s) this.literal(ch);
  }

  /** One character of output, in the channel of the current depth; code state follows text. */
  private literal(ch: string): void {
    if (this.depth > 0) {
      this.emit('reasoning', ch);
      return;
    }
    if (this.dropWhitespace) {
      if (WS.test(ch)) return;
      this.dropWhitespace = false;
    }
    this.track(ch);
    if (!WS.test(ch)) this.textStarted = true;
    this.emit('text', ch);
  }

  private emit(kind: SplitKind, ch: string): void {
    const last = this.out[this.out.length - 1];
    if (last && last.kind === kind) last.delta += ch;
    else this.out.push({ kind, delta: ch });
  }

  private inCode(): boolean {
    if (this.depth > 0) return false;
    return this.fence !== null || this.inline > 0;
  }

  /** Follows fences and inline code spans through the text channel. */
  private track(ch: string): void {
    if (ch === '`' || ch === '~') {
      if (this.run && this.run.ch === ch) {
        this.run.len++;
        return;
      }
      this.endRun();
      this.run = { ch, len: 1, atLineStart: this.lineStart && this.indent <= 3 };
      this.lineStart = false;
      return;
    }
    this.endRun();
    if (ch === '\n') {
      this.lineStart = true;
      this.indent = 0;
      this.inline = 0;
      return;
    }
    if (ch === ' ' && this.lineStart) {
      this.indent++;
      return;
    }
    this.lineStart = false;
  }

  private endRun(): void {
    const r = this.run;
    if (!r) return;
    this.run = null;
    if (this.fence) {
      if (r.atLineStart && r.ch === this.fence.ch && r.len >= this.fence.len) this.fence = null;
      return;
    }
    if (this.inline > 0) {
      if (r.ch === '`' && r.len === this.inline) this.inline = 0;
      return;
    }
    if (r.atLineStart && r.len >= 3) this.fence = { ch: r.ch, len: r.len };
    else if (r.ch === '`') this.inline = r.len;
  }
}

type Verdict = 'maybe' | 'no' | { closing: boolean };

/** What a buffered `<…` is: still possibly a tag, not one, or a complete tag. */
function classify(s: string): Verdict {
  if (s.length > MAX_TAG_CHARS) return 'no';
  let i = 1;
  const closing = s[i] === '/';
  if (closing) i++;
  let name = '';
  while (i < s.length && NAME_CHARS.test(s[i]!)) name += s[i++]!.toLowerCase();
  if (i === s.length) return THINK_TAG_NAMES.some((n) => n.startsWith(name)) ? 'maybe' : 'no';
  if (!(THINK_TAG_NAMES as readonly string[]).includes(name)) return 'no';
  const c = s[i]!;
  if (c === '>') return i === s.length - 1 ? { closing } : 'no';
  if (closing || c === '\n' || !WS.test(c)) return 'no';
  // Attributes: anything but `<`, `>` and a newline, then `>`.
  for (let j = i + 1; j < s.length; j++) {
    const a = s[j]!;
    if (a === '>') return j === s.length - 1 ? { closing } : 'no';
    if (a === '<' || a === '\n') return 'no';
  }
  return 'maybe';
}

/** Splits a whole text at once (the same rules: history, tests). */
export function splitThinkTags(text: string): { text: string; reasoning: string; unclosed: boolean } {
  const s = new ThinkTagSplitter();
  const parts = [...s.push(text), ...s.flush()];
  return {
    text: parts.filter((p) => p.kind === 'text').map((p) => p.delta).join(''),
    reasoning: parts.filter((p) => p.kind === 'reasoning').map((p) => p.delta).join(''),
    unclosed: s.inBlock,
  };
}
