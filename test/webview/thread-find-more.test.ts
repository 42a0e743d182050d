/**
 * In-thread find over tool calls, plan artifacts and a streaming turn, on thread
 * states built by the real reducer from stored events and live chunks: a tool's arguments (as the
 * card pretty-prints them), its command output (terminal text without escape codes) and its result
 * are found in the run's row in rendering order; the plan card's steps and step notes; and while
 * chunks arrive the matches grow and `followMatch` keeps the selection on the same occurrence.
 */
import { strict as assert } from 'node:assert';
import { applyChunks, applyEvents, createThreadState, type ThreadState } from '../../webview/src/lib/thread-state';
import { EntryTextIndex, PLAN_KEY, findInThread, followMatch, matchLabel, runSearchText } from '../../webview/src/lib/thread-find';

const T = 'thread:find-more';
const R = 'run:1';

function started(prompt = 'build it'): ThreadState {
  const s = createThreadState(T);
  applyEvents(s, [
    { seq: 1, time: 1, threadId: T, type: 'message.added', messageId: 'u', parentId: null, role: 'user', content: prompt, runId: null, status: 'complete' },
    { seq: 2, time: 2, threadId: T, type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'm', ownerPid: 1, userMessageId: 'u' },
  ]);
  return s;
}

const output = (itemId: string, seq: number, live: string[]) => ({
  turnId: R, seq, kind: 'commandOutput',
  data: JSON.stringify({ itemId, update: { commandId: 'cmd1', seq, reset: false, firstFrozen: 0, frozenFrom: 0, frozen: [], shift: 0, liveFrom: 0, live } }),
});

describe('in-thread find: tool output, plan artifacts, streaming', () => {
  it('finds a tool call\'s arguments, command output (without escape codes) and result in the run', () => {
    const s = started();
    const index = new EntryTextIndex();
    applyChunks(s, R, [
      { turnId: R, seq: 1, kind: 'text', data: 'Running the tests.' },
      { turnId: R, seq: 2, kind: 'toolCall', data: JSON.stringify({ itemId: 'i1', callId: 'c1', name: 'run_command', arguments: '{"command":"npm test -- --grep Widget"}' }) },
      output('i1', 3, ['\x1b[32m✔ widget renders\x1b[0m', '\x1b[31m✖ gadget\x1b[0m fails: ZebraError']),
    ]);
    assert.equal(findInThread(s, 'zebraerror', index).matches.length, 1, 'terminal output is searched');
    assert.equal(findInThread(s, '✔ widget renders', index).matches.length, 1, 'escape codes are not part of the text');
    assert.equal(findInThread(s, '[32m', index).matches.length, 0);
    assert.equal(findInThread(s, '"command": "npm test', index).matches.length, 1, 'arguments as the card pretty-prints them');
    // The result arrives as an event (item.completed) while the run still streams: the cache follows.
    applyEvents(s, [
      { seq: 3, time: 3, threadId: T, type: 'item.started', runId: R, itemId: 'i1', ordinal: 1, kind: 'toolCall', toolName: 'run_command', arguments: '{"command":"npm test -- --grep Widget"}' },
    ]);
    assert.equal(findInThread(s, 'exit code 7', index).matches.length, 0);
    applyEvents(s, [{ seq: 4, time: 4, threadId: T, type: 'item.completed', runId: R, itemId: 'i1', status: 'failed', content: 'exit code 7\n1 failing', isError: true }]);
    const r = findInThread(s, 'exit code 7', index);
    assert.deepEqual(r.matches, [{ key: `run:${R}`, index: 1, occurrence: 0 }], 'the result is found once it is in');
    const text = runSearchText(s.runs[R]!);
    assert.ok(text.indexOf('Running the tests.') < text.indexOf('run_command') && text.indexOf('run_command') < text.indexOf('ZebraError')
      && text.indexOf('ZebraError') < text.indexOf('exit code 7'), 'text, then the card: name, arguments, output, result');
  });

  it('finds plan step notes after the steps, and the plan after the entries', () => {
    const s = started();
    applyEvents(s, [
      { seq: 3, time: 3, threadId: T, type: 'plan.submitted', runId: null, planId: 'p1', title: 'Ship the importer', steps: [{ id: 's1', text: 'Parse the transcripts' }, { id: 's2', text: 'Write the fixtures' }] } as never,
      { seq: 4, time: 4, threadId: T, type: 'plan.stepUpdated', runId: null, planId: 'p1', stepId: 's1', status: 'done', note: 'parsed 12 transcripts' } as never,
    ]);
    assert.ok(s.plan, 'the plan events were applied');
    const r = findInThread(s, 'transcripts');
    assert.deepEqual(r.matches, [{ key: PLAN_KEY, index: -1, occurrence: 0 }, { key: PLAN_KEY, index: -1, occurrence: 1 }], 'step text, then its note');
    assert.equal(findInThread(s, 'fixtures').matches.length, 1);
  });

  it('while chunks arrive the matches grow and the selection stays on its occurrence', () => {
    const s = started('the needle in the prompt');
    const index = new EntryTextIndex();
    applyChunks(s, R, [{ turnId: R, seq: 1, kind: 'text', data: 'A first needle, ' }]);
    let r = findInThread(s, 'needle', index);
    assert.equal(r.matches.length, 2);
    // The user selected the streamed one (2/2).
    let current = 1;
    const selected = r.matches[current]!;
    assert.equal(selected.key, `run:${R}`);
    for (let seq = 2; seq <= 6; seq++) {
      applyChunks(s, R, [{ turnId: R, seq, kind: 'text', data: `then needle ${seq}, ` }]);
      r = findInThread(s, 'needle', index);
      current = followMatch(r.matches, r.matches[current] ?? selected);
      assert.deepEqual(r.matches[current], selected, `after chunk ${seq} the same occurrence is selected`);
      assert.equal(matchLabel(current, r), `2/${seq + 1}`, 'the counter grows, the position stays');
    }
  });

  it('followMatch: a plan match stays on the plan when matches grow in the entries; a vanished match falls forward', () => {
    const plan = { key: PLAN_KEY, index: -1, occurrence: 0 };
    const a = { key: 'msg:a', index: 0, occurrence: 0 };
    const b = { key: 'run:b', index: 1, occurrence: 0 };
    const b1 = { key: 'run:b', index: 1, occurrence: 1 };
    assert.equal(followMatch([a, b, b1, plan], plan), 3);
    assert.equal(followMatch([a, b, plan], b1), 2, 'the streamed text was replaced by fewer occurrences: the next match');
    assert.equal(followMatch([a, b], plan), 1, 'the plan no longer matches: the last match');
    assert.equal(followMatch([], b), -1);
    assert.equal(followMatch([a, b], null), 0);
  });
});
