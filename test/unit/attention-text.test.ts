/**
 * What Vox tells a user who is not looking at the chat (src/extension/attention/attention-text.ts):
 * a finished run with its tokens, a failure with its reason, an approval with what it would do;
 * nothing for cancelled runs, subagent threads or variants; long titles and errors clipped.
 */
import { strict as assert } from 'node:assert';
import { approvalAttention, MAX_DETAIL_IN_NOTICE, MAX_TITLE_IN_NOTICE, runEndedAttention } from '../../src/extension/attention/attention-text';
import type { RunSummary, ThreadSummary } from '../../src/protocol/commands/index';

const thread = (over: Partial<ThreadSummary> = {}): ThreadSummary => ({ id: 'thread:1', title: 'Fix the parser', createdAt: 1, updatedAt: 2, lastSeq: 3, ...over });
const run = (over: Partial<RunSummary> = {}): RunSummary => ({
  id: 'run:1', threadId: 'thread:1', ordinal: 0, provider: 'openai', model: 'gpt-4o-mini', status: 'completed', userMessageId: 'm:1',
  startedAt: 1, endedAt: 2, error: null, usage: { inputTokens: 12_345, outputTokens: 678 }, ...over,
});

describe('attention notices (run ended, approval waiting)', () => {
  it('a completed run: information with its tokens; a run without usage says none', () => {
    assert.deepEqual(runEndedAttention(thread(), run()), { text: 'Vox finished "Fix the parser" (12k in, 678 out).', level: 'info', threadId: 'thread:1' });
    assert.equal(runEndedAttention(thread(), run({ usage: { inputTokens: 0, outputTokens: 0 } }))?.text, 'Vox finished "Fix the parser".');
    assert.equal(runEndedAttention(thread(), run({ usage: { inputTokens: 1500, outputTokens: 20 } }))?.text, 'Vox finished "Fix the parser" (1.5k in, 20 out).');
  });

  it('failed and interrupted runs: warnings with the reason', () => {
    assert.deepEqual(runEndedAttention(thread(), run({ status: 'failed', error: 'provider/unauthorized: bad key' })), {
      text: 'Vox failed in "Fix the parser": provider/unauthorized: bad key', level: 'warning', threadId: 'thread:1',
    });
    assert.equal(runEndedAttention(thread(), run({ status: 'interrupted', error: null }))?.text, 'Vox was interrupted in "Fix the parser".');
  });

  it('nothing for cancelled or running runs, subagent threads and variants', () => {
    assert.equal(runEndedAttention(thread(), run({ status: 'cancelled' })), null);
    assert.equal(runEndedAttention(thread(), run({ status: 'running' })), null);
    assert.equal(runEndedAttention(thread({ parentThreadId: 'thread:0' }), run()), null);
    assert.equal(runEndedAttention(thread(), run(), { isVariant: true }), null);
  });

  it('clips long titles and errors to one line', () => {
    const long = runEndedAttention(thread({ title: 'x'.repeat(500) }), run({ status: 'failed', error: `line one\n${'e'.repeat(500)}` }))!;
    const quoted = /"(x+…)"/.exec(long.text)![1]!;
    assert.equal(quoted.length, MAX_TITLE_IN_NOTICE);
    assert.ok(!long.text.includes('\n'));
    assert.ok(long.text.endsWith('…'));
    assert.ok(long.text.length <= 'Vox failed in "": '.length + MAX_TITLE_IN_NOTICE + MAX_DETAIL_IN_NOTICE);
  });

  it('an approval names the tool and its command or path; arguments that are not JSON still give a notice', () => {
    const req = { callId: 'c', threadId: 'thread:1', runId: 'run:1', toolClass: 'execute' as const };
    assert.equal(approvalAttention(thread(), { ...req, toolName: 'run_command', argumentsJson: '{"command":"npm test"}' }).text, 'Vox waits for your approval in "Fix the parser": run_command npm test');
    assert.equal(approvalAttention(thread(), { ...req, toolName: 'write_file', argumentsJson: '{"path":"src/a.ts","content":"x"}' }).text, 'Vox waits for your approval in "Fix the parser": write_file src/a.ts');
    const odd = approvalAttention(thread(), { ...req, toolName: 'write_file', argumentsJson: '{not json' });
    assert.deepEqual(odd, { text: 'Vox waits for your approval in "Fix the parser": write_file', level: 'warning', threadId: 'thread:1' });
  });
});
