/**
 * The math of the virtualised message list (../components/VirtualList.svelte), pure and DOM-free:
 * a height cache keyed by entry key (estimated until measured), the prefix offsets of a list of
 * keys, the range of entries a viewport (plus overscan) covers, the scroll correction that keeps
 * the content under the viewport still when entries above it change height (scroll anchoring),
 * capturing and restoring an anchor across a wholesale replacement of the list (a branch switch),
 * bottom stickiness, and the scroll position that brings one entry into view.
 *
 * Coordinates are relative to the top of the list: entry i spans
 * [offsets[i], offsets[i] + height(i)), with `gap` px between entries.
 */

/** Extra pixels above and below the viewport that are rendered too (smooth scrolling, find). */
export const OVERSCAN_PX = 800;
/** How much the overscan grows per painted frame after the first (px): the rows around the viewport come a few per frame. */
export const OVERSCAN_STEP_PX = 200;
/** Distance from the bottom (px) within which the list counts as "at the bottom" and keeps following new content. */
export const STICK_TO_BOTTOM_PX = 48;
/** Height changes smaller than this (px) are not corrected for (sub-pixel layout noise). */
export const MIN_ANCHOR_DELTA_PX = 0.5;

/** Most heights kept (the oldest measured go first): bounds memory across many opened threads. */
export const MAX_CACHED_HEIGHTS = 50_000;

/** Measured heights by entry key; keys not measured yet use the caller's estimate. */
export class HeightCache {
  private readonly measured = new Map<string, number>();

  constructor(private readonly capacity: number = MAX_CACHED_HEIGHTS) {}

  get(key: string): number | undefined {
    return this.measured.get(key);
  }

  /** Records a measurement; returns the change against what layout used before (the estimate when unmeasured). */
  set(key: string, height: number, estimate: number): number {
    const before = this.measured.get(key) ?? estimate;
    this.measured.delete(key); // re-insert: the newest measurement is the last to be evicted
    this.measured.set(key, height);
    if (this.measured.size > this.capacity) this.measured.delete(this.measured.keys().next().value!);
    return height - before;
  }

  has(key: string): boolean {
    return this.measured.has(key);
  }

  get size(): number {
    return this.measured.size;
  }
}

/**
 * Prefix offsets of `keys`: `offsets[i]` is the top of entry i, `offsets[n]` the list's total
 * height. O(n) — cheap even for 10,000 entries (a typed array of sums).
 */
export function computeOffsets(keys: readonly string[], cache: HeightCache, estimate: (index: number) => number, gap: number): Float64Array {
  const n = keys.length;
  const offsets = new Float64Array(n + 1);
  let y = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = y;
    y += (cache.get(keys[i]!) ?? estimate(i)) + (i < n - 1 ? gap : 0);
  }
  offsets[n] = y;
  return offsets;
}

/** The index of the entry at `y` (the last entry whose top is at or above y), clamped to [0, n-1]; -1 when empty. */
export function indexAt(offsets: Float64Array, y: number): number {
  const n = offsets.length - 1;
  if (n <= 0) return -1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface Range {
  /** First rendered index. */
  start: number;
  /** One past the last rendered index. */
  end: number;
}

/** The entries that intersect [top - overscan, top + height + overscan]. */
export function visibleRange(offsets: Float64Array, top: number, height: number, overscan: number = OVERSCAN_PX): Range {
  const n = offsets.length - 1;
  if (n <= 0) return { start: 0, end: 0 };
  const start = indexAt(offsets, Math.max(0, top - overscan));
  const end = indexAt(offsets, Math.max(0, top + height + overscan)) + 1;
  return { start, end: Math.min(n, Math.max(end, start + 1)) };
}

/**
 * The scroll correction for height changes: the sum of the changes of entries that lie entirely
 * above the viewport's top (`top`, in list coordinates, with the offsets layout used BEFORE the
 * changes). Adding it to scrollTop keeps what the user looks at in place. Entries at or below the
 * top grow downwards and need no correction.
 */
export function anchorCorrection(offsets: Float64Array, changes: readonly { index: number; delta: number }[], top: number): number {
  let sum = 0;
  for (const c of changes) {
    const bottom = offsets[c.index + 1] ?? offsets[offsets.length - 1]!;
    if (c.index >= 0 && c.index < offsets.length - 1 && bottom <= top && Math.abs(c.delta) >= MIN_ANCHOR_DELTA_PX) sum += c.delta;
  }
  return sum;
}

/** What the viewport's top shows: an entry and how far into it (px) the top is. */
export interface Anchor { key: string; within: number }

/** The anchor at list position `top`, or null for an empty list. */
export function captureAnchor(keys: readonly string[], offsets: Float64Array, top: number): Anchor | null {
  const i = indexAt(offsets, top);
  if (i < 0) return null;
  return { key: keys[i]!, within: top - offsets[i]! };
}

/**
 * After `keys` was replaced (e.g. a branch switch keeps the shared prefix), the list position
 * that shows the anchor's entry at the same place; null when that entry is gone.
 */
export function restoreAnchor(anchor: Anchor, keys: readonly string[], offsets: Float64Array): number | null {
  const i = keys.indexOf(anchor.key);
  if (i < 0) return null;
  return offsets[i]! + anchor.within;
}

/** True when the scroller shows its bottom (within `threshold` px). */
export function isAtBottom(scrollTop: number, clientHeight: number, scrollHeight: number, threshold: number = STICK_TO_BOTTOM_PX): boolean {
  return scrollHeight - scrollTop - clientHeight <= threshold;
}

/**
 * The list position to put at the viewport's top so entry `index` shows at `align` of the
 * viewport ('start': its top at the top; 'center': its middle in the middle, or its top at the
 * top when it is taller than the viewport). Clamped to the scrollable span.
 */
export function scrollTopFor(offsets: Float64Array, index: number, viewport: number, align: 'start' | 'center' = 'center'): number {
  const n = offsets.length - 1;
  if (n <= 0) return 0;
  const i = Math.min(Math.max(0, index), n - 1);
  const top = offsets[i]!;
  const h = offsets[i + 1]! - top;
  const y = align === 'start' || h >= viewport ? top : top - (viewport - h) / 2;
  return Math.max(0, Math.min(y, Math.max(0, offsets[n]! - viewport)));
}
