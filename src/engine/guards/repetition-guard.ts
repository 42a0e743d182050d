/**
 * RepetitionGuard (SPEC 3.1): watches one stream of model text, delta by delta
 * (any size: one character or a whole line), and throws a RepetitionError the moment the tail of
 * the stream has become a degenerate loop. push() is synchronous and O(1) amortised per token.
 *
 * The unit ("token"). Characters are cut into tokens by a small state machine that does not care
 * how the text was split into deltas (the same text gives the same tokens, whatever the deltas):
 *   - whitespace separates tokens and is never one ("a  b" and "a\nb" are the same two tokens),
 *   - a run of letters/digits is one word token, cut at a camelCase hump (aB), at content-defined
 *     places once it is MIN_PIECE_CHARS long (a hash of the last three characters decides, so
 *     every copy of a string repeated without spaces is cut alike and the copies are the same
 *     tokens, whatever the string's length) and always after MAX_TOKEN_CHARS characters,
 *   - a run of other symbols (punctuation, box drawing, `_`) is one token, cut the same way: a
 *     separator line `=====`, a table rule `|---|---|`, `}}}}` or
 *     `|................|` is one or a few tokens, not hundreds,
 *   - every CJK ideograph, kana, Hangul syllable and CJK punctuation mark is a token of its own,
 *   - a list ordinal (`12.` or `12)` after whitespace, followed by whitespace) becomes `#.`, so
 *     "1. foo 2. foo 3. foo" is a loop while "f(1), 1; f(2), 2" (asserts, data) is not.
 * Each token is hashed with xxh64 (two 32-bit halves in the ring of RING_SIZE hashes) and
 * classified: *lexical* (a word of two or more characters with a letter, not starting with a digit
 * and not one character repeated; any CJK ideograph/kana/Hangul) or *data* (numbers, hex, `0x00`,
 * punctuation, single letters, `AAAA…`).
 *
 * The rule. A cycle of period P (1 ≤ P ≤ MAX_PERIOD tokens; P = 1 is a single-token run) is the
 * tail of the stream repeating, token for token, what came P tokens earlier; its *streak* is how
 * many tokens in a row did so. Candidates come from a table of the last position of every
 * SHINGLE_TOKENS-gram (direct-mapped, SHINGLE_SLOTS slots): a new candidate is looked up only when
 * the current one breaks, and checked against the ring — a constant amount of work per token
 * (a cached hash, one compare, one shingle), no re-scan of the tail.
 * The stream is stopped when the streak reaches P + min(P, LONG_UNIT_EXTRA) (a unit of up to 32
 * tokens seen three times, a longer one twice and 32 tokens more) and
 *   - the cycle is words: P = 1 and the token is lexical, or the unit holds MIN_LEXICAL_IN_UNIT
 *     lexical tokens (one word among numbers and symbols — `.byte 1`, `| yes |`, `0x00,` — is a
 *     data line), and the streak is MIN_CYCLE_TOKENS tokens or
 *     MIN_CYCLE_CHARS characters long (words looping: a word, a sentence, a paragraph, a code line,
 *     a list item with rising numbers, a CJK sentence, an identifier without spaces), or
 *   - the cycle is markup: a short unit (up to MARKUP_MAX_UNIT_TOKENS tokens covering up to
 *     MARKUP_MAX_UNIT_CHARS characters with its whitespace) made mostly of punctuation, markup or
 *     emoji (symbol characters are at least 1/MARKUP_SYMBOL_SHARE of what it covers), with no
 *     digit and not only base64's `+` `/`, and the streak covers MARKUP_CYCLE_CHARS characters
 *     (`|---|---…`, `****…`, `</div></div>…`, `-=-=…`, `.,.,…`, `&nbsp;&nbsp;…`, `🎉🎉…`: a table
 *     rule, a separator or an HTML tail is legitimately a line long, never pages long), or
 *   - otherwise (data), the streak covers DATA_CYCLE_CHARS characters (zero-filled
 *     tables, hexdumps of zero runs, base64 of zeros, `| yes | yes |` rows are legitimately that
 *     repetitive; only a very long stretch of them is a loop).
 * A run of MAX_WHITESPACE_RUN whitespace characters, or of MAX_NEWLINE_RUN line breaks with only
 * whitespace between them (a model emitting blank lines forever), is a single-token run too.
 *
 * Bounds (asserted over the corpus, test/unit/repetition-guard.test.ts): a loop of words whose unit
 * is U characters is stopped within 2·U + LEXICAL_TRIP_SLACK_CHARS characters of where it began; a
 * loop of data within DATA_CYCLE_CHARS + one unit + DATA_TRIP_SLACK_CHARS; a loop of markup
 * within MARKUP_CYCLE_CHARS + one unit + DATA_TRIP_SLACK_CHARS. Known limits, by design:
 * data-like text repeating for more than DATA_CYCLE_CHARS (about 1 KB of `xxd -p`, `od -v` or
 * base64 output of zero bytes) is taken for a loop; so is one word repeated 33 times in a row, and
 * a line of one symbol longer than MARKUP_CYCLE_CHARS (a 260-character `====` rule) or a table of
 * some 60 empty cells in a row. A
 * loop of one word with punctuation ("very, very, very, …") counts as data and is stopped only
 * after DATA_CYCLE_CHARS. A unit longer than MAX_PERIOD tokens (some 2,500 characters of prose)
 * is not seen.
 */
import { loadXxh64, type Hash64 } from '../../protocol/wire/interning';
import { ASCII_CLASS as SHARED_ASCII_CLASS, BASE64_SYMBOLS, HAS_DIGIT, classify as sharedClassify, tokenFacts } from './char-class';
import { RepetitionError } from './repetition-error';

/** Hashes kept (the ring): the longest cycle the guard can see is bounded by it. */
export const RING_SIZE = 1024;
/** Longest cycle looked for, in tokens (a long paragraph; must leave room in the ring for the check). */
export const MAX_PERIOD = 512;
/** Longest token: longer runs of letters or symbols are cut into pieces of this many characters. */
export const MAX_TOKEN_CHARS = 16;
/** A long run is cut at content-defined places, but never into pieces shorter than this (words of up to this length stay whole). */
export const MIN_PIECE_CHARS = 8;
/** Bits of the cut hash that must be zero: a cut after about every 2^bits characters past MIN_PIECE_CHARS. */
export const PIECE_CUT_BITS = 2;
/** Tokens of a shingle, the n-gram whose last position proposes a cycle's period. */
export const SHINGLE_TOKENS = 4;
/** Slots of the shingle table (a power of two; a collision only costs a candidate). */
export const SHINGLE_SLOTS = 4096;
/** A unit must have been repeated once more than its own length, up to this many extra tokens (a long unit trips at 2 copies + this). */
export const LONG_UNIT_EXTRA = 32;
/**
 * Lexical tokens a unit of two or more tokens needs to count as words looping: one word among
 * symbols and numbers (`.byte 1`, `| yes |`, `0x00,`) is a data line repeated, judged as data.
 */
export const MIN_LEXICAL_IN_UNIT = 2;
/** A cycle of words trips once this many tokens in a row repeated the cycle (the seed's 32 for one token)… */
export const MIN_CYCLE_TOKENS = 32;
/** …or once the repeating tokens cover this many characters (long tokens: identifiers and CJK-free text without spaces). */
export const MIN_CYCLE_CHARS = 256;
/** A cycle of data only (digits, hex, punctuation, one repeated character) trips once its repeat covers this many characters. */
export const DATA_CYCLE_CHARS = 1024;
/** Consecutive whitespace characters that count as a loop (of one token). */
export const MAX_WHITESPACE_RUN = 1024;
/** Consecutive line breaks (only whitespace between them) that count as a loop: no answer has this many blank lines in a row. */
export const MAX_NEWLINE_RUN = 64;
/** A markup unit has at most this many tokens (`</`, `div`, `>` is three)… */
export const MARKUP_MAX_UNIT_TOKENS = 8;
/** …covering at most this many characters with its whitespace (two pieces of a long symbol run)… */
export const MARKUP_MAX_UNIT_CHARS = 32;
/** …of which at least 1/this are symbol characters (punctuation, markup, emoji): `&nbsp;` is 2 of 6, `| yes ` (1 of 6) is data. */
export const MARKUP_SYMBOL_SHARE = 3;
/** A cycle of markup trips once its repeat covers this many characters (longer than a legitimate rule or separator line). */
export const MARKUP_CYCLE_CHARS = 256;
/** Longest list ordinal normalised to `#` (digits). */
export const MAX_ORDINAL_DIGITS = 4;
/** Documented trip bound for loops of words: within 2·unit + this many characters of the loop's start. */
export const LEXICAL_TRIP_SLACK_CHARS = 320;
/** Documented trip bound for loops of data: within DATA_CYCLE_CHARS + this many characters (plus one unit). */
export const DATA_TRIP_SLACK_CHARS = 64;
/** Distinct tokens whose hash is kept in the cache before it is cleared (bounds memory on random text). */
const HASH_CACHE_MAX = 4096;

const RING_MASK = RING_SIZE - 1;
const SLOT_MASK = SHINGLE_SLOTS - 1;

/** The character classes of ./char-class.ts (same values), local so the hot loop reads constants, not imported bindings. */
const enum Cls { Space, Word, Symbol, Cjk, CjkMark }
const ASCII_CLASS: Uint8Array = SHARED_ASCII_CLASS;
const classify = sharedClassify as (c: number, ch: string) => number;

/** What the token being read is. */
const enum Tok { None, Word, Symbol }

let xxh64: Hash64 | undefined;

/** Loads xxh64 (WebAssembly, async) once; call before the first `new RepetitionGuard()`. */
export async function loadRepetitionGuard(): Promise<void> {
  xxh64 ??= await loadXxh64();
}

interface TokenHash { lo: number; hi: number; symbols: number; flags: number }

export class RepetitionGuard {
  // The ring: hash halves, characters covered (the token and the whitespace before it), lexical-token prefix counts.
  private readonly lo = new Int32Array(RING_SIZE);
  private readonly hi = new Int32Array(RING_SIZE);
  private readonly len = new Uint32Array(RING_SIZE);
  private readonly lexPrefix = new Uint32Array(RING_SIZE);
  private readonly symbols = new Uint8Array(RING_SIZE);
  private readonly flags = new Uint8Array(RING_SIZE);
  private readonly slotKey = new Int32Array(SHINGLE_SLOTS);
  private readonly slotPos = new Int32Array(SHINGLE_SLOTS).fill(-1);
  private readonly cache = new Map<string, TokenHash>();
  private readonly hash: Hash64;
  /** Tokens pushed into the ring so far. */
  private n = 0;
  private period = 0;
  private streak = 0;
  private streakChars = 0;

  // Tokenizer state (carried across deltas).
  private kind: Tok = Tok.None;
  private carry = ''; // the open token's characters from earlier deltas
  private from = 0; // where the open token starts in the current delta
  private tokLen = 0;
  private covered = 0; // characters since the last emitted token ended (whitespace and the token so far)
  private mono = true;
  private first = 0;
  private c1 = 0; // the last two characters of the run (content-defined cuts)
  private c2 = 0;
  private hasLetter = false;
  private allDigits = true;
  private afterSpace = true;
  private prevLower = false;
  private spaceRun = 0;
  private newlineRun = 0;
  private sawSpace = true; // the character before the current token was whitespace (start of stream counts)
  private pendingOrdinal: { text: string; covered: number } | null = null;

  constructor(hash?: Hash64) {
    const h = hash ?? xxh64;
    if (!h) throw new Error('RepetitionGuard: call loadRepetitionGuard() once before creating a guard (xxh64 loads asynchronously)');
    this.hash = h;
  }

  /** Feeds one streamed delta; throws RepetitionError when the stream has become a loop. */
  push(delta: string): void {
    for (let i = 0; i < delta.length; i++) {
      const c = delta.charCodeAt(i);
      const cls: Cls = c < 0x80 ? (ASCII_CLASS[c] as Cls) : classify(c, delta[i]!);
      if (cls === Cls.Space) {
        this.endToken(Cls.Space, delta, i);
        this.covered++;
        this.sawSpace = true;
        if (++this.spaceRun >= MAX_WHITESPACE_RUN) throw new RepetitionError('singleTokenRun', 1, this.spaceRun);
        if ((c === 0x0a || c === 0x2028 || c === 0x2029) && ++this.newlineRun >= MAX_NEWLINE_RUN) throw new RepetitionError('singleTokenRun', 1, this.newlineRun);
        continue;
      }
      this.spaceRun = 0;
      this.newlineRun = 0;
      if (cls === Cls.Cjk || cls === Cls.CjkMark) {
        this.endToken(cls, delta, i);
        const covered = this.covered + 1;
        this.covered = 0;
        this.sawSpace = false;
        this.emit(delta[i]!, cls === Cls.Cjk, covered);
        continue;
      }
      const want = cls === Cls.Word ? Tok.Word : Tok.Symbol;
      const upper = c >= 0x41 && c <= 0x5a;
      if (this.kind !== want) {
        this.endToken(cls, delta, i);
        this.start(want, false, i);
      } else if (this.tokLen >= MAX_TOKEN_CHARS || (want === Tok.Word && upper && this.prevLower) || (this.tokLen >= MIN_PIECE_CHARS && this.cut(c))) {
        this.endToken(cls, delta, i);
        this.start(want, true, i);
      }
      this.c2 = this.c1;
      this.c1 = c;
      if (this.tokLen === 0) this.first = c;
      else if (c !== this.first) this.mono = false;
      this.tokLen++;
      this.covered++;
      if (want === Tok.Word) {
        const digit = c >= 0x30 && c <= 0x39;
        if (!digit) {
          this.allDigits = false;
          this.hasLetter = true;
        }
        this.prevLower = c >= 0x61 && c <= 0x7a;
      }
    }
    // A token still open at the end of the delta: its characters so far are carried to the next one.
    if (this.kind !== Tok.None) {
      this.carry += this.from === 0 ? delta : delta.slice(this.from);
      this.from = 0;
    }
  }

  /** Forgets everything: the next push starts a new stream (a new turn or model call). */
  reset(): void {
    this.n = 0;
    this.period = 0;
    this.streak = 0;
    this.streakChars = 0;
    this.slotPos.fill(-1);
    this.kind = Tok.None;
    this.carry = '';
    this.from = 0;
    this.tokLen = 0;
    this.covered = 0;
    this.spaceRun = 0;
    this.newlineRun = 0;
    this.sawSpace = true;
    this.pendingOrdinal = null;
  }

  /**
   * A content-defined cut inside a long run (`c` would start the next piece): decided by the last
   * three characters only, so every copy of a repeated string without spaces is cut at the same
   * places and the copies become the same tokens, whatever the unit's length.
   */
  private cut(c: number): boolean {
    return (Math.imul(c ^ Math.imul(this.c1, 31) ^ Math.imul(this.c2, 961), 0x9e3779b1) >>> (32 - PIECE_CUT_BITS)) === 0;
  }

  /** Starts a token; `sameRun`: the next piece of the same run of letters or symbols (its cut hash goes on). */
  private start(kind: Tok, sameRun: boolean, from: number): void {
    if (!sameRun) this.c1 = this.c2 = 0;
    this.kind = kind;
    this.carry = '';
    this.from = from;
    this.tokLen = 0;
    this.mono = true;
    this.hasLetter = false;
    this.allDigits = true;
    this.prevLower = false;
    this.afterSpace = this.sawSpace;
    this.sawSpace = false;
  }

  /** Ends the token being read (if any); `ender`: the class of the character that ended it. */
  private endToken(ender: Cls, delta: string, at: number): void {
    if (this.kind === Tok.None) return;
    const text = this.carry + delta.slice(this.from, at);
    const covered = this.covered;
    const kind = this.kind;
    this.kind = Tok.None;
    this.carry = '';
    this.covered = 0;
    if (kind === Tok.Word) {
      // Digits after whitespace, ended by a symbol: maybe a list ordinal, decided when the symbol ends.
      if (this.allDigits && ender === Cls.Symbol && this.afterSpace && text.length <= MAX_ORDINAL_DIGITS) {
        this.pendingOrdinal = { text, covered };
        return;
      }
      const lexical = this.hasLetter && text.length >= 2 && !this.mono && !(this.first >= 0x30 && this.first <= 0x39);
      this.emit(text, lexical, covered);
      return;
    }
    if (this.pendingOrdinal) {
      const p = this.pendingOrdinal;
      this.pendingOrdinal = null;
      this.emit(ender === Cls.Space && (text === '.' || text === ')') ? '#' : p.text, false, p.covered);
    }
    this.emit(text, false, covered);
  }

  /** One token into the ring: extends or breaks the current cycle, looks up a new one, checks the thresholds. */
  private emit(text: string, lexical: boolean, covered: number): void {
    let h = this.cache.get(text);
    if (!h) {
      const full = this.hash(text);
      const facts = tokenFacts(text);
      h = { lo: Number(BigInt.asIntN(32, full)), hi: Number(BigInt.asIntN(32, full >> 32n)), symbols: facts.symbols, flags: facts.flags };
      if (this.cache.size >= HASH_CACHE_MAX) this.cache.clear();
      this.cache.set(text, h);
    }
    const i = this.n++;
    const r = i & RING_MASK;
    this.lo[r] = h.lo;
    this.hi[r] = h.hi;
    this.len[r] = covered;
    this.symbols[r] = h.symbols;
    this.flags[r] = h.flags;
    this.lexPrefix[r] = (i === 0 ? 0 : this.lexPrefix[(i - 1) & RING_MASK]!) + (lexical ? 1 : 0);

    const p = this.period;
    if (p > 0 && this.same(i, i - p)) {
      this.streak++;
      this.streakChars += covered;
    } else {
      this.period = 0;
      this.streak = 0;
      this.streakChars = 0;
    }
    if (i + 1 >= SHINGLE_TOKENS) {
      let sh = 0x9e3779b9 | 0;
      for (let k = i - SHINGLE_TOKENS + 1; k <= i; k++) sh = Math.imul(sh ^ this.lo[k & RING_MASK]!, 0x85ebca6b) ^ (sh >>> 13);
      const slot = sh & SLOT_MASK;
      if (this.period === 0 && this.slotPos[slot]! >= 0 && this.slotKey[slot] === sh) this.candidate(i, i - this.slotPos[slot]!);
      this.slotKey[slot] = sh;
      this.slotPos[slot] = i;
    }
    if (this.period > 0) this.check(i);
  }

  /** Adopts period `p` if the last SHINGLE_TOKENS tokens really repeat it (the shingle table may collide). */
  private candidate(i: number, p: number): void {
    if (p < 1 || p > MAX_PERIOD || i - p - SHINGLE_TOKENS + 1 < 0) return;
    let chars = 0;
    for (let k = i - SHINGLE_TOKENS + 1; k <= i; k++) {
      if (!this.same(k, k - p)) return;
      chars += this.len[k & RING_MASK]!;
    }
    this.period = p;
    this.streak = SHINGLE_TOKENS;
    this.streakChars = chars;
  }

  /** The unit (the last `p` tokens) is short, mostly symbols, with no digit and not only base64's `+` `/`: a markup loop. */
  private markupUnit(i: number, p: number): boolean {
    let covered = 0;
    let symbols = 0;
    let any = 0;
    let all = BASE64_SYMBOLS;
    for (let k = i - p + 1; k <= i; k++) {
      const r = k & RING_MASK;
      covered += this.len[r]!;
      symbols += this.symbols[r]!;
      any |= this.flags[r]!;
      all &= this.flags[r]!;
    }
    return covered <= MARKUP_MAX_UNIT_CHARS && (any & HAS_DIGIT) === 0 && all === 0 && symbols * MARKUP_SYMBOL_SHARE >= covered;
  }

  private same(a: number, b: number): boolean {
    const ra = a & RING_MASK;
    const rb = b & RING_MASK;
    return this.lo[ra] === this.lo[rb] && this.hi[ra] === this.hi[rb];
  }

  private check(i: number): void {
    const p = this.period;
    const s = this.streak;
    if (s < p + Math.min(p, LONG_UNIT_EXTRA)) return;
    const lexical = (this.lexPrefix[i & RING_MASK]! - this.lexPrefix[(i - p) & RING_MASK]!) >>> 0;
    const trips = lexical >= (p === 1 ? 1 : MIN_LEXICAL_IN_UNIT)
      ? s >= MIN_CYCLE_TOKENS || this.streakChars >= MIN_CYCLE_CHARS
      : this.streakChars >= DATA_CYCLE_CHARS || (this.streakChars >= MARKUP_CYCLE_CHARS && p <= MARKUP_MAX_UNIT_TOKENS && this.markupUnit(i, p));
    if (!trips) return;
    const repetitions = Math.floor((s + p) / p);
    throw p === 1 ? new RepetitionError('singleTokenRun', 1, repetitions) : new RepetitionError('ngramCycle', p, repetitions);
  }
}
