/** ThinkTagSplitter (src/engine/sanitize/think-tags.ts): tags split at every position, random segmentations, round trips, code. */
import { strict as assert } from 'node:assert';
import { ThinkTagSplitter, splitThinkTags, THINK_TAG_NAMES, MAX_TAG_CHARS, type SplitPart } from '../../src/engine/sanitize/think-tags';
import { seededRandom } from '../support/random';

function run(deltas: string[]): { text: string; reasoning: string; parts: SplitPart[] } {
  const s = new ThinkTagSplitter();
  const parts = [...deltas.flatMap((d) => s.push(d)), ...s.flush()];
  return {
    text: parts.filter((p) => p.kind === 'text').map((p) => p.delta).join(''),
    reasoning: parts.filter((p) => p.kind === 'reasoning').map((p) => p.delta).join(''),
    parts,
  };
}

/** Splits by code point (a surrogate pair is never cut, as providers never cut one either). */
function segment(s: string, r: () => number, maxLen: number): string[] {
  const cps = Array.from(s);
  const out: string[] = [];
  for (let i = 0; i < cps.length;) {
    const n = 1 + Math.floor(r() * maxLen);
    out.push(cps.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

describe('ThinkTagSplitter', () => {
  it('every tag name, split at every index of the string, gives the same text and reasoning', () => {
    for (const name of THINK_TAG_NAMES) {
      for (const open of [`<${name}>`, `<${name} type="x">`, `<${name.toUpperCase()}>`]) {
        const input = `${open}plan: a < b, 2 steps</${name}>answer <b>bold</b>`;
        for (let i = 0; i <= input.length; i++) {
          for (let j = i; j <= input.length; j += 3) {
            const got = run([input.slice(0, i), input.slice(i, j), input.slice(j)]);
            assert.equal(got.reasoning, 'plan: a < b, 2 steps', `${name} split at ${i},${j}`);
            assert.equal(got.text, 'answer <b>bold</b>', `${name} split at ${i},${j}`);
          }
        }
      }
    }
  });

  it('one character per delta emits reasoning before the block closes (it streams)', () => {
    const s = new ThinkTagSplitter();
    const seen: SplitPart[] = [];
    for (const ch of '<think>abc') seen.push(...s.push(ch));
    assert.deepEqual(seen, [{ kind: 'reasoning', delta: 'a' }, { kind: 'reasoning', delta: 'b' }, { kind: 'reasoning', delta: 'c' }]);
    assert.equal(s.inBlock, true);
    // Only a possible tag prefix is held back.
    assert.deepEqual(s.push('</thi'), []);
    assert.deepEqual(s.push('nk>ok'), [{ kind: 'text', delta: 'ok' }]);
  });

  it('round trip on seeded random documents under random segmentations: text and reasoning are exactly the parts', () => {
    const r = seededRandom(1414);
    const words = ['alpha', ' ', '\n', 'x = 1;', 'ünïcødé', '日本語', '🙂', 'a > b', '!', 'thinking'];
    const piece = () => Array.from({ length: 1 + Math.floor(r() * 6) }, () => words[Math.floor(r() * words.length)]).join('');
    for (let doc = 0; doc < 300; doc++) {
      let input = '';
      let text = '';
      let reasoning = '';
      const n = 1 + Math.floor(r() * 5);
      for (let k = 0; k < n; k++) {
        const t = 'T' + piece();
        input += t;
        text += t;
        if (r() < 0.6) {
          const name = THINK_TAG_NAMES[Math.floor(r() * THINK_TAG_NAMES.length)]!;
          const body = piece();
          input += `<${name}${r() < 0.3 ? ' a="1"' : ''}>${body}</${name}>`;
          reasoning += body;
        }
      }
      const whole = run([input]);
      assert.equal(whole.text, text, input);
      assert.equal(whole.reasoning, reasoning, input);
      for (const max of [1, 3, 12]) {
        const got = run(segment(input, r, max));
        assert.equal(got.text, text, `segmented ${max}: ${input}`);
        assert.equal(got.reasoning, reasoning, `segmented ${max}: ${input}`);
      }
    }
  });

  it('nested blocks count depth; every tag is removed', () => {
    const got = splitThinkTags('<think>a<reasoning>b</reasoning>c</think>d');
    assert.deepEqual([got.text, got.reasoning, got.unclosed], ['d', 'abc', false]);
  });

  it('an unclosed block stays reasoning to the end; a cut-off tag is flushed as literal text', () => {
    assert.deepEqual(splitThinkTags('<think>still thinking'), { text: '', reasoning: 'still thinking', unclosed: true });
    assert.deepEqual(splitThinkTags('answer <thin'), { text: 'answer <thin', reasoning: '', unclosed: false });
    assert.deepEqual(splitThinkTags('<think>x</thin'), { text: '', reasoning: 'x</thin', unclosed: true });
  });

  it('a closing tag with no open block is removed and changes nothing', () => {
    assert.deepEqual(splitThinkTags('pre-filled thoughts</think>answer'), { text: 'pre-filled thoughtsanswer', reasoning: '', unclosed: false });
  });

  it('whitespace between the thinking and the answer is dropped, later whitespace kept', () => {
    assert.equal(splitThinkTags('<think>x</think>\n\n  answer').text, 'answer');
    assert.equal(splitThinkTags('answer<think>x</think>\n\nmore').text, 'answer\n\nmore');
  });

  it('not tags: <thinker, <reasons>, <think/>, < think>, a newline in the attributes, an over-long tag', () => {
    for (const lit of ['a <thinker b', 'x <reasons> y', 'a <think/> b', 'a < think> b', 'a <think\nx> b', `<think ${'a'.repeat(MAX_TAG_CHARS)}>b`, '<<think', 'if (a<b) {}']) {
      for (let i = 0; i <= lit.length; i++) {
        const got = run([lit.slice(0, i), lit.slice(i)]);
        assert.equal(got.text, lit, `${JSON.stringify(lit)} split at ${i}`);
        assert.equal(got.reasoning, '');
      }
    }
  });

  it('a `<` that is not a tag is re-read: `<<think>x</think>` keeps one `<`', () => {
    assert.deepEqual(splitThinkTags('<<think>x</think>y'), { text: '<y', reasoning: 'x', unclosed: false });
  });

  it('tags inside fenced code blocks and inline code are text', () => {
    const fenced = 'Use it like this:\n```xml\n<think>literal</think>\n```\n<think>real</think>done';
    const inline = 'The tag `<think>` opens a block; ``<reason>x</reason>`` too.\n<think>r</think>ok';
    const tilde = '~~~~\n<thinking>t</thinking>\n~~~\nstill code <think>\n~~~~\n<think>r</think>';
    for (const [input, text, reasoning] of [
      [fenced, 'Use it like this:\n```xml\n<think>literal</think>\n```\ndone', 'real'],
      [inline, 'The tag `<think>` opens a block; ``<reason>x</reason>`` too.\nok', 'r'],
      [tilde, '~~~~\n<thinking>t</thinking>\n~~~\nstill code <think>\n~~~~\n', 'r'],
    ] as const) {
      for (let i = 0; i <= input.length; i++) {
        const got = run([input.slice(0, i), input.slice(i)]);
        assert.equal(got.text, text, `split at ${i}`);
        assert.equal(got.reasoning, reasoning, `split at ${i}`);
      }
      const r = seededRandom(input.length);
      for (let k = 0; k < 50; k++) assert.equal(run(segment(input, r, 4)).text, text);
    }
  });

  it('an inline code span ends at the end of its line', () => {
    assert.deepEqual(splitThinkTags('a `b\n<think>r</think>c'), { text: 'a `b\nc', reasoning: 'r', unclosed: false });
  });

  it('parts of one kind are merged within a push', () => {
    const s = new ThinkTagSplitter();
    assert.deepEqual(s.push('ab<think>cd</think>ef'), [{ kind: 'text', delta: 'ab' }, { kind: 'reasoning', delta: 'cd' }, { kind: 'text', delta: 'ef' }]);
  });
});
