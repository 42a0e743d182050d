/**
 * Unit tests of the webview's thread-state reducer (webview/src/lib/thread-state.ts) and of the
 * run → blocks derivation (webview/src/lib/blocks.ts): ordering, batched chunks, resume from seq
 * without loss or duplication (driven by the engine's real TurnStreamRegistry and ChunkBatcher on
 * a manual clock), unknown/broken wire data, and the final message replacing the streamed text.
 */
import { strict as assert } from 'node:assert';
import {
  activeRun, applyChunks, applyEvents, applyTurnEnded, createThreadState, resumePlan, runsNeedingStream, type ThreadState, type WireChunk,
} from '../../webview/src/lib/thread-state';
import { runBlocks, runText } from '../../webview/src/lib/blocks';
import { TurnStreamRegistry, type TurnChunk } from '../../src/engine/stream/turn-stream-registry';
import { ChunkBatcher, BATCH_INTERVAL_MS } from '../../src/engine/stream/chunk-batcher';
import { ManualClock } from '../support/manual-clock';
import { seededRandom } from '../support/random';

const T = 'thread:1';
const R = 'run:1';

/** Builds stored events with increasing seqs, as the engine's log would. */
function eventLog() {
  let seq = 0;
  // Like the engine: a prompt follows the thread's head (the last message), an answer its run's prompt.
  let head: string | null = null;
  const promptOf: Record<string, string> = {};
  const e = (ev: Record<string, unknown>) => ({ seq: ++seq, time: 1_700_000_000_000 + seq, threadId: T, ...ev });
  const added = (ev: Record<string, unknown>) => {
    head = ev.messageId as string;
    return e(ev);
  };
  return {
    created: (title = 'Hello') => e({ type: 'thread.created', title }),
    user: (messageId: string, content: string) => added({ type: 'message.added', messageId, parentId: head, role: 'user', content, runId: null, status: 'complete' }),
    runStarted: (runId = R, userMessageId = 'msg:u1') => {
      promptOf[runId] = userMessageId;
      return e({ type: 'run.started', runId, ordinal: 0, provider: 'openai', model: 'gpt-test', ownerPid: 1, userMessageId });
    },
    itemStarted: (itemId: string, ordinal: number, kind: string, toolName: string | null = null, args: string | null = null, runId = R) =>
      e({ type: 'item.started', runId, itemId, ordinal, kind, toolName, arguments: args }),
    itemCompleted: (itemId: string, content: string, status = 'completed', isError = false, runId = R) =>
      e({ type: 'item.completed', runId, itemId, status, content, isError }),
    final: (content: string, status = 'complete', runId = R) =>
      added({ type: 'message.added', messageId: `msg:a-${runId}`, parentId: promptOf[runId] ?? 'msg:u1', role: 'assistant', content, runId, status }),
    runEnded: (status = 'completed', error: string | null = null, runId = R) =>
      e({ type: 'run.ended', runId, status, error, usage: { inputTokens: 10, outputTokens: 5 } }),
    raw: e,
  };
}

const chunk = (seq: number, kind: WireChunk['kind'], data: string, turnId = R): WireChunk => ({ turnId, seq, kind, data });

function startedThread(): { state: ThreadState; log: ReturnType<typeof eventLog> } {
  const log = eventLog();
  const state = createThreadState(T);
  applyEvents(state, [log.created(), log.user('msg:u1', 'hi'), log.runStarted()]);
  return { state, log };
}

describe('webview thread state: events', () => {
  it('orders entries as the log does and tracks the last event seq', () => {
    const { state, log } = startedThread();
    assert.equal(state.title, 'Hello');
    assert.deepEqual(state.entries.map((e) => e.kind), ['message', 'run']);
    assert.equal(state.lastEventSeq, 3);
    assert.equal(activeRun(state)?.runId, R);
    applyEvents(state, [log.final('Hi there'), log.runEnded()]);
    assert.equal(state.runs[R]!.status, 'completed');
    assert.equal(activeRun(state), null);
    assert.equal(state.lastEventSeq, 5);
  });

  it('skips events at or below the last seq (replay overlap) and events of other threads', () => {
    const { state, log } = startedThread();
    const again = [log.created(), log.user('msg:u2', 'second')];
    applyEvents(state, again);
    const before = JSON.stringify(state);
    const res = applyEvents(state, again); // a re-subscribe replays the same events
    assert.equal(res.applied, 0);
    assert.equal(JSON.stringify(state), before);
    applyEvents(state, [log.raw({ type: 'thread.renamed', title: 'other', threadId: 'thread:2' })]);
    assert.equal(state.title, 'Hello');
  });

  it('ignores unknown event variants but counts their seq; warns about broken ones and goes on', () => {
    const { state, log } = startedThread();
    const warnings: string[] = [];
    const res = applyEvents(state, [
      log.raw({ type: 'checkpoint.created', checkpointId: 'cp:1' }), // from a newer engine
      log.raw({ type: 'message.added', messageId: 42 }), // broken payload
      'not even an object',
      log.user('msg:u2', 'still works'),
    ], (w) => warnings.push(w));
    assert.equal(res.applied, 1);
    assert.equal(state.lastEventSeq, 6);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /message\.added/);
    assert.deepEqual(state.entries.map((e) => (e.kind === 'message' ? e.content : e.kind)), ['hi', 'run', 'still works']);
  });
});

describe('webview thread state: chunks and blocks', () => {
  it('concatenates batched text chunks in seq order and drops duplicates', () => {
    const { state } = startedThread();
    applyChunks(state, R, [chunk(3, 'text', 'Hel'), chunk(5, 'text', 'lo ')]); // merged batches carry their last seq
    applyChunks(state, R, [chunk(5, 'text', 'lo '), chunk(6, 'text', 'wor')]); // overlap from a replay
    applyChunks(state, R, [chunk(9, 'text', 'ld')]);
    assert.equal(runText(state.runs[R]!), 'Hello world');
    assert.equal(state.runs[R]!.lastChunkSeq, 9);
    const blocks = runBlocks(state.runs[R]!);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]!.kind === 'text' && blocks[0]!.streaming, true);
  });

  it('interleaves reasoning, text and tool calls as they streamed; tool results attach to their call', () => {
    const { state } = startedThread();
    applyChunks(state, R, [
      chunk(1, 'reasoning', 'Let me look'),
      chunk(2, 'text', 'Reading the file.'),
      chunk(3, 'toolCall', JSON.stringify({ itemId: 'item:1', callId: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' })),
      chunk(4, 'toolResult', JSON.stringify({ itemId: 'item:1', callId: 'call_1', status: 'completed', content: 'export {}', changedPaths: [] })),
      chunk(5, 'text', '\n\nDone.'),
    ]);
    const blocks = runBlocks(state.runs[R]!);
    assert.deepEqual(blocks.map((b) => b.kind), ['reasoning', 'text', 'tool', 'text']);
    const tool = blocks[2]!.kind === 'tool' ? blocks[2]!.tool : null;
    assert.equal(tool?.name, 'read_file');
    assert.equal(tool?.status, 'completed');
    assert.equal(tool?.result, 'export {}');
    assert.equal(tool?.callId, 'call_1');
  });

  it('shows a tool call known only from events (its chunk still batched) so its approval has a home', () => {
    const { state, log } = startedThread();
    applyChunks(state, R, [chunk(1, 'text', 'Writing.')]);
    applyEvents(state, [log.itemStarted('item:w', 1, 'toolCall', 'write_file', '{"path":"b.ts"}')]);
    const blocks = runBlocks(state.runs[R]!);
    assert.deepEqual(blocks.map((b) => b.kind), ['text', 'tool']);
    assert.equal(blocks[1]!.kind === 'tool' && blocks[1]!.tool.status, 'running');
    applyChunks(state, R, [chunk(2, 'toolCall', JSON.stringify({ itemId: 'item:w', callId: 'c', name: 'write_file', arguments: '{"path":"b.ts"}' }))]);
    assert.equal(runBlocks(state.runs[R]!).filter((b) => b.kind === 'tool').length, 1, 'no duplicate once the chunk arrives');
  });

  it('warns about a broken toolCall chunk, keeps its seq, and continues', () => {
    const { state } = startedThread();
    const warnings: string[] = [];
    applyChunks(state, R, [chunk(1, 'toolCall', '{not json'), chunk(2, 'text', 'ok')], (w) => warnings.push(w));
    assert.equal(warnings.length, 1);
    assert.equal(state.runs[R]!.lastChunkSeq, 2);
    assert.equal(runText(state.runs[R]!), 'ok');
  });

  it('the final message replaces the streamed text, even when the last chunks arrive after it', () => {
    const { state, log } = startedThread();
    applyChunks(state, R, [chunk(1, 'text', 'Hello, wo')]);
    applyEvents(state, [log.itemStarted('item:0', 0, 'text'), log.itemCompleted('item:0', 'Hello, world!'), log.final('Hello, world!'), log.runEnded()]);
    assert.equal(runText(state.runs[R]!), 'Hello, world!');
    applyChunks(state, R, [chunk(2, 'text', 'rld!')]); // flushed by the batcher after the events
    applyTurnEnded(state, R, 'completed');
    const blocks = runBlocks(state.runs[R]!);
    assert.deepEqual(blocks.map((b) => b.kind), ['text']);
    assert.equal(runText(state.runs[R]!), 'Hello, world!');
    assert.equal(blocks[0]!.kind === 'text' && blocks[0]!.streaming, false);
  });

  it('after the run, text stays interleaved with tools, reasoning keeps its place, a cut step follows', () => {
    const { state, log } = startedThread();
    applyChunks(state, R, [
      chunk(1, 'reasoning', 'plan'),
      chunk(2, 'text', 'Step one.'),
      chunk(3, 'toolCall', JSON.stringify({ itemId: 'item:1', callId: 'c1', name: 'list_files', arguments: '{}' })),
      chunk(4, 'toolResult', JSON.stringify({ itemId: 'item:1', callId: 'c1', status: 'completed', content: 'a.ts', changedPaths: [] })),
      chunk(5, 'text', '\n\n'),
      chunk(6, 'reasoning', 'next'),
      chunk(7, 'text', 'Step two, cut sh'),
    ]);
    applyEvents(state, [
      log.itemStarted('item:0', 0, 'text'), log.itemCompleted('item:0', 'Step one.'),
      log.itemStarted('item:1', 1, 'toolCall', 'list_files', '{}'), log.itemCompleted('item:1', 'a.ts'),
      log.final('Step one.\n\nStep two, cut sh', 'cancelled'), log.runEnded('cancelled'),
    ]);
    const blocks = runBlocks(state.runs[R]!);
    assert.deepEqual(blocks.map((b) => b.kind), ['reasoning', 'text', 'tool', 'reasoning', 'text']);
    assert.equal(runText(state.runs[R]!), 'Step one.\n\nStep two, cut sh');
  });

  it('falls back to tools then the whole final text when the items do not match it', () => {
    const { state, log } = startedThread();
    applyEvents(state, [
      log.itemStarted('item:0', 0, 'text'), log.itemCompleted('item:0', 'something else'),
      log.itemStarted('item:1', 1, 'toolCall', 'list_files', '{}'), log.itemCompleted('item:1', 'x'),
      log.final('The real answer'), log.runEnded(),
    ]);
    const blocks = runBlocks(state.runs[R]!);
    assert.deepEqual(blocks.map((b) => b.kind), ['tool', 'text']);
    assert.equal(runText(state.runs[R]!), 'The real answer');
  });

  it('a history replay (events only, no chunks) renders the same as the live run did', () => {
    const log = eventLog();
    const events = [
      log.created(), log.user('msg:u1', 'hi'), log.runStarted(),
      log.itemStarted('item:0', 0, 'text'), log.itemCompleted('item:0', 'A'),
      log.itemStarted('item:1', 1, 'toolCall', 'read_file', '{"path":"x"}'), log.itemCompleted('item:1', 'data'),
      log.itemStarted('item:2', 2, 'text'), log.itemCompleted('item:2', 'B'),
      log.final('A\n\nB'), log.runEnded(),
    ];
    const state = createThreadState(T);
    applyEvents(state, events);
    assert.deepEqual(runBlocks(state.runs[R]!).map((b) => (b.kind === 'text' ? b.text : b.kind)), ['A', 'tool', 'B']);
    assert.deepEqual(runsNeedingStream(state), []);
  });
});

describe('webview thread state: steering and the queue', () => {
  it('a steer lands where it streamed, live and after the final message; replayed from events alone, it stays in place', () => {
    const { state, log } = startedThread();
    applyChunks(state, R, [
      chunk(1, 'text', 'Looking.'),
      chunk(2, 'steer', JSON.stringify({ itemId: 'item:1', prompt: 'use tabs', skippedTools: ['write_file'] })),
      chunk(3, 'text', '\n\nUsing tabs.'),
    ]);
    assert.deepEqual(runBlocks(state.runs[R]!).map((b) => (b.kind === 'steer' ? `steer:${b.prompt}:${b.skippedTools.join()}` : b.kind)), ['text', 'steer:use tabs:write_file', 'text']);
    const events = [
      log.itemStarted('item:0', 0, 'text'), log.itemCompleted('item:0', 'Looking.'),
      log.raw({ type: 'run.steered', runId: R, itemId: 'item:1', ordinal: 1, entryId: 'q1', prompt: 'use tabs', skippedTools: ['write_file'] }),
      log.itemStarted('item:2', 2, 'text'), log.itemCompleted('item:2', 'Using tabs.'),
      log.final('Looking.\n\nUsing tabs.'), log.runEnded(),
    ];
    applyEvents(state, events);
    const shape = (st: ThreadState) => runBlocks(st.runs[R]!).map((b) => (b.kind === 'text' ? b.text : b.kind === 'steer' ? `> ${b.prompt}` : b.kind));
    assert.deepEqual(shape(state), ['Looking.', '> use tabs', 'Using tabs.']);
    const replay = createThreadState(T);
    applyEvents(replay, [log.created(), log.user('msg:u1', 'hi'), log.runStarted(), ...events].map((e, i) => ({ ...e, seq: i + 1 })));
    assert.deepEqual(shape(replay), ['Looking.', '> use tabs', 'Using tabs.']);
  });

  it('queue events build the waiting list in order; events about unknown entries are ignored; an old saved state without a queue gets one', () => {
    const { state, log } = startedThread();
    const added = (entryId: string, prompt: string) => log.raw({ type: 'queue.added', entryId, prompt, model: null, ownerPid: 1, ownerStartedAt: null });
    applyEvents(state, [
      added('a', 'A'), added('b', 'B'), added('c', 'C'),
      log.raw({ type: 'queue.moved', entryId: 'c', toIndex: 0 }),
      log.raw({ type: 'queue.moved', entryId: 'a', toIndex: 99 }),
      log.raw({ type: 'queue.edited', entryId: 'zzz', prompt: 'ghost' }),
      log.raw({ type: 'queue.removed', entryId: 'b', reason: 'cancelled', runId: null }),
      log.raw({ type: 'queue.steerRequested', entryId: 'a' }),
    ]);
    assert.deepEqual(state.queue.map((q) => [q.entryId, q.steer]), [['c', false], ['a', true]]);
    const { queue: _dropped, ...older } = createThreadState(T);
    const old = older as ThreadState; // as a build before the queue saved it
    applyEvents(old, [added('x', 'X')]);
    assert.deepEqual(old.queue.map((q) => q.prompt), ['X']);
  });
});

/** Random deltas including astral characters (surrogate pairs) and markdown. */
function deltas(rng: () => number, n: number): string[] {
  const pieces = ['Hel', 'lo', ' ', 'wörld', '😀', '**bold**', '\n', '```ts\nconst x = 1;\n```', 'é', '𝄞', 'end'];
  return Array.from({ length: n }, () => pieces[Math.floor(rng() * pieces.length)]!);
}

describe('webview thread state: resume over the real stream registry', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`hide/show mid-stream loses and doubles nothing (seed ${seed})`, () => {
      const rng = seededRandom(seed);
      const clock = new ManualClock();
      const registry = new TurnStreamRegistry();
      registry.open(R);
      const { state } = startedThread();
      /** What the webview has received: batches in flight are delivered later, possibly after a re-subscribe. */
      const inFlight: TurnChunk[][] = [];
      let batcher: ChunkBatcher | null = null;
      let sub: { unsubscribe(): void } | null = null;
      const subscribe = () => {
        const plan = resumePlan(state);
        assert.equal(plan.turns.length, 1);
        batcher = new ChunkBatcher({ sendChunks: (c) => inFlight.push(c) }, { timer: clock });
        const s = registry.subscribeOrReplay(R, plan.turns[0]!.afterSeq, batcher);
        if (s.replay.length > 0) inFlight.push(s.replay);
        sub = s;
      };
      const deliver = (count: number) => {
        for (const batch of inFlight.splice(0, count)) applyChunks(state, R, batch);
      };
      subscribe();
      const all = deltas(rng, 300);
      for (const d of all) {
        registry.append(R, 'text', d);
        if (rng() < 0.3) clock.advance(BATCH_INTERVAL_MS);
        if (rng() < 0.3) deliver(1 + Math.floor(rng() * 2));
        if (rng() < 0.05) {
          // Hidden: the host drops the subscription (its pending batch is lost); some batches are still in flight.
          sub!.unsubscribe();
          batcher!.dispose();
          deliver(Math.floor(rng() * inFlight.length));
          // Shown again: re-subscribe from the state's seqs; old in-flight batches arrive after it.
          const stale = inFlight.splice(0);
          subscribe();
          inFlight.unshift(...stale);
        }
      }
      registry.end(R, { status: 'completed' });
      clock.advance(BATCH_INTERVAL_MS);
      deliver(inFlight.length);
      assert.equal(runText(state.runs[R]!), all.join(''));
      assert.equal(state.runs[R]!.lastChunkSeq, all.length);
    });
  }
});

describe('thread state: checkpoint rewind', () => {
  it('thread.rewound hides later entries (kept as a branch) and null rewinds to the start', async () => {
    const { createThreadState, applyEvents } = await import('../../webview/src/lib/thread-state');
    const st = createThreadState('t');
    const base = { threadId: 't', time: 1 };
    applyEvents(st, [
      { ...base, seq: 1, type: 'message.added', messageId: 'u1', parentId: null, role: 'user', content: 'one', runId: null, status: 'complete' },
      { ...base, seq: 2, type: 'run.started', runId: 'r1', ordinal: 0, provider: 'p', model: 'm', ownerPid: 1, userMessageId: 'u1' },
      { ...base, seq: 3, type: 'message.added', messageId: 'a1', parentId: 'u1', role: 'assistant', content: 'ans', runId: 'r1', status: 'complete' },
      { ...base, seq: 4, type: 'message.added', messageId: 'u2', parentId: 'a1', role: 'user', content: 'two', runId: null, status: 'complete' },
      { ...base, seq: 5, type: 'thread.rewound', toMessageId: 'a1' },
    ]);
    assert.deepEqual(st.entries.map((e) => (e.kind === 'run' ? e.runId : e.messageId)), ['u1', 'r1']);
    assert.equal(st.rewoundEntries, 1);
    applyEvents(st, [{ ...base, seq: 6, type: 'thread.rewound', toMessageId: null }]);
    assert.equal(st.entries.length, 0);
    assert.equal(st.rewoundEntries, 3);
  });
});
