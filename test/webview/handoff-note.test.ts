/** The handoff note's state and text (webview/src/lib/handoff-note.ts, thread-state's `handoff.built`). */
import { strict as assert } from 'node:assert';
import { applyEvents, createThreadState } from '../../webview/src/lib/thread-state';
import { handoffNoteDetail, handoffNoteText, type HandoffSummary } from '../../webview/src/lib/handoff-note';

const T = 'thread:h';
const summary: HandoffSummary = {
  strategy: 'deltaSinceTargetLastSeen', sourceModel: 'openai:gpt-4o', coveredFrom: 2, coveredTo: 9, turnsVerbatim: 3, turnsCompacted: 4, turnsOmitted: 1,
  checkpoints: 0, manualChars: 0, manualCharsOmitted: 0, tokens: 12_345, bytes: 40_000,
};

describe('webview: the handoff note', () => {
  it('handoff.built sets the run\'s handoff (once, exactly-once by seq); other runs have none', () => {
    const s = createThreadState(T);
    let seq = 0;
    const e = (ev: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...ev });
    const events = [
      e({ type: 'thread.created', title: 'x' }),
      e({ type: 'message.added', messageId: 'm:u', parentId: null, role: 'user', content: 'hi', runId: null, status: 'complete' }),
      e({ type: 'run.started', runId: 'run:a', ordinal: 0, provider: 'anthropic', model: 'anthropic:claude', ownerPid: 1, userMessageId: 'm:u' }),
      e({ type: 'handoff.built', runId: 'run:a', ...summary }),
      e({ type: 'handoff.built', runId: 'run:unknown', ...summary }),
    ];
    applyEvents(s, events);
    assert.deepEqual(s.runs['run:a']!.handoff, summary);
    assert.equal(s.runs['run:unknown'], undefined);
    applyEvents(s, events); // a replay changes nothing
    assert.deepEqual(s.runs['run:a']!.handoff, summary);
  });

  it('a broken handoff.built is skipped, not thrown', () => {
    const s = createThreadState(T);
    const warnings: string[] = [];
    applyEvents(s, [{ seq: 1, time: 1, threadId: T, type: 'handoff.built', runId: 'r', strategy: 'bogus' } as never], (m) => warnings.push(m));
    assert.equal(warnings.length, 1);
  });

  it('the text: turns verbatim, compacted, left out; checkpoints; manual text', () => {
    assert.equal(handoffNoteText(summary), 'Context handed off from openai:gpt-4o: 3 turns verbatim, 4 compacted, 1 left out');
    assert.equal(handoffNoteText({ ...summary, turnsVerbatim: 1, strategy: 'checkpointSummary', checkpoints: 2 }), 'Context handed off from openai:gpt-4o: 1 turn verbatim, 4 compacted, 1 left out, 2 checkpoints');
    assert.equal(handoffNoteText({ ...summary, strategy: 'manualContext', manualChars: 1, manualCharsOmitted: 0 }), 'Context handed off from openai:gpt-4o: your text (1 character)');
    assert.equal(handoffNoteText({ ...summary, strategy: 'manualContext', manualChars: 900, manualCharsOmitted: 12 }), 'Context handed off from openai:gpt-4o: your text (900 characters), 12 cut off');
    assert.equal(handoffNoteDetail(summary), 'Strategy deltaSinceTargetLastSeen; covered_runs 2..9; 12,345 tokens, 40,000 bytes.');
  });
});
