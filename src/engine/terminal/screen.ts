/**
 * The emulated terminal: a LIVE_LINES × TERMINAL_COLUMNS screen (normal and alternate buffers,
 * scroll region, tab stops, character sets, modes) driven by the parser, with the semantics of
 * xterm.js 6 for everything a command's output can do to a screen — bare `\r`, `\n` (a new line,
 * as under a pty's `onlcr`), backspace, tabs, cursor moves (CUU/CUD/CUF/CUB/CNL/CPL/CHA/CUP/VPA/
 * HPA/…), erase in line and display, insert/delete characters and lines, scrolling, save/restore
 * cursor, autowrap and wide characters. Replies to queries (DSR, DA) are never sent: the command
 * has no terminal to read them from.
 *
 * Only the viewport is mutable, as in a terminal: a row that scrolls off the top of the normal
 * buffer is handed to the sink (`freeze`) and can never change again; `ESC [ 3 J` and `ESC c`
 * clear the scrollback (`clearScrollback`). Known differences from xterm.js: reverse wraparound
 * (mode 45), protected cells (DECSCA) and the colour of erased cells (BCE) are not modelled.
 */
import { CHARSET_FLAGS, charsetFor, G_LEVEL, type Charset } from './charsets';
import { VtParser, type VtHandler } from './parser';
import { blankCell, combine, deleteCells, eraseCells, fillRow, insertCells, newRow, setCell, touch, widthAt, type Row } from './rows';
import { applySgr, defaultSgr, StyleTable, type SgrState } from './styles';
import { cellWidth } from './width';

/** Rows of the screen: the lines a program can still rewrite (cursor up, erase, redraw). Older lines are frozen into scrollback. */
export const LIVE_LINES = 64;
/** Columns of the screen: wide enough that no real output wraps, yet bounding every row; a longer line wraps, as in a terminal this wide. */
export const TERMINAL_COLUMNS = 4_096;
/** Distance between the default tab stops. */
const TAB_WIDTH = 8;
/** Characters one `CSI n b` (repeat) may print; a larger count is cut to this. */
const MAX_REPEAT = 65_536;

/** Where rows go when they leave the screen. */
export interface ScreenSink {
  freeze(row: Row): void;
  clearScrollback(): void;
}

interface Buffer {
  lines: Row[];
  x: number;
  y: number;
  top: number;
  bottom: number;
  /** Rows scrolled off the top so far (0 for the alternate buffer), as xterm.js's ybase. */
  ybase: number;
  savedX: number;
  savedY: number;
  savedSgr: SgrState;
  savedCharset: Charset | undefined;
  tabs: Uint8Array;
}

export interface ScreenOptions {
  rows?: number;
  cols?: number;
  /** Track SGR styles per cell (needed to render `colors: 'keep'`). */
  styles?: boolean;
}

export class TerminalScreen implements VtHandler {
  readonly rows: number;
  readonly cols: number;
  /** The interned styles (null when styles are not tracked). */
  readonly styleTable: StyleTable | null;
  private normal: Buffer;
  private alt: Buffer;
  private buf: Buffer;
  private readonly parser = new VtParser(this);
  private sgr = defaultSgr();
  private styleId = 0;
  private eraseId = 0;
  private insertMode = false;
  private wrapMode = true;
  private originMode = false;
  /** LNM: a line feed also returns to column 0 (on by default: output arrives as a pty's `onlcr` makes it). */
  private newLineMode = true;
  private gsets: (Charset | undefined)[] = [];
  private glevel = 0;
  private charset: Charset | undefined = undefined;
  /** xterm.js's precedingJoinState: (width << 1) | joined of the last printed character, 0 after any control. */
  private join = 0;

  constructor(private readonly sink: ScreenSink, options: ScreenOptions = {}) {
    this.rows = Math.max(2, options.rows ?? LIVE_LINES);
    this.cols = Math.max(2, options.cols ?? TERMINAL_COLUMNS);
    this.styleTable = options.styles ? new StyleTable() : null;
    this.normal = this.freshBuffer();
    this.alt = this.freshBuffer();
    this.buf = this.normal;
  }

  /** Feeds decoded text (the caller joins surrogate pairs split across chunks). */
  write(s: string): void {
    this.parser.parse(s);
  }

  /** The rows on screen now (the active buffer). */
  get viewport(): readonly Row[] {
    return this.buf.lines;
  }

  get altScreenActive(): boolean {
    return this.buf === this.alt;
  }

  private freshBuffer(): Buffer {
    const tabs = new Uint8Array(this.cols + 1);
    for (let i = 0; i < this.cols; i += TAB_WIDTH) tabs[i] = 1;
    const lines: Row[] = [];
    for (let i = 0; i < this.rows; i++) lines.push(newRow(this.styleTable !== null));
    return { lines, x: 0, y: 0, top: 0, bottom: this.rows - 1, ybase: 0, savedX: 0, savedY: 0, savedSgr: defaultSgr(), savedCharset: undefined, tabs };
  }

  private blankRow(): Row {
    return newRow(this.styleTable !== null);
  }

  private sgrChanged(): void {
    if (this.styleTable === null) return;
    this.styleId = this.styleTable.intern(this.sgr);
    this.eraseId = this.styleTable.intern({ fg: -1, bg: this.sgr.bg, flags: 0 });
  }

  // ---- printing -------------------------------------------------------------------------------

  print(s: string, start: number, end: number): void {
    const b = this.buf;
    const cols = this.cols;
    const style = this.styleId;
    const charset = this.charset;
    let row = b.lines[b.y]!;
    touch(row);
    if (b.x && widthAt(row, b.x - 1) === 2) blankCell(row, b.x - 1, style);
    let join = this.join;
    for (let i = start; i < end; i++) {
      let code = s.charCodeAt(i);
      let ch: string;
      let width: number;
      if (code < 0x7f) {
        ch = s[i]!;
        if (charset === undefined && !this.insertMode && b.x < cols) {
          // Fast path: an ASCII character in a plain cell.
          const cells = row.cells;
          if (b.x === cells.length && row.w === null) {
            cells.push(ch);
            if (row.st !== null) row.st.push(style);
            b.x++;
          } else setCell(row, b.x++, ch, 1, style);
          join = 2;
          continue;
        }
        const mapped = charset?.get(code);
        if (mapped !== undefined) {
          ch = mapped;
          code = mapped.charCodeAt(0);
        }
        width = cellWidth(code);
      } else {
        ch = s[i]!;
        if (code >= 0xd800 && code <= 0xdbff && i + 1 < end) {
          const lo = s.charCodeAt(i + 1);
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            code = (code - 0xd800) * 0x400 + lo - 0xdc00 + 0x10000;
            ch = s.slice(i, i + 2);
            i++;
          }
        }
        width = cellWidth(code);
      }
      let joined = false;
      let oldWidth = 0;
      if (width === 0 && join !== 0 && join >> 1 !== 0) {
        joined = true;
        oldWidth = (join >> 1) & 3;
        width = oldWidth;
      }
      join = (width << 1) | (joined ? 1 : 0);
      if (b.x + width - oldWidth > cols) {
        if (this.wrapMode) {
          for (let c = b.x - oldWidth; c < cols && c < row.cells.length; c++) setCell(row, c, ' ', 1, style);
          b.x = oldWidth;
          b.y++;
          if (b.y === b.bottom + 1) {
            b.y--;
            this.scroll();
          } else if (b.y >= this.rows) b.y = this.rows - 1;
          row = b.lines[b.y]!;
          touch(row);
        } else {
          b.x = cols - 1;
          if (width === 2) continue;
        }
      }
      if (joined && b.x) {
        const at = b.x - (widthAt(row, b.x - 1) ? 1 : 2);
        if (at >= 0) combine(row, at, ch);
        continue;
      }
      if (this.insertMode) {
        insertCells(row, b.x, width - oldWidth, cols, style);
        if (widthAt(row, cols - 1) === 2) blankCell(row, cols - 1, style);
      }
      setCell(row, b.x++, ch, width, style);
      while (width-- > 1) setCell(row, b.x++, '', 0, style);
    }
    this.join = join;
    if (b.x < cols && end > start && b.x < row.cells.length && widthAt(row, b.x) === 0 && row.cells[b.x] === '') blankCell(row, b.x, style);
  }

  // ---- controls -------------------------------------------------------------------------------

  execute(code: number): void {
    this.join = 0;
    const b = this.buf;
    switch (code) {
      case 0x0a:
      case 0x0b:
      case 0x0c:
        if (this.newLineMode) b.x = 0;
        this.lineDown();
        if (b.x >= this.cols) b.x--;
        break;
      case 0x0d:
        b.x = 0;
        break;
      case 0x08:
        this.restrictCursor();
        if (b.x > 0) b.x--;
        break;
      case 0x09:
        if (b.x < this.cols) b.x = this.nextStop(b.x);
        break;
      case 0x0e:
        this.setGLevel(1);
        break;
      case 0x0f:
        this.setGLevel(0);
        break;
      case 0x84:
        this.index();
        break;
      case 0x85:
        b.x = 0;
        this.index();
        break;
      case 0x88:
        b.tabs[b.x] = 1;
        break;
    }
  }

  stringEnd(): void {
    this.join = 0;
  }

  /** The cursor one row down, scrolling at the bottom margin (LF without the LNM column reset). */
  private lineDown(): void {
    const b = this.buf;
    b.y++;
    if (b.y === b.bottom + 1) {
      b.y--;
      this.scroll();
    } else if (b.y >= this.rows) b.y = this.rows - 1;
  }

  private index(): void {
    this.restrictCursor();
    this.lineDown();
    this.restrictCursor();
  }

  private reverseIndex(): void {
    const b = this.buf;
    this.restrictCursor();
    if (b.y === b.top) {
      b.lines.splice(b.bottom, 1);
      b.lines.splice(b.top, 0, this.blankRow());
    } else {
      b.y--;
      this.restrictCursor();
    }
  }

  /** Scrolls the scroll region up one row; a row leaving the top of the normal screen is frozen. */
  private scroll(): void {
    const b = this.buf;
    let removed: Row;
    if (b.top === 0 && b.bottom === this.rows - 1) {
      removed = b.lines.shift()!;
      b.lines.push(this.blankRow());
    } else {
      removed = b.lines.splice(b.top, 1)[0]!;
      b.lines.splice(b.bottom, 0, this.blankRow());
    }
    if (b.top === 0 && b === this.normal) {
      b.ybase++;
      this.sink.freeze(removed);
    }
  }

  private nextStop(x: number): number {
    const tabs = this.buf.tabs;
    while (!tabs[++x] && x < this.cols);
    return x >= this.cols ? this.cols - 1 : x < 0 ? 0 : x;
  }

  private prevStop(x: number): number {
    const tabs = this.buf.tabs;
    while (!tabs[--x] && x > 0);
    return x >= this.cols ? this.cols - 1 : x < 0 ? 0 : x;
  }

  private restrictCursor(maxCol = this.cols - 1): void {
    const b = this.buf;
    b.x = Math.min(maxCol, Math.max(0, b.x));
    b.y = this.originMode ? Math.min(b.bottom, Math.max(b.top, b.y)) : Math.min(this.rows - 1, Math.max(0, b.y));
  }

  private setCursor(x: number, y: number): void {
    const b = this.buf;
    b.x = x;
    b.y = this.originMode ? b.top + y : y;
    this.restrictCursor();
  }

  private moveCursor(dx: number, dy: number): void {
    this.restrictCursor();
    this.setCursor(this.buf.x + dx, this.buf.y + dy);
  }

  private setGLevel(g: number): void {
    this.glevel = g;
    this.charset = this.gsets[g];
  }

  private setGCharset(g: number, cs: Charset | undefined): void {
    this.gsets[g] = cs;
    if (this.glevel === g) this.charset = cs;
  }

  private saveCursor(): void {
    const b = this.buf;
    b.savedX = b.x;
    b.savedY = b.ybase + b.y;
    b.savedSgr = { ...this.sgr };
    b.savedCharset = this.charset;
  }

  private restoreCursor(): void {
    const b = this.buf;
    b.x = b.savedX || 0;
    b.y = Math.max(b.savedY - b.ybase, 0);
    this.sgr = { ...b.savedSgr };
    this.sgrChanged();
    this.charset = b.savedCharset;
    this.restrictCursor();
  }

  private activateAlt(): void {
    if (this.buf === this.alt) return;
    this.alt.x = this.normal.x;
    this.alt.y = this.normal.y;
    this.buf = this.alt;
  }

  private activateNormal(): void {
    if (this.buf === this.normal) return;
    this.normal.x = this.alt.x;
    this.normal.y = this.alt.y;
    const fresh = this.freshBuffer();
    this.alt = { ...fresh, savedX: this.alt.savedX, savedY: this.alt.savedY, savedSgr: this.alt.savedSgr, savedCharset: this.alt.savedCharset };
    this.buf = this.normal;
  }

  private resetModes(): void {
    this.insertMode = false;
    this.wrapMode = true;
    this.originMode = false;
    this.gsets = [];
    this.glevel = 0;
    this.charset = undefined;
  }

  private fullReset(): void {
    this.parser.reset();
    this.normal = this.freshBuffer();
    this.alt = this.freshBuffer();
    this.buf = this.normal;
    this.sgr = defaultSgr();
    this.sgrChanged();
    this.resetModes();
    this.join = 0;
    this.sink.clearScrollback();
  }

  esc(collect: string, final: number): void {
    this.join = 0;
    const b = this.buf;
    const f = String.fromCharCode(final);
    if (collect === '') {
      switch (f) {
        case '7': return this.saveCursor();
        case '8': return this.restoreCursor();
        case 'D': return this.index();
        case 'E':
          b.x = 0;
          return this.index();
        case 'H':
          b.tabs[b.x] = 1;
          return;
        case 'M': return this.reverseIndex();
        case 'c': return this.fullReset();
        case 'n': return this.setGLevel(2);
        case 'o': return this.setGLevel(3);
        case '|': return this.setGLevel(3);
        case '}': return this.setGLevel(2);
        case '~': return this.setGLevel(1);
      }
      return;
    }
    if (collect === '%' && (f === '@' || f === 'G')) {
      this.setGLevel(0);
      this.setGCharset(0, undefined);
    } else if (collect.length === 1 && G_LEVEL[collect] !== undefined && CHARSET_FLAGS.has(f)) {
      this.setGCharset(G_LEVEL[collect]!, charsetFor(f));
    } else if (collect === '#' && f === '8') {
      this.setCursor(0, 0);
      for (let k = 0; k < this.rows; k++) {
        const row = b.lines[b.y + k];
        if (row) {
          touch(row);
          fillRow(row, 'E', this.cols, this.styleId);
        }
      }
      this.setCursor(0, 0);
    }
  }

  // ---- CSI ------------------------------------------------------------------------------------

  csi(collect: string, final: number, params: readonly number[], n: number, subs: ReadonlyArray<number[] | undefined>): void {
    const b = this.buf;
    const p0 = params[0]!;
    const count = p0 || 1;
    if (collect === '' || collect === '?') {
      switch (String.fromCharCode(final)) {
        case 'J': this.eraseInDisplay(p0); break;
        case 'K': this.eraseInLine(p0); break;
        case 'h': this.setModes(collect === '?', params, n, true); break;
        case 'l': this.setModes(collect === '?', params, n, false); break;
      }
      if (collect === '?') {
        this.join = 0;
        return;
      }
    }
    if (collect === '') {
      switch (String.fromCharCode(final)) {
        case '@': this.restrictCursor(); touch(b.lines[b.y]!); insertCells(b.lines[b.y]!, b.x, count, this.cols, this.eraseId); break;
        case 'A': this.moveCursor(0, -(b.y - b.top >= 0 ? Math.min(b.y - b.top, count) : count)); break;
        case 'B': this.moveCursor(0, b.bottom - b.y >= 0 ? Math.min(b.bottom - b.y, count) : count); break;
        case 'C': case 'a': this.moveCursor(count, 0); break;
        case 'D': this.moveCursor(-count, 0); break;
        case 'E': this.moveCursor(0, b.bottom - b.y >= 0 ? Math.min(b.bottom - b.y, count) : count); b.x = 0; break;
        case 'F': this.moveCursor(0, -(b.y - b.top >= 0 ? Math.min(b.y - b.top, count) : count)); b.x = 0; break;
        case 'G': case '`': this.setCursor(count - 1, b.y); break;
        case 'H': case 'f': this.setCursor(n >= 2 ? (params[1]! || 1) - 1 : 0, count - 1); break;
        case 'I': if (b.x < this.cols) for (let k = 0; k < count && k < this.cols; k++) b.x = this.nextStop(b.x); break;
        case 'Z': if (b.x < this.cols) for (let k = 0; k < count && k < this.cols; k++) b.x = this.prevStop(b.x); break;
        case 'L': case 'M': this.insertOrDeleteLines(final === 0x4c, count); break;
        case 'P': this.restrictCursor(); touch(b.lines[b.y]!); deleteCells(b.lines[b.y]!, b.x, count, this.eraseId); break;
        case 'S': for (let k = 0; k < count && k <= this.rows; k++) this.rotate(b.top, b.bottom); break;
        case 'T': for (let k = 0; k < count && k <= this.rows; k++) this.rotate(b.bottom, b.top); break;
        case 'X': this.restrictCursor(); touch(b.lines[b.y]!); eraseCells(b.lines[b.y]!, b.x, b.x + count, this.cols, this.eraseId); break;
        case 'b': this.repeat(count); break;
        case 'd': this.setCursor(b.x, count - 1); break;
        case 'e': this.moveCursor(0, count); break;
        case 'g': if (p0 === 0) b.tabs[b.x] = 0; else if (p0 === 3) b.tabs.fill(0); break;
        case 'm': if (this.styleTable !== null) { applySgr(this.sgr, params, n, subs); this.sgrChanged(); } break;
        case 'r': this.setScrollRegion(p0, n >= 2 ? params[1]! : 0, n); break;
        case 's': this.saveCursor(); break;
        case 'u': this.restoreCursor(); break;
      }
    } else if (collect === ' ' && (final === 0x40 || final === 0x41)) {
      this.shiftColumns(0, count, final === 0x41);
    } else if (collect === "'" && (final === 0x7d || final === 0x7e)) {
      this.shiftColumns(b.x, count, final === 0x7d);
    } else if (collect === '!' && final === 0x70) {
      this.softReset();
    }
    this.join = 0;
  }

  private eraseInDisplay(p: number): void {
    const b = this.buf;
    this.restrictCursor(this.cols);
    const clearRow = (y: number): void => {
      const row = b.lines[y]!;
      touch(row);
      eraseCells(row, 0, this.cols, this.cols, this.eraseId);
    };
    if (p === 0) {
      const row = b.lines[b.y]!;
      touch(row);
      eraseCells(row, b.x, this.cols, this.cols, this.eraseId);
      for (let y = b.y + 1; y < this.rows; y++) clearRow(y);
    } else if (p === 1) {
      const row = b.lines[b.y]!;
      touch(row);
      eraseCells(row, 0, b.x + 1, this.cols, this.eraseId);
      for (let y = 0; y < b.y; y++) clearRow(y);
    } else if (p === 2) {
      for (let y = 0; y < this.rows; y++) clearRow(y);
    } else if (p === 3 && b === this.normal) {
      b.ybase = 0;
      this.sink.clearScrollback();
    }
  }

  private eraseInLine(p: number): void {
    const b = this.buf;
    this.restrictCursor(this.cols);
    const row = b.lines[b.y]!;
    touch(row);
    if (p === 0) eraseCells(row, b.x, this.cols, this.cols, this.eraseId);
    else if (p === 1) eraseCells(row, 0, b.x + 1, this.cols, this.eraseId);
    else if (p === 2) eraseCells(row, 0, this.cols, this.cols, this.eraseId);
  }

  /** Removes the row at `from` and inserts a blank row at `to` (scroll up: top→bottom; down: bottom→top). */
  private rotate(from: number, to: number): void {
    const lines = this.buf.lines;
    lines.splice(from, 1);
    lines.splice(to, 0, this.blankRow());
  }

  private insertOrDeleteLines(insert: boolean, count: number): void {
    const b = this.buf;
    this.restrictCursor();
    if (b.y > b.bottom || b.y < b.top) return;
    for (let k = 0; k < count && k <= this.rows; k++) {
      if (insert) this.rotate(b.bottom, b.y);
      else this.rotate(b.y, b.bottom);
    }
    b.x = 0;
  }

  /** SL/SR (at column 0) and DECIC/DECDC (at the cursor column) over the scroll region. */
  private shiftColumns(at: number, count: number, insert: boolean): void {
    const b = this.buf;
    if (b.y > b.bottom || b.y < b.top) return;
    for (let y = b.top; y <= b.bottom; y++) {
      const row = b.lines[y]!;
      touch(row);
      if (insert) insertCells(row, at, count, this.cols, this.eraseId);
      else deleteCells(row, at, count, this.eraseId);
    }
  }

  private repeat(count: number): void {
    if (!this.join) return;
    const b = this.buf;
    const x = b.x - ((this.join >> 1) & 3);
    const text = x >= 0 ? (b.lines[b.y]!.cells[x] ?? '') : '';
    if (text === '') return;
    const s = text.repeat(Math.min(count, MAX_REPEAT));
    this.print(s, 0, s.length);
  }

  private setScrollRegion(p0: number, p1: number, n: number): void {
    const top = p0 || 1;
    const bottom = n < 2 || p1 > this.rows || p1 === 0 ? this.rows : p1;
    if (bottom > top) {
      this.buf.top = top - 1;
      this.buf.bottom = bottom - 1;
      this.setCursor(0, 0);
    }
  }

  private setModes(priv: boolean, params: readonly number[], n: number, on: boolean): void {
    for (let i = 0; i < n; i++) {
      const p = params[i]!;
      if (!priv) {
        if (p === 4) this.insertMode = on;
        else if (p === 20) this.newLineMode = on;
        continue;
      }
      switch (p) {
        case 2: if (on) for (let g = 0; g < 4; g++) this.setGCharset(g, undefined); break;
        case 6: this.originMode = on; this.setCursor(0, 0); break;
        case 7: this.wrapMode = on; break;
        case 1048: if (on) this.saveCursor(); else this.restoreCursor(); break;
        case 1049:
        case 47:
        case 1047:
          if (on) {
            if (p === 1049) this.saveCursor();
            this.activateAlt();
          } else {
            this.activateNormal();
            if (p === 1049) this.restoreCursor();
          }
          break;
      }
    }
  }

  private softReset(): void {
    const b = this.buf;
    b.top = 0;
    b.bottom = this.rows - 1;
    this.sgr = defaultSgr();
    this.sgrChanged();
    this.resetModes();
    b.savedX = 0;
    b.savedY = b.ybase;
    b.savedSgr = defaultSgr();
    b.savedCharset = undefined;
  }
}
