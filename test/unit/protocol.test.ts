/** The protocol boundary: commands and updates decode through the forward-compatible envelope. */
import { strict as assert } from 'node:assert';
import { EnvelopeError } from '../../src/protocol/wire/envelope';
import { commandEnvelope, MAX_PROMPT_CHARS } from '../../src/protocol/commands';
import { updateEnvelope } from '../../src/protocol/updates';
import { eventEnvelope } from '../../src/protocol/events';

function decodeErr(input: unknown): EnvelopeError {
  const r = commandEnvelope.tryDecode(input);
  assert.equal(r.ok, false, 'expected a decode error');
  return (r as { error: EnvelopeError }).error;
}

describe('protocol: client commands', () => {
  it('decodes a valid sendPrompt and drops undeclared fields', () => {
    const d = commandEnvelope.decode({ type: 'sendPrompt', threadId: null, prompt: 'hi', extra: 1 });
    assert.equal(d.kind, 'known');
    assert.deepEqual(d.kind === 'known' && d.value, { type: 'sendPrompt', threadId: null, prompt: 'hi' });
  });

  it('keeps an unknown command with its payload (newer client, older engine)', () => {
    const text = '{"type":"shareThread","threadId":"t","ttl":86400000}';
    const d = commandEnvelope.decode(text);
    assert.equal(d.kind, 'unknown');
    assert.equal(commandEnvelope.encode(d), text);
  });

  it('rejects broken payloads of known commands with the path to the bad field', () => {
    assert.equal(decodeErr({ type: 'sendPrompt', threadId: null, prompt: '' }).path, '$.prompt');
    assert.equal(decodeErr({ type: 'sendPrompt', threadId: 3, prompt: 'x' }).path, '$.threadId');
    assert.equal(decodeErr({ type: 'subscribeTurn', turnId: 't', afterSeq: -1 }).path, '$.afterSeq');
    assert.equal(decodeErr({ type: 'subscribeTurn', turnId: 't', afterSeq: 1.5 }).path, '$.afterSeq');
    assert.equal(decodeErr({ type: 'respondToApproval', callId: 'c', decision: 'maybe' }).path, '$.decision');
    assert.equal(decodeErr({ type: 'sendPrompt', threadId: null, prompt: 'x'.repeat(MAX_PROMPT_CHARS + 1) }).code, 'invalidPayload');
  });

  it('rejects garbage with typed codes', () => {
    assert.equal(decodeErr('{not json').code, 'invalidJson');
    assert.equal(decodeErr(null).code, 'notAnObject');
    assert.equal(decodeErr([1]).code, 'notAnObject');
    assert.equal(decodeErr({ prompt: 'x' }).code, 'missingType');
    assert.equal(decodeErr({ type: 7 }).code, 'missingType');
  });
});

describe('protocol: engine updates', () => {
  it('decodes chunk batches; a chunk kind from a newer engine does not invalidate the batch', () => {
    const ok = updateEnvelope.decode({ type: 'turnChunks', turnId: 'r', chunks: [{ turnId: 'r', seq: 1, kind: 'text', data: 'a' }, { turnId: 'r', seq: 2, kind: 'imagePart', data: '{}' }] });
    assert.equal(ok.kind, 'known');
    const bad = updateEnvelope.tryDecode({ type: 'turnChunks', turnId: 'r', chunks: [{ turnId: 'r', seq: 'x', kind: 'text', data: 'a' }] });
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.error.path, '$.chunks[0].seq');
  });

  it('events decode individually; a newer event type survives as unknown', () => {
    const known = eventEnvelope.decode({ type: 'thread.created', seq: 1, time: 5, threadId: 't', title: 'T' });
    assert.equal(known.kind, 'known');
    const future = eventEnvelope.decode({ type: 'thread.shared', seq: 2, time: 6, threadId: 't', shareId: 's' });
    assert.equal(future.kind, 'unknown');
    assert.deepEqual(future.kind === 'unknown' && future.raw, { type: 'thread.shared', seq: 2, time: 6, threadId: 't', shareId: 's' });
  });
});
