/**
 * Prompt recall in the composer (webview/src/lib/prompt-recall.ts, SPEC 6.3): ArrowUp on the first
 * line stashes the draft and walks back, ArrowDown on the last line walks forward and gives the
 * stash back exactly at the bottom; typing into a recalled prompt ends the walk; sending too.
 */
import { strict as assert } from 'node:assert';
import {
  MAX_RECALLED_PROMPTS, NOT_WALKING, PromptRecall, arrowDown, arrowUp, onFirstLine, onLastLine, withSent, type ArrowInput,
} from '../../webview/src/lib/prompt-recall';

const end = (draft: string): ArrowInput => ({ draft, selectionStart: draft.length, selectionEnd: draft.length });
const at = (draft: string, caret: number): ArrowInput => ({ draft, selectionStart: caret, selectionEnd: caret });

describe('prompt recall (ArrowUp / ArrowDown)', () => {
  const h = ['first', 'second\nwith two lines', 'third'];

  it('the walk: ArrowUp stashes the draft and walks back to the oldest; ArrowDown walks forward and restores the stash, caret at its end', () => {
    const r = new PromptRecall();
    r.setHistory(h);
    const draft = 'my half-written\nthought';
    // The caret on the first line (not only an empty draft): the walk starts.
    let s = r.key('up', at(draft, 3));
    assert.deepEqual(s && [s.draft, s.caret], ['third', 0]);
    s = r.key('up', at(s!.draft, 0));
    assert.deepEqual(s && [s.draft, s.caret], ['second\nwith two lines', 0]);
    s = r.key('up', at(s!.draft, 0));
    assert.deepEqual(s && [s.draft, s.caret], ['first', 0]);
    assert.equal(r.key('up', at('first', 0)), null, 'the oldest: the key is the text box\'s');
    s = r.key('down', end('first'));
    assert.deepEqual(s && [s.draft, s.caret], ['second\nwith two lines', 'second\nwith two lines'.length]);
    assert.equal(r.key('down', at('second\nwith two lines', 2)), null, 'caret not on the last line: the text box moves it');
    s = r.key('down', end('second\nwith two lines'));
    assert.deepEqual(s && [s.draft, s.caret], ['third', 5]);
    s = r.key('down', end('third'));
    assert.deepEqual(s && [s.draft, s.caret], [draft, draft.length], 'the stash, exactly, caret at its end');
    assert.equal(r.walking(), false);
    assert.equal(r.key('down', end(draft)), null, 'not walking: ArrowDown is the text box\'s');
  });

  it('ArrowUp only on the first line, ArrowDown only on the last line', () => {
    const draft = 'line one\nline two';
    assert.equal(arrowUp(h, NOT_WALKING, at(draft, 12)), null, 'caret on the second line');
    assert.equal(arrowUp(h, NOT_WALKING, at(draft, 8))?.draft, 'third', 'end of the first line');
    assert.equal(arrowUp(h, NOT_WALKING, { draft, selectionStart: 2, selectionEnd: 12 }), null, 'a selection reaching the second line');
    assert.ok(onFirstLine('', 0, 0) && onLastLine('', 0, 0));
    assert.ok(onLastLine(draft, 9, 9) && !onLastLine(draft, 8, 8));
    const walk = arrowUp(h, NOT_WALKING, end(''))!;
    const up2 = arrowUp(h, walk.state, at('third', 0))!;
    assert.equal(arrowDown(h, up2.state, at(up2.draft, 0)), null, 'the second-to-newest has two lines; the caret at the start is not on the last');
  });

  it('typing into a recalled prompt makes it the draft: the walk ends, the old stash is dropped, the next ArrowUp stashes the edit', () => {
    const r = new PromptRecall();
    r.setHistory(h);
    r.key('up', end('stashed'));
    const edited = 'third, but better';
    assert.equal(r.key('down', end(edited)), null, 'an edited prompt is the draft: ArrowDown does not walk');
    assert.equal(r.walking(), false);
    const s = r.key('up', at(edited, 0));
    assert.equal(s?.draft, 'third');
    const back = r.key('down', end('third'));
    assert.equal(back?.draft, edited, 'the edit is what comes back; "stashed" is gone');
  });

  it('sending ends the walk and the stash; the sent prompt is the newest; repeats of the newest collapse; capped', () => {
    const r = new PromptRecall();
    r.setHistory(h);
    r.key('up', end('stash'));
    r.sent('third'); // the recalled prompt, sent as it was
    assert.equal(r.walking(), false);
    assert.deepEqual(r.prompts(), h, 'a repeat of the newest is not added');
    assert.equal(r.key('down', end('')), null, 'no stash to go back to');
    r.sent('fourth');
    assert.equal(r.key('up', end(''))?.draft, 'fourth');
    const many = Array.from({ length: MAX_RECALLED_PROMPTS + 5 }, (_, i) => `p${i}`);
    assert.equal(withSent(many, 'last').length, MAX_RECALLED_PROMPTS);
    assert.equal(withSent(many, 'last').at(-1), 'last');
    assert.deepEqual(withSent(['a'], '   '), ['a'], 'blank prompts are not kept');
  });

  it('no history: the arrows are the text box\'s; the engine\'s answer keeps prompts this view sent meanwhile', () => {
    const r = new PromptRecall();
    assert.equal(r.key('up', end('')), null);
    r.sent('sent before the answer');
    r.setHistory(['from the engine'], ['sent before the answer']);
    assert.deepEqual(r.prompts(), ['from the engine', 'sent before the answer']);
    r.setHistory(['from the engine', 'sent before the answer'], ['sent before the answer']);
    assert.deepEqual(r.prompts(), ['from the engine', 'sent before the answer']);
  });
});
