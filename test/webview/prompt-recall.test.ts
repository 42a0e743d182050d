/**
 * ArrowUp/ArrowDown prompt recall in the composer (webview/src/lib/prompt-recall.ts and the
 * controller's recallPrompt): shell-like order, typed text never replaced, repeats collapsed.
 */
import { strict as assert } from 'node:assert';
import { MAX_RECALLED_PROMPTS, promptHistory, recall } from '../../webview/src/lib/prompt-recall';

describe('prompt recall (ArrowUp / ArrowDown)', () => {
  const h = ['first', 'second', 'third'];

  it('ArrowUp from an empty draft gives the newest, then older ones, and stops at the oldest', () => {
    assert.equal(recall(h, '', 'older'), 'third');
    assert.equal(recall(h, 'third', 'older'), 'second');
    assert.equal(recall(h, 'second', 'older'), 'first');
    assert.equal(recall(h, 'first', 'older'), null);
  });

  it('ArrowDown walks back to newer ones and then to an empty draft', () => {
    assert.equal(recall(h, 'first', 'newer'), 'second');
    assert.equal(recall(h, 'third', 'newer'), '');
    assert.equal(recall(h, '', 'newer'), null);
  });

  it('typed text is never replaced; no history, no recall', () => {
    assert.equal(recall(h, 'half a thou', 'older'), null);
    assert.equal(recall(h, 'third ', 'newer'), null);
    assert.equal(recall([], '', 'older'), null);
  });

  it('the history is the thread’s prompts then this view’s, repeats at their newest place, blanks dropped, capped', () => {
    assert.deepEqual(promptHistory(['a', 'b', 'a'], ['c', 'b', '  ']), ['a', 'c', 'b']);
    const many = Array.from({ length: MAX_RECALLED_PROMPTS + 5 }, (_, i) => `p${i}`);
    const capped = promptHistory(many, []);
    assert.equal(capped.length, MAX_RECALLED_PROMPTS);
    assert.equal(capped[capped.length - 1], `p${MAX_RECALLED_PROMPTS + 4}`);
  });
});
