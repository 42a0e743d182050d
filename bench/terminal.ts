/**
 * Benchmark: terminal normalisation throughput, normalizeTerminalOutput next to @xterm/headless
 * (the oracle: the terminal emulator of VS Code's own terminal) on the same bytes — the recordings
 * of real output in test/fixtures/terminal — and the per-chunk cost of CommandOutputHub.
 * Run: `node --import=tsx bench/terminal.ts` (or `npm run bench -- terminal`). Not a test: no
 * asserts on timings; it prints medians, ratios and one goal line (identical text, ≥ 5× faster).
 *
 *   single    one recording as it was captured, a fresh normaliser / Terminal per run (what one
 *             command's output costs, set-up included);
 *   ×N        the recording repeated to about CONCAT_BYTES (steady-state throughput).
 *   xterm     `new Terminal({ cols: TERMINAL_COLUMNS, rows: LIVE_LINES, scrollback, convertEol })`,
 *             `write(bytes, callback)`, then every line's translateToString(true), right-trimmed: the
 *             same text normalizeTerminalOutput returns. Its write is asynchronous (it slices big
 *             inputs and yields to the event loop); the time is until its callback, as a caller
 *             waits. `xterm@256` is the same with 256 columns, xterm's cheaper setting (its lines
 *             are allocated at full width), shown to be fair to it; its text is also checked.
 *   identical the same text, or (past TERMINAL_OUTPUT_TAIL_CHARS) the cut note and then exactly
 *             the terminal's last lines.
 *   hub       CommandOutputHub.append per chunk of CHUNK_SIZES bytes, with no subscriber and with
 *             one view subscriber (styled updates), for all recordings concatenated.
 */
import { performance } from 'node:perf_hooks';
import { CommandOutputHub } from '../src/engine/terminal/hub';
import { LIVE_LINES, normalizeTerminalOutput, TERMINAL_COLUMNS } from '../src/engine/terminal/normalize';
import { oracleTerminal, recordings, terminalText, writeAll } from '../test/fixtures/terminal/oracle';

/** Target size of the concatenated inputs. */
const CONCAT_BYTES = 1 << 20;
/** Untimed runs before the timed ones. */
const WARMUP = 3;
/** Timed rounds; the median is reported. */
const ROUNDS = 7;
/** Least time one approach runs per round (small inputs run many times). */
const BATCH_MS = 25;
/** Chunk sizes for the hub's per-chunk cost (a progress redraw, a pty read, a pipe read). */
const CHUNK_SIZES = [64, 1024, 16384];
/** The goal: normalisation at least this many times faster than @xterm/headless. */
const GOAL_RATIO = 5;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function xtermRun(bytes: Uint8Array, cols: number): Promise<string> {
  const term = oracleTerminal({ cols, rows: LIVE_LINES });
  await writeAll(term, bytes);
  const text = terminalText(term);
  term.dispose();
  return text;
}

interface Row {
  name: string;
  bytes: number;
  mine: number;
  xterm: number;
  xterm256: number;
  identical: boolean;
  identical256: boolean;
}

/**
 * Whether Vox's text is the terminal's: equal, or — when the output exceeded
 * TERMINAL_OUTPUT_TAIL_CHARS — the cut note followed by exactly the terminal's last lines, as many
 * as the note says are left after the cut.
 */
function sameText(mine: string, ref: string): boolean {
  if (mine === ref) return true;
  const m = /^\[terminal: (\d+) earlier lines? cut \(\d+ characters\)\]\n/.exec(mine);
  if (!m) return false;
  const refLines = ref.split('\n');
  return mine.slice(m[0].length) === refLines.slice(Number(m[1])).join('\n');
}

async function measure(name: string, bytes: Uint8Array): Promise<Row> {
  const mineText = normalizeTerminalOutput(bytes);
  const identical = sameText(mineText, await xtermRun(bytes, TERMINAL_COLUMNS));
  const identical256 = sameText(mineText, await xtermRun(bytes, 256));
  for (let i = 0; i < WARMUP; i++) {
    normalizeTerminalOutput(bytes);
    await xtermRun(bytes, TERMINAL_COLUMNS);
    await xtermRun(bytes, 256);
  }
  const t = { mine: [] as number[], xterm: [] as number[], xterm256: [] as number[] };
  // Interleaved rounds, so load from other processes hits every approach alike; within a round an
  // approach runs until BATCH_MS have passed (at least once), and its time is the mean of the batch.
  const batch = async (fn: () => unknown): Promise<number> => {
    let runs = 0;
    const s = performance.now();
    do {
      await fn();
      runs++;
    } while (performance.now() - s < BATCH_MS);
    return (performance.now() - s) / runs;
  };
  for (let r = 0; r < ROUNDS; r++) {
    t.mine.push(await batch(() => normalizeTerminalOutput(bytes)));
    t.xterm.push(await batch(() => xtermRun(bytes, TERMINAL_COLUMNS)));
    t.xterm256.push(await batch(() => xtermRun(bytes, 256)));
  }
  return { name, bytes: bytes.length, mine: median(t.mine), xterm: median(t.xterm), xterm256: median(t.xterm256), identical, identical256 };
}

function concat(bytes: Uint8Array): Uint8Array {
  const n = Math.max(1, Math.round(CONCAT_BYTES / bytes.length));
  const out = new Uint8Array(bytes.length * n);
  for (let i = 0; i < n; i++) out.set(bytes, i * bytes.length);
  return out;
}

const mbps = (bytes: number, ms: number): string => {
  const v = bytes / 1e6 / (ms / 1e3);
  return (v >= 10 ? v.toFixed(1) : v.toPrecision(2)).padStart(7);
};

function hubCost(all: Uint8Array, chunk: number, subscribe: boolean): { perChunkUs: number; mbps: number; updates: number } {
  const times: number[] = [];
  let updates = 0;
  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const hub = new CommandOutputHub();
    hub.start('bench');
    let n = 0;
    if (subscribe) hub.subscribe('bench', () => n++);
    const s = performance.now();
    for (let at = 0; at < all.length; at += chunk) hub.append('bench', all.subarray(at, at + chunk));
    hub.end('bench', 0);
    if (r >= WARMUP) times.push(performance.now() - s);
    updates = n;
  }
  const ms = median(times);
  const chunks = Math.ceil(all.length / chunk);
  return { perChunkUs: (ms * 1000) / chunks, mbps: all.length / 1e6 / (ms / 1e3), updates };
}

async function main(): Promise<void> {
  const recs = recordings();
  console.log(`terminal normalisation vs @xterm/headless ${(await import('@xterm/headless/package.json')).version} — ${LIVE_LINES} rows × ${TERMINAL_COLUMNS} columns, medians of ${ROUNDS} rounds`);
  console.log('input                        bytes   vox MB/s  xterm MB/s  ratio  xterm@256 MB/s  ratio  identical');
  const rows: Row[] = [];
  for (const rec of recs) {
    rows.push(await measure(`${rec.name} (single)`, rec.bytes));
    const big = concat(rec.bytes);
    rows.push(await measure(`${rec.name} ×${big.length / rec.bytes.length}`, big));
  }
  for (const r of rows) {
    const same = r.identical && r.identical256 ? 'yes' : r.identical ? 'yes (xterm@256: no)' : 'NO';
    console.log(`${r.name.padEnd(24)} ${String(r.bytes).padStart(9)}  ${mbps(r.bytes, r.mine)}  ${mbps(r.bytes, r.xterm)}     ${(r.xterm / r.mine).toFixed(1).padStart(5)}×  ${mbps(r.bytes, r.xterm256)}        ${(r.xterm256 / r.mine).toFixed(1).padStart(5)}×  ${same}`);
  }
  const allIdentical = rows.every((r) => r.identical);
  const worst = Math.min(...rows.map((r) => r.xterm / r.mine));
  const worst256 = Math.min(...rows.map((r) => r.xterm256 / r.mine));
  console.log(`goal: identical text on every recording and ≥ ${GOAL_RATIO}× faster than @xterm/headless: ${allIdentical && worst >= GOAL_RATIO ? 'met' : 'NOT met'} (identical: ${allIdentical ? 'all' : 'not all'}; slowest ratio ${worst.toFixed(1)}×, ${worst256.toFixed(1)}× against xterm@256)`);

  const all = new Uint8Array(recs.reduce((n, r) => n + r.bytes.length, 0));
  let at = 0;
  for (const r of recs) {
    all.set(r.bytes, at);
    at += r.bytes.length;
  }
  const big = concat(all);
  console.log(`\nCommandOutputHub.append, all recordings concatenated (${big.length} bytes), both renderings kept`);
  console.log('chunk bytes  subscribers  µs/chunk     MB/s  updates');
  for (const chunk of CHUNK_SIZES) {
    for (const sub of [false, true]) {
      const c = hubCost(big, chunk, sub);
      console.log(`${String(chunk).padStart(11)}  ${String(sub ? 1 : 0).padStart(11)}  ${c.perChunkUs.toFixed(2).padStart(8)}  ${c.mbps.toFixed(1).padStart(7)}  ${String(c.updates).padStart(7)}`);
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
