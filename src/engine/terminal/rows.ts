/**
 * One row of the emulated screen and the cell operations on it, with xterm.js 6's rules for wide
 * characters (a wide character is a head cell of width 2 followed by a placeholder of width 0;
 * overwriting, erasing, inserting or deleting half of one blanks the other half, exactly where
 * xterm.js does) — and the row's rendering as plain or styled text.
 *
 * A row is sparse: cells past its length are empty, so a 4,096-column screen costs only what is
 * written on it. A cell is its text: NUL (`'\0'`, shown as a space) is an empty cell, `''` the
 * placeholder after a wide character, anything else a character with its combining marks (a
 * written space is content, as in xterm.js, where it counts when a row is trimmed).
 *
 * Two forms: while every cell is one code unit one column wide (almost every row of real output)
 * the row is one string, `text`, and writing a run of characters, erasing or redrawing a progress
 * bar are string operations; the first wide, combining or astral character turns it into `cells`,
 * an array of cell strings with widths `w` (null while all are 1). Styles, when the screen tracks
 * them, are one id per cell in `st` (styles.ts) in either form.
 */

/** Code units one cell keeps (a character and its combining marks); further marks are dropped, so a line of "zalgo" text stays bounded. */
export const MAX_CELL_CHARS = 16;

/** An empty cell. */
export const NUL = '\0';

function trimSpaces(s: string): string {
  let e = s.length;
  while (e > 0 && s.charCodeAt(e - 1) === 32) e--;
  return e === s.length ? s : s.slice(0, e);
}

export class Row {
  /** The cells as one string (each one code unit, one column), or null when `cells` holds them. */
  text: string | null = '';
  cells: string[] = [];
  /** Cell widths in the array form (0: placeholder or lone zero-width character, 1, 2: wide head); null while all are 1. */
  w: number[] | null = null;
  /** Style id per cell; null when the screen does not track styles. */
  st: number[] | null;
  /** Cached renderings; null when the row changed since. */
  plain: string | null = '';
  styled: string | null = '';

  constructor(styles: boolean) {
    this.st = styles ? [] : null;
  }

  /** Empties the row for reuse (a row that scrolled off becomes the new blank row). */
  reset(): void {
    this.text = '';
    this.cells.length = 0;
    this.w = null;
    if (this.st !== null) this.st.length = 0;
    this.plain = '';
    this.styled = '';
  }

  touch(): void {
    this.plain = null;
    this.styled = null;
  }

  get length(): number {
    return this.text !== null ? this.text.length : this.cells.length;
  }

  cellAt(i: number): string {
    if (this.text !== null) return i < this.text.length ? this.text[i]! : NUL;
    return this.cells[i] ?? NUL;
  }

  widthAt(i: number): number {
    const w = this.w;
    return w !== null && i < w.length ? w[i]! : 1;
  }

  private toCells(): string[] {
    if (this.text !== null) {
      this.cells = this.text.split('');
      this.text = null;
    }
    return this.cells;
  }

  private padStyles(n: number, style: number, from: number): void {
    const st = this.st!;
    while (st.length < from) st.push(0);
    for (let k = from; k < n; k++) {
      if (k < st.length) st[k] = style;
      else st.push(style);
    }
  }

  /** Writes s[i, j) — characters one code unit and one column each — from column x on (the caller keeps x + j - i within the screen). */
  writeRun(x: number, s: string, i: number, j: number, style: number): void {
    const t = this.text;
    if (t !== null) {
      const run = s.slice(i, j);
      const len = t.length;
      if (x === len) this.text = t + run;
      else if (x > len) this.text = t + NUL.repeat(x - len) + run;
      else {
        const e = x + run.length;
        this.text = e >= len ? t.slice(0, x) + run : t.slice(0, x) + run + t.slice(e);
      }
      if (this.st !== null) this.padStyles(x + j - i, style, x);
      return;
    }
    for (let k = i; k < j; k++) this.set(x++, s[k]!, 1, style);
  }

  /** Writes one cell (padding the row up to it). */
  set(i: number, ch: string, width: number, style: number): void {
    const t = this.text;
    if (t !== null && width === 1 && ch.length === 1) {
      const len = t.length;
      if (i === len) this.text = t + ch;
      else if (i > len) this.text = t + NUL.repeat(i - len) + ch;
      else this.text = t.slice(0, i) + ch + t.slice(i + 1);
      if (this.st !== null) this.padStyles(i + 1, style, i);
      return;
    }
    const cells = this.toCells();
    const { st } = this;
    while (cells.length < i) {
      cells.push(NUL);
      if (this.w !== null) this.w.push(1);
      if (st !== null && st.length < cells.length) st.push(0);
    }
    if (width !== 1 && this.w === null) this.w = new Array<number>(cells.length).fill(1);
    if (i === cells.length) {
      cells.push(ch);
      if (this.w !== null) this.w.push(width);
    } else {
      cells[i] = ch;
      if (this.w !== null) this.w[i] = width;
    }
    if (st !== null) this.padStyles(i + 1, style, i);
  }

  /** Makes cell i empty (if it exists: cells past the end already are). */
  blank(i: number, style: number): void {
    if (i < this.length) this.set(i, NUL, 1, style);
  }

  /** Adds a combining mark to cell i, which takes `width` columns from now on (as xterm.js's addCodepointToCell). */
  combine(i: number, ch: string, width: number): void {
    if (i >= this.length) this.set(i, NUL, 1, 0);
    const cells = this.toCells();
    const cur = cells[i]!;
    if (cur === NUL) cells[i] = ch;
    else if (cur.length + ch.length <= MAX_CELL_CHARS) cells[i] = cur + ch;
    if (width !== this.widthAt(i)) {
      this.w ??= new Array<number>(cells.length).fill(1);
      this.w[i] = width;
    }
  }

  private truncate(n: number): void {
    if (this.length <= n) return;
    if (this.text !== null) this.text = this.text.slice(0, n);
    else {
      this.cells.length = n;
      if (this.w !== null) this.w.length = n;
    }
    if (this.st !== null && this.st.length > n) this.st.length = n;
  }

  /** Empties cells [start, end) (xterm.js replaceCells). */
  erase(start: number, end: number, cols: number, style: number): void {
    if (start > 0 && this.widthAt(start - 1) === 2) this.blank(start - 1, style);
    if (end < cols && this.widthAt(end - 1) === 2) this.blank(end, style);
    const len = this.length;
    if (start >= len) return;
    if (end >= len && style === 0) return this.truncate(start);
    const stop = Math.min(end, len);
    if (this.text !== null) {
      this.text = this.text.slice(0, start) + NUL.repeat(stop - start) + this.text.slice(stop);
      if (this.st !== null) this.padStyles(stop, style, start);
    } else for (let i = start; i < stop; i++) this.set(i, NUL, 1, style);
  }

  /** Inserts n empty cells at pos, shifting the rest right; cells pushed past `cols` are lost. */
  insert(pos: number, n: number, cols: number, style: number): void {
    pos %= cols; // as xterm.js: a cursor in the pending-wrap column inserts at column 0
    if (pos > 0 && this.widthAt(pos - 1) === 2) this.blank(pos - 1, style);
    if (pos >= this.length) return;
    n = Math.min(n, cols - pos);
    if (this.text !== null) this.text = this.text.slice(0, pos) + NUL.repeat(n) + this.text.slice(pos);
    else {
      this.cells.splice(pos, 0, ...new Array<string>(n).fill(NUL));
      if (this.w !== null) this.w.splice(pos, 0, ...new Array<number>(n).fill(1));
    }
    if (this.st !== null) this.st.splice(pos, 0, ...new Array<number>(n).fill(style));
    if (this.length >= cols) {
      this.truncate(cols);
      if (this.widthAt(cols - 1) === 2) this.blank(cols - 1, style);
    }
  }

  /** Deletes n cells at pos, shifting the rest left (empty cells come in at the end). */
  delete(pos: number, n: number, cols: number, style: number): void {
    pos %= cols;
    const len = this.length;
    if (pos < len) {
      const k = Math.min(n, len - pos);
      if (this.text !== null) this.text = this.text.slice(0, pos) + this.text.slice(pos + k);
      else {
        this.cells.splice(pos, k);
        if (this.w !== null) this.w.splice(pos, k);
      }
      if (this.st !== null) this.st.splice(pos, k);
    }
    if (pos > 0 && this.widthAt(pos - 1) === 2) this.blank(pos - 1, style);
    if (pos < this.length && this.widthAt(pos) === 0 && this.cellAt(pos) === '') this.blank(pos, style);
  }

  /** Fills the whole row with a one-column character (DECALN). */
  fill(ch: string, cols: number, style: number): void {
    this.text = ch.repeat(cols);
    this.cells = [];
    this.w = null;
    if (this.st !== null) this.st = new Array<number>(cols).fill(style);
  }

  /** End of the row as xterm.js's getTrimmedLength counts it: after the last cell with content, by its width (a zero-width character alone at the end does not count). */
  private contentEnd(): number {
    const { cells, w } = this;
    for (let k = cells.length - 1; k >= 0; k--) {
      const c = cells[k]!;
      if (c !== NUL && c !== '') return k + (w !== null ? w[k]! : 1);
    }
    return 0;
  }

  /** The row's text: what xterm.js's translateToString(true) shows, less trailing spaces. */
  renderPlain(): string {
    if (this.plain !== null) return this.plain;
    const { cells, w } = this;
    let s: string;
    if (this.text !== null) s = this.text;
    else if (w === null) s = cells.join('');
    else {
      const end = this.contentEnd();
      s = '';
      for (let k = 0; k < end; k += w[k] || 1) s += cells[k] || ' ';
    }
    if (s.indexOf(NUL) !== -1) s = s.replaceAll(NUL, ' ');
    return (this.plain = trimSpaces(s));
  }

  /** The row's text with normalised SGR sequences (styles.ts), right-trimmed as renderPlain, ending in the default style. */
  renderStyled(sequences: readonly string[]): string {
    if (this.styled !== null) return this.styled;
    const { w, st } = this;
    if (st === null) return (this.styled = this.renderPlain());
    const cells = this.text !== null ? this.text.split('') : this.cells;
    const end = this.text !== null ? cells.length : this.contentEnd();
    let last = 0; // after the last cell that shows something other than a space
    for (let k = 0; k < end; k += (w !== null ? w[k] : 1) || 1) {
      const c = cells[k]!;
      if (c !== ' ' && c !== NUL && c !== '') last = k + 1;
    }
    let s = '';
    let cur = 0;
    for (let k = 0; k < last; k += (w !== null ? w[k] : 1) || 1) {
      const id = st[k] ?? 0;
      if (id !== cur) {
        s += sequences[id] ?? sequences[0]!;
        cur = id;
      }
      const c = cells[k]!;
      s += c === NUL || c === '' ? ' ' : c;
    }
    if (cur !== 0) s += sequences[0]!;
    return (this.styled = s);
  }
}
