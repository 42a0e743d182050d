/**
 * `quote` / `quoteLine` (src/protocol/wire/quote.ts): text that fits comes back as is; longer text
 * is cut to at most the limit with the ellipsis counted, never inside a surrogate pair.
 */
import { strict as assert } from 'node:assert';
import { ELLIPSIS, quote, quoteLine } from '../../src/protocol/wire/quote';
import { THREAD_TITLE_PROMPT_CHARS, titleFromPrompt } from '../../src/engine/runs/registry';

const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

describe('quote: excerpts cut by code point', () => {
  it('returns text that fits unchanged, even at exactly the limit', () => {
    assert.equal(quote('', 5), '');
    assert.equal(quote('hello', 5), 'hello');
    assert.equal(quote('😀😀', 4), '😀😀');
  });

  it('cuts longer text to the limit, the ellipsis included', () => {
    assert.equal(quote('hello world', 6), `hello${ELLIPSIS}`);
    assert.equal(quote('hello world', 6).length, 6);
    assert.equal(quote('ab', 1), ELLIPSIS);
    assert.equal(quote('ab', 0), '');
  });

  it('never splits a surrogate pair: the pair at the cut is left out whole', () => {
    for (let max = 1; max <= 12; max++) {
      for (const text of ['😀'.repeat(10), `a${'😀'.repeat(10)}`, `ab😀c😀😀d${'𝄞'.repeat(4)}`]) {
        const q = quote(text, max);
        assert.ok(q.length <= max, `${JSON.stringify(q)} fits ${max}`);
        assert.ok(wellFormed(q), `${JSON.stringify(q)} is well-formed`);
        if (text.length > max && max > 0) {
          assert.ok(q.endsWith(ELLIPSIS));
          assert.ok(text.startsWith(q.slice(0, -1)));
          assert.ok(q.length >= max - 1, 'at most one unit given up for a pair');
        }
      }
    }
    assert.equal(quote('😀😀😀', 4), `😀${ELLIPSIS}`);
  });

  it('quoteLine puts the text on one line first', () => {
    assert.equal(quoteLine('  one\n\ttwo   three  ', 100), 'one two three');
    assert.equal(quoteLine('one\ntwo three', 8), `one two${ELLIPSIS}`);
  });

  it('a thread title from a long first prompt of emoji is cut whole, with an ellipsis', () => {
    const prompt = `a${'🙂'.repeat(THREAD_TITLE_PROMPT_CHARS)}`;
    const title = titleFromPrompt(prompt);
    assert.ok(wellFormed(title) && title.length <= THREAD_TITLE_PROMPT_CHARS && title.endsWith(ELLIPSIS), title);
    assert.equal(titleFromPrompt('fix the test'), 'fix the test');
  });
});
