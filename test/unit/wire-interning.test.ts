/**
 * Tests for src/protocol/wire/interning.ts: lossless id interning and the live body deduper.
 */
import assert from 'node:assert/strict';
import {
  LIVE_DEDUPE_MEMORY,
  LiveBodyDeduper,
  MAX_WIRE_DEPTH,
  WireInterningError,
  createLiveBodyDeduper,
  expandRecordIds,
  internRecordIds,
  isIdKey,
  isIdListKey,
  loadXxh64,
} from '../../src/protocol/wire/interning';
import { deriveRunFromThreadOrdinal } from '../../src/engine/ids/ids';
import { assertThrowsCode } from '../support/assert-code';

const thread = 'thread:6f1d2c3e-0000-4000-8000-000000000001';
const run = deriveRunFromThreadOrdinal(thread, 0);

describe('internRecordIds / expandRecordIds', () => {
  it('matches exactly the spec key patterns', () => {
    for (const k of ['id', 'thread_id', 'threadId', '_id', 'Id']) assert.ok(isIdKey(k), k);
    for (const k of ['valid', 'identity', 'ids', 'ID', 'thread_ID', 'idx']) assert.ok(!isIdKey(k), k);
    for (const k of ['child_ids', 'childIds']) assert.ok(isIdListKey(k), k);
    for (const k of ['ids', 'childIDs', 'bids']) assert.ok(!isIdListKey(k), k);
  });

  it('interns nested ids into a shared table and restores them losslessly', () => {
    const payload = {
      threads: [
        { id: thread, title: 'a', parentId: null, childThreadIds: [thread, 'thread:b'], valid: thread },
        { id: 'thread:b', title: 'b', parentId: thread, childThreadIds: [] },
      ],
      runs: [{ run_id: run, thread_id: thread, items: [{ id: 'i1', runId: run, text: thread }] }],
      meta: { cursor: { event_id: 'e:1' }, ids: ['not', 'interned'] },
    };
    const before = structuredClone(payload);
    const { payload: wire, ids } = internRecordIds(payload);
    assert.deepEqual(payload, before, 'input not mutated');
    assert.deepEqual(ids, [thread, 'thread:b', run, 'i1', 'e:1']);
    assert.deepEqual(wire, {
      threads: [
        { id: 0, title: 'a', parentId: null, childThreadIds: [0, 1], valid: thread },
        { id: 1, title: 'b', parentId: 0, childThreadIds: [] },
      ],
      runs: [{ run_id: 2, thread_id: 0, items: [{ id: 3, runId: 2, text: thread }] }],
      meta: { cursor: { event_id: 4 }, ids: ['not', 'interned'] },
    });
    assert.deepEqual(expandRecordIds(wire, ids), payload);
    // Survives the wire.
    assert.deepEqual(expandRecordIds(JSON.parse(JSON.stringify(wire)), ids), payload);
    assert.ok(JSON.stringify(wire).length + JSON.stringify(ids).length < JSON.stringify(payload).length);
  });

  it('handles non-string id values losslessly', () => {
    const payload = {
      id: 12345, // e.g. a GitHub numeric id
      node_id: 'MDExOlB1bGxSZXF1ZXN0MQ==',
      other_id: 0,
      big_id: 1e21,
      gone_id: null,
      flag_id: true,
      obj_id: { id: 'inner', n: 1 },
      list_id: ['x'], // a *_id holding an array is an ordinary value
      review_ids: ['r1', 7, null, { id: 'r1' }],
      labelIds: 'not-an-array',
    };
    const { payload: wire, ids } = internRecordIds(payload);
    assert.deepEqual(ids, ['MDExOlB1bGxSZXF1ZXN0MQ==', 'inner', 'r1']);
    assert.deepEqual(wire, {
      id: '12345',
      node_id: 0,
      other_id: '0',
      big_id: '1e+21',
      gone_id: null,
      flag_id: true,
      obj_id: { id: 1, n: 1 },
      list_id: ['x'],
      review_ids: [2, '7', null, { id: 2 }],
      labelIds: 'not-an-array',
    });
    assert.deepEqual(expandRecordIds(wire, ids), payload);
  });

  it('round-trips primitives, empty containers and __proto__ keys', () => {
    for (const p of [null, 1, 'id', [], {}, [[[]]], { a: [{ b: { c_id: '' } }] }]) {
      const { payload, ids } = internRecordIds(p);
      assert.deepEqual(expandRecordIds(payload, ids), p);
    }
    const tricky = JSON.parse('{"__proto__":{"id":"p"},"x":{"constructor_id":"c"}}');
    const { payload, ids } = internRecordIds(tricky);
    const back = expandRecordIds(payload, ids) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(back, '__proto__')?.value, { id: 'p' });
    assert.deepEqual(ids, ['p', 'c']);
  });

  it('rejects bad indices, bad escaped numbers and over-deep payloads', () => {
    assertThrowsCode(() => expandRecordIds({ id: 3 }, ['a']), 'interning/badIndex', WireInterningError);
    assertThrowsCode(() => expandRecordIds({ id: -1 }, ['a']), 'interning/badIndex', WireInterningError);
    assertThrowsCode(() => expandRecordIds({ x: { ids: 1, list_ids: [0, 1.5] } }, ['a']), 'interning/badIndex', WireInterningError);
    assertThrowsCode(() => expandRecordIds({ id: 'abc' }, []), 'interning/badNumber', WireInterningError);
    assertThrowsCode(() => expandRecordIds({ id: ' 5' }, []), 'interning/badNumber', WireInterningError);
    assertThrowsCode(() => expandRecordIds({ id: '' }, []), 'interning/badNumber', WireInterningError);
    assert.throws(() => expandRecordIds({ a: [{ id: 9 }] }, []), /\$\.a\[0\]\.id: 9 is not an index/);

    let deep: unknown = { id: 'leaf' };
    for (let i = 0; i < MAX_WIRE_DEPTH + 5; i++) deep = { child: deep };
    assertThrowsCode(() => internRecordIds(deep), 'interning/tooDeep', WireInterningError);
    let ok: unknown = { id: 'leaf' };
    for (let i = 0; i < MAX_WIRE_DEPTH - 2; i++) ok = [ok];
    const interned = internRecordIds(ok);
    assert.deepEqual(expandRecordIds(interned.payload, interned.ids), ok);
  });
});

describe('LiveBodyDeduper', () => {
  it('uses xxh64 (known test vector)', async () => {
    const h = await loadXxh64();
    assert.equal(h(''), 0xef46db3751d8e999n); // XXH64("", seed 0)
  });

  it('omits re-sent identical bodies and flags them', async () => {
    const d = await createLiveBodyDeduper();
    assert.equal(d.memory, LIVE_DEDUPE_MEMORY);
    const msg = { id: 'm1', role: 'assistant', text: 'hello' };
    assert.deepEqual(d.dedupe('m1', msg, ['text']), msg);
    assert.deepEqual(d.dedupe('m1', msg, ['text']), { id: 'm1', role: 'assistant', textOmitted: true });
    assert.equal(msg.text, 'hello', 'input not mutated');

    // A changed body is sent; changing back is sent too (the client holds the newer body).
    assert.deepEqual(d.dedupe('m1', { text: 'hello world' }, ['text']), { text: 'hello world' });
    assert.deepEqual(d.dedupe('m1', { text: 'hello' }, ['text']), { text: 'hello' });

    // Same body under another item id is not omitted.
    assert.deepEqual(d.dedupe('m2', { text: 'hello' }, ['text']), { text: 'hello' });

    // Fields are tracked separately; file lists hashed as JSON.
    const sub = { prompt: 'do it', result: 'done' };
    assert.deepEqual(d.dedupe('s1', sub, ['prompt', 'result']), sub);
    assert.deepEqual(d.dedupe('s1', { prompt: 'do it', result: 'done!' }, ['prompt', 'result']), {
      result: 'done!',
      promptOmitted: true,
    });
    assert.deepEqual(d.dedupe('s1', { prompt: 'done!', result: 'done!' }, ['prompt', 'result']), {
      prompt: 'done!',
      resultOmitted: true,
    });
    const cp = { files: [{ path: 'a.ts', additions: 1 }] };
    d.dedupe('c1', cp, ['files']);
    assert.deepEqual(d.dedupe('c1', structuredClone(cp), ['files']), { filesOmitted: true });
    assert.deepEqual(d.dedupe('c1', { files: [{ path: 'a.ts', additions: 2 }] }, ['files']), {
      files: [{ path: 'a.ts', additions: 2 }],
    });

    // Absent fields are skipped; empty bodies are recorded but never omitted.
    assert.deepEqual(d.dedupe('m3', { other: 1 }, ['text']), { other: 1 });
    d.dedupe('m4', { text: 'abc' }, ['text']);
    assert.deepEqual(d.dedupe('m4', { text: '' }, ['text']), { text: '' });
    assert.deepEqual(d.dedupe('m4', { text: '' }, ['text']), { text: '' });
    assert.deepEqual(d.dedupe('m4', { text: 'abc' }, ['text']), { text: 'abc' }, 'client holds "", so resend');

    d.reset();
    assert.equal(d.size, 0);
    assert.deepEqual(d.dedupe('m1', { text: 'hello' }, ['text']), { text: 'hello' });
  });

  it('remembers the last 32 bodies and evicts the least recently sent', async () => {
    const d = await createLiveBodyDeduper();
    for (let i = 0; i < LIVE_DEDUPE_MEMORY; i++) d.markSent(`item${i}`, 'text', `body${i}`);
    assert.equal(d.size, LIVE_DEDUPE_MEMORY);
    // Re-sending item0 refreshes it, so item1 is now the oldest.
    assert.equal(d.markSent('item0', 'text', 'body0'), true);
    assert.equal(d.markSent('item32', 'text', 'body32'), false);
    assert.equal(d.size, LIVE_DEDUPE_MEMORY);
    assert.equal(d.markSent('item1', 'text', 'body1'), false, 'item1 was evicted');
    assert.equal(d.markSent('item0', 'text', 'body0'), true, 'item0 survived');
    for (let i = 3; i <= 32; i++) assert.equal(d.markSent(`item${i}`, 'text', `body${i}`), true, `item${i}`);
    // item2 was evicted when item1 came back.
    assert.equal(d.markSent('item2', 'text', 'body2'), false);
  });

  it('takes an injected hash and validates its memory size', () => {
    let calls = 0;
    const d = new LiveBodyDeduper(() => {
      calls++;
      return 1n; // every body collides on hash; the length still tells these apart
    }, 2);
    assert.equal(d.markSent('a', 'text', 'xy'), false);
    assert.equal(d.markSent('a', 'text', 'xyz'), false);
    assert.equal(d.markSent('a', 'text', 'abc'), true);
    assert.equal(calls, 3);
    assert.throws(() => new LiveBodyDeduper(() => 0n, 0), RangeError);
  });
});
