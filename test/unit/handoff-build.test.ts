/** The context handoff builder (src/engine/handoff/build.ts): caps with the real tokenizer, every strategy's shape, the verbatim/compacted boundary. */
import { strict as assert } from 'node:assert';
import {
  buildHandoff, compactTurn, cut, COMPACTED_TURN_CHARS, DEFAULT_HANDOFF_TOKEN_CAP, HANDOFF_BYTE_CAP, RECENT_VERBATIM_TURNS, utf8Bytes,
  type HandoffInput, type HandoffTurn,
} from '../../src/engine/handoff/build';
import { textCounter } from '../../src/engine/providers/token-count';
import { countInPieces, handoffCounter, handoffEncoding } from '../../src/engine/handoff/count';

const MIXED = ['設定ファイルを読み込んで', 'エラーを修正する 🙂🚀', 'fix the parser', 'Ünïcödé ß', '👨‍👩‍👧 família', '数据库迁移'];

function turn(i: number, model = 'openai:gpt-a', words = 12): HandoffTurn {
  const text = (k: number) => Array.from({ length: words }, (_, j) => MIXED[(i + j + k) % MIXED.length]).join(' ');
  return {
    runId: `run-${i}`, ordinal: i, provider: model.split(':')[0]!, model, prompt: `#${i} ${text(0)}`, answer: `answer ${i}: ${text(1)}`,
    tools: i % 3 === 0 ? [{ name: 'read_file', arguments: JSON.stringify({ path: `src/${i}.ts` }), status: 'completed', result: text(2) }] : [],
    checkpoints: i % 4 === 0 ? [{ ordinal: i, ref: `refs/vox/checkpoints/t/${i}`, trigger: 'turnEnd', toolName: null, changedCount: 2 }] : [],
  };
}

/** Every surrogate pair whole: no lone surrogate anywhere. */
function wellFormed(s: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

describe('context handoff builder', function () {
  this.timeout(60_000);
  /** The handoff's counter (o200k_base in pieces); `whole` counts a text at once, for checking it. */
  let count: (s: string) => number;
  let whole: (s: string) => number;
  before(async () => {
    whole = await textCounter('o200k_base');
    count = await handoffCounter('anthropic:claude-b');
  });
  const input = (over: Partial<HandoffInput>): HandoffInput => ({
    strategy: 'deltaSinceTargetLastSeen', turns: [], target: { provider: 'anthropic', model: 'anthropic:claude-b' }, forkIndex: null, countTokens: count, ...over,
  });

  it('caps hold on a 500-turn thread of CJK, emoji and accents: ≤ 16,000 tokens (o200k) and ≤ 64,000 bytes, the oldest left out', () => {
    const turns = Array.from({ length: 500 }, (_, i) => turn(i + 1, 'openai:gpt-a', 40));
    for (const strategy of ['deltaSinceTargetLastSeen', 'fullThreadSummary', 'forkDeltaSummary', 'checkpointSummary'] as const) {
      const r = buildHandoff(input({ strategy, turns }))!;
      assert.ok(r.tokens <= DEFAULT_HANDOFF_TOKEN_CAP, `${strategy}: ${r.tokens} tokens`);
      assert.equal(r.tokens, count(r.preamble));
      // The real tokenizer on the whole preamble at once: within the cap too (the pieces never count less).
      assert.ok(whole(r.preamble) <= r.tokens, `${strategy}: ${whole(r.preamble)} > ${r.tokens}`);
      assert.ok(r.bytes <= HANDOFF_BYTE_CAP, `${strategy}: ${r.bytes} bytes`);
      assert.equal(r.bytes, utf8Bytes(r.preamble));
      assert.ok(wellFormed(r.preamble), strategy);
      assert.ok(r.omitted.turns > 0, `${strategy} must leave some of 500 turns out`);
      assert.equal(r.carried.turnsVerbatim + r.carried.turnsCompacted + r.omitted.turns, 500);
      // What is carried is the newest, what is left out the oldest.
      assert.equal(r.carried.runs[r.carried.runs.length - 1], 'run-500');
      assert.deepEqual(r.omitted.runs, turns.slice(0, r.omitted.turns).map((t) => t.runId));
      assert.match(r.preamble, new RegExp(`\\[${r.omitted.turns} earlier runs left out to fit the handoff's size\\]`));
      // Most of the budget is used: the caps bound it, not something smaller.
      assert.ok(r.tokens > DEFAULT_HANDOFF_TOKEN_CAP * 0.9 || r.bytes > HANDOFF_BYTE_CAP * 0.9, `${strategy}: ${r.tokens} tokens, ${r.bytes} bytes`);
    }
  });

  it('a small byte cap binds before the token cap, and still holds', () => {
    const turns = Array.from({ length: 50 }, (_, i) => turn(i + 1));
    const r = buildHandoff(input({ turns, byteCap: 3_000 }))!;
    assert.ok(r.bytes <= 3_000, String(r.bytes));
    assert.ok(r.omitted.turns > 0);
  });

  it('deltaSinceTargetLastSeen: the runs after the target\'s last run; exact attributes', () => {
    const turns = [turn(1, 'anthropic:claude-b'), turn(2, 'openai:gpt-a'), turn(3, 'anthropic:claude-b'), turn(4, 'openai:gpt-a'), turn(5, 'openai:gpt-c')];
    const r = buildHandoff(input({ turns }))!;
    assert.ok(r.preamble.startsWith('<context_handoff covered_runs="4..5" source_model="openai:gpt-c" strategy="deltaSinceTargetLastSeen">\n'), r.preamble.slice(0, 120));
    assert.ok(r.preamble.endsWith('\n</context_handoff>'));
    assert.deepEqual(r.coveredRuns, { from: 4, to: 5 });
    assert.deepEqual(r.carried.runs, ['run-4', 'run-5']);
    assert.deepEqual([r.carried.turnsVerbatim, r.carried.turnsCompacted, r.omitted.turns], [2, 0, 0]);
    assert.match(r.preamble, /handled by openai:gpt-a, openai:gpt-c before you \(anthropic:claude-b\)/);
    // Never seen by the target: every run.
    assert.deepEqual(buildHandoff(input({ turns: turns.slice(1, 2) }))!.coveredRuns, { from: 2, to: 2 });
    // The last run was the target's own: nothing to hand off.
    assert.equal(buildHandoff(input({ turns: turns.slice(0, 3) })), null);
  });

  it('fullThreadSummary: every run, whoever made it', () => {
    const turns = [turn(1, 'anthropic:claude-b'), turn(2), turn(3)];
    const r = buildHandoff(input({ strategy: 'fullThreadSummary', turns }))!;
    assert.ok(r.preamble.startsWith('<context_handoff covered_runs="1..3" source_model="openai:gpt-a" strategy="fullThreadSummary">'));
    assert.equal(r.carried.runs.length, 3);
  });

  it('forkDeltaSummary: the runs since the fork, all compacted; no fork: every run', () => {
    const turns = [turn(1), turn(2), turn(3), turn(4)];
    const r = buildHandoff(input({ strategy: 'forkDeltaSummary', turns, forkIndex: 2 }))!;
    assert.ok(r.preamble.startsWith('<context_handoff covered_runs="3..4" source_model="openai:gpt-a" strategy="forkDeltaSummary">'));
    assert.deepEqual([r.carried.turnsVerbatim, r.carried.turnsCompacted], [0, 2]);
    assert.ok(!r.preamble.includes('<turn '));
    assert.deepEqual(buildHandoff(input({ strategy: 'forkDeltaSummary', turns }))!.coveredRuns, { from: 1, to: 4 });
  });

  it('checkpointSummary: compacted turns, each with its checkpoints', () => {
    const turns = [turn(3), turn(4), turn(8)];
    const r = buildHandoff(input({ strategy: 'checkpointSummary', turns }))!;
    assert.ok(r.preamble.startsWith('<context_handoff covered_runs="3..8" source_model="openai:gpt-a" strategy="checkpointSummary">'));
    assert.equal(r.carried.checkpoints, 2);
    assert.match(r.preamble, /\n {2}checkpoint 4 \(turnEnd, 2 files changed\): refs\/vox\/checkpoints\/t\/4\n/);
    assert.match(r.preamble, /checkpoint 8 \(turnEnd, 2 files changed\): refs\/vox\/checkpoints\/t\/8/);
    assert.equal(r.carried.turnsVerbatim, 0);
  });

  it('manualContext: the user\'s text as written, cut at a code point within the caps', () => {
    const turns = [turn(1), turn(2)];
    const r = buildHandoff(input({ strategy: 'manualContext', turns, manualContext: 'Keep the API stable. 🙂' }))!;
    assert.equal(r.preamble, [
      '<context_handoff covered_runs="1..2" source_model="openai:gpt-a" strategy="manualContext">',
      'This thread was handled by openai:gpt-a before you (anthropic:claude-b). What happened in runs 1 to 2, oldest first:',
      'Keep the API stable. 🙂',
      '</context_handoff>',
    ].join('\n'));
    assert.deepEqual(r.carried.runs, ['run-1', 'run-2']);
    const long = '🙂'.repeat(40_000);
    const big = buildHandoff(input({ strategy: 'manualContext', turns, manualContext: long }))!;
    assert.ok(big.bytes <= HANDOFF_BYTE_CAP && big.tokens <= DEFAULT_HANDOFF_TOKEN_CAP);
    assert.ok(wellFormed(big.preamble));
    assert.ok(big.omitted.manualChars > 0);
    assert.equal(big.carried.manualChars + big.omitted.manualChars, 40_000);
  });

  it('the boundary: the newest RECENT_VERBATIM_TURNS turns verbatim, older ones one compacted line each of ≤ 240 code points', () => {
    const turns = Array.from({ length: 8 }, (_, i) => turn(i + 1, 'openai:gpt-a', 30));
    const r = buildHandoff(input({ turns }))!;
    assert.deepEqual([r.carried.turnsVerbatim, r.carried.turnsCompacted, r.omitted.turns], [RECENT_VERBATIM_TURNS, 8 - RECENT_VERBATIM_TURNS, 0]);
    const verbatimRuns = [...r.preamble.matchAll(/<turn run="(\d+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(verbatimRuns, [6, 7, 8]);
    for (const t of turns.slice(0, 5)) {
      const line = compactTurn(t);
      assert.ok(r.preamble.includes(`${line}\n`), `run ${t.ordinal} compacted`);
      assert.ok(Array.from(line).length <= COMPACTED_TURN_CHARS);
      assert.ok(wellFormed(line));
    }
    // The verbatim turns carry prompt, tool traffic and answer as they were.
    assert.ok(r.preamble.includes(`<user>${turns[5]!.prompt}</user>`));
    assert.ok(r.preamble.includes(`<result>${turns[5]!.tools[0]!.result}</result>`));
    assert.ok(r.preamble.includes(`<assistant>${turns[7]!.answer}</assistant>`));
  });

  it('a turn too big for the verbatim share is compacted, and so are all older ones', () => {
    const huge = { ...turn(3), answer: '数'.repeat(60_000) };
    const r = buildHandoff(input({ turns: [turn(1), turn(2), huge] }))!;
    assert.deepEqual([r.carried.turnsVerbatim, r.carried.turnsCompacted], [0, 3]);
  });

  it('the piecewise count: exact on short lines, never below the whole count, linear on a long run; the encoding per target', () => {
    for (const s of ['hello world', MIXED.join('\n'), 'a'.repeat(2_500), '数'.repeat(3_000)]) assert.ok(countInPieces(whole, s) >= whole(s), s.slice(0, 20));
    assert.equal(countInPieces(whole, 'hello world\nsecond line'), whole('hello world\n') + whole('second line'));
    assert.equal(handoffEncoding('openai:gpt-4'), 'o200k_base');
    assert.equal(handoffEncoding('gpt-4'), 'cl100k_base');
    assert.equal(handoffEncoding('claude-sonnet-4'), 'o200k_base');
  });

  it('cut never splits a surrogate pair; attribute values and the closing tag are escaped', () => {
    assert.equal(cut('a🙂🙂🙂', 3), 'a🙂…');
    const r = buildHandoff(input({ turns: [{ ...turn(1, 'openai:gpt"x'), answer: 'x</context_handoff>y' }] }))!;
    assert.match(r.preamble, /source_model="openai:gpt&quot;x"/);
    assert.equal(r.preamble.match(/<\/context_handoff>/g)!.length, 1);
  });
});
