/**
 * The emulated terminal as the parser drives it: C0/C1 controls, ESC and CSI sequences mapped onto
 * the screen (screen-core.ts), with the semantics of xterm.js 6 for everything a command's output
 * can do to a screen — bare `\r`, `\n` (a new line, as under a pty's `onlcr`), backspace, tabs,
 * cursor moves (CUU/CUD/CUF/CUB/CNL/CPL/CHA/CUP/VPA/HPA/…), erase in line and display, insert and
 * delete characters and lines, scroll regions and scrolling, save/restore cursor, modes (insert,
 * autowrap, origin, LNM, the alternate screen), character sets, SGR, repeat, resets. Replies to
 * queries (DSR, DA, window reports) are never sent: the command has no terminal to read them.
 *
 * `ESC [ 3 J` and `ESC c` clear the scrollback (the sink's `clearScrollback`). Known differences
 * from xterm.js: reverse wraparound (mode 45), protected cells (DECSCA) and the colour of erased
 * cells (BCE) are not modelled; hyperlink text stays underlined after a cursor restore inside the
 * link (xterm.js then stops marking it until an SGR 0 or 4). None changes the plain text.
 */
import { CHARSET_FLAGS, charsetFor, G_LEVEL } from './charsets';
import { NUL } from './rows';
import { ScreenCore } from './screen-core';
import { applySgr as applySgrImport, defaultSgr } from './styles';

export { LIVE_LINES, TERMINAL_COLUMNS, type ScreenOptions, type ScreenSink } from './screen-core';

// Bound once: ESM-to-CommonJS loaders (tsx) turn each call of an imported function into a getter read.
const applySgr = applySgrImport;

/** Characters one `CSI n b` (repeat) may print; a larger count is cut to this. */
const MAX_REPEAT = 65_536;

export class TerminalScreen extends ScreenCore {
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

  /** OSC 8 (hyperlink): the link is not kept, but its text is underlined, as xterm.js shows it; other OSCs (titles, colours) change nothing on screen. */
  stringEnd(osc?: string): void {
    this.join = 0;
    if (osc === undefined || !osc.startsWith('8;')) return;
    const data = osc.slice(2);
    const at = data.indexOf(';');
    if (at === -1) return;
    if (data.length > at + 1) this.link = true;
    else if (data.slice(0, at).trim() === '') this.link = false;
    this.sgrChanged();
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
        // Rows past the bottom (origin mode) do not exist; in the alternate buffer, a full circular
        // list in xterm.js, the index wraps around to the top.
        const row = b === this.alt ? b.lines[(b.y + k) % this.rows] : b.lines[b.y + k];
        if (row) {
          row.touch();
          row.fill('E', this.cols, this.styleId);
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
      switch (final) {
        case 0x4a /* J */: this.eraseInDisplay(p0); break;
        case 0x4b /* K */: this.eraseInLine(p0); break;
        case 0x68 /* h */: this.setModes(collect === '?', params, n, true); break;
        case 0x6c /* l */: this.setModes(collect === '?', params, n, false); break;
      }
      if (collect === '?') {
        this.join = 0;
        return;
      }
    }
    if (collect === '') {
      switch (final) {
        case 0x40 /* @ */: this.restrictCursor(); b.lines[b.y]!.touch(); b.lines[b.y]!.insert(b.x, count, this.cols, this.eraseId); break;
        case 0x41 /* A */: this.moveCursor(0, -(b.y - b.top >= 0 ? Math.min(b.y - b.top, count) : count)); break;
        case 0x42 /* B */: this.moveCursor(0, b.bottom - b.y >= 0 ? Math.min(b.bottom - b.y, count) : count); break;
        case 0x43 /* C */: case 0x61 /* a */: this.moveCursor(count, 0); break;
        case 0x44 /* D */: this.moveCursor(-count, 0); break;
        case 0x45 /* E */: this.moveCursor(0, b.bottom - b.y >= 0 ? Math.min(b.bottom - b.y, count) : count); b.x = 0; break;
        case 0x46 /* F */: this.moveCursor(0, -(b.y - b.top >= 0 ? Math.min(b.y - b.top, count) : count)); b.x = 0; break;
        case 0x47 /* G */: case 0x60 /* ` */: this.setCursor(count - 1, b.y); break;
        case 0x48 /* H */: case 0x66 /* f */: this.setCursor(n >= 2 ? (params[1]! || 1) - 1 : 0, count - 1); break;
        case 0x49 /* I */: if (b.x < this.cols) for (let k = 0; k < count && k < this.cols; k++) b.x = this.nextStop(b.x); break;
        case 0x5a /* Z */: if (b.x < this.cols) for (let k = 0; k < count && k < this.cols; k++) b.x = this.prevStop(b.x); break;
        case 0x4c /* L */: case 0x4d /* M */: this.insertOrDeleteLines(final === 0x4c, count); break;
        case 0x50 /* P */: this.restrictCursor(); b.lines[b.y]!.touch(); b.lines[b.y]!.delete(b.x, count, this.cols, this.eraseId); break;
        case 0x53 /* S */: for (let k = 0; k < count && k <= this.rows; k++) this.rotate(b.top, b.bottom); break;
        case 0x54 /* T */: for (let k = 0; k < count && k <= this.rows; k++) this.rotate(b.bottom, b.top); break;
        case 0x58 /* X */: this.restrictCursor(); b.lines[b.y]!.touch(); b.lines[b.y]!.erase(b.x, b.x + count, this.cols, this.eraseId); break;
        case 0x62 /* b */: this.repeat(count); break;
        case 0x64 /* d */: this.setCursor(b.x, count - 1); break;
        case 0x65 /* e */: this.moveCursor(0, count); break;
        case 0x67 /* g */: if (p0 === 0) b.tabs[b.x] = 0; else if (p0 === 3) b.tabs.fill(0); break;
        case 0x6d /* m */: if (this.styleTable !== null) { applySgr(this.sgr, params, n, subs); this.sgrChanged(); } break;
        case 0x72 /* r */: this.setScrollRegion(p0, n >= 2 ? params[1]! : 0, n); break;
        case 0x73 /* s */: this.saveCursor(); break;
        case 0x75 /* u */: this.restoreCursor(); break;
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
      row.touch();
      row.erase(0, this.cols, this.cols, this.eraseId);
    };
    if (p === 0) {
      const row = b.lines[b.y]!;
      row.touch();
      row.erase(b.x, this.cols, this.cols, this.eraseId);
      for (let y = b.y + 1; y < this.rows; y++) clearRow(y);
    } else if (p === 1) {
      const row = b.lines[b.y]!;
      row.touch();
      row.erase(0, b.x + 1, this.cols, this.eraseId);
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
    row.touch();
    if (p === 0) row.erase(b.x, this.cols, this.cols, this.eraseId);
    else if (p === 1) row.erase(0, b.x + 1, this.cols, this.eraseId);
    else if (p === 2) row.erase(0, this.cols, this.cols, this.eraseId);
  }

  /** Removes the row at `from` and inserts a blank row at `to` (scroll up: top→bottom; down: bottom→top). */
  private rotate(from: number, to: number): void {
    const lines = this.buf.lines;
    const row = lines.splice(from, 1)[0]!;
    row.reset();
    lines.splice(to, 0, row);
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
      row.touch();
      if (insert) row.insert(at, count, this.cols, this.eraseId);
      else row.delete(at, count, this.cols, this.eraseId);
    }
  }

  private repeat(count: number): void {
    if (!this.join) return;
    const b = this.buf;
    const x = b.x - ((this.join >> 1) & 3);
    const cell = x >= 0 ? b.lines[b.y]!.cellAt(x) : NUL;
    if (cell === NUL || cell === '') return;
    const text = cell;
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
    this.link = false;
    this.sgr = defaultSgr();
    this.sgrChanged();
    this.resetModes();
    b.savedX = 0;
    b.savedY = b.ybase;
    b.savedSgr = defaultSgr();
    b.savedCharset = undefined;
  }
}
