/**
 * Unit tests of in-thread find (webview/src/lib/thread-find.ts) over thread states built by the
 * real reducer from stored events (./support/long-thread.ts): case-insensitive matches in user
 * prompts (without their context block), final answers, streamed text, steering prompts and the
 * plan; next/previous with wrap-around; reselection after the query changes; the match cap; and
 * the text cache following a streaming run.
 */
import { strict as assert } from 'node:assert';
import { applyChunks, applyEvents, createThreadState, type ThreadState } from '../../webview/src/lib/thread-state';
import {
  EntryTextIndex, MAX_MATCHES, PLAN_KEY, entryKey, findInThread, matchLabel, occurrenceRanges, reselect, stepMatch,
} from '../../webview/src/lib/thread-find';
import { formatContext, type ContextChip } from '../../src/protocol/mentions';
import { longThreadEvents } from './support/long-thread';

const CHIP: ContextChip = { kind: 'file', target: 'src/a.ts', label: 'src/a.ts', tokens: 7, status: 'ok', warning: null } as ContextChip;

const T = 'thread:find';

function longThread(messages: number): ThreadState {
  const s = createThreadState(T);
  applyEvents(s, longThreadEvents({ threadId: T, messages }));
  return s;
}

describe('in-thread find', () => {
  it('finds matches case-insensitively in prompts and answers of every entry, rendered or not, in order', () => {
    const s = longThread(2_000);
    const r = findInThread(s, 'QUESTION 1999'); // no such pair (999 is the last): none
    assert.equal(r.matches.length, 0);
    const hit = findInThread(s, 'question 998:');
    assert.deepEqual(hit.matches, [{ key: 'msg:m:u998', index: 1996, occurrence: 0 }]);
    const answers = findInThread(s, 'answer 12');
    assert.deepEqual(answers.matches.map((m) => m.key), ['run:run:12', ...Array.from({ length: 10 }, (_, i) => `run:run:${120 + i}`)]);
    assert.equal(entryKey(s.entries[answers.matches[0]!.index]!), 'run:run:12', 'the index points at the entry');
  });

  it('counts several occurrences in one entry separately', () => {
    const s = createThreadState(T);
    applyEvents(s, [{ seq: 1, time: 1, threadId: T, type: 'message.added', messageId: 'm1', parentId: null, role: 'user', content: 'abc ABC aBc', runId: null, status: 'complete' }]);
    assert.deepEqual(findInThread(s, 'abc').matches.map((m) => m.occurrence), [0, 1, 2]);
    assert.deepEqual(occurrenceRanges('abc ABC aBc', 'Abc'), [[0, 3], [4, 7], [8, 11]]);
  });

  it('skips a user message\'s attached-context block but finds its prompt', () => {
    const s = createThreadState(T);
    const content = formatContext('Explain this', [{ chip: CHIP, text: 'export const secretWord = 1;' }]);
    assert.ok(content.includes('secretWord'), 'the stored message carries the attached file');
    applyEvents(s, [{ seq: 1, time: 1, threadId: T, type: 'message.added', messageId: 'm1', parentId: null, role: 'user', content, runId: null, status: 'complete' }]);
    assert.equal(findInThread(s, 'explain').matches.length, 1);
    assert.equal(findInThread(s, 'secretword').matches.length, 0, 'the attached text is not shown, so not found');
  });

  it('finds streamed text of a running turn and follows it as it grows (the cache is refreshed)', () => {
    const s = createThreadState(T);
    const index = new EntryTextIndex();
    applyEvents(s, [
      { seq: 1, time: 1, threadId: T, type: 'message.added', messageId: 'u', parentId: null, role: 'user', content: 'go', runId: null, status: 'complete' },
      { seq: 2, time: 2, threadId: T, type: 'run.started', runId: 'r', ordinal: 0, provider: 'openai', model: 'm', ownerPid: 1, userMessageId: 'u' },
    ]);
    applyChunks(s, 'r', [{ turnId: 'r', seq: 1, kind: 'text', data: 'first needle' }]);
    assert.equal(findInThread(s, 'needle', index).matches.length, 1);
    applyChunks(s, 'r', [{ turnId: 'r', seq: 2, kind: 'text', data: ' and a second needle' }]);
    assert.deepEqual(findInThread(s, 'needle', index).matches, [{ key: 'run:r', index: 1, occurrence: 0 }, { key: 'run:r', index: 1, occurrence: 1 }]);
  });

  it('an answer edited in place is searched in its new words (even at the same length)', () => {
    const s = longThread(4);
    const index = new EntryTextIndex();
    assert.equal(findInThread(s, 'answer 1', index).matches.length, 1);
    const final = s.runs['run:1']!.final!;
    applyEvents(s, [{ seq: s.lastEventSeq + 1, time: 1, threadId: T, type: 'message.edited', messageId: final.messageId, content: final.content.replace('Answer 1', 'Reply! 1') }]);
    assert.equal(findInThread(s, 'answer 1', index).matches.length, 0, 'the old words are gone');
    assert.equal(findInThread(s, 'reply! 1', index).matches.length, 1);
  });

  it('finds the plan\'s title and steps after the entries', () => {
    const s = longThread(4);
    s.plan = { planId: 'p', title: 'Refactor the parser', status: 'proposed', steps: [{ id: 's1', text: 'Split the parser module', status: 'pending', note: null }] } as ThreadState['plan'];
    const r = findInThread(s, 'parser');
    const plan = r.matches.filter((m) => m.key === PLAN_KEY);
    assert.equal(plan.length, 2);
    assert.equal(r.matches.at(-1)!.key, PLAN_KEY, 'plan matches come last');
    assert.equal(plan[0]!.index, -1);
  });

  it('an empty query finds nothing; matches are capped', () => {
    const s = longThread(2_000);
    assert.deepEqual(findInThread(s, ''), { matches: [], truncated: false });
    const many = findInThread(s, 'the');
    assert.equal(many.matches.length, MAX_MATCHES);
    assert.equal(many.truncated, true);
    assert.equal(matchLabel(0, many), `1/${MAX_MATCHES}+`);
  });

  it('next and previous wrap around', () => {
    assert.equal(stepMatch(0, 3, 1), 1);
    assert.equal(stepMatch(2, 3, 1), 0, 'next after the last is the first');
    assert.equal(stepMatch(0, 3, -1), 2, 'previous before the first is the last');
    assert.equal(stepMatch(-1, 3, 1), 0);
    assert.equal(stepMatch(-1, 3, -1), 2);
    assert.equal(stepMatch(0, 0, 1), -1, 'no matches');
    assert.equal(matchLabel(-1, { matches: [], truncated: false }), '0/0');
  });

  it('a refined query selects the first match at or after the previous selection', () => {
    const s = longThread(2_000);
    const wide = findInThread(s, 'answer 5');
    const prev = wide.matches[5]!; // somewhere in the 50s
    const narrow = findInThread(s, 'answer 5').matches;
    assert.equal(reselect(narrow, prev), 5);
    const other = findInThread(s, 'question').matches;
    const at = reselect(other, prev);
    assert.ok(other[at]!.index >= prev.index && other[at - 1]!.index < prev.index);
    assert.equal(reselect([], prev), -1);
    assert.equal(reselect(other, null), 0);
  });
});
