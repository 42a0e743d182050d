/**
 * Benchmark: bytes on the wire to stream one ~4 KB assistant answer, token by token, to
 * FANOUT_CLIENTS clients (sidebar, editor tab, guest page, CLI), counted as the UTF-8 length of the
 * JSON each webview postMessage would carry. Peer, in the same run: Cline / Roo Code, which post
 * the whole partial message (`{ type: 'partialMessage', partialMessage }`, text = everything so
 * far) on every token. Run: `node --import=tsx bench/stream-fanout.ts`. Not a test: no asserts.
 *
 *   (a) vox           TurnStreamRegistry + one ChunkBatcher per client: new chunks only, batched
 *                     every BATCH_INTERVAL_MS on a simulated clock (tokens at TOKENS_PER_SECOND).
 *   (b) whole-text    the Cline/Roo way: the accumulated text resent on every token.
 *   (c) vox-unbatched TurnStreamRegistry, every chunk its own turnChunks message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TurnStreamRegistry, type TurnChunk, type TurnEnd } from '../src/engine/stream/turn-stream-registry';
import { ChunkBatcher, BATCH_INTERVAL_MS } from '../src/engine/stream/chunk-batcher';
import { ManualClock } from '../test/support/manual-clock';
import { seededRandom } from '../test/support/random';

/** Size of the streamed answer, in characters (the corpus is ASCII prose, so also bytes). */
const ANSWER_CHARS = 4_096;
/** Clients watching the turn at once. */
const FANOUT_CLIENTS = 4;
/** Generation speed of the simulated model (a typical hosted model). */
const TOKENS_PER_SECOND = 50;
/** Extra speeds shown for the batched protocol (local model … fast hosted model). */
const OTHER_RATES = [20, 100, 200];
/** Timed repetitions per approach; the median is reported. */
const REPEATS = 25;
/** Seed of the tokenizer's PRNG, so every run streams the same tokens. */
const SEED = 0x70c3;

const TURN_ID = 'run:3f2b8c1e-9d4a-4e7b-a1c2-5b6d7e8f9a0b'; // the shape of a real run id
const CORPUS = path.resolve(__dirname, '../scripts/demo-corpus.txt');

/** Word pieces with their leading space, long words cut into 3–5 character pieces (~4 chars/token, like BPE on English). */
function tokenize(text: string, rand: () => number): string[] {
  const tokens: string[] = [];
  for (const word of text.match(/\s*\S+|\s+/g) ?? []) {
    let rest = word;
    while (rest.length > 5) {
      const n = 3 + Math.floor(rand() * 3);
      tokens.push(rest.slice(0, n));
      rest = rest.slice(n);
    }
    if (rest) tokens.push(rest);
  }
  return tokens;
}

function loadAnswer(): string {
  const corpus = fs.readFileSync(CORPUS, 'utf8');
  let text = corpus;
  while (text.length < ANSWER_CHARS) text += '\n\n' + corpus;
  const cut = text.lastIndexOf(' ', ANSWER_CHARS);
  return text.slice(0, cut > 0 ? cut : ANSWER_CHARS);
}

interface Wire { bytes: number; messages: number }
const send = (wire: Wire, message: unknown): void => {
  wire.bytes += Buffer.byteLength(JSON.stringify(message), 'utf8');
  wire.messages++;
};
const endMessage = (end: TurnEnd) => ({ type: 'turnEnded', turnId: TURN_ID, status: end.status });

/** (a) Vox: registry fan-out into a ChunkBatcher per client, on a simulated clock. */
function runVoxBatched(tokens: string[], tokensPerSecond: number): Wire {
  const wire: Wire = { bytes: 0, messages: 0 };
  const clock = new ManualClock();
  const reg = new TurnStreamRegistry();
  reg.open(TURN_ID);
  for (let i = 0; i < FANOUT_CLIENTS; i++) {
    const batcher = new ChunkBatcher(
      {
        sendChunks: (chunks: TurnChunk[]) => send(wire, { type: 'turnChunks', turnId: TURN_ID, chunks }),
        sendEnd: (end) => send(wire, endMessage(end)),
      },
      { timer: clock },
    );
    reg.subscribeOrReplay(TURN_ID, 0, batcher);
  }
  const msPerToken = 1_000 / tokensPerSecond;
  for (const t of tokens) {
    reg.append(TURN_ID, 'text', t);
    clock.advance(msPerToken);
  }
  reg.end(TURN_ID, { status: 'completed' });
  return wire;
}

/** (c) Vox without batching: one turnChunks message per chunk per client. */
function runVoxUnbatched(tokens: string[]): Wire {
  const wire: Wire = { bytes: 0, messages: 0 };
  const reg = new TurnStreamRegistry();
  reg.open(TURN_ID);
  for (let i = 0; i < FANOUT_CLIENTS; i++) {
    reg.subscribeOrReplay(TURN_ID, 0, {
      onChunks: (chunks) => send(wire, { type: 'turnChunks', turnId: TURN_ID, chunks }),
      onEnd: (end) => send(wire, endMessage(end)),
    });
  }
  for (const t of tokens) reg.append(TURN_ID, 'text', t);
  reg.end(TURN_ID, { status: 'completed' });
  return wire;
}

/** (b) Cline / Roo Code: the partial ClineMessage, whole text so far, posted on every token. */
function runWholeTextResend(tokens: string[]): Wire {
  const wire: Wire = { bytes: 0, messages: 0 };
  const ts = 1_767_225_600_000;
  let text = '';
  for (const t of tokens) {
    text += t;
    for (let i = 0; i < FANOUT_CLIENTS; i++) send(wire, { type: 'partialMessage', partialMessage: { ts, type: 'say', say: 'text', text, partial: true } });
  }
  for (let i = 0; i < FANOUT_CLIENTS; i++) send(wire, { type: 'partialMessage', partialMessage: { ts, type: 'say', say: 'text', text, partial: false } });
  return wire;
}

function timed(run: () => Wire): { wire: Wire; medianMs: number } {
  const wire = run(); // warm-up; also the byte count (deterministic)
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { wire, medianMs: times[Math.floor(times.length / 2)]! };
}

function main(): void {
  const answer = loadAnswer();
  const tokens = tokenize(answer, seededRandom(SEED));
  if (tokens.join('') !== answer) throw new Error('tokenizer lost text');
  const answerBytes = Buffer.byteLength(answer, 'utf8');

  const rows = [
    { name: `(a) vox: batched new chunks (${BATCH_INTERVAL_MS} ms)`, ...timed(() => runVoxBatched(tokens, TOKENS_PER_SECOND)) },
    { name: '(b) whole-text resend (Cline/Roo)', ...timed(() => runWholeTextResend(tokens)) },
    { name: '(c) vox: unbatched new chunks', ...timed(() => runVoxUnbatched(tokens)) },
  ];
  const vox = rows[0]!.wire.bytes;
  const payload = answerBytes * FANOUT_CLIENTS;

  console.log(`stream-fanout: ${answerBytes} B answer, ${tokens.length} tokens (${(answer.length / tokens.length).toFixed(2)} chars/token), ` +
    `${FANOUT_CLIENTS} clients, ${TOKENS_PER_SECOND} tokens/s simulated, median of ${REPEATS} runs`);
  console.log(`payload floor (answer bytes x clients): ${payload.toLocaleString('en-US')} B; ` +
    'engine ms = wall time to produce and JSON-serialise every message of the turn (median)\n');
  const header = ['approach', 'messages', 'bytes on wire', 'bytes/token', 'x payload', 'vs vox', 'engine ms'];
  const table = rows.map((r) => [
    r.name,
    r.wire.messages.toLocaleString('en-US'),
    r.wire.bytes.toLocaleString('en-US'),
    (r.wire.bytes / tokens.length / FANOUT_CLIENTS).toFixed(1),
    (r.wire.bytes / payload).toFixed(2),
    `${(r.wire.bytes / vox).toFixed(1)}x`,
    r.medianMs.toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) console.log(line(row));

  console.log('');
  console.log(`whole-text resend / vox = ${(rows[1]!.wire.bytes / vox).toFixed(1)}x`);
  console.log(`unbatched / vox         = ${(rows[2]!.wire.bytes / vox).toFixed(1)}x`);
  console.log(`whole-text resend / unbatched = ${(rows[1]!.wire.bytes / rows[2]!.wire.bytes).toFixed(1)}x`);

  console.log(`\nvox batched at other generation speeds (whole-text resend does not depend on speed):`);
  for (const rate of OTHER_RATES) {
    const w = runVoxBatched(tokens, rate);
    console.log(`  ${String(rate).padStart(3)} tokens/s: ${w.messages.toLocaleString('en-US').padStart(5)} messages, ` +
      `${w.bytes.toLocaleString('en-US').padStart(7)} B, whole-text resend / vox = ${(rows[1]!.wire.bytes / w.bytes).toFixed(1)}x`);
  }
}

main();
