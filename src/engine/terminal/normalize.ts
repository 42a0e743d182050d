/**
 * Terminal-faithful normalisation of command output: the text a terminal shows after receiving
 * the output — scrollback included, each line right-trimmed, trailing empty lines dropped, no
 * wrapping below TERMINAL_COLUMNS — so progress bars (`\r`, `ESC[K`, `ESC[nG`, cursor up + erase
 * line, backspace spinners, …) collapse to what they finally show. `@xterm/headless` is the
 * reference it is tested against (test/unit/terminal-normalize.test.ts).
 *
 * `TerminalNormalizer` is the streaming form: `write` takes chunks as they come — strings (a
 * surrogate pair may be split between two) or bytes (UTF-8, split anywhere) — and the parser's
 * state carries an escape sequence cut at a chunk end over to the next one, so the result never
 * depends on where the chunks were cut. At any time `text()` gives the current screen text and
 * `liveLines()` the LIVE_LINES rows a program can still rewrite; older rows are frozen into a
 * scrollback bounded by TERMINAL_OUTPUT_TAIL_CHARS (characters; the coloured rendering may be
 * bounded in bytes instead), and the text then begins with a note of what was cut.
 *
 * Colours: `strip` (the default) gives plain text, for the model and the transcript; `keep` gives
 * the same text with normalised SGR sequences only (format and safe rendering: styles.ts).
 */
import { TerminalScreen, type ScreenSink } from './screen';
import type { Row } from './rows';
import { assembleText, LineTail, type Measure } from './tail';

export { LIVE_LINES, TERMINAL_COLUMNS } from './screen';

/** Characters of normalised output kept (the tail; earlier lines are cut, and a note says how many). */
export const TERMINAL_OUTPUT_TAIL_CHARS = 65_536;

export type TerminalColors = 'keep' | 'strip';

export interface TerminalNormalizerOptions {
  /** Which renderings to keep: plain (`strip`), styled (`keep`) or both. Default: plain. */
  render?: 'plain' | 'styled' | 'both';
  /** Bound of the plain text, in characters. Default TERMINAL_OUTPUT_TAIL_CHARS. */
  plainLimit?: number;
  /** Bound of the styled text and its unit. Default TERMINAL_OUTPUT_TAIL_CHARS characters. */
  styledLimit?: { limit: number; measure: Measure };
  /** Screen size (tests); defaults LIVE_LINES × TERMINAL_COLUMNS. */
  rows?: number;
  cols?: number;
}

export class TerminalNormalizer {
  private readonly screen: TerminalScreen;
  private readonly plain: LineTail | null;
  private readonly styled: LineTail | null;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** A high surrogate that ended the last string chunk, waiting for its other half. */
  private pendingHigh = '';
  /** Units of input taken (UTF-16 code units for strings, bytes for byte chunks). */
  received = 0;

  constructor(options: TerminalNormalizerOptions = {}) {
    const render = options.render ?? 'plain';
    this.plain = render !== 'styled' ? new LineTail(options.plainLimit ?? TERMINAL_OUTPUT_TAIL_CHARS, 'chars') : null;
    const styled = options.styledLimit ?? { limit: TERMINAL_OUTPUT_TAIL_CHARS, measure: 'chars' as const };
    this.styled = render !== 'plain' ? new LineTail(styled.limit, styled.measure) : null;
    const sink: ScreenSink = {
      freeze: (row) => {
        this.plain?.push(row.renderPlain());
        this.styled?.push(row.renderStyled(this.sequences));
      },
      clearScrollback: () => {
        this.plain?.clear();
        this.styled?.clear();
      },
    };
    this.screen = new TerminalScreen(sink, { rows: options.rows, cols: options.cols, styles: this.styled !== null });
  }

  private get sequences(): readonly string[] {
    return this.screen.styleTable?.sequences ?? ['\x1b[0m'];
  }

  /** Feeds one chunk of output. */
  write(chunk: string | Uint8Array): void {
    let s: string;
    if (typeof chunk === 'string') {
      this.received += chunk.length;
      s = this.pendingHigh + chunk;
      this.pendingHigh = '';
      const last = s.charCodeAt(s.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        this.pendingHigh = s[s.length - 1]!;
        s = s.slice(0, -1);
      }
    } else {
      this.received += chunk.length;
      s = this.decoder.decode(chunk, { stream: true });
    }
    if (s.length === 0) return;
    // A terminal drops byte order marks wherever they are (xterm.js does, before parsing).
    if (s.indexOf('\ufeff') !== -1) s = s.replaceAll('\ufeff', '');
    this.screen.write(s);
  }

  /** The output ended: an incomplete UTF-8 sequence or a lone high surrogate left over is dropped, as a terminal drops it. */
  end(): void {
    this.pendingHigh = '';
    this.decoder.decode();
  }

  private tail(colors: TerminalColors): LineTail {
    const t = colors === 'keep' ? this.styled : this.plain;
    if (t === null) throw new Error(`TerminalNormalizer: the ${colors === 'keep' ? 'styled' : 'plain'} rendering is not kept (render option)`);
    return t;
  }

  private renderRow(row: Row, colors: TerminalColors): string {
    return colors === 'keep' ? row.renderStyled(this.sequences) : row.renderPlain();
  }

  /** Whether a full-screen program has the alternate screen up (its text is then all a terminal shows). */
  get altScreenActive(): boolean {
    return this.screen.altScreenActive;
  }

  /** The rows on screen, up to the last one that shows anything (at most LIVE_LINES). */
  liveLines(colors: TerminalColors = 'strip'): string[] {
    this.tail(colors);
    const rows = this.screen.viewport;
    let end = rows.length;
    while (end > 0 && this.renderRow(rows[end - 1]!, colors) === '') end--;
    const out = new Array<string>(end);
    for (let i = 0; i < end; i++) out[i] = this.renderRow(rows[i]!, colors);
    return out;
  }

  /** Frozen lines: absolute index of the oldest kept, how many were ever frozen, and the kept ones from `from` on. */
  frozen(colors: TerminalColors = 'strip', from = 0): { first: number; total: number; lines: string[] } {
    const t = this.tail(colors);
    return { first: t.first, total: t.total, lines: t.from(from) };
  }

  /** The text a terminal shows now (scrollback and screen), bounded, with a note of anything cut. */
  text(colors: TerminalColors = 'strip'): string {
    const t = this.tail(colors);
    const live: string[] = this.screen.viewport.map((row) => this.renderRow(row, colors));
    const frozen = this.screen.altScreenActive ? [] : t.from(t.first);
    return assembleText(frozen, live, t.limit, t.measure, { lines: t.cutLines, units: t.cutUnits });
  }
}

/**
 * The text a terminal shows after receiving `raw`: scrollback included, each line right-trimmed,
 * trailing empty lines dropped, no line wrapping (below TERMINAL_COLUMNS); colours stripped unless
 * `colors: 'keep'` (then normalised SGR sequences, styles.ts). Bounded by
 * TERMINAL_OUTPUT_TAIL_CHARS, with a note of what was cut.
 */
export function normalizeTerminalOutput(raw: string | Uint8Array, options: { colors?: TerminalColors } = {}): string {
  const colors = options.colors ?? 'strip';
  const n = new TerminalNormalizer({ render: colors === 'keep' ? 'styled' : 'plain' });
  n.write(raw);
  n.end();
  return n.text(colors);
}
