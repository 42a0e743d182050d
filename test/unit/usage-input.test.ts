/** The dollars typed into the Usage tab's input boxes: six decimals at most, positive, under the typo cap; empty allowed only where it removes. */
import { strict as assert } from 'node:assert';
import { MAX_DOLLARS_TYPED, dollarsProblem, parseDollars } from '../../src/extension/usage/usage-input';

describe('dollars typed in the Usage tab', () => {
  it('reads 5, $2.50 and one micro-dollar; refuses words, seven decimals, zero, negatives and typos past the cap', () => {
    assert.equal(parseDollars('5'), 5);
    assert.equal(parseDollars(' $2.50 '), 2.5);
    assert.equal(parseDollars('0.000001'), 0.000001);
    for (const bad of ['', 'five', '1.0000001', '-3', '1e3', '2,50', '0', '0.000000', String(MAX_DOLLARS_TYPED + 1)]) {
      assert.ok(parseDollars(bad) instanceof Error, `${JSON.stringify(bad)} is refused`);
    }
    assert.equal(dollarsProblem('', true), null);
    assert.match(dollarsProblem('', false) ?? '', /Type dollars/);
    assert.match(dollarsProblem('0', false) ?? '', /more than \$0/);
  });
});
