/**
 * Unit tests of the virtualised list's math (webview/src/lib/virtual-list.ts): offsets from
 * measured and estimated heights, the visible range for a scroll position (with overscan),
 * anchor correction when entries above the viewport change height, anchors across a wholesale
 * replacement (a branch switch), bottom stickiness, the position that centres an entry, and the
 * height cache's bound.
 */
import { strict as assert } from 'node:assert';
import {
  HeightCache, anchorCorrection, captureAnchor, computeOffsets, indexAt, isAtBottom, restoreAnchor, scrollTopFor, visibleRange, STICK_TO_BOTTOM_PX,
} from '../../webview/src/lib/virtual-list';

const keysOf = (n: number, prefix = 'k') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('virtual list math', () => {
  it('offsets use measured heights where known and the estimate elsewhere, with the gap between entries', () => {
    const cache = new HeightCache();
    cache.set('k1', 50, 100);
    const o = computeOffsets(keysOf(3), cache, () => 100, 8);
    assert.deepEqual([...o], [0, 108, 166, 266]); // 100 + 8, 50 + 8, 100 (no gap after the last)
    assert.deepEqual([...computeOffsets([], cache, () => 100, 8)], [0]);
  });

  it('the height cache reports the change against what layout used (the estimate when unmeasured)', () => {
    const cache = new HeightCache();
    assert.equal(cache.set('a', 130, 100), 30);
    assert.equal(cache.set('a', 120, 100), -10, 'the second measurement compares with the first, not the estimate');
    assert.equal(cache.get('a'), 120);
  });

  it('the height cache is bounded: the oldest measurements go first', () => {
    const cache = new HeightCache(3);
    for (const k of ['a', 'b', 'c']) cache.set(k, 10, 10);
    cache.set('a', 11, 10); // re-measured: now the newest
    cache.set('d', 10, 10);
    assert.equal(cache.size, 3);
    assert.equal(cache.has('b'), false, 'b was the oldest');
    assert.ok(cache.has('a') && cache.has('c') && cache.has('d'));
  });

  it('indexAt finds the entry under a position, clamped to the list', () => {
    const o = computeOffsets(keysOf(4), new HeightCache(), () => 100, 0);
    assert.equal(indexAt(o, 0), 0);
    assert.equal(indexAt(o, 99.9), 0);
    assert.equal(indexAt(o, 100), 1);
    assert.equal(indexAt(o, 10_000), 3);
    assert.equal(indexAt(o, -5), 0);
    assert.equal(indexAt(new Float64Array(1), 0), -1);
  });

  it('the visible range covers the viewport plus the overscan on both sides', () => {
    const o = computeOffsets(keysOf(10_000), new HeightCache(), () => 100, 0);
    assert.deepEqual(visibleRange(o, 50_000, 900, 0), { start: 500, end: 510 });
    assert.deepEqual(visibleRange(o, 50_000, 900, 800), { start: 492, end: 518 });
    assert.deepEqual(visibleRange(o, 0, 900, 800), { start: 0, end: 18 }, 'clamped at the top');
    assert.deepEqual(visibleRange(o, 999_100, 900, 800), { start: 9983, end: 10_000 }, 'clamped at the bottom');
    assert.deepEqual(visibleRange(computeOffsets([], new HeightCache(), () => 1, 0), 0, 900), { start: 0, end: 0 });
  });

  it('the range is bounded by the viewport, not the list length', () => {
    for (const n of [2_000, 10_000, 100_000]) {
      const o = computeOffsets(keysOf(n), new HeightCache(), () => 60, 8);
      const r = visibleRange(o, o[n]! / 2, 900);
      assert.ok(r.end - r.start <= Math.ceil((900 + 1600) / 68) + 1, `${n} entries: ${r.end - r.start} rendered`);
    }
  });

  it('anchor correction adds the changes of entries entirely above the viewport top, and only those', () => {
    const o = computeOffsets(keysOf(10), new HeightCache(), () => 100, 0);
    const top = 350; // inside entry 3
    assert.equal(anchorCorrection(o, [{ index: 1, delta: 40 }], top), 40, 'above: the content under the viewport moved down by 40');
    assert.equal(anchorCorrection(o, [{ index: 0, delta: 20 }, { index: 2, delta: -30 }], top), -10);
    assert.equal(anchorCorrection(o, [{ index: 3, delta: 40 }], top), 0, 'the entry at the top grows downwards');
    assert.equal(anchorCorrection(o, [{ index: 7, delta: 500 }], top), 0, 'below the viewport: nothing moves');
    assert.equal(anchorCorrection(o, [{ index: 1, delta: 0.2 }], top), 0, 'sub-pixel noise is ignored');
    assert.equal(anchorCorrection(o, [{ index: 99, delta: 50 }], top), 0, 'unknown index');
  });

  it('an anchor survives a replacement that keeps the entry, and is gone when the entry is', () => {
    const cache = new HeightCache();
    const before = keysOf(2_000);
    const ob = computeOffsets(before, cache, () => 100, 0);
    const anchor = captureAnchor(before, ob, 12_345)!;
    assert.deepEqual(anchor, { key: 'k123', within: 45 });
    // Another branch: the first 1,000 entries shared, then a different tail of the same size.
    const after = [...before.slice(0, 1_000), ...keysOf(1_000, 'b')];
    assert.equal(restoreAnchor(anchor, after, computeOffsets(after, cache, () => 100, 0)), 12_345);
    // Measured heights of shared entries (kept by key) move the anchor with them.
    cache.set('k0', 300, 100);
    assert.equal(restoreAnchor(anchor, after, computeOffsets(after, cache, () => 100, 0)), 12_545);
    assert.equal(restoreAnchor({ key: 'k1500', within: 0 }, after, computeOffsets(after, cache, () => 100, 0)), null);
    assert.equal(captureAnchor([], new Float64Array(1), 0), null);
  });

  it('bottom stickiness: within the threshold counts as at the bottom', () => {
    assert.equal(isAtBottom(1000, 500, 1500), true);
    assert.equal(isAtBottom(1000 - STICK_TO_BOTTOM_PX, 500, 1500), true);
    assert.equal(isAtBottom(1000 - STICK_TO_BOTTOM_PX - 1, 500, 1500), false, 'scrolled up past the threshold');
    assert.equal(isAtBottom(0, 500, 300), true, 'content shorter than the viewport');
  });

  it('scrollTopFor centres an entry, puts a tall one at the top, and clamps', () => {
    const o = computeOffsets(keysOf(100), new HeightCache(), (i) => (i === 50 ? 2_000 : 100), 0);
    assert.equal(scrollTopFor(o, 10, 900), 1000 - 400, 'centred: (900 - 100) / 2 above');
    assert.equal(scrollTopFor(o, 10, 900, 'start'), 1000);
    assert.equal(scrollTopFor(o, 50, 900), 5000, 'taller than the viewport: its top at the top');
    assert.equal(scrollTopFor(o, 0, 900), 0);
    assert.equal(scrollTopFor(o, 99, 900), o[100]! - 900, 'the last entry: the end of the list');
    assert.equal(scrollTopFor(o, 500, 900), o[100]! - 900, 'out of range: clamped to the last');
  });
});
