/**
 * The live region's announcements (webview/src/lib/announcer.ts), pure: sentences and paragraphs
 * said once as they complete, never inside an open code fence, a code block named, the status of
 * the run, and a thread opened on a run that is over or mid-stream not read out from its start.
 */
import { strict as assert } from 'node:assert';
import { Announcer, speakable, speakableEnd, type RunSnapshot } from '../../webview/src/lib/announcer';

const run = (over: Partial<RunSnapshot>): RunSnapshot => ({ runId: 'run:1', status: 'running', streamed: '', finalText: null, error: null, awaitingApproval: null, ...over });

describe('webview announcer', () => {
  it('a sentence is said once, when it ends; the rest waits', () => {
    const a = new Announcer();
    a.step(run({ runId: 'run:0', status: 'completed' })); // the run the thread opened on
    assert.deepEqual(a.step(run({ streamed: '' })), ['Vox is thinking…']);
    assert.deepEqual(a.step(run({ streamed: 'Hello the' })), []);
    assert.deepEqual(a.step(run({ streamed: 'Hello there. How' })), ['Hello there.']);
    assert.deepEqual(a.step(run({ streamed: 'Hello there. How are you' })), []);
    assert.deepEqual(a.step(run({ status: 'completed', streamed: 'Hello there. How are you', finalText: 'x' })), ['How are you', 'Vox is done.']);
    assert.deepEqual(a.step(run({ status: 'completed', streamed: 'Hello there. How are you' })), [], 'said once');
  });

  it('never cuts inside an open code fence; a closed block is named, not read', () => {
    assert.equal(speakableEnd('Run it.\n```sh\nnpm test. ok\n'), 'Run it.'.length);
    const text = 'Run it.\n```sh\nnpm test. ok\n```\n';
    assert.equal(speakableEnd(text), text.length);
    assert.equal(speakable(text), 'Run it. Code block (sh).');
    assert.equal(speakable('## Title\n- **bold** and `code` [link](http://x)'), 'Title bold and code link');
  });

  it('a thread opened mid-stream starts from there; approvals and failures are said', () => {
    const a = new Announcer();
    assert.deepEqual(a.step(run({ streamed: 'Old text. Still' })), []);
    assert.deepEqual(a.step(run({ streamed: 'Old text. Still going. On' })), ['going.']);
    assert.deepEqual(a.step(run({ streamed: 'Old text. Still going. On', awaitingApproval: 'write_file' })), ['On', 'Vox is waiting for your approval: write_file.']);
    assert.deepEqual(a.step(run({ status: 'failed', error: 'The model is gone.', streamed: 'Old text. Still going. On' })), ['Vox failed: The model is gone.']);
  });

  it('an answer that did not stream is said when the run ends', () => {
    const a = new Announcer();
    a.step(run({ runId: 'run:0', status: 'completed' }));
    a.step(run({}));
    assert.deepEqual(a.step(run({ status: 'completed', finalText: 'The **answer**.' })), ['The answer.', 'Vox is done.']);
  });
});
