/**
 * normalizeTerminalOutput against the oracle, @xterm/headless, on the same bytes: every recording
 * of real output in test/fixtures/terminal line by line, each escape kind on its own, chunk
 * boundaries anywhere (escape sequences, UTF-8 and UTF-16 split), the bounds, the coloured form,
 * and a seeded differential run over generated output on a small and a full-size screen.
 */
import * as assert from 'node:assert/strict';
import { LIVE_LINES, normalizeTerminalOutput, TERMINAL_COLUMNS, TERMINAL_OUTPUT_TAIL_CHARS, TerminalNormalizer } from '../../src/engine/terminal/normalize';
import { styledSpans } from '../../src/engine/terminal/styles';
import { fuzzOutput } from '../fixtures/terminal/fuzz';
import { oracleTerminal, recordings, writeAll, xtermText, type OracleOptions } from '../fixtures/terminal/oracle';

const ESC = '\x1b';
// eslint-disable-next-line no-control-regex
const stripSgr = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');

function streamed(chunks: (string | Uint8Array)[], options: { rows?: number; cols?: number; colors?: 'keep' | 'strip' } = {}): string {
  const colors = options.colors ?? 'strip';
  const n = new TerminalNormalizer({ rows: options.rows, cols: options.cols, render: colors === 'keep' ? 'styled' : 'plain', plainLimit: Infinity, styledLimit: { limit: Infinity, measure: 'chars' } });
  for (const c of chunks) n.write(c);
  n.end();
  return n.text(colors);
}

async function assertLikeXterm(input: string | Uint8Array, expected?: string, options: OracleOptions = {}): Promise<void> {
  const mine = options.rows || options.cols ? streamed([input], options) : normalizeTerminalOutput(input);
  const ref = await xtermText(input, options);
  assert.deepEqual(mine.split('\n'), ref.split('\n'), `differs from @xterm/headless for ${JSON.stringify(input).slice(0, 200)}`);
  if (expected !== undefined) assert.equal(mine, expected);
}

describe('terminal normalisation: recordings of real output vs @xterm/headless', () => {
  const recs = recordings();

  it('has the recordings README.md lists', () => {
    assert.deepEqual(recs.map((r) => r.name), ['curl', 'dd', 'docker-redraw', 'git-clone', 'git-color-pager', 'npm']);
  });

  for (const rec of recs) {
    it(`${rec.name}: the same lines as the terminal shows`, async () => {
      const mine = normalizeTerminalOutput(rec.bytes);
      const ref = await xtermText(rec.bytes);
      assert.ok(ref.length > 0);
      assert.deepEqual(mine.split('\n'), ref.split('\n'));
      // The coloured form shows the same text once its SGR sequences are taken out.
      assert.equal(stripSgr(normalizeTerminalOutput(rec.bytes, { colors: 'keep' })), mine);
    });
  }

  it('progress output collapses to its final lines', () => {
    const text = (name: string): string => normalizeTerminalOutput(recs.find((r) => r.name === name)!.bytes);
    assert.match(text('git-clone'), /^Receiving objects: 100% \(402\/402\), 7\.85 MiB \| 11\.55 MiB\/s, done\.$/m);
    assert.doesNotMatch(text('git-clone'), /Counting objects: {2}\d%/);
    assert.equal(text('curl'), '#'.repeat(93) + ' 100.0%');
    assert.equal(text('npm'), '\nadded 10 packages in 1s');
    assert.deepEqual(text('dd').split('\n').slice(1), ['60000+0 records in', '60000+0 records out', '62914560000 bytes (63 GB, 59 GiB) copied, 2.4183 s, 26.0 GB/s']);
    const docker = text('docker-redraw').split('\n');
    assert.deepEqual(docker.slice(2, 6), ['a3ed95caeb02: Pull complete', '5b4c0d2f7a11: Pull complete', 'e9d7f6a1c3b8: Pull complete', '0c1d2e3f4a5b: Pull complete']);
    assert.ok(docker.includes('✔ done in 0.4s (logs)'), 'an OSC 8 hyperlink keeps its text');
  });
});

describe('terminal normalisation: each escape kind (expected text, and the same as @xterm/headless)', () => {
  const cases: Array<[string, string, string]> = [
    ['bare \\r returns to column 0, later text overwrites', 'downloading 10%\rdownloading 100%\rdone', 'doneloading 100%'],
    ['CRLF, bare LF and CR CR LF are all one new line', 'a\r\nb\nc\r\r\nd', 'a\nb\nc\nd'],
    ['trailing spaces and trailing empty lines are dropped', 'a   \n\n  b  \n\n\n', 'a\n\n  b'],
    ['cursor up and down (CUU/CUD)', `one\ntwo\nthree${ESC}[2A\rONE${ESC}[2B\rTHREE`, 'ONE\ntwo\nTHREE'],
    ['CNL/CPL move to column 0 of another line', `aaa\nbbb${ESC}[Fx${ESC}[Ey`, 'xaa\nybb'],
    ['column moves (CHA, CUF, CUB, HPA)', `0123456789${ESC}[3GX${ESC}[2CY${ESC}[4DZ${ESC}[10\`W`, '01Z34Y678W'],
    ['cursor position (CUP, VPA)', `a\nb\nc${ESC}[1;2HX${ESC}[3dY`, 'aX\nb\nc Y'],
    ['erase in line: to end, to start, whole line', `abcdef${ESC}[3G${ESC}[K\nabcdef${ESC}[3G${ESC}[1K\nabcdef${ESC}[2Kxy`, 'ab\n   def\n      xy'],
    ['erase in display: below, whole screen, scrollback', `a\nb\nc${ESC}[2;1H${ESC}[J\n`, 'a'],
    ['erase in display above the cursor (ED 1)', `abc\ndef\nghi${ESC}[2;2H${ESC}[1J`, '\n  f\nghi'],
    ['erase the whole screen keeps the scrollback above it', `${'l\n'.repeat(70)}x${ESC}[2J`, 'l\n'.repeat(7).trimEnd()],
    ['ED 3 clears the scrollback', `${'l\n'.repeat(70)}x${ESC}[3J`, `${'l\n'.repeat(63)}x`],
    ['erase characters, insert and delete characters', `abcdef${ESC}[2G${ESC}[2X\rabcdef${ESC}[3G${ESC}[2P\n12345${ESC}[2G${ESC}[2@`, 'abef\n1  2345'],
    ['backspace spinners', 'working |\b/\b-\b\\\bdone', 'working done'],
    ['tabs move to the next multiple of 8 without erasing', 'abcdefghij\r\tX\nab\tc', 'abcdefghXj\nab      c'],
    ['SGR colours are stripped', `${ESC}[1;31merror${ESC}[0m: ${ESC}[38;5;208mwarn${ESC}[m ${ESC}[38;2;1;2;3mrgb${ESC}[39m`, 'error: warn rgb'],
    ['cursor hide/show and other modes show nothing', `${ESC}[?25lhidden${ESC}[?25h ${ESC}[?2004hshown${ESC}[?2004l`, 'hidden shown'],
    ['OSC 8 hyperlinks keep their text (BEL and ST terminators), titles vanish', `${ESC}]8;;https://example.invalid/a\x07link${ESC}]8;;\x07 ${ESC}]8;id=1;https://example.invalid/b${ESC}\\two${ESC}]8;;${ESC}\\${ESC}]0;title\x07!`, 'link two!'],
    ['docker-style redraw: cursor up, erase line, cursor down', `l1: wait\nl2: wait\n${ESC}[2A${ESC}[2K\rl1: done\r${ESC}[2B${ESC}[1A${ESC}[2K\rl2: done\r${ESC}[1B`, 'l1: done\nl2: done'],
    ['ESC[1G + ESC[0K spinner (npm)', `⠙${ESC}[1G${ESC}[0K⠹${ESC}[1G${ESC}[0Kadded 3 packages\n⠹${ESC}[1G${ESC}[0K`, 'added 3 packages'],
    ['wide characters overwrite by halves', '你好\rab\n你好\ra\n你好\r\x1b[1Cx', 'ab好\na 好\n x好'],
    ['emoji (one column, as xterm.js counts them), combining marks, wide CJK extension B', '🚀 ok\rX\ne\u0301te\u0301 a\u0300\u0301\n𠀀x\rab', 'X ok\ne\u0301te\u0301 a\u0300\u0301\nabx'],
    ['the alternate screen is restored on exit', `before${ESC}[?1049h${ESC}[Hfull-screen app${ESC}[?1049lafter`, 'beforeafter'],
    ['a scroll region scrolls only its rows', `top\n1\n2\n3${ESC}[2;4r${ESC}[4;1H\n4${ESC}[r`, 'top\n2\n3\n4'],
    ['save and restore the cursor', `abc${ESC}7\ndef${ESC}8X${ESC}[s\n${ESC}[uY`, 'abcXY\ndef'],
    ['DEC line drawing characters', `${ESC}(0lqqk${ESC}(B x`, '┌──┐ x'],
    ['an unfinished escape at the end shows nothing', `abc${ESC}[3`, 'abc'],
    ['a byte order mark is dropped anywhere', '\ufeffa\ufeffb', 'ab'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, async () => {
      await assertLikeXterm(input, expected);
    });
  }

  it('cursor up reaches the last LIVE_LINES rows only: older lines are frozen', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const input = `${lines}${ESC}[99A\rTOP`;
    await assertLikeXterm(input);
    const out = normalizeTerminalOutput(input).split('\n');
    assert.equal(out[100 - LIVE_LINES], 'TOP' + `line ${100 - LIVE_LINES}`.slice(3));
    assert.equal(out[0], 'line 0');
  });

  it(`lines longer than TERMINAL_COLUMNS (${TERMINAL_COLUMNS}) wrap as in a terminal that wide`, async () => {
    const input = 'x'.repeat(TERMINAL_COLUMNS + 904) + '\nend';
    await assertLikeXterm(input);
    assert.deepEqual(normalizeTerminalOutput(input).split('\n').map((l) => l.length), [TERMINAL_COLUMNS, 904, 3]);
  });
});

describe('terminal normalisation: chunks cut anywhere', () => {
  const sample = `${ESC}[1;32m✔${ESC}[0m 下载 🚀 e\u0301 ${ESC}]8;;https://example.invalid\x07link${ESC}]8;;${ESC}\\\r\n50%${ESC}[K\r100%${ESC}[1A${ESC}[2K\rtop${ESC}[1B\n${ESC}[?25l⠙${ESC}[1G${ESC}[0Kdone${ESC}[?25h`;
  const whole = normalizeTerminalOutput(sample);

  it('an escape sequence or a surrogate pair split between two string chunks', () => {
    for (let k = 0; k <= sample.length; k++) assert.equal(streamed([sample.slice(0, k), sample.slice(k)]), whole, `cut at ${k}`);
    assert.equal(streamed([...sample]), whole, 'one code unit per chunk');
  });

  it('UTF-8 split between two byte chunks, and one byte per chunk', () => {
    const bytes = new TextEncoder().encode(sample);
    for (let k = 0; k <= bytes.length; k++) assert.equal(streamed([bytes.subarray(0, k), bytes.subarray(k)]), whole, `cut at byte ${k}`);
    assert.equal(streamed(Array.from(bytes, (b) => Uint8Array.of(b))), whole);
  });

  it('an unfinished escape at a chunk end carries over to the next chunk', () => {
    assert.equal(streamed(['50%', `${ESC}`, '[', '2', 'D', 'X']), '5X%');
    assert.equal(streamed(['a', `${ESC}]8;;https://exa`, 'mple.invalid', '\x07b']), 'ab');
  });
});

describe('terminal normalisation: bounds and colours', () => {
  it(`keeps at most TERMINAL_OUTPUT_TAIL_CHARS (${TERMINAL_OUTPUT_TAIL_CHARS}) characters, the tail, with a note of what was cut`, () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'.'.repeat(1 + (i % 40))}`);
    const text = normalizeTerminalOutput(lines.join('\n'));
    assert.ok(text.length <= TERMINAL_OUTPUT_TAIL_CHARS, String(text.length));
    const [note, ...rest] = text.split('\n');
    const m = /^\[terminal: (\d+) earlier lines cut \((\d+) characters\)\]$/.exec(note!);
    assert.ok(m, note);
    assert.deepEqual(rest, lines.slice(Number(m[1])));
    assert.equal(Number(m[2]), lines.slice(0, Number(m[1])).join('\n').length + 1);
  });

  it('one line longer than the bound keeps its end, cut between characters', () => {
    const n = new TerminalNormalizer({ plainLimit: 100, cols: 1_000 });
    n.write('🚀'.repeat(400));
    const text = n.text();
    assert.ok(text.length <= 100);
    assert.match(text, /^\[terminal: 0 earlier lines cut \(\d+ characters\)\]\n(🚀)+$/u);
  });

  it("colors: 'keep' gives normalised SGR only, one style per run, reset at each line end; hyperlink text underlined", () => {
    const out = normalizeTerminalOutput(`${ESC}[1m${ESC}[31mred bold${ESC}[22m red\n${ESC}[38;5;208m${ESC}[48;2;1;2;3mx${ESC}[7my${ESC}[0m plain ${ESC}]8;;u\x07l${ESC}]8;;\x07`, { colors: 'keep' });
    assert.equal(out, `${ESC}[0;1;31mred bold${ESC}[0;31m red${ESC}[0m\n${ESC}[0;38;5;208;48;2;1;2;3mx${ESC}[0;7;38;5;208;48;2;1;2;3my${ESC}[0m plain ${ESC}[0;4ml${ESC}[0m`);
    assert.deepEqual(styledSpans(out), [
      [{ text: 'red bold', bold: true, fg: 1 }, { text: ' red', fg: 1 }],
      [{ text: 'x', fg: 208, bg: '#010203' }, { text: 'y', inverse: true, fg: 208, bg: '#010203' }, { text: ' plain ' }, { text: 'l', underline: true }],
    ]);
  });

  it('styledSpans never passes markup or stray escapes through', () => {
    const spans = styledSpans(`<img src=x onerror=alert(1)> ${ESC}[31m<b>${ESC}]0;t\x07${ESC}[?25l\x07`).flat();
    assert.equal(spans.map((s) => s.text).join(''), '<img src=x onerror=alert(1)> <b>');
    for (const s of spans) for (const [k, v] of Object.entries(s)) if (k === 'fg' || k === 'bg') assert.ok(typeof v === 'number' || /^#[0-9a-f]{6}$/.test(v as string));
  });
});

describe('terminal normalisation: seeded differential run against @xterm/headless', () => {
  it('generated output on an 8 × 20 screen (wrapping, scrolling, scroll regions all the time)', async () => {
    for (let seed = 1; seed <= 150; seed++) {
      const input = fuzzOutput(seed, 120);
      assert.equal(streamed([input], { rows: 8, cols: 20 }), await xtermText(input, { rows: 8, cols: 20 }), `seed ${seed}: ${JSON.stringify(input).slice(0, 300)}`);
    }
  });

  it(`generated output on the full ${LIVE_LINES} × ${TERMINAL_COLUMNS} screen`, async () => {
    for (let seed = 1001; seed <= 1030; seed++) {
      const input = fuzzOutput(seed, 200);
      assert.equal(streamed([input]), await xtermText(input), `seed ${seed}`);
    }
  });
});

describe("terminal normalisation: colours as @xterm/headless holds them (colors: 'keep')", () => {
  /** One style key per code point of each line: colour modes and values, then the flags. */
  function xtermStyles(term: ReturnType<typeof oracleTerminal>): string[][] {
    const buf = term.buffer.active;
    const color = (mode: 'Fg' | 'Bg', cell: NonNullable<ReturnType<NonNullable<ReturnType<typeof buf.getLine>>['getCell']>>): string => {
      if (mode === 'Fg') return cell.isFgDefault() ? 'd' : cell.isFgRGB() ? `#${cell.getFgColor().toString(16).padStart(6, '0')}` : `p${cell.getFgColor()}`;
      return cell.isBgDefault() ? 'd' : cell.isBgRGB() ? `#${cell.getBgColor().toString(16).padStart(6, '0')}` : `p${cell.getBgColor()}`;
    };
    const out: string[][] = [];
    for (let y = 0; y < buf.length; y++) {
      const line = buf.getLine(y)!;
      const keys: string[] = [];
      for (let x = 0; x < line.length; x++) {
        const cell = line.getCell(x)!;
        if (cell.getWidth() === 0) continue;
        const flags = [cell.isBold(), cell.isDim(), cell.isItalic(), cell.isUnderline(), cell.isBlink(), cell.isInverse(), cell.isInvisible(), cell.isStrikethrough(), cell.isOverline()].map((f) => (f ? 1 : 0)).join('');
        const key = `${color('Fg', cell)}/${color('Bg', cell)}/${flags}`;
        for (const _ of cell.getChars() || ' ') keys.push(key);
      }
      out.push(keys);
    }
    return out;
  }

  function myStyles(text: string): string[][] {
    return styledSpans(text).map((spans) =>
      spans.flatMap((s) => {
        const c = (v: number | string | undefined): string => (v === undefined ? 'd' : typeof v === 'number' ? `p${v}` : v);
        const flags = [s.bold, s.dim, s.italic, s.underline, s.blink, s.inverse, s.hidden, s.strikethrough, s.overline].map((f) => (f ? 1 : 0)).join('');
        return [...s.text].map(() => `${c(s.fg)}/${c(s.bg)}/${flags}`);
      }),
    );
  }

  for (const name of ['git-color-pager', 'docker-redraw']) {
    it(`${name}: every character has the colours and attributes the terminal gives it`, async () => {
      const bytes = recordings().find((r) => r.name === name)!.bytes;
      const term = oracleTerminal();
      await writeAll(term, bytes);
      const ref = xtermStyles(term);
      term.dispose();
      const mine = myStyles(normalizeTerminalOutput(bytes, { colors: 'keep' }));
      assert.ok(mine.some((l) => l.some((k) => !k.startsWith('d/d/000000000'))), 'the recording has colours');
      mine.forEach((keys, y) => assert.deepEqual(keys, ref[y]!.slice(0, keys.length), `line ${y}`));
    });
  }
});
