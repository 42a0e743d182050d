/**
 * Text styles (SGR, "Select Graphic Rendition") for the terminal emulator, and the one format in
 * which styled text leaves it.
 *
 * Inside the emulator a style is a small integer (interned per screen, 0 = the default style), so a
 * cell costs one number. Outside, `colors: 'keep'` text is plain text with **normalised SGR
 * sequences** and nothing else: every sequence has the form `ESC [ 0 ; <params> m` (or `ESC [ 0 m`),
 * i.e. it restarts from the default style, so the style of any stretch of text is given by the one
 * sequence before it; every line starts in the default style and ends reset (no style runs across a
 * line break); no other escape sequence, control character or hyperlink survives. The params are, in
 * this order: 1 bold, 2 dim, 3 italic, 4 underline, 5 blink, 7 inverse, 8 hidden, 9 strikethrough,
 * 53 overline; foreground 30–37, 90–97, `38;5;n` or `38;2;r;g;b`; background 40–47, 100–107,
 * `48;5;n` or `48;2;r;g;b`. `styledSpans` turns such text into spans a view can render with
 * `textContent` and class names or CSS colours built from numbers only — the text of a span is never
 * markup and a colour is never a string taken from the program's output, so rendering is safe.
 */

/** Distinct styles one screen interns; later new ones render in the default style (a program cycling through true colours cannot grow the table without bound). */
export const MAX_STYLES = 4_096;

export const BOLD = 1;
export const DIM = 2;
export const ITALIC = 4;
export const UNDERLINE = 8;
export const BLINK = 16;
export const INVERSE = 32;
export const HIDDEN = 64;
export const STRIKETHROUGH = 128;
export const OVERLINE = 256;

/** SGR parameter of each flag, in output order. */
const FLAG_PARAMS: ReadonlyArray<[number, number]> = [
  [BOLD, 1], [DIM, 2], [ITALIC, 3], [UNDERLINE, 4], [BLINK, 5], [INVERSE, 7], [HIDDEN, 8], [STRIKETHROUGH, 9], [OVERLINE, 53],
];

/** A colour: -1 default, 0–255 the palette, RGB_FLAG | 0xrrggbb a true colour. */
export const DEFAULT_COLOR = -1;
export const RGB_FLAG = 0x1000000;

/** The mutable SGR state of a terminal. */
export interface SgrState {
  fg: number;
  bg: number;
  flags: number;
}

export function defaultSgr(): SgrState {
  return { fg: DEFAULT_COLOR, bg: DEFAULT_COLOR, flags: 0 };
}

function colorParams(c: number, base: number): string {
  if (c < 0) return '';
  if (c >= RGB_FLAG) return `;${base + 8};2;${(c >> 16) & 255};${(c >> 8) & 255};${c & 255}`;
  if (c < 8) return `;${base + c}`;
  if (c < 16) return `;${base + 60 + c - 8}`;
  return `;${base + 8};5;${c}`;
}

/** The normalised sequence that sets exactly this style. */
export function sgrSequence(s: SgrState): string {
  let p = '0';
  for (const [flag, param] of FLAG_PARAMS) if (s.flags & flag) p += `;${param}`;
  return `\x1b[${p}${colorParams(s.fg, 30)}${colorParams(s.bg, 40)}m`;
}

/** Interned styles of one screen: id ↔ style, id 0 the default. */
export class StyleTable {
  private readonly ids = new Map<string, number>([['-1,-1,0', 0]]);
  /** The normalised SGR sequence of each id. */
  readonly sequences: string[] = ['\x1b[0m'];

  intern(s: SgrState): number {
    const key = `${s.fg},${s.bg},${s.flags}`;
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    if (this.sequences.length >= MAX_STYLES) return 0;
    const id = this.sequences.length;
    this.ids.set(key, id);
    this.sequences.push(sgrSequence(s));
    return id;
  }
}

/** A colour given as a 256-colour palette index or a parsed true colour. */
function extendedColor(params: ArrayLike<number>, n: number, subs: ReadonlyArray<number[] | undefined>, i: number): [color: number | undefined, advance: number] {
  const sub = subs[i];
  const v = (x: number | undefined): number => (x === undefined || x < 0 ? 0 : Math.min(x, 255));
  if (sub !== undefined) {
    if (sub[0] === 5) return [v(sub[1]), 0];
    if (sub[0] === 2) {
      const rgb = sub.length >= 5 ? sub.slice(2, 5) : sub.slice(1, 4);
      return [RGB_FLAG | (v(rgb[0]) << 16) | (v(rgb[1]) << 8) | v(rgb[2]), 0];
    }
    return [undefined, 0];
  }
  const mode = i + 1 < n ? params[i + 1] : undefined;
  if (mode === 5) return [v(i + 2 < n ? params[i + 2] : 0), Math.min(2, n - 1 - i)];
  if (mode === 2) {
    const at = (k: number): number => v(i + k < n ? params[i + k] : 0);
    return [RGB_FLAG | (at(2) << 16) | (at(3) << 8) | at(4), Math.min(4, n - 1 - i)];
  }
  return [undefined, mode === undefined ? 0 : 1];
}

/** Applies one SGR sequence's params (sub-params, from `:`, per param) to `s`. */
export function applySgr(s: SgrState, params: ArrayLike<number>, n: number, subs: ReadonlyArray<number[] | undefined>): void {
  for (let i = 0; i < n; i++) {
    const p = params[i]!;
    if (p === 0) {
      s.fg = DEFAULT_COLOR;
      s.bg = DEFAULT_COLOR;
      s.flags = 0;
    } else if (p >= 30 && p <= 37) s.fg = p - 30;
    else if (p >= 40 && p <= 47) s.bg = p - 40;
    else if (p >= 90 && p <= 97) s.fg = p - 90 + 8;
    else if (p >= 100 && p <= 107) s.bg = p - 100 + 8;
    else if (p === 1) s.flags |= BOLD;
    else if (p === 2) s.flags |= DIM;
    else if (p === 3) s.flags |= ITALIC;
    else if (p === 4) s.flags = subs[i]?.[0] === 0 ? s.flags & ~UNDERLINE : s.flags | UNDERLINE;
    else if (p === 5) s.flags |= BLINK;
    else if (p === 7) s.flags |= INVERSE;
    else if (p === 8) s.flags |= HIDDEN;
    else if (p === 9) s.flags |= STRIKETHROUGH;
    else if (p === 21) s.flags |= UNDERLINE;
    else if (p === 22) s.flags &= ~(BOLD | DIM);
    else if (p === 23) s.flags &= ~ITALIC;
    else if (p === 24) s.flags &= ~UNDERLINE;
    else if (p === 25) s.flags &= ~BLINK;
    else if (p === 27) s.flags &= ~INVERSE;
    else if (p === 28) s.flags &= ~HIDDEN;
    else if (p === 29) s.flags &= ~STRIKETHROUGH;
    else if (p === 39) s.fg = DEFAULT_COLOR;
    else if (p === 49) s.bg = DEFAULT_COLOR;
    else if (p === 53) s.flags |= OVERLINE;
    else if (p === 55) s.flags &= ~OVERLINE;
    else if (p === 38 || p === 48 || p === 58) {
      const [color, advance] = extendedColor(params, n, subs, i);
      if (color !== undefined && p === 38) s.fg = color;
      if (color !== undefined && p === 48) s.bg = color;
      i += advance;
    }
  }
}

/** One run of equally styled text, ready to render. */
export { styledSpans, type StyledSpan } from '../../protocol/terminal';
