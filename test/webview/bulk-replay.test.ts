/**
 * Unit tests of the sliced first replay (webview/src/lib/bulk-replay.ts) with a manual scheduler
 * and clock: a long thread's replay is applied in several slices (each yields to the browser),
 * ends in the same state as applying the events at once, keeps batches that arrive meanwhile in
 * order, can be cancelled, and only an empty thread with a large batch qualifies; a replay the
 * engine sends as several batches (`more`) is swapped in once, after the last.
 */
import { strict as assert } from 'node:assert';
import { BULK_REPLAY_EVENTS, REPLAY_SLICE_MS, SlicedReplay, replayTarget, type ReplayScheduler } from '../../webview/src/lib/bulk-replay';
import { applyEvents, createThreadState, type EventsResult, type ThreadState } from '../../webview/src/lib/thread-state';
import { longThreadEvents } from './support/long-thread';
import { REPLAY_CHUNK_EVENTS, replayChunks } from '../../src/protocol/updates';

const T = 'thread:replay';

/** Tasks run only when the test says so; every clock read advances time by `tick` ms (work takes time). */
class ManualScheduler implements ReplayScheduler {
  tasks: (() => void)[] = [];
  time = 0;
  constructor(private readonly tick: number) {}
  later(fn: () => void): void {
    this.tasks.push(fn);
  }
  now(): number {
    this.time += this.tick;
    return this.time;
  }
  runAll(): number {
    let n = 0;
    while (this.tasks.length > 0) {
      this.tasks.shift()!();
      n++;
    }
    return n;
  }
}

describe('sliced first replay', () => {
  it('applies a 2,000-message replay in slices and ends in the state of applying it at once', () => {
    const events = longThreadEvents({ threadId: T, messages: 2_000 });
    const expected = createThreadState(T);
    applyEvents(expected, events);
    const sched = new ManualScheduler(REPLAY_SLICE_MS / 4); // a slice runs out after a few steps
    let done: { state: ThreadState; result: EventsResult } | null = null;
    const replay = new SlicedReplay(replayTarget(createThreadState(T), events.length)!, (state, result) => (done = { state, result }), () => {}, sched);
    replay.add(events);
    assert.equal(done, null, 'nothing is applied in the task that received the batch');
    const slices = sched.runAll();
    assert.ok(slices > 3, `${slices} slices`);
    assert.ok(done, 'finished');
    const d = done as { state: ThreadState; result: EventsResult };
    assert.deepEqual(d.state, expected);
    assert.equal(d.result.applied, events.length);
    assert.equal(d.result.endedRuns.length, 1_000);
  });

  it('batches that arrive during the replay are applied after it, in order, and onDone comes once', () => {
    const events = longThreadEvents({ threadId: T, messages: 400 });
    const more = [{ seq: events.length + 1, time: 1, threadId: T, type: 'thread.renamed', title: 'Renamed' }];
    const sched = new ManualScheduler(REPLAY_SLICE_MS);
    const calls: ThreadState[] = [];
    const replay = new SlicedReplay(createThreadState(T), (s) => calls.push(s), () => {}, sched);
    replay.add(events);
    sched.tasks.shift()!(); // the first slice only
    replay.add(more);
    sched.runAll();
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.title, 'Renamed', 'the later batch came last');
    assert.equal(calls[0]!.entries.length, 400);
  });

  it('a replay sent as several batches finishes once, after the batch without more, in the state of applying it at once', () => {
    const events = longThreadEvents({ threadId: T, messages: 600 });
    const expected = createThreadState(T);
    applyEvents(expected, events);
    const chunks = replayChunks(events);
    assert.ok(chunks.length > 2, `${chunks.length} batches`);
    assert.ok(chunks[0]!.events.length >= BULK_REPLAY_EVENTS);
    const sched = new ManualScheduler(REPLAY_SLICE_MS);
    const calls: ThreadState[] = [];
    const replay = new SlicedReplay(replayTarget(createThreadState(T), chunks[0]!.events.length, chunks[0]!.more)!, (s) => calls.push(s), () => {}, sched);
    for (const c of chunks.slice(0, -1)) {
      replay.add(c.events, c.more);
      sched.runAll(); // the queue runs dry between batches: still no swap
      assert.equal(calls.length, 0, 'not finished while more is announced');
    }
    const last = chunks[chunks.length - 1]!;
    replay.add(last.events, last.more);
    sched.runAll();
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0], expected);
  });

  it('a small first batch that announces more is replayed off the proxy too', () => {
    assert.ok(replayTarget(createThreadState(T), 3, true));
    assert.equal(replayTarget(createThreadState(T), 3, false), null);
  });

  it('replayChunks: one batch up to REPLAY_CHUNK_EVENTS, then batches of that size with more on all but the last', () => {
    assert.deepEqual(replayChunks([]), [{ events: [], more: false }]);
    const n = (k: number) => Array.from({ length: k }, (_, i) => i);
    assert.deepEqual(replayChunks(n(REPLAY_CHUNK_EVENTS)).map((c) => [c.events.length, c.more]), [[REPLAY_CHUNK_EVENTS, false]]);
    assert.deepEqual(replayChunks(n(REPLAY_CHUNK_EVENTS + 1)).map((c) => [c.events.length, c.more]), [[REPLAY_CHUNK_EVENTS, true], [1, false]]);
    assert.deepEqual(replayChunks(n(REPLAY_CHUNK_EVENTS * 3)).flatMap((c) => c.events), n(REPLAY_CHUNK_EVENTS * 3));
  });

  it('a cancelled replay never finishes', () => {
    const sched = new ManualScheduler(REPLAY_SLICE_MS);
    let finished = false;
    const replay = new SlicedReplay(createThreadState(T), () => (finished = true), () => {}, sched);
    replay.add(longThreadEvents({ threadId: T, messages: 400 }));
    replay.cancel();
    sched.runAll();
    assert.equal(finished, false);
  });

  it('only an empty thread with a large first batch is replayed off the proxy', () => {
    const empty = createThreadState(T);
    assert.equal(replayTarget(empty, BULK_REPLAY_EVENTS - 1), null, 'a small batch is applied in place');
    const copy = replayTarget(empty, BULK_REPLAY_EVENTS)!;
    assert.deepEqual(copy, empty);
    assert.notEqual(copy, empty, 'a copy');
    const started = createThreadState(T);
    applyEvents(started, longThreadEvents({ threadId: T, messages: 2 }));
    assert.equal(replayTarget(started, 10_000), null, 'a thread with entries keeps its identity');
  });
});
