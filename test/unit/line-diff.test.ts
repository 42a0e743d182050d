/** The review's line diff (src/engine/review/line-diff.ts): exact splitting, minimal hunks, exact revert. */
import { strict as assert } from 'node:assert';
import { diffLines, revertHunk, splitLines, type LineHunk } from '../../src/engine/review/line-diff';
import { seededRandom } from '../support/random';

/** Longest common subsequence length, by dynamic programming (the oracle for minimality). */
function lcs(a: string[], b: string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
  return t[a.length]![b.length]!;
}

function applyAll(before: string[], after: string[], hunks: LineHunk[]): string[] {
  // Revert every hunk from the last to the first: the result must be `before`.
  let cur = after;
  for (const h of [...hunks].reverse()) cur = revertHunk(before, cur, h);
  return cur;
}

describe('line diff', () => {
  it('splits keeping terminators: CRLF, no trailing newline, empty text', () => {
    assert.deepEqual(splitLines('a\r\nb\nc'), ['a\r\n', 'b\n', 'c']);
    assert.deepEqual(splitLines('a\n'), ['a\n']);
    assert.deepEqual(splitLines(''), []);
    assert.deepEqual(splitLines('\n\n'), ['\n', '\n']);
  });

  it('finds separate hunks and reverts one without touching the other', () => {
    const before = splitLines('1\n2\n3\n4\n5\n6\n7\n');
    const after = splitLines('1\nTWO\n3\n4\n5\nSIX\n6\n7\n');
    const hunks = diffLines(before, after);
    assert.deepEqual(hunks, [
      { beforeStart: 1, beforeEnd: 2, afterStart: 1, afterEnd: 2 },
      { beforeStart: 5, beforeEnd: 5, afterStart: 5, afterEnd: 6 },
    ]);
    assert.equal(revertHunk(before, after, hunks[0]!).join(''), '1\n2\n3\n4\n5\nSIX\n6\n7\n');
    assert.equal(revertHunk(before, after, hunks[1]!).join(''), '1\nTWO\n3\n4\n5\n6\n7\n');
  });

  it('a changed last line without a newline, and a CRLF/LF change, are hunks', () => {
    assert.deepEqual(diffLines(splitLines('a\nb'), splitLines('a\nb\n')), [{ beforeStart: 1, beforeEnd: 2, afterStart: 1, afterEnd: 2 }]);
    assert.deepEqual(diffLines(splitLines('a\r\nb\r\n'), splitLines('a\nb\r\n')), [{ beforeStart: 0, beforeEnd: 1, afterStart: 0, afterEnd: 1 }]);
    assert.deepEqual(diffLines(splitLines('same\n'), splitLines('same\n')), []);
  });

  it('random texts: minimal (matches the LCS), reverting every hunk gives the old text back', () => {
    const r = seededRandom(12);
    const alphabet = ['a\n', 'b\n', 'c\n', 'd\r\n', 'e'];
    for (let n = 0; n < 300; n++) {
      const gen = () => Array.from({ length: Math.floor(r() * 12) }, () => alphabet[Math.floor(r() * alphabet.length)]!);
      const a = gen();
      const b = gen();
      const hunks = diffLines(a, b);
      const changed = hunks.reduce((s, h) => s + (h.beforeEnd - h.beforeStart) + (h.afterEnd - h.afterStart), 0);
      assert.equal(changed, a.length + b.length - 2 * lcs(a, b), `not minimal for ${JSON.stringify([a, b])}`);
      assert.deepEqual(applyAll(a, b, hunks), a);
      for (let i = 1; i < hunks.length; i++) assert.ok(hunks[i]!.afterStart > hunks[i - 1]!.afterEnd, 'hunks are separated by an unchanged line');
    }
  });

  it('over the edit-distance limit the changed middle is one hunk (still exact)', () => {
    const a = Array.from({ length: 50 }, (_, i) => `x${i}\n`);
    const b = Array.from({ length: 50 }, (_, i) => `y${i}\n`);
    const hunks = diffLines(['head\n', ...a, 'tail\n'], ['head\n', ...b, 'tail\n'], 10);
    assert.deepEqual(hunks, [{ beforeStart: 1, beforeEnd: 51, afterStart: 1, afterEnd: 51 }]);
  });
});
