/**
 * protocol/revisions.ts: the `refusalRetry` / `textRevised` chunks applied to a run's accumulated
 * text — by the stream registry (what a subagent's parent peeks, what a late subscriber's
 * snapshot holds) and by anything that rebuilds the text from persisted chunks.
 */
import { strict as assert } from 'node:assert';
import { applyRevision, revisionOf } from '../../../src/protocol/revisions';
import { encodeRefusalRetry, encodeTextRevised } from '../../../src/protocol/chunks';
import { TurnStreamRegistry } from '../../../src/engine/stream/turn-stream-registry';

describe('text revisions (SPEC 3.2 chunks)', () => {
  it('refusalRetry drops the discarded reply; textRevised swaps the tail', () => {
    assert.equal(applyRevision('Before.\n\nI cannot run it.', 'refusalRetry', encodeRefusalRetry({ itemId: 'i', discarded: 'I cannot run it.', tools: ['run_command'] })), 'Before.\n\n');
    assert.equal(applyRevision('Hi.\n```tool:x\n```', 'textRevised', encodeTextRevised({ removed: 'Hi.\n```tool:x\n```'.length, text: 'Hi.' })), 'Hi.');
  });

  it('leaves the text alone for other kinds, broken data, or a tail longer than the text', () => {
    assert.equal(applyRevision('abc', 'text', 'zzz'), 'abc');
    assert.equal(applyRevision('abc', 'textRevised', '{"removed": "x"}'), 'abc');
    assert.equal(applyRevision('abc', 'textRevised', encodeTextRevised({ removed: 4, text: '' })), 'abc');
    assert.equal(revisionOf('refusalRetry', 'not json'), null);
  });

  it('the stream registry keeps its accumulated text revised', () => {
    const streams = new TurnStreamRegistry({});
    streams.open('run:1');
    streams.append('run:1', 'text', 'I cannot ');
    streams.append('run:1', 'text', 'use the shell.');
    streams.append('run:1', 'refusalRetry', encodeRefusalRetry({ itemId: 'i', discarded: 'I cannot use the shell.', tools: [] }));
    streams.append('run:1', 'text', 'Listing.\n```tool:list_files\n```');
    streams.append('run:1', 'textRevised', encodeTextRevised({ removed: 'Listing.\n```tool:list_files\n```'.length, text: 'Listing.' }));
    assert.equal(streams.accumulated('run:1')!.text, 'Listing.');
  });
});
