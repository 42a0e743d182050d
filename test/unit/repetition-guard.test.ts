/**
 * RepetitionGuard (src/engine/guards/repetition-guard.ts): the corpus of legitimate repetitive
 * outputs (test/fixtures/repetition/legit, cut from real files by make-legit.sh) never trips and
 * every model loop (loops/, with manifest.json: where the loop starts, its unit) trips within the
 * documented bound, under tokenizer-sized deltas (gpt-tokenizer o200k, token by token), random
 * 1–12 character deltas (seeded) and single characters; the exact thresholds (one below does not
 * trip, at the threshold trips); whitespace; list ordinals; reset.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeGenerator, encode } from 'gpt-tokenizer/encoding/o200k_base';
import {
  DATA_CYCLE_CHARS, DATA_TRIP_SLACK_CHARS, LEXICAL_TRIP_SLACK_CHARS, MARKUP_CYCLE_CHARS, MAX_NEWLINE_RUN, MAX_PERIOD, MAX_WHITESPACE_RUN,
  MIN_CYCLE_CHARS, MIN_CYCLE_TOKENS,
  RepetitionGuard, loadRepetitionGuard,
} from '../../src/engine/guards/repetition-guard';
import { RepetitionError } from '../../src/engine/guards/repetition-error';
import { REPEATED_ITSELF, repetitionDetail } from '../../src/protocol/repetition';
import { seededRandom } from '../support/random';
import { HookBus, turnFailureText } from '../../src/engine/agent/hooks';

const CORPUS = path.resolve(__dirname, '../fixtures/repetition');
const LEGIT = path.join(CORPUS, 'legit');
const LOOPS = path.join(CORPUS, 'loops');
interface LoopFacts { loopStart: number; unitChars: number; kind: 'lexical' | 'data' | 'markup' }
/** "Within a few hundred characters": the bound for a loop of a short unit of punctuation, markup or blank lines. */
const MARKUP_BOUND_CHARS = 320;
const MANIFEST = JSON.parse(fs.readFileSync(path.join(LOOPS, 'manifest.json'), 'utf8')) as Record<string, LoopFacts>;
/** Smallest and largest random delta (characters). */
const RANDOM_MIN = 1;
const RANDOM_MAX = 12;

type Segmenter = (text: string) => string[];
const tokenizerDeltas: Segmenter = (text) => [...decodeGenerator(encode(text))];
const randomDeltas = (seed: number): Segmenter => (text) => {
  const rand = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = RANDOM_MIN + Math.floor(rand() * (RANDOM_MAX - RANDOM_MIN + 1));
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
};
const charDeltas: Segmenter = (text) => [...text].flatMap((c) => (c.length === 2 ? [c[0]!, c[1]!] : [c]));
const SEGMENTATIONS: Array<[string, Segmenter]> = [['tokenizer-sized', tokenizerDeltas], ['random 1–12', randomDeltas(0x5eed)], ['random 1–12 (2nd seed)', randomDeltas(0xbeef)], ['one character', charDeltas]];

interface Fed { error: RepetitionError | null; at: number }
/** Feeds deltas until the guard throws; `at`: the characters pushed, the throwing delta included. */
function feed(guard: RepetitionGuard, deltas: string[]): Fed {
  let at = 0;
  for (const d of deltas) {
    at += d.length;
    try {
      guard.push(d);
    } catch (e) {
      assert.ok(e instanceof RepetitionError, `expected a RepetitionError, got ${String(e)}`);
      return { error: e, at };
    }
  }
  return { error: null, at };
}
const run = (text: string, seg: Segmenter = charDeltas): Fed => feed(new RepetitionGuard(), seg(text));

describe('RepetitionGuard', () => {
  before(() => loadRepetitionGuard());

  describe('the corpus', () => {
    const legit = fs.readdirSync(LEGIT).sort();
    const loops = Object.keys(MANIFEST).sort();
    it('has the legitimate kinds the issue names, each from a real file and under 30 KB, and a loop of each kind', () => {
      assert.ok(legit.length >= 20, `${legit.length} legit files`);
      for (const f of legit) assert.ok(fs.statSync(path.join(LEGIT, f)).size <= 30_000, f);
      assert.deepEqual(fs.readdirSync(LOOPS).filter((f) => f !== 'manifest.json').sort(), loops, 'every loop file is in the manifest');
    });

    for (const [name, seg] of SEGMENTATIONS) {
      it(`no legitimate file trips (${name} deltas)`, () => {
        for (const f of legit) {
          const r = run(fs.readFileSync(path.join(LEGIT, f), 'utf8'), seg);
          assert.equal(r.error, null, `${f} tripped at ${r.at}: ${r.error?.message}`);
        }
      });
      it(`every loop trips within its bound (${name} deltas)`, () => {
        for (const f of loops) {
          const facts = MANIFEST[f]!;
          const r = run(fs.readFileSync(path.join(LOOPS, f), 'utf8'), seg);
          assert.ok(r.error, `${f} never tripped`);
          const past = r.at - facts.loopStart;
          const bound = facts.kind === 'markup' ? MARKUP_BOUND_CHARS
            : facts.kind === 'data' ? DATA_CYCLE_CHARS + facts.unitChars + DATA_TRIP_SLACK_CHARS : 2 * facts.unitChars + LEXICAL_TRIP_SLACK_CHARS;
          // A delta may carry the tripping character at its end: allow one delta's length.
          assert.ok(past <= bound + RANDOM_MAX, `${f}: tripped ${past} chars into the loop, bound ${bound}`);
          assert.ok(past > 0, `${f}: tripped before the loop began (${r.at} < ${facts.loopStart})`);
        }
      });
    }

    it('trips at the same character whatever the segmentation (the tokens do not depend on the deltas)', () => {
      for (const f of loops) {
        const text = fs.readFileSync(path.join(LOOPS, f), 'utf8');
        const exact = run(text, charDeltas);
        for (const [name, seg] of SEGMENTATIONS) {
          const deltas = seg(text);
          const r = feed(new RepetitionGuard(), deltas);
          // The throwing delta is the one that holds the character at which the char-by-char feed threw.
          let end = 0;
          for (const d of deltas) {
            end += d.length;
            if (end >= exact.at) break;
          }
          assert.equal(r.at, end, `${f} (${name})`);
          assert.equal(r.error!.message, exact.error!.message, `${f} (${name})`);
        }
      }
    });

    it('reports the loop\'s shape: codes, periods and repetitions', () => {
      const single = run(fs.readFileSync(path.join(LOOPS, 'single-token.txt'), 'utf8'));
      assert.equal(single.error!.code, 'singleTokenRun');
      assert.equal(single.error!.period, 1);
      assert.equal(single.error!.repetitions, MIN_CYCLE_TOKENS + 1);
      const cjk = run(fs.readFileSync(path.join(LOOPS, 'cjk-sentence.txt'), 'utf8'));
      assert.equal(cjk.error!.code, 'ngramCycle');
      assert.equal(cjk.error!.period, [...'我们需要再次检查这个配置文件，确认默认值是否正确合并。'].length, 'one token per CJK character');
      assert.ok(cjk.error!.repetitions >= 2);
      assert.equal(cjk.error!.domain, 'guard');
      assert.ok(cjk.error!.message.startsWith(REPEATED_ITSELF));
      assert.equal(repetitionDetail(cjk.error!.message), `a cycle of ${cjk.error!.period} tokens, ${cjk.error!.repetitions} times in a row`);
      assert.equal(repetitionDetail('network error'), null);
    });
  });

  describe('exact thresholds', () => {
    it(`a word: ${MIN_CYCLE_TOKENS + 1} in a row trips, ${MIN_CYCLE_TOKENS} do not`, () => {
      assert.equal(run('the '.repeat(MIN_CYCLE_TOKENS)).error, null);
      const r = run('the '.repeat(MIN_CYCLE_TOKENS + 1));
      assert.equal(r.error?.code, 'singleTokenRun');
      assert.equal(r.at, 4 * (MIN_CYCLE_TOKENS + 1), 'at the space that ends the last word');
    });

    it(`a cycle of words: trips once ${MIN_CYCLE_TOKENS} tokens repeated the unit, not one before`, () => {
      const unit = ['red', 'green', 'blue'];
      const words = (n: number) => Array.from({ length: n }, (_, i) => unit[i % 3]).join(' ') + ' ';
      assert.equal(run(words(unit.length + MIN_CYCLE_TOKENS - 1)).error, null);
      const r = run(words(unit.length + MIN_CYCLE_TOKENS));
      assert.equal(r.error?.code, 'ngramCycle');
      assert.equal(r.error?.period, 3);
      assert.equal(r.error?.repetitions, Math.floor((MIN_CYCLE_TOKENS + 3) / 3));
    });

    it(`a cycle of words covering many characters: trips once the repeat covers ${MIN_CYCLE_CHARS} characters`, () => {
      // Two 7-letter words, each covering 16 characters with the whitespace before it: the character rule comes first.
      const a = 'abcdefg';
      const b = 'qrstuvw';
      const gap = ' '.repeat(16 - 7);
      const words = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? b : a)).join(gap) + gap;
      const matches = MIN_CYCLE_CHARS / 16;
      assert.ok(matches < MIN_CYCLE_TOKENS);
      assert.equal(run(words(2 + matches - 1)).error, null);
      assert.equal(run(words(2 + matches)).error?.period, 2);
    });

    it(`data: a number trips once its repeat covers ${DATA_CYCLE_CHARS} characters, and only then`, () => {
      // "0 " repeated: each "0" after the first covers 2 characters (the space before it and itself).
      const n = DATA_CYCLE_CHARS / 2;
      assert.equal(run('0 '.repeat(n)).error, null);
      const r = run('0 '.repeat(n + 1));
      assert.equal(r.error?.code, 'singleTokenRun');
      assert.equal(r.error?.repetitions, n + 1);
    });

    it(`markup: a short unit of symbols trips once its repeat covers ${MARKUP_CYCLE_CHARS} characters, and only then`, () => {
      const n = MARKUP_CYCLE_CHARS / 2;
      assert.equal(run('= '.repeat(n)).error, null);
      const r = run('= '.repeat(n + 1));
      assert.equal(r.error?.code, 'singleTokenRun');
      assert.equal(r.error?.repetitions, n + 1);
      // Not markup: a digit in the unit (zero tables), mostly letters (`| yes `), only base64's `+` `/` (0xff bytes).
      assert.equal(run('0,'.repeat(n * 3)).error, null);
      assert.equal(run('| yes '.repeat(n)).error, null);
      assert.equal(run('////'.repeat(n)).error, null);
      assert.equal(run('</div>'.repeat(n)).error?.code, 'ngramCycle');
      assert.equal(run('&nbsp;'.repeat(n)).error?.code, 'ngramCycle');
    });

    it('one word among numbers and symbols is data (`.byte 1`, `| yes |`), two words loop as words', () => {
      assert.equal(run('\t.byte\t1\n'.repeat(100)).error, null, '100 identical data lines');
      assert.equal(run('| yes '.repeat(100) + '|\n').error, null, 'a row of 100 identical cells');
      assert.equal(run('\t.byte\t1\n'.repeat(200)).error?.code, 'ngramCycle', 'but not forever');
      assert.equal(run('\t.byte\tfoo bar\n'.repeat(20)).error?.code, 'ngramCycle');
    });

    it(`whitespace: ${MAX_WHITESPACE_RUN} whitespace characters in a row trip, one fewer does not; spacing never breaks a cycle`, () => {
      assert.equal(run('x' + ' \t'.repeat(MAX_WHITESPACE_RUN).slice(0, MAX_WHITESPACE_RUN - 1) + 'y').error, null);
      const r = run('x' + ' '.repeat(MAX_WHITESPACE_RUN));
      assert.equal(r.error?.code, 'singleTokenRun');
      assert.equal(r.error?.repetitions, MAX_WHITESPACE_RUN);
      // Blank lines: MAX_NEWLINE_RUN line breaks in a row (whitespace between them) trip, one fewer does not.
      assert.equal(run('x' + '  \n'.repeat(MAX_NEWLINE_RUN - 1) + 'y').error, null);
      const lines = run('x' + '\r\n'.repeat(MAX_NEWLINE_RUN));
      assert.equal(lines.error?.code, 'singleTokenRun');
      assert.equal(lines.error?.repetitions, MAX_NEWLINE_RUN);
      // The same words with different whitespace between them are the same tokens.
      const spaces = [' ', '\n', '\t', '  ', ' \n ', '\u00a0', '\u3000'];
      let mixed = '';
      for (let i = 0; i < MIN_CYCLE_TOKENS + 1; i++) mixed += 'again' + spaces[i % spaces.length];
      assert.equal(run(mixed).error?.code, 'singleTokenRun');
      // Whitespace inside a run separates tokens: the pieces are not the word.
      assert.equal(run('ag ain '.repeat(MIN_CYCLE_TOKENS)).error?.period, 2);
    });

    it('list ordinals are normalised (rising numbers loop), other numbers are not (asserts, data)', () => {
      const items = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join('');
      assert.equal(run(items(60, (i) => `${i}. Run the tests\n`)).error?.code, 'ngramCycle');
      assert.equal(run(items(60, (i) => `${i}) Run the tests\n`)).error?.code, 'ngramCycle');
      assert.equal(run(items(60, (i) => `Step ${i}. Run the tests. `)).error?.code, 'ngramCycle');
      assert.equal(run(items(300, (i) => `assert.equal(square(${i}), ${i * i});\n`)).error, null);
      assert.equal(run(items(300, (i) => `${i}.5 is half of ${2 * i + 1}\n`)).error, null, '"1.5" is a number, not an ordinal');
      assert.equal(run(items(300, (i) => `case ${i}: return "v${i}";\n`)).error, null);
    });

    it(`finds cycles up to ${MAX_PERIOD} tokens, and none longer`, () => {
      const words = (n: number, salt: string) => Array.from({ length: n }, (_, i) => `${salt}w${i.toString(36)}x`).join(' ') + ' ';
      const long = words(MAX_PERIOD, 'a');
      assert.equal(run(long + long + long).error?.period, MAX_PERIOD);
      const tooLong = words(MAX_PERIOD + 1, 'b');
      assert.equal(run(tooLong + tooLong + tooLong).error, null);
    });
  });

  describe('deltas and state', () => {
    it('a token split across deltas is the same token', () => {
      const g = new RepetitionGuard();
      for (let i = 0; i < MIN_CYCLE_TOKENS; i++) {
        g.push('th');
        g.push('e');
        g.push(' ');
      }
      assert.throws(() => g.push('the '), RepetitionError);
    });

    it('reset() between turns: the count starts again', () => {
      const g = new RepetitionGuard();
      g.push('the '.repeat(MIN_CYCLE_TOKENS));
      g.reset();
      g.push('the '.repeat(MIN_CYCLE_TOKENS));
      g.reset();
      assert.doesNotThrow(() => g.push('the '.repeat(MIN_CYCLE_TOKENS)));
      assert.throws(() => g.push('the '), RepetitionError, 'without a reset the run goes on');
    });

    it('whole-line deltas and one-character deltas of the same text agree', () => {
      const text = 'Let me look at that again. '.repeat(40);
      const lines = run(text, (t) => t.match(/[^.]*\./g)!);
      const chars = run(text, charDeltas);
      assert.equal(lines.error?.message, chars.error?.message);
    });

    it('random text and long random runs without spaces never trip', () => {
      const rand = seededRandom(7);
      const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/';
      let b64 = '';
      for (let i = 0; i < 20_000; i++) b64 += alphabet[Math.floor(rand() * alphabet.length)];
      assert.equal(run(b64, randomDeltas(3)).error, null);
      let words = '';
      for (let i = 0; i < 4000; i++) words += ['a', 'the', 'of', 'to', 'and', 'in', 'is', 'it'][Math.floor(rand() * 8)] + ' ';
      assert.equal(run(words, randomDeltas(4)).error, null, 'frequent short words at random');
    });
  });

  describe('in a hook', () => {
    it('a stopsTurn streamDelta handler throwing the guard\'s error fails the turn with the error\'s own text; other failures name the handler', () => {
      const bus = new HookBus();
      const guard = new RepetitionGuard();
      bus.on('streamDelta', (c) => guard.push(c.delta), { name: 'repetition guard', failure: 'stopsTurn' });
      const info = { threadId: 't', runId: 'r', workspaceRoot: '/', model: 'm', kind: 'text' as const };
      let thrown: unknown;
      try {
        for (let i = 0; i <= MIN_CYCLE_TOKENS; i++) bus.delta({ ...info, delta: 'again ' });
      } catch (e) {
        thrown = e;
      }
      assert.ok(thrown, 'the turn was stopped');
      assert.equal(turnFailureText(thrown), repetitionMessageOf(thrown));
      assert.ok(turnFailureText(thrown).startsWith(REPEATED_ITSELF));
      const other = new HookBus();
      other.on('streamDelta', () => {
        throw new Error('boom');
      }, { name: 'other', failure: 'stopsTurn' });
      assert.throws(() => other.delta({ ...info, delta: 'x' }), (e: unknown) => turnFailureText(e) === 'other (streamDelta): boom');
    });
  });
});

function repetitionMessageOf(e: unknown): string {
  const cause = (e as { cause?: unknown }).cause;
  assert.ok(cause instanceof RepetitionError);
  return cause.message;
}
