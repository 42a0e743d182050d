/** TurnStreamRegistry: exactly-once mid-stream join under a randomised producer, plus every error path. */
import { strict as assert } from 'node:assert';
import {
  StreamError, TurnStreamRegistry, MAX_RETAINED_ENDED_TURNS, type ChunkKind, type TurnChunk, type TurnEnd,
  type TurnStreamRegistryOptions,
} from '../../src/engine/stream/turn-stream-registry';
import { seededRandom } from '../support/random';
import { makeScript, runChaos, MAX_SPINS } from '../support/stream-chaos';
import { assertThrowsCode } from '../support/assert-code';

/** Runs the chaos harness and asserts the exactly-once, in-order, byte-exact guarantee for every client. */
async function hardRun(seed: number, count: number, opts: TurnStreamRegistryOptions & { store?: boolean }) {
  const r = await runChaos(seed, count, opts);
  assert.deepEqual(r.violations.slice(0, 5), []);
  assert.ok(r.spins < MAX_SPINS, 'clients converged');
  const total = r.script.length;
  const text = r.script.filter((s) => s.kind === 'text').map((s) => s.data).join('');
  const reasoning = r.script.filter((s) => s.kind === 'reasoning').map((s) => s.data).join('');
  assert.equal(r.accumulated?.text, text);
  assert.equal(r.accumulated?.lastSeq, total);
  for (const cl of r.clients) {
    assert.deepEqual(cl.ended, { status: 'completed' }, `client ${cl.id} saw the end`);
    assert.equal(cl.received.length, total, `client ${cl.id} chunk count`);
    cl.received.forEach((c, i) => assert.equal(c.seq, i + 1));
    const got = cl.received.filter((c) => c.kind === 'text').map((c) => c.data).join('');
    const gotR = cl.received.filter((c) => c.kind === 'reasoning').map((c) => c.data).join('');
    assert.ok(Buffer.from(got, 'utf8').equals(Buffer.from(text, 'utf8')), `client ${cl.id} text bytes`);
    assert.equal(got, text);
    assert.equal(gotR, reasoning);
  }
  if (opts.store) assert.equal(r.persisted, total);
  return r;
}

describe('TurnStreamRegistry', () => {
  describe('mid-stream join under a randomised producer (10,000 chunks, seeded)', () => {
    it('every subscriber sees every chunk exactly once, in order, text byte for byte (all in memory)', async () => {
      const { clients, reentrantJoins } = await hardRun(0x5eed, 10_000, { maxChunksInMemory: 20_000 });
      const midStream = clients.reduce((n, c) => n + c.midStreamJoins, 0);
      const rejoins = clients.reduce((n, c) => n + Math.max(0, c.joins - 1), 0);
      assert.ok(midStream >= 50, `joins really happened mid-stream (${midStream})`);
      assert.ok(rejoins >= 50, `clients left and rejoined (${rejoins})`);
      assert.ok(reentrantJoins >= 1, `some joins happened inside another subscriber's delivery (${reentrantJoins})`);
      assert.ok(clients[0]!.joins === 1 && clients[0]!.midStreamJoins === 0, 'client 0 joined only after the end');
    });

    it('same, with a small memory window: old seqs come from the store via loadAfter', async () => {
      await hardRun(0xbeef, 10_000, { store: true, maxChunksInMemory: 200 });
    });

    it('same, with the window bounded by bytes', async () => {
      await hardRun(42, 10_000, { store: true, maxBytesInMemory: 2_048 });
    });

    it('the script really contains multi-byte, astral and split surrogate-pair chunks', () => {
      const script = makeScript(seededRandom(0x5eed), 10_000);
      const all = script.map((s) => s.data);
      assert.ok(all.some((d) => /[\u0080-\u07ff]/.test(d)), '2-byte UTF-8');
      assert.ok(all.some((d) => /[\u0800-\uffff]/.test(d)), '3-byte UTF-8');
      assert.ok(all.some((d) => /\p{Extended_Pictographic}/u.test(d)), 'astral');
      assert.ok(all.some((d) => /[\ud800-\udbff]$/.test(d)), 'a chunk ends with a lone high surrogate');
    });
  });

  describe('errors', () => {
    it('unknown turn, bad seq and seq ahead are typed errors', () => {
      const reg = new TurnStreamRegistry();
      const sub = { onChunks: () => {} };
      assertThrowsCode(() => reg.subscribeOrReplay('nope', 0, sub), 'stream/unknownTurn', StreamError);
      assertThrowsCode(() => reg.append('nope', 'text', 'x'), 'stream/unknownTurn', StreamError);
      assertThrowsCode(() => reg.end('nope', { status: 'completed' }), 'stream/unknownTurn', StreamError);
      reg.open('t');
      reg.append('t', 'text', 'a');
      reg.append('t', 'text', 'b');
      assertThrowsCode(() => reg.subscribeOrReplay('t', 3, sub), 'stream/seqAhead', StreamError);
      for (const bad of [-1, 1.5, Number.NaN, Infinity]) assertThrowsCode(() => reg.subscribeOrReplay('t', bad, sub), 'stream/badSeq', StreamError);
      assert.deepEqual(reg.subscribeOrReplay('t', 2, sub).replay, []);
      assertThrowsCode(() => reg.append('t', 'nonsense' as ChunkKind, 'x'), 'stream/badInput', StreamError);
      assertThrowsCode(() => reg.end('t', { status: 'done' } as unknown as TurnEnd), 'stream/badInput', StreamError);
      assertThrowsCode(() => reg.open(''), 'stream/badInput', StreamError);
    });

    it('open is idempotent while live; ended turns refuse open, append and end', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      reg.append('t', 'text', 'a');
      reg.open('t');
      assert.equal(reg.append('t', 'text', 'b').seq, 2);
      reg.end('t', { status: 'failed', error: 'boom' });
      assertThrowsCode(() => reg.open('t'), 'stream/ended', StreamError);
      assertThrowsCode(() => reg.append('t', 'text', 'c'), 'stream/ended', StreamError);
      assertThrowsCode(() => reg.end('t', { status: 'completed' }), 'stream/ended', StreamError);
      assert.deepEqual(reg.accumulated('t'), { text: 'ab', reasoning: '', lastSeq: 2 });
    });
  });

  describe('end and late join', () => {
    it('a late joiner gets the replay and `ended`, and onEnd is not called', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      reg.append('t', 'reasoning', 'think');
      reg.append('t', 'text', 'hé😀');
      reg.end('t', { status: 'cancelled' });
      let endCalls = 0;
      const sub = reg.subscribeOrReplay('t', 0, { onChunks: () => assert.fail('no live chunks'), onEnd: () => endCalls++ });
      assert.deepEqual(sub.replay.map((c) => [c.seq, c.kind, c.data]), [[1, 'reasoning', 'think'], [2, 'text', 'hé😀']]);
      assert.deepEqual(sub.ended, { status: 'cancelled' });
      sub.unsubscribe();
      assert.deepEqual(reg.subscribeOrReplay('t', 2, { onChunks: () => {} }).replay, []);
      assert.equal(endCalls, 0);
    });

    it('live subscribers get every chunk, then onEnd once, then nothing', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      const log: string[] = [];
      reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => log.push(`c${c.seq}`)), onEnd: (e) => log.push(`end:${e.status}`) });
      reg.append('t', 'text', 'a');
      reg.append('t', 'text', 'b');
      reg.end('t', { status: 'completed' });
      assert.deepEqual(log, ['c1', 'c2', 'end:completed']);
    });

    it('an end issued from inside a delivery still reaches everyone after their chunks', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      const logs: string[][] = [[], []];
      logs.forEach((log, i) =>
        reg.subscribeOrReplay('t', 0, {
          onChunks: (cs) => {
            cs.forEach((c) => log.push(`c${c.seq}`));
            if (i === 0 && cs.some((c) => c.seq === 2)) reg.end('t', { status: 'interrupted' });
          },
          onEnd: (e) => log.push(`end:${e.status}`),
        }),
      );
      reg.append('t', 'text', 'a');
      reg.append('t', 'text', 'b');
      assert.deepEqual(logs, [['c1', 'c2', 'end:interrupted'], ['c1', 'c2', 'end:interrupted']]);
    });

    it(`ended turns are retained LRU (default ${MAX_RETAINED_ENDED_TURNS}); live turns are never dropped`, () => {
      const reg = new TurnStreamRegistry({ maxRetainedTurns: 2 });
      reg.open('live');
      for (const id of ['a', 'b', 'c']) {
        reg.open(id);
        reg.append(id, 'text', id);
        reg.end(id, { status: 'completed' });
      }
      assert.deepEqual(['a', 'b', 'c'].map((id) => reg.has(id)), [false, true, true]);
      assertThrowsCode(() => reg.subscribeOrReplay('a', 0, { onChunks: () => {} }), 'stream/unknownTurn', StreamError);
      reg.subscribeOrReplay('b', 0, { onChunks: () => {} }); // touch b: c is now the least recently used
      reg.open('d');
      reg.end('d', { status: 'completed' });
      assert.deepEqual(['b', 'c', 'd', 'live'].map((id) => reg.has(id)), [true, false, true, true]);
      reg.accumulated('b'); // touch b again
      reg.open('e');
      reg.end('e', { status: 'completed' });
      assert.deepEqual(['b', 'd', 'e', 'live'].map((id) => reg.has(id)), [true, false, true, true]);
    });
  });

  describe('subscriber isolation and re-entrancy', () => {
    it('a throwing subscriber is unsubscribed and reported; the producer and others carry on', () => {
      const reported: Array<[string, string]> = [];
      const reg = new TurnStreamRegistry({
        onSubscriberError: (e, turnId) => {
          reported.push([turnId, (e as Error).message]);
          throw new Error('the reporter fails too');
        },
      });
      reg.open('t');
      const bad: number[] = [];
      const good: number[][] = [[], []];
      reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => good[0]!.push(c.seq)) });
      reg.subscribeOrReplay('t', 0, {
        onChunks: (cs) => {
          for (const c of cs) bad.push(c.seq);
          if (bad.length === 2) throw new Error('render failed');
        },
      });
      let endThrew = false;
      reg.subscribeOrReplay('t', 0, {
        onChunks: (cs) => cs.forEach((c) => good[1]!.push(c.seq)),
        onEnd: () => { endThrew = true; throw new Error('end failed'); },
      });
      for (let i = 0; i < 5; i++) reg.append('t', 'text', String(i));
      reg.end('t', { status: 'completed' });
      assert.deepEqual(bad, [1, 2]);
      assert.deepEqual(good, [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]);
      assert.ok(endThrew);
      assert.deepEqual(reported, [['t', 'render failed'], ['t', 'end failed']]);
    });

    it('a subscriber that appends during delivery does not reorder anyone’s stream', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      const seen: number[][] = [[], [], []];
      for (let i = 0; i < 3; i++) {
        reg.subscribeOrReplay('t', 0, {
          onChunks: (cs) => {
            for (const c of cs) {
              seen[i]!.push(c.seq);
              if (i === 0 && c.data === 'ping') reg.append('t', 'status', 'pong');
            }
          },
        });
      }
      reg.append('t', 'text', 'x');
      reg.append('t', 'status', 'ping');
      reg.append('t', 'text', 'y');
      assert.deepEqual(seen, [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]);
      assert.deepEqual(reg.subscribeOrReplay('t', 0, { onChunks: () => {} }).replay.map((c) => c.data), ['x', 'ping', 'pong', 'y']);
    });

    it('a join from inside a delivery gets the in-flight chunk once (in its replay), not again live', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      const late: number[] = [];
      let joined = false;
      reg.subscribeOrReplay('t', 0, {
        onChunks: () => {
          if (joined) return;
          joined = true;
          const sub = reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => late.push(c.seq)) });
          sub.replay.forEach((c) => late.push(c.seq));
        },
      });
      reg.subscribeOrReplay('t', 0, { onChunks: () => {} }); // registered after the joiner's host, so iteration reaches it too
      reg.append('t', 'text', 'a');
      reg.append('t', 'text', 'b');
      assert.deepEqual(late, [1, 2]);
    });

    it('unsubscribe stops delivery; replay is a copy of frozen chunks', () => {
      const reg = new TurnStreamRegistry();
      reg.open('t');
      const got: number[] = [];
      const sub = reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => got.push(c.seq)) });
      reg.append('t', 'text', 'a');
      sub.unsubscribe();
      reg.append('t', 'text', 'b');
      assert.deepEqual(got, [1]);
      const replay = reg.subscribeOrReplay('t', 0, { onChunks: () => {} }).replay;
      assert.ok(Object.isFrozen(replay[0]));
      replay.length = 0;
      assert.equal(reg.subscribeOrReplay('t', 0, { onChunks: () => {} }).replay.length, 2);
    });
  });

  describe('memory bound and loadAfter', () => {
    it('without loadAfter, seqs that left memory are a typed `evicted` error; recent ones replay', () => {
      const reg = new TurnStreamRegistry({ maxChunksInMemory: 4 });
      reg.open('t');
      for (let i = 1; i <= 10; i++) reg.append('t', 'text', `${i},`);
      assert.deepEqual(reg.subscribeOrReplay('t', 6, { onChunks: () => {} }).replay.map((c) => c.seq), [7, 8, 9, 10]);
      assertThrowsCode(() => reg.subscribeOrReplay('t', 5, { onChunks: () => {} }), 'stream/evicted', StreamError);
      assert.equal(reg.accumulated('t')!.text, '1,2,3,4,5,6,7,8,9,10,'); // accumulated text stays whole
    });

    it('the byte bound evicts too, always keeping the newest chunk', () => {
      const reg = new TurnStreamRegistry({ maxBytesInMemory: 10 });
      reg.open('t');
      reg.append('t', 'text', 'abc'); // 6 UTF-16 bytes
      reg.append('t', 'text', 'def'); // 12 > 10: chunk 1 leaves
      assert.deepEqual(reg.subscribeOrReplay('t', 1, { onChunks: () => {} }).replay.map((c) => c.data), ['def']);
      assertThrowsCode(() => reg.subscribeOrReplay('t', 0, { onChunks: () => {} }), 'stream/evicted', StreamError);
      reg.append('t', 'toolResult', 'x'.repeat(100)); // alone over the bound, still kept
      assert.deepEqual(reg.subscribeOrReplay('t', 2, { onChunks: () => {} }).replay.map((c) => c.seq), [3]);
    });

    it('with loadAfter, old seqs come from the store and join up with memory', () => {
      const store: TurnChunk[] = [];
      const calls: Array<[string, number]> = [];
      const reg = new TurnStreamRegistry({
        maxChunksInMemory: 3,
        persist: (c) => { store.push(c); },
        loadAfter: (turnId, after) => { calls.push([turnId, after]); return store.filter((c) => c.seq > after); },
      });
      reg.open('t');
      for (let i = 1; i <= 8; i++) reg.append('t', i % 2 ? 'text' : 'reasoning', `<${i}>`);
      const sub = reg.subscribeOrReplay('t', 1, { onChunks: () => {} });
      assert.deepEqual(sub.replay.map((c) => c.seq), [2, 3, 4, 5, 6, 7, 8]);
      assert.deepEqual(sub.replay.map((c) => c.data).join(''), '<2><3><4><5><6><7><8>');
      assert.deepEqual(calls, [['t', 1]]);
      reg.subscribeOrReplay('t', 6, { onChunks: () => {} });
      assert.equal(calls.length, 1, 'no store read when memory suffices');
    });

    it('a store that skips, reorders or mislabels chunks is a typed `storeGap` error', () => {
      const mk = (rows: (all: TurnChunk[]) => TurnChunk[]) => {
        const store: TurnChunk[] = [];
        const reg = new TurnStreamRegistry({ maxChunksInMemory: 2, persist: (c) => { store.push(c); }, loadAfter: () => rows(store) });
        reg.open('t');
        for (let i = 0; i < 6; i++) reg.append('t', 'text', String(i));
        return reg;
      };
      assertThrowsCode(() => mk((all) => all.filter((c) => c.seq !== 3)).subscribeOrReplay('t', 0, { onChunks: () => {} }), 'stream/storeGap', StreamError);
      assertThrowsCode(() => mk((all) => all.slice(0, 2)).subscribeOrReplay('t', 0, { onChunks: () => {} }), 'stream/storeGap', StreamError);
      assertThrowsCode(() => mk((all) => [all[1]!, all[0]!, ...all.slice(2)]).subscribeOrReplay('t', 0, { onChunks: () => {} }), 'stream/storeGap', StreamError);
      assertThrowsCode(() => mk((all) => all.map((c) => ({ ...c, kind: 'bogus' as ChunkKind }))).subscribeOrReplay('t', 0, { onChunks: () => {} }), 'stream/storeGap', StreamError);
      assert.equal(mk((all) => all).subscribeOrReplay('t', 0, { onChunks: () => {} }).replay.length, 6);
    });
  });

  describe('persistence', () => {
    it('persist is called in seq order, before any subscriber sees the chunk', () => {
      const events: string[] = [];
      const reg = new TurnStreamRegistry({ persist: (c) => events.push(`persist ${c.seq}`) });
      reg.open('t');
      reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => events.push(`deliver ${c.seq}`)) });
      for (let i = 0; i < 3; i++) reg.append('t', 'text', 'x');
      assert.deepEqual(events, ['persist 1', 'deliver 1', 'persist 2', 'deliver 2', 'persist 3', 'deliver 3']);
    });

    it('a failing persist aborts the append: no delivery, no accumulated text, seq not consumed', () => {
      let fail = true;
      const reg = new TurnStreamRegistry({ persist: () => { if (fail) throw new Error('disk full'); } });
      reg.open('t');
      const got: number[] = [];
      reg.subscribeOrReplay('t', 0, { onChunks: (cs) => cs.forEach((c) => got.push(c.seq)) });
      assert.throws(() => reg.append('t', 'text', 'lost?'), /disk full/);
      assert.deepEqual(got, []);
      assert.deepEqual(reg.accumulated('t'), { text: '', reasoning: '', lastSeq: 0 });
      fail = false;
      assert.equal(reg.append('t', 'text', 'kept').seq, 1);
      assert.deepEqual(got, [1]);
    });

    it('persist calling back into append/end is refused as `reentrant`', () => {
      const inner: unknown[] = [];
      const reg: TurnStreamRegistry = new TurnStreamRegistry({
        persist: () => {
          try { reg.append('t', 'text', 'nested'); } catch (e) { inner.push(e); }
          try { reg.end('t', { status: 'completed' }); } catch (e) { inner.push(e); }
        },
      });
      reg.open('t');
      reg.append('t', 'text', 'outer');
      assert.deepEqual(inner.map((e) => e instanceof StreamError && e.code), ['reentrant', 'reentrant']);
      assert.deepEqual(reg.accumulated('t'), { text: 'outer', reasoning: '', lastSeq: 1 });
    });
  });
});
