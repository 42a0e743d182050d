/** ChunkBatcher: merging, timing, byte limit, flush on end, resume seqs; and end to end behind the registry. */
import { strict as assert } from 'node:assert';
import { ChunkBatcher, BATCH_INTERVAL_MS, BATCH_MAX_BYTES, type BatchSink } from '../../src/engine/stream/chunk-batcher';
import { StreamError, TurnStreamRegistry, type ChunkKind, type TurnChunk, type TurnEnd } from '../../src/engine/stream/turn-stream-registry';
import { ManualClock } from '../support/manual-clock';
import { seededRandom } from '../support/random';

function recorder() {
  const log: Array<{ chunks: TurnChunk[] } | { end: TurnEnd }> = [];
  const sink: BatchSink = { sendChunks: (chunks) => log.push({ chunks }), sendEnd: (end) => log.push({ end }) };
  const batches = () => log.flatMap((e) => ('chunks' in e ? [e.chunks.map((c) => [c.seq, c.kind, c.data])] : []));
  return { log, sink, batches };
}

let seq = 0;
const mk = (kind: ChunkKind, data: string, s = ++seq, turnId = 't'): TurnChunk => ({ turnId, seq: s, kind, data });

describe('ChunkBatcher', () => {
  beforeEach(() => { seq = 0; });

  it('uses a flush interval between 16 and 50 ms', () => {
    assert.ok(BATCH_INTERVAL_MS >= 16 && BATCH_INTERVAL_MS <= 50);
  });

  it('holds chunks for one interval, then sends adjacent text merged under the last seq', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    b.onChunks([mk('text', 'Hel')]);
    b.onChunks([mk('text', 'lo, ')]);
    b.onChunks([mk('text', 'wörld')]);
    clock.advance(BATCH_INTERVAL_MS - 1);
    assert.deepEqual(r.log, []);
    clock.advance(1);
    assert.deepEqual(r.batches(), [[[3, 'text', 'Hello, wörld']]]);
    assert.equal(b.lastSentSeq, 3);
    assert.equal(clock.pendingTimers, 0, 'no timer left when idle');
    b.onChunks([mk('text', '!')]);
    clock.advance(BATCH_INTERVAL_MS);
    assert.deepEqual(r.batches()[1], [[4, 'text', '!']]);
  });

  it('merges only adjacent, consecutive chunks of the same text kind and turn', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    b.onChunks([
      mk('reasoning', 'think '), mk('reasoning', 'hard'),
      mk('text', 'a'), mk('text', 'b'),
      mk('toolCall', '{"n":1}'), mk('toolCall', '{"n":2}'),
      mk('status', 'x'), mk('status', 'y'),
      mk('text', 'c'),
      mk('text', 'd', 12), // a gap in seqs is never hidden by a merge
      mk('text', 'e', 13, 'other-turn'),
    ]);
    clock.advance(BATCH_INTERVAL_MS);
    assert.deepEqual(r.batches(), [[
      [2, 'reasoning', 'think hard'], [4, 'text', 'ab'], [5, 'toolCall', '{"n":1}'], [6, 'toolCall', '{"n":2}'],
      [7, 'status', 'x'], [8, 'status', 'y'], [9, 'text', 'c'], [12, 'text', 'd'], [13, 'text', 'e'],
    ]]);
  });

  it('flushes at once when pending data reaches the byte limit (UTF-8 bytes)', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock, maxBytes: 10 });
    b.onChunks([mk('text', 'abcd')]); // 4
    b.onChunks([mk('text', 'éé')]); // 4 more: 8 bytes although only 2 UTF-16 units
    assert.equal(r.log.length, 0);
    b.onChunks([mk('text', 'xy')]); // 10: flush now
    assert.deepEqual(r.batches(), [[[3, 'text', 'abcdééxy']]]);
    assert.equal(clock.pendingTimers, 0, 'the interval timer was cancelled');
    // A replay handed over in one call is cut into several sends.
    b.onChunks(Array.from({ length: 6 }, () => mk('toolResult', '12345')));
    assert.deepEqual(r.batches().slice(1).map((batch) => batch.map((c) => c[0])), [[4, 5], [6, 7], [8, 9]]);
  });

  it(`the default limit (${BATCH_MAX_BYTES} bytes) sends one big tool result without waiting`, () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    b.onChunks([mk('text', 'x'.repeat(BATCH_MAX_BYTES - 1))]);
    assert.equal(r.log.length, 0);
    b.onChunks([mk('toolResult', 'y')]);
    assert.equal(r.log.length, 1);
  });

  it('on end, flushes pending chunks first, then the end; nothing is accepted afterwards', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    b.onChunks([mk('text', 'last '), mk('text', 'words')]);
    b.onEnd({ status: 'completed' });
    assert.deepEqual(r.log, [{ chunks: [{ turnId: 't', seq: 2, kind: 'text', data: 'last words' }] }, { end: { status: 'completed' } }]);
    assert.equal(clock.pendingTimers, 0);
    assert.throws(() => b.onChunks([mk('text', 'late')]), (e: unknown) => e instanceof StreamError && e.code === 'ended');
    b.onEnd({ status: 'completed' });
    assert.equal(r.log.length, 2, 'a second end is ignored');
  });

  it('rejoins a surrogate pair split across two deltas', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    const smile = '😀';
    b.onChunks([mk('text', `a${smile[0]}`), mk('text', `${smile[1]}b`)]);
    clock.advance(BATCH_INTERVAL_MS);
    assert.deepEqual(r.batches(), [[[2, 'text', 'a😀b']]]);
    assert.ok(Buffer.from(r.batches()[0]![0]![2] as string, 'utf8').equals(Buffer.from('a😀b', 'utf8')));
  });

  it('dispose drops pending chunks and the timer; a failing sink in a timer flush goes to onError', () => {
    const clock = new ManualClock();
    const r = recorder();
    const b = new ChunkBatcher(r.sink, { timer: clock });
    b.onChunks([mk('text', 'x')]);
    b.dispose();
    clock.advance(1_000);
    assert.deepEqual(r.log, []);
    assert.equal(clock.pendingTimers, 0);

    const errors: unknown[] = [];
    const failing = new ChunkBatcher({ sendChunks: () => { throw new Error('webview gone'); } }, { timer: clock, onError: (e) => errors.push(e) });
    failing.onChunks([mk('text', 'y')]);
    clock.advance(BATCH_INTERVAL_MS);
    assert.equal((errors[0] as Error).message, 'webview gone');
    assert.equal(failing.lastSentSeq, 0, 'nothing counts as sent');
    assert.throws(() => failing.onChunks([mk('text', 'z')]), StreamError, 'a broken batcher stops');
  });

  it('end to end: behind the registry, a client rebuilds the exact text from far fewer messages and can resume', () => {
    const clock = new ManualClock();
    const reg = new TurnStreamRegistry();
    reg.open('t');
    const rand = seededRandom(7);
    const pieces = ['the ', 'quick ', 'brö', 'wn ', '🦊', ' jumps', '\n', '中文', '👩‍💻'];
    let expected = '';
    let text = '';
    let lastSeq = 0;
    let messages = 0;
    let ended: TurnEnd | null = null;
    const sink: BatchSink = {
      sendChunks: (cs) => {
        messages++;
        for (const c of cs) {
          assert.ok(c.seq > lastSeq);
          lastSeq = c.seq;
          if (c.kind === 'text') text += c.data;
        }
      },
      sendEnd: (e) => { ended = e; },
    };
    const batcher = new ChunkBatcher(sink, { timer: clock });
    reg.subscribeOrReplay('t', 0, batcher);
    for (let i = 0; i < 500; i++) {
      const d = pieces[Math.floor(rand() * pieces.length)]!;
      expected += d;
      reg.append('t', 'text', d);
      clock.advance(Math.floor(rand() * 20)); // tokens arrive 0–19 ms apart
    }
    reg.end('t', { status: 'completed' });
    assert.equal(text, expected);
    assert.deepEqual(ended, { status: 'completed' });
    assert.equal(lastSeq, 500);
    assert.ok(messages < 250, `batched into ${messages} messages`);
    assert.deepEqual(reg.subscribeOrReplay('t', lastSeq, { onChunks: () => {} }).replay, [], 'resume point is exact');
  });
});
