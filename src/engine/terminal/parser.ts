/**
 * The escape-sequence parser of the terminal emulator: Paul Williams' DEC/ANSI state machine
 * (vt100.net/emu/dec_ansi_parser) with the transitions of xterm.js 6, so that every byte ends up
 * where a real terminal puts it — printed, executed as a control, part of a CSI/ESC sequence, or
 * swallowed inside an OSC/DCS/APC string. Its state survives between `parse` calls, so a sequence
 * split across chunks at any position is parsed as if it had arrived whole.
 *
 * It works on UTF-16 code units; code units ≥ 0xA0 (surrogates included) count as printable, as
 * xterm.js's code points ≥ 0xA0 do. Control strings (OSC, DCS, SOS/PM/APC) are skipped, not
 * collected: their content never reaches the screen (an OSC 8 hyperlink keeps only its visible
 * text, a title change does nothing). Parameters follow xterm.js: ZDM (an empty parameter is 0),
 * at most MAX_PARAMS of them, values capped at MAX_PARAM_VALUE, `:` sub-parameters kept per param.
 */

/** Parameters kept per sequence; later ones are dropped (xterm.js keeps 32). */
export const MAX_PARAMS = 32;
/** Sub-parameters (after `:`) kept per sequence. */
export const MAX_SUB_PARAMS = 32;
/** Largest parameter value; larger numbers are capped. */
export const MAX_PARAM_VALUE = 0x7fffffff;
/** Characters of an OSC string collected (enough for an OSC 8 hyperlink's parameters and URI); a longer one is dropped. */
export const MAX_OSC_CHARS = 8_192;

/** What the parser drives (the screen). */
export interface VtHandler {
  /** Prints from s[start] (printable) on, up to the first code unit that is not printable (before `end`); returns where it stopped. */
  print(s: string, start: number, end: number): number;
  /** A C0 or C1 control (BS, HT, LF, CR, …; IND, NEL, HTS). */
  execute(code: number): void;
  /** `CSI <collect> <params> <final>`; `collect` holds the prefix (`?`, `>`, …) and intermediates. */
  csi(collect: string, final: number, params: readonly number[], n: number, subs: ReadonlyArray<number[] | undefined>): void;
  /** `ESC <collect> <final>`. */
  esc(collect: string, final: number): void;
  /** An OSC or DCS string ended (the join state resets, as after any sequence); `osc` is the OSC's text when it ended normally and fit MAX_OSC_CHARS. */
  stringEnd(osc?: string): void;
}

const GROUND = 0;
const ESCAPE = 1;
const ESCAPE_INTERMEDIATE = 2;
const CSI_ENTRY = 3;
const CSI_PARAM = 4;
const CSI_INTERMEDIATE = 5;
const CSI_IGNORE = 6;
const SOS_PM_APC_STRING = 7;
const OSC_STRING = 8;
const DCS_ENTRY = 9;
const DCS_PARAM = 10;
const DCS_INTERMEDIATE = 11;
const DCS_IGNORE = 12;
const DCS_PASSTHROUGH = 13;

export class VtParser {
  private state = GROUND;
  private collect = '';
  private readonly params: number[] = new Array<number>(MAX_PARAMS).fill(0);
  private n = 0;
  private subs: (number[] | undefined)[] = [];
  private subCount = 0;
  private digitIsSub = false;
  private rejectDigits = false;
  private rejectSubDigits = false;
  private osc = '';

  constructor(private readonly h: VtHandler) {
    this.clear();
  }

  reset(): void {
    this.state = GROUND;
    this.clear();
  }

  private clear(): void {
    this.collect = '';
    this.params[0] = 0;
    this.n = 1;
    if (this.subCount) this.subs = [];
    this.subCount = 0;
    this.digitIsSub = false;
    this.rejectDigits = false;
    this.rejectSubDigits = false;
  }

  private param(c: number): void {
    if (c === 0x3b) {
      this.digitIsSub = false;
      if (this.n >= MAX_PARAMS) this.rejectDigits = true;
      else this.params[this.n++] = 0;
    } else if (c === 0x3a) {
      this.digitIsSub = true;
      if (this.rejectDigits || this.subCount >= MAX_SUB_PARAMS) {
        this.rejectSubDigits = true;
        return;
      }
      const list = (this.subs[this.n - 1] ??= []);
      list.push(-1);
      this.subCount++;
    } else {
      if (this.rejectDigits || (this.digitIsSub && this.rejectSubDigits)) return;
      const d = c - 48;
      if (this.digitIsSub) {
        const list = this.subs[this.n - 1]!;
        const cur = list[list.length - 1]!;
        list[list.length - 1] = cur === -1 ? d : Math.min(cur * 10 + d, MAX_PARAM_VALUE);
      } else {
        this.params[this.n - 1] = Math.min(this.params[this.n - 1]! * 10 + d, MAX_PARAM_VALUE);
      }
    }
  }

  /** Rules that apply in every state: ESC, CAN/SUB and the C1 controls. */
  private anywhere(c: number): void {
    const s = this.state;
    if ((s === OSC_STRING || s === DCS_PASSTHROUGH) && (c === 0x1b || c === 0x9c || c === 0x18 || c === 0x1a)) {
      this.h.stringEnd(s === OSC_STRING && c !== 0x18 && c !== 0x1a ? this.oscText() : undefined);
      this.state = GROUND;
      if (c === 0x1b) {
        this.clear();
        this.state = ESCAPE;
      }
      return;
    }
    switch (c) {
      case 0x1b:
        this.clear();
        this.state = ESCAPE;
        return;
      case 0x9c:
        this.state = GROUND;
        return;
      case 0x9d:
        this.osc = '';
        this.state = OSC_STRING;
        return;
      case 0x98:
      case 0x9e:
      case 0x9f:
        this.state = SOS_PM_APC_STRING;
        return;
      case 0x9b:
        this.clear();
        this.state = CSI_ENTRY;
        return;
      case 0x90:
        this.clear();
        this.state = DCS_ENTRY;
        return;
      default:
        this.h.execute(c);
        this.state = GROUND;
    }
  }

  private dispatchCsi(c: number): void {
    this.h.csi(this.collect, c, this.params, this.n, this.subs);
    this.state = GROUND;
  }

  /**
   * The common CSI (`ESC [`, an optional prefix, digits and `;`, a final byte), all within this
   * chunk, dispatched without stepping through the state machine; anything else (sub-parameters,
   * intermediates, controls inside, too many parameters, the chunk ending) returns 0 and the state
   * machine takes it from the ESC, with the same result. `j` is the index after the `[`.
   */
  private fastCsi(s: string, j: number, len: number): number {
    let collect = '';
    let c = s.charCodeAt(j);
    if (c >= 0x3c && c <= 0x3f) {
      collect = s[j]!;
      c = s.charCodeAt(++j);
    }
    const params = this.params;
    params[0] = 0;
    let n = 1;
    for (; j < len; c = s.charCodeAt(++j)) {
      if (c >= 0x30 && c <= 0x39) params[n - 1] = Math.min(params[n - 1]! * 10 + c - 48, MAX_PARAM_VALUE);
      else if (c === 0x3b) {
        if (n >= MAX_PARAMS) return 0;
        params[n++] = 0;
      } else break;
    }
    if (j >= len || c < 0x40 || c > 0x7e) return 0;
    if (this.subCount) this.subs = [];
    this.subCount = 0;
    this.collect = collect;
    this.n = n;
    this.h.csi(collect, c, params, n, this.subs);
    this.state = GROUND;
    return j;
  }

  private oscPut(ch: string): void {
    if (this.osc.length <= MAX_OSC_CHARS) this.osc += ch;
  }

  private oscText(): string | undefined {
    const text = this.osc;
    this.osc = '';
    return text.length <= MAX_OSC_CHARS ? text : undefined;
  }

  parse(s: string): void {
    const h = this.h;
    const len = s.length;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (this.state === GROUND && c >= 0x20 && c !== 0x7f && (c < 0x80 || c >= 0xa0)) {
        i = h.print(s, i, len) - 1;
        continue;
      }
      if (c === 0x1b && this.state === GROUND && s.charCodeAt(i + 1) === 0x5b) {
        const end = this.fastCsi(s, i + 2, len);
        if (end > 0) {
          i = end;
          continue;
        }
      }
      if (c === 0x1b || c === 0x18 || c === 0x1a || (c >= 0x80 && c < 0xa0)) {
        this.anywhere(c);
        continue;
      }
      if (c >= 0xa0) {
        // A code point ≥ 0xA0 outside GROUND: ignored inside strings and ignored sequences, an
        // error anywhere else (the sequence is dropped with it). A surrogate pair is one code point.
        const st = this.state;
        if (st !== CSI_IGNORE && st !== OSC_STRING && st !== DCS_IGNORE && st !== DCS_PASSTHROUGH) this.state = GROUND;
        const pair = c <= 0xdbff && c >= 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
        if (st === OSC_STRING) this.oscPut(pair ? s.slice(i, i + 2) : s[i]!);
        if (pair) i++;
        continue;
      }
      switch (this.state) {
        case GROUND:
          if (c !== 0x7f) h.execute(c);
          break;
        case ESCAPE:
          if (c < 0x20) h.execute(c);
          else if (c === 0x7f) break;
          else if (c < 0x30) {
            this.collect += s[i];
            this.state = ESCAPE_INTERMEDIATE;
          } else if (c === 0x5b) {
            this.clear();
            this.state = CSI_ENTRY;
          } else if (c === 0x5d) {
            this.osc = '';
            this.state = OSC_STRING;
          }
          else if (c === 0x50) {
            this.clear();
            this.state = DCS_ENTRY;
          } else if (c === 0x58 || c === 0x5e || c === 0x5f) this.state = SOS_PM_APC_STRING;
          else if (c < 0x7f) {
            h.esc(this.collect, c);
            this.state = GROUND;
          } else this.state = GROUND;
          break;
        case ESCAPE_INTERMEDIATE:
          if (c < 0x20) h.execute(c);
          else if (c === 0x7f) break;
          else if (c < 0x30) this.collect += s[i];
          else if (c < 0x7f) {
            h.esc(this.collect, c);
            this.state = GROUND;
          } else this.state = GROUND;
          break;
        case CSI_ENTRY:
        case CSI_PARAM:
          if (c < 0x20) h.execute(c);
          else if (c === 0x7f) break;
          else if (c < 0x30) {
            this.collect += s[i];
            this.state = CSI_INTERMEDIATE;
          } else if (c < 0x3c) {
            this.param(c);
            this.state = CSI_PARAM;
          } else if (c < 0x40) {
            if (this.state === CSI_ENTRY) {
              this.collect += s[i];
              this.state = CSI_PARAM;
            } else this.state = CSI_IGNORE;
          } else if (c < 0x7f) this.dispatchCsi(c);
          else this.state = GROUND;
          break;
        case CSI_INTERMEDIATE:
          if (c < 0x20) h.execute(c);
          else if (c === 0x7f) break;
          else if (c < 0x30) this.collect += s[i];
          else if (c < 0x40) this.state = CSI_IGNORE;
          else if (c < 0x7f) this.dispatchCsi(c);
          else this.state = GROUND;
          break;
        case CSI_IGNORE:
          if (c < 0x20) h.execute(c);
          else if (c >= 0x40 && c < 0x7f) this.state = GROUND;
          break;
        case OSC_STRING:
          if (c === 0x07) {
            h.stringEnd(this.oscText());
            this.state = GROUND;
          } else if (c >= 0x20) this.oscPut(s[i]!);
          break;
        case SOS_PM_APC_STRING:
          if (c >= 0xa0) this.state = GROUND;
          break;
        case DCS_ENTRY:
        case DCS_PARAM:
        case DCS_INTERMEDIATE:
          if (c < 0x20 || c === 0x7f) break;
          else if (c < 0x30) this.state = DCS_INTERMEDIATE;
          else if (c < 0x3c) this.state = this.state === DCS_INTERMEDIATE ? DCS_IGNORE : DCS_PARAM;
          else if (c < 0x40) this.state = this.state === DCS_ENTRY ? DCS_PARAM : DCS_IGNORE;
          else if (c < 0x7f) this.state = DCS_PASSTHROUGH;
          else this.state = GROUND;
          break;
        default:
          // DCS_IGNORE, DCS_PASSTHROUGH: swallowed until ST, ESC, CAN or SUB (handled above).
          break;
      }
    }
  }
}
