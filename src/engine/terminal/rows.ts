/**
 * One row of the emulated screen and the cell operations on it, with xterm.js 6's rules for wide
 * characters (a wide character is a head cell of width 2 followed by a placeholder of width 0;
 * overwriting, erasing, inserting or deleting half of one blanks the other half, exactly where
 * xterm.js does) — and the row's rendering as plain or styled text.
 *
 * A row is sparse: cells past `cells.length` are blank, so a 4,096-column screen costs only what
 * is written on it. A cell is its text: `' '` is blank, `''` is a placeholder, anything else is a
 * character with its combining marks. Widths are stored only for rows that need them (`w`, null
 * while every cell is 1 wide), styles only when the screen tracks them (`st`, style ids from
 * styles.ts).
 */

/** Code units one cell keeps (a character and its combining marks); further marks are dropped, so a line of "zalgo" text stays bounded. */
export const MAX_CELL_CHARS = 32;

export interface Row {
  cells: string[];
  /** Cell widths (0 placeholder or lone zero-width character, 1, 2 wide head); null: all 1. */
  w: number[] | null;
  /** Style id per cell; null when the screen does not track styles. */
  st: number[] | null;
  /** Cached renderings; null when the row changed since. */
  plain: string | null;
  styled: string | null;
}

export function newRow(styles: boolean): Row {
  return { cells: [], w: null, st: styles ? [] : null, plain: null, styled: null };
}

export function touch(row: Row): void {
  row.plain = null;
  row.styled = null;
}

export function widthAt(row: Row, i: number): number {
  return row.w !== null && i < row.w.length ? row.w[i]! : 1;
}

function padTo(row: Row, n: number): void {
  const { cells, w, st } = row;
  while (cells.length < n) {
    cells.push(' ');
    if (w !== null) w.push(1);
    if (st !== null) st.push(0);
  }
}

/** Writes one cell (padding the row up to it). */
export function setCell(row: Row, i: number, ch: string, width: number, style: number): void {
  if (i > row.cells.length) padTo(row, i);
  if (width !== 1 && row.w === null) row.w = new Array<number>(row.cells.length).fill(1);
  if (i === row.cells.length) {
    row.cells.push(ch);
    if (row.w !== null) row.w.push(width);
    if (row.st !== null) row.st.push(style);
  } else {
    row.cells[i] = ch;
    if (row.w !== null) row.w[i] = width;
    if (row.st !== null) row.st[i] = style;
  }
}

/** Makes cell i blank (if it exists: cells past the end already are). */
export function blankCell(row: Row, i: number, style: number): void {
  if (i < row.cells.length) setCell(row, i, ' ', 1, style);
}

/** Adds a combining mark to cell i. */
export function combine(row: Row, i: number, ch: string): void {
  if (i >= row.cells.length) padTo(row, i + 1);
  const cur = row.cells[i]!;
  if (cur.length + ch.length <= MAX_CELL_CHARS) row.cells[i] = cur + ch;
}

function truncate(row: Row, n: number): void {
  if (row.cells.length <= n) return;
  row.cells.length = n;
  if (row.w !== null) row.w.length = n;
  if (row.st !== null) row.st.length = n;
}

/** Blanks cells [start, end) (xterm.js replaceCells). */
export function eraseCells(row: Row, start: number, end: number, cols: number, style: number): void {
  if (start > 0 && widthAt(row, start - 1) === 2) blankCell(row, start - 1, style);
  if (end < cols && widthAt(row, end - 1) === 2) blankCell(row, end, style);
  const len = row.cells.length;
  if (start >= len) return;
  if (end >= len && style === 0) {
    truncate(row, start);
    return;
  }
  for (let i = start; i < end && i < len; i++) setCell(row, i, ' ', 1, style);
}

/** Inserts n blank cells at pos, shifting the rest right; cells pushed past `cols` are lost. */
export function insertCells(row: Row, pos: number, n: number, cols: number, style: number): void {
  if (pos > 0 && widthAt(row, pos - 1) === 2) blankCell(row, pos - 1, style);
  const len = row.cells.length;
  if (pos >= len) return;
  n = Math.min(n, cols - pos);
  row.cells.splice(pos, 0, ...new Array<string>(n).fill(' '));
  if (row.w !== null) row.w.splice(pos, 0, ...new Array<number>(n).fill(1));
  if (row.st !== null) row.st.splice(pos, 0, ...new Array<number>(n).fill(style));
  if (row.cells.length >= cols) {
    truncate(row, cols);
    if (widthAt(row, cols - 1) === 2) blankCell(row, cols - 1, style);
  }
}

/** Deletes n cells at pos, shifting the rest left (blanks come in at the end). */
export function deleteCells(row: Row, pos: number, n: number, style: number): void {
  const len = row.cells.length;
  if (pos < len) {
    const k = Math.min(n, len - pos);
    row.cells.splice(pos, k);
    if (row.w !== null) row.w.splice(pos, k);
    if (row.st !== null) row.st.splice(pos, k);
  }
  if (pos > 0 && widthAt(row, pos - 1) === 2) blankCell(row, pos - 1, style);
  if (pos < row.cells.length && widthAt(row, pos) === 0 && row.cells[pos] === '') blankCell(row, pos, style);
}

/** Fills the whole row (DECALN). */
export function fillRow(row: Row, ch: string, cols: number, style: number): void {
  truncate(row, 0);
  row.w = null;
  for (let i = 0; i < cols; i++) setCell(row, i, ch, 1, style);
}

function trimSpaces(s: string): string {
  let e = s.length;
  while (e > 0 && s.charCodeAt(e - 1) === 32) e--;
  return e === s.length ? s : s.slice(0, e);
}

/** The row's text, right-trimmed: what xterm.js's translateToString shows, less trailing spaces. */
export function renderPlain(row: Row): string {
  if (row.plain !== null) return row.plain;
  const { cells, w } = row;
  let s: string;
  if (w === null) s = cells.join('');
  else {
    s = '';
    for (let k = 0; k < cells.length; k += w[k] || 1) s += cells[k] || ' ';
  }
  return (row.plain = trimSpaces(s));
}

/** The row's text with normalised SGR sequences (styles.ts), right-trimmed, ending in the default style. */
export function renderStyled(row: Row, sequences: readonly string[]): string {
  if (row.styled !== null) return row.styled;
  const { cells, w, st } = row;
  if (st === null) return (row.styled = renderPlain(row));
  let end = 0;
  for (let k = 0; k < cells.length; k += (w !== null ? w[k] : 1) || 1) {
    const c = cells[k]!;
    if (c !== ' ' && c !== '') end = k + ((w !== null ? w[k] : 1) || 1);
  }
  let s = '';
  let cur = 0;
  for (let k = 0; k < end; k += (w !== null ? w[k] : 1) || 1) {
    const id = st[k]!;
    if (id !== cur) {
      s += sequences[id] ?? sequences[0]!;
      cur = id;
    }
    s += cells[k] || ' ';
  }
  if (cur !== 0) s += sequences[0]!;
  return (row.styled = s);
}
