/**
 * Command output as views receive it (SPEC 2.2): the update format of a running command's
 * terminal-normalised output (frozen lines sent once, the live region from its first changed
 * line), how a view applies updates (`applyUpdate`), and the styled-text format — plain text with
 * normalised SGR sequences only (every sequence `ESC[0;…m`, each line starting plain and ending
 * reset) — with `styledSpans`, which turns it into spans a view renders with `textContent` and
 * colours built from numbers only, so nothing from a program's output becomes markup. The engine
 * produces these (src/engine/terminal/); the webview consumes them.
 */

export interface CommandOutputUpdate {
  commandId: string;
  seq: number;
  /** Drop everything held first: the first update of a subscription. */
  reset: boolean;
  /** Absolute index of the oldest frozen line still kept: drop held lines before it (they were cut, or the program cleared its scrollback). */
  firstFrozen: number;
  /** Lines that froze (left the live region for good) since the last update, from absolute index `frozenFrom`: append them. */
  frozenFrom: number;
  frozen: string[];
  /** Rows that left the top of the live region since the last update: drop that many live lines first. */
  shift: number;
  /** Then keep the first `liveFrom` live lines and put `live` after them: the live region is now `liveFrom + live.length` lines. */
  liveFrom: number;
  live: string[];
}

/** What a view holds of one command's output. */
export interface CommandOutputView {
  /** Absolute index of frozen[0]. */
  firstFrozen: number;
  frozen: string[];
  live: string[];
}

export function emptyView(): CommandOutputView {
  return { firstFrozen: 0, frozen: [], live: [] };
}

/** Applies one update to a view (in place) and returns it; lines shown = frozen, then live. */
export function applyUpdate(view: CommandOutputView, u: CommandOutputUpdate): CommandOutputView {
  if (u.reset) {
    view.firstFrozen = u.firstFrozen;
    view.frozen = [];
    view.live = [];
  }
  if (u.firstFrozen > view.firstFrozen) {
    view.frozen.splice(0, u.firstFrozen - view.firstFrozen);
    view.firstFrozen = u.firstFrozen;
  }
  if (view.frozen.length === 0) view.firstFrozen = u.frozenFrom;
  view.frozen.push(...u.frozen);
  view.live = view.live.slice(u.shift, u.shift + u.liveFrom).concat(u.live);
  return view;
}


export interface StyledSpan {
  text: string;
  /** Palette index 0–255 (0–15: the theme's ANSI colours) or `#rrggbb`. */
  fg?: number | string;
  bg?: number | string;
  bold?: true;
  dim?: true;
  italic?: true;
  underline?: true;
  blink?: true;
  inverse?: true;
  hidden?: true;
  strikethrough?: true;
  overline?: true;
}

const FLAG_NAMES: ReadonlyArray<[number, keyof StyledSpan]> = [
  [1, 'bold'], [2, 'dim'], [3, 'italic'], [4, 'underline'], [5, 'blink'], [7, 'inverse'], [8, 'hidden'], [9, 'strikethrough'], [53, 'overline'],
];

const hex = (r: number, g: number, b: number): string => '#' + [r, g, b].map((x) => Math.min(255, x).toString(16).padStart(2, '0')).join('');

function spanStyle(params: number[]): Omit<StyledSpan, 'text'> {
  const style: Record<string, unknown> = {};
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    const flag = FLAG_NAMES.find(([n]) => n === p);
    if (flag) style[flag[1]] = true;
    else if ((p >= 30 && p <= 37) || (p >= 90 && p <= 97)) style['fg'] = p >= 90 ? p - 90 + 8 : p - 30;
    else if ((p >= 40 && p <= 47) || (p >= 100 && p <= 107)) style['bg'] = p >= 100 ? p - 100 + 8 : p - 40;
    else if (p === 38 || p === 48) {
      const key = p === 38 ? 'fg' : 'bg';
      if (params[i + 1] === 5) {
        style[key] = Math.min(255, params[i + 2] ?? 0);
        i += 2;
      } else if (params[i + 1] === 2) {
        style[key] = hex(params[i + 2] ?? 0, params[i + 3] ?? 0, params[i + 4] ?? 0);
        i += 4;
      }
    }
  }
  return style as Omit<StyledSpan, 'text'>;
}

/**
 * Splits `colors: 'keep'` text into lines of spans. Text that is not in the normalised form is
 * still safe: any other escape sequence is dropped, never interpreted as markup.
 */
export function styledSpans(text: string): StyledSpan[][] {
  return text.split('\n').map((line) => {
    const spans: StyledSpan[] = [];
    let style: Omit<StyledSpan, 'text'> = {};
    // SGR (group 1), any other CSI sequence, an OSC string, any other escape.
    const re = /\x1b\[([0-9;]*)m|\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[^[\]]?/g; // eslint-disable-line no-control-regex
    let last = 0;
    const push = (t: string): void => {
      // eslint-disable-next-line no-control-regex
      const clean = t.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
      if (clean) spans.push({ text: clean, ...style });
    };
    for (let m = re.exec(line); m !== null; m = re.exec(line)) {
      push(line.slice(last, m.index));
      last = m.index + m[0].length;
      if (m[1] !== undefined) style = spanStyle(m[1] === '' ? [0] : m[1].split(';').map((x) => Number(x) || 0));
    }
    push(line.slice(last));
    return spans;
  });
}
