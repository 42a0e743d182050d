/**
 * The state and primitive operations of the emulated terminal (screen.ts dispatches the controls
 * and sequences onto them): a LIVE_LINES × TERMINAL_COLUMNS screen with normal and alternate
 * buffers, scroll region, tab stops, character sets and modes; printing (autowrap, wide and
 * combining characters, insert mode), line feeds and scrolling, cursor positioning, save/restore,
 * resets — each as xterm.js 6 does it (InputHandler, Buffer, BufferService).
 *
 * Only the viewport is mutable, as in a terminal: a row that scrolls off the top of the normal
 * buffer is handed to the sink (`freeze`) and can never change again, and its Row object is reused
 * as the new blank row.
 */
import type { Charset } from './charsets';
import { VtParser, type VtHandler } from './parser';
import { NUL, Row } from './rows';
import { defaultSgr, StyleTable, UNDERLINE, type SgrState } from './styles';
import { BMP_WIDTHS as BMP_WIDTHS_IMPORT, cellWidth as cellWidthImport } from './width';

// Hot functions bound once: module loaders that compile ES modules to CommonJS (tsx, ts-node)
// turn every call of an imported function into a property read through a getter.
const cellWidth = cellWidthImport;
const BMP_WIDTHS = BMP_WIDTHS_IMPORT;

/** Rows of the screen: the lines a program can still rewrite (cursor up, erase, redraw). Older lines are frozen into scrollback. */
export const LIVE_LINES = 64;
/** Columns of the screen: wide enough that no real output wraps, yet bounding every row; a longer line wraps, as in a terminal this wide. */
export const TERMINAL_COLUMNS = 4_096;
/** Distance between the default tab stops. */
const TAB_WIDTH = 8;
/** Where rows go when they leave the screen. */
export interface ScreenSink {
  freeze(row: Row): void;
  clearScrollback(): void;
}

export interface Buffer {
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

export abstract class ScreenCore implements VtHandler {
  readonly rows: number;
  readonly cols: number;
  /** The interned styles (null when styles are not tracked). */
  readonly styleTable: StyleTable | null;
  protected normal: Buffer;
  protected alt: Buffer;
  protected buf: Buffer;
  protected readonly parser = new VtParser(this);
  protected sgr = defaultSgr();
  protected styleId = 0;
  protected eraseId = 0;
  protected insertMode = false;
  protected wrapMode = true;
  protected originMode = false;
  /** LNM: a line feed also returns to column 0 (on by default: output arrives as a pty's `onlcr` makes it). */
  protected newLineMode = true;
  protected gsets: (Charset | undefined)[] = [];
  protected glevel = 0;
  protected charset: Charset | undefined = undefined;
  /** xterm.js's precedingJoinState: (width << 1) | joined of the last printed character, 0 after any control. */
  protected join = 0;
  /** Inside an OSC 8 hyperlink (its text shows underlined). */
  protected link = false;

  constructor(protected readonly sink: ScreenSink, options: ScreenOptions = {}) {
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

  protected freshBuffer(): Buffer {
    const tabs = new Uint8Array(this.cols + 1);
    for (let i = 0; i < this.cols; i += TAB_WIDTH) tabs[i] = 1;
    const lines: Row[] = [];
    for (let i = 0; i < this.rows; i++) lines.push(new Row(this.styleTable !== null));
    return { lines, x: 0, y: 0, top: 0, bottom: this.rows - 1, ybase: 0, savedX: 0, savedY: 0, savedSgr: defaultSgr(), savedCharset: undefined, tabs };
  }

  protected blankRow(): Row {
    return new Row(this.styleTable !== null);
  }

  protected sgrChanged(): void {
    if (this.styleTable === null) return;
    this.styleId = this.styleTable.intern(this.link ? { ...this.sgr, flags: this.sgr.flags | UNDERLINE } : this.sgr);
    this.eraseId = this.styleTable.intern({ fg: -1, bg: this.sgr.bg, flags: 0 });
  }

  // ---- printing -------------------------------------------------------------------------------

  /** Prints from s[start] on, up to the first code unit that is not printable (or `end`); returns where it stopped. */
  print(s: string, start: number, end: number): number {
    const b = this.buf;
    const cols = this.cols;
    const style = this.styleId;
    const charset = this.charset;
    const fast = charset === undefined && !this.insertMode;
    let row = b.lines[b.y]!;
    row.touch();
    if (b.x && row.widthAt(b.x - 1) === 2) row.blank(b.x - 1, style);
    let join = this.join;
    let i = start;
    for (; i < end; i++) {
      let code = s.charCodeAt(i);
      if (code < 0x20 || (code >= 0x7f && code < 0xa0)) break;
      if (fast && b.x < cols && (code < 0x7f || (code < 0xd800 && BMP_WIDTHS[code] === 1))) {
        // Fast path: a run of characters of one code unit and one column each, written at once.
        const stop = Math.min(end, i + cols - b.x);
        let j = i + 1;
        for (; j < stop; j++) {
          const c = s.charCodeAt(j);
          if (c < 0x7f ? c < 0x20 : c < 0xa0 || c >= 0xd800 || BMP_WIDTHS[c] !== 1) break;
        }
        row.writeRun(b.x, s, i, j, style);
        b.x += j - i;
        join = 2;
        i = j - 1;
        continue;
      }
      let ch = s[i]!;
      let width: number;
      if (code < 0x7f) {
        const mapped = charset?.get(code);
        if (mapped !== undefined) {
          ch = mapped;
          code = mapped.charCodeAt(0);
        }
        width = cellWidth(code);
      } else {
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
          for (let c = b.x - oldWidth; c < cols && c < row.length; c++) row.set(c, NUL, 1, style);
          b.x = oldWidth;
          b.y++;
          if (b.y === b.bottom + 1) {
            b.y--;
            this.scroll();
          } else if (b.y >= this.rows) b.y = this.rows - 1;
          row = b.lines[b.y]!;
          row.touch();
        } else {
          b.x = cols - 1;
          if (width === 2) continue;
        }
      }
      if (joined && b.x) {
        const at = b.x - (row.widthAt(b.x - 1) ? 1 : 2);
        if (at >= 0) row.combine(at, ch, width);
        continue;
      }
      if (this.insertMode) {
        row.insert(b.x, width - oldWidth, cols, style);
        if (row.widthAt(cols - 1) === 2) row.blank(cols - 1, style);
      }
      // A zero-width character in the pending-wrap column lands past the last cell: xterm.js's
      // typed array drops the write, and so do we (the cursor still advances).
      if (b.x < cols) row.set(b.x, ch, width, style);
      b.x++;
      while (width-- > 1) row.set(b.x++, '', 0, style);
    }
    this.join = join;
    if (b.x < cols && i > start && b.x < row.length && row.widthAt(b.x) === 0 && row.cellAt(b.x) === '') row.blank(b.x, style);
    return i;
  }

  /** The cursor one row down, scrolling at the bottom margin (LF without the LNM column reset). */
  protected lineDown(): void {
    const b = this.buf;
    b.y++;
    if (b.y === b.bottom + 1) {
      b.y--;
      this.scroll();
    } else if (b.y >= this.rows) b.y = this.rows - 1;
  }

  protected index(): void {
    this.restrictCursor();
    this.lineDown();
    this.restrictCursor();
  }

  protected reverseIndex(): void {
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
  protected scroll(): void {
    const b = this.buf;
    const whole = b.top === 0 && b.bottom === this.rows - 1;
    const removed = whole ? b.lines.shift()! : b.lines.splice(b.top, 1)[0]!;
    if (b.top === 0 && b === this.normal) {
      b.ybase++;
      this.sink.freeze(removed);
    }
    removed.reset(); // the row that left becomes the new blank one
    if (whole) b.lines.push(removed);
    else b.lines.splice(b.bottom, 0, removed);
  }

  protected nextStop(x: number): number {
    const tabs = this.buf.tabs;
    while (!tabs[++x] && x < this.cols);
    return x >= this.cols ? this.cols - 1 : x < 0 ? 0 : x;
  }

  protected prevStop(x: number): number {
    const tabs = this.buf.tabs;
    while (!tabs[--x] && x > 0);
    return x >= this.cols ? this.cols - 1 : x < 0 ? 0 : x;
  }

  protected restrictCursor(maxCol = this.cols - 1): void {
    const b = this.buf;
    b.x = Math.min(maxCol, Math.max(0, b.x));
    b.y = this.originMode ? Math.min(b.bottom, Math.max(b.top, b.y)) : Math.min(this.rows - 1, Math.max(0, b.y));
  }

  protected setCursor(x: number, y: number): void {
    const b = this.buf;
    b.x = x;
    b.y = this.originMode ? b.top + y : y;
    this.restrictCursor();
  }

  protected moveCursor(dx: number, dy: number): void {
    this.restrictCursor();
    this.setCursor(this.buf.x + dx, this.buf.y + dy);
  }

  protected setGLevel(g: number): void {
    this.glevel = g;
    this.charset = this.gsets[g];
  }

  protected setGCharset(g: number, cs: Charset | undefined): void {
    this.gsets[g] = cs;
    if (this.glevel === g) this.charset = cs;
  }

  protected saveCursor(): void {
    const b = this.buf;
    b.savedX = b.x;
    b.savedY = b.ybase + b.y;
    b.savedSgr = { ...this.sgr };
    b.savedCharset = this.charset;
  }

  protected restoreCursor(): void {
    const b = this.buf;
    b.x = b.savedX || 0;
    b.y = Math.max(b.savedY - b.ybase, 0);
    this.sgr = { ...b.savedSgr };
    this.sgrChanged();
    this.charset = b.savedCharset;
    this.restrictCursor();
  }

  protected activateAlt(): void {
    if (this.buf === this.alt) return;
    this.alt.x = this.normal.x;
    this.alt.y = this.normal.y;
    this.buf = this.alt;
  }

  protected activateNormal(): void {
    if (this.buf === this.normal) return;
    this.normal.x = this.alt.x;
    this.normal.y = this.alt.y;
    const fresh = this.freshBuffer();
    this.alt = { ...fresh, savedX: this.alt.savedX, savedY: this.alt.savedY, savedSgr: this.alt.savedSgr, savedCharset: this.alt.savedCharset };
    this.buf = this.normal;
  }

  protected resetModes(): void {
    this.insertMode = false;
    this.wrapMode = true;
    this.originMode = false;
    this.gsets = [];
    this.glevel = 0;
    this.charset = undefined;
  }

  protected fullReset(): void {
    this.parser.reset();
    this.normal = this.freshBuffer();
    this.alt = this.freshBuffer();
    this.buf = this.normal;
    this.link = false;
    this.sgr = defaultSgr();
    this.sgrChanged();
    this.resetModes();
    this.join = 0;
    this.sink.clearScrollback();
  }


  abstract execute(code: number): void;
  abstract csi(collect: string, final: number, params: readonly number[], n: number, subs: ReadonlyArray<number[] | undefined>): void;
  abstract esc(collect: string, final: number): void;
  abstract stringEnd(): void;
}
