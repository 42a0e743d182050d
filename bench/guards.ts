/**
 * Benchmark: nanoseconds per streamed delta of the repetition guard (src/engine/guards/), next to
 * two naive peers in the same run, over the legitimate corpus (test/fixtures/repetition/legit,
 * which must not trip) and the loops (which must). Run: `npm run bench:guards`. Not a test.
 *
 *   (a) vox           RepetitionGuard: content-defined tokens, xxh64 ring, shingle-proposed cycles
 *   (b) seed-literal  the seed's rule taken literally with a delta as the token: a ring of 1024
 *                     deltas, a run of 32 equal ones or any period 3..12 repeated 5 times at the
 *                     tail, every period re-checked on every delta
 *   (c) tail-rescan   re-scanning the tail on every delta: does the text end with a unit of
 *                     3..200 characters repeated 3 times (character compares, early exit)
 *
 * Each is timed over the same pre-cut deltas (tokenizer-sized: gpt-tokenizer o200k token by token;
 * random 1–12 characters) REPEATS times, the median reported, with how many legit files tripped
 * (false stops; a tripped stream is reset and goes on) and how many loops were caught. Goal for
 * (a): under 1 µs per delta, invisible next to decoding.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeGenerator, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { RepetitionGuard, loadRepetitionGuard } from '../src/engine/guards/repetition-guard';
import { seededRandom } from '../test/support/random';

/** Timed passes per approach and segmentation; the median is reported. */
const REPEATS = 7;
/** The seed's literal thresholds: a run of this many equal tokens… */
const SEED_RUN = 32;
/** …or a period in this range… */
const SEED_MIN_PERIOD = 3;
const SEED_MAX_PERIOD = 12;
/** …repeated this many times at the tail. */
const SEED_REPS = 5;
/** The seed's ring of tokens. */
const SEED_RING = 1024;
/** Characters of the tail the re-scanning peer keeps. */
const TAIL_CHARS = 2048;
/** The re-scanning peer's units (characters) and how often one must repeat at the end. */
const RESCAN_MIN_UNIT = 3;
const RESCAN_MAX_UNIT = 200;
const RESCAN_REPS = 3;
/** Seed of the random segmentation. */
const SEED = 0x9a4d;

const CORPUS = path.resolve(__dirname, '../test/fixtures/repetition');

interface Detector { push(delta: string): void; reset(): void }

class SeedLiteral implements Detector {
  private ring: string[] = [];
  push(delta: string): void {
    const r = this.ring;
    r.push(delta);
    if (r.length > SEED_RING) r.shift();
    const n = r.length;
    let run = 1;
    while (run < SEED_RUN && run < n && r[n - 1 - run] === delta) run++;
    if (run >= SEED_RUN) throw new Error('singleTokenRun');
    for (let p = SEED_MIN_PERIOD; p <= SEED_MAX_PERIOD; p++) {
      if (n < p * SEED_REPS) break;
      let ok = true;
      for (let k = n - p * (SEED_REPS - 1); k < n && ok; k++) ok = r[k] === r[k - p];
      if (ok) throw new Error('ngramCycle');
    }
  }
  reset(): void {
    this.ring = [];
  }
}

class TailRescan implements Detector {
  private tail = '';
  push(delta: string): void {
    const t = (this.tail = (this.tail + delta).slice(-TAIL_CHARS));
    const n = t.length;
    // Does the tail end with some unit of RESCAN_MIN_UNIT..RESCAN_MAX_UNIT characters, RESCAN_REPS times?
    for (let u = RESCAN_MIN_UNIT; u <= RESCAN_MAX_UNIT && u * RESCAN_REPS <= n; u++) {
      let k = n - 1;
      const stop = n - u * (RESCAN_REPS - 1);
      while (k >= stop && t.charCodeAt(k) === t.charCodeAt(k - u)) k--;
      if (k < stop) throw new Error('cycle');
    }
  }
  reset(): void {
    this.tail = '';
  }
}

function files(dir: string): Array<{ name: string; text: string }> {
  return fs.readdirSync(dir).filter((f) => f !== 'manifest.json').sort().map((name) => ({ name, text: fs.readFileSync(path.join(dir, name), 'utf8') }));
}

const tokenizerDeltas = (text: string) => [...decodeGenerator(encode(text))];
function randomDeltas(text: string): string[] {
  const rand = seededRandom(SEED);
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(rand() * 12);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Feeds every stream; a trip is counted, the detector reset, the stream goes on (legit) or ends (loop). */
function pass(make: () => Detector, streams: string[][], stopAtTrip: boolean): { ms: number; trips: number; tripped: Set<number> } {
  const d = make();
  let trips = 0;
  const tripped = new Set<number>();
  const t0 = performance.now();
  streams.forEach((deltas, s) => {
    d.reset();
    for (const delta of deltas) {
      try {
        d.push(delta);
      } catch {
        trips++;
        tripped.add(s);
        d.reset();
        if (stopAtTrip) break;
      }
    }
  });
  return { ms: performance.now() - t0, trips, tripped };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  await loadRepetitionGuard();
  const legit = files(path.join(CORPUS, 'legit'));
  const loops = files(path.join(CORPUS, 'loops'));
  const approaches: Array<[string, () => Detector]> = [['vox', () => new RepetitionGuard()], ['seed-literal', () => new SeedLiteral()], ['tail-rescan', () => new TailRescan()]];
  console.log(`corpus: ${legit.length} legitimate files (${legit.reduce((a, f) => a + f.text.length, 0)} chars), ${loops.length} loops`);
  for (const [segName, seg] of [['tokenizer-sized', tokenizerDeltas], ['random 1–12', randomDeltas]] as const) {
    const legitStreams = legit.map((f) => seg(f.text));
    const loopStreams = loops.map((f) => seg(f.text));
    const deltas = legitStreams.reduce((a, s) => a + s.length, 0);
    console.log(`\n## ${segName} deltas: ${deltas} over the legitimate corpus`);
    console.log('approach       ns/delta   legit files tripped (false stops)   loops caught');
    const ns: Record<string, number> = {};
    for (const [name, make] of approaches) {
      pass(make, legitStreams, false); // warm-up
      const runs = Array.from({ length: REPEATS }, () => pass(make, legitStreams, false));
      const falseStops = runs[0]!.tripped;
      ns[name] = (median(runs.map((r) => r.ms)) * 1e6) / deltas;
      const caught = pass(make, loopStreams, true).tripped.size;
      const names = [...falseStops].map((i) => legit[i]!.name);
      console.log(`${name.padEnd(14)} ${ns[name]!.toFixed(0).padStart(8)}   ${String(falseStops.size).padStart(2)} ${names.length ? `(${names.slice(0, 6).join(', ')}${names.length > 6 ? ', …' : ''})` : ''}`.padEnd(68) + `${caught}/${loops.length}`);
    }
    console.log(`ratio: vox is ${(ns['seed-literal']! / ns['vox']!).toFixed(2)}× the speed of seed-literal, ${(ns['tail-rescan']! / ns['vox']!).toFixed(1)}× tail-rescan; goal under 1000 ns/delta: ${ns['vox']! < 1000 ? 'met' : 'NOT met'}`);
  }
}

void main();
