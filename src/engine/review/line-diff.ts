/**
 * A line diff (Myers' O(ND) algorithm, with the common prefix and suffix trimmed first) for the
 * review of the agent's edits. Lines are compared byte for byte *including* their terminator, so
 * `a\r\n` and `a\n` differ and a last line without a newline differs from the same line with
 * one: splitting, diffing and putting a hunk back is exact on any bytes (text is carried as
 * latin1, one char per byte). The result is a list of hunks — maximal runs of changed lines,
 * separated by at least one unchanged line — so reverting one never touches another.
 */

/** Largest edit distance searched; beyond it the changed middle is one hunk (bounded memory: O(D²)). */
export const LINE_DIFF_MAX_EDIT_DISTANCE = 2000;

/** Lines `[beforeStart, beforeEnd)` of the old text became `[afterStart, afterEnd)` of the new (0-based). */
export interface LineHunk {
  beforeStart: number;
  beforeEnd: number;
  afterStart: number;
  afterEnd: number;
}

/** Splits text into lines that keep their terminator (`\n`, so `\r\n` too); the last may have none. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** Pairs (i, j) with a[i] === b[j] along one shortest edit script, ascending; null when it is over the limit. */
function myersMatches(a: Int32Array, b: Int32Array, maxD: number): Array<[number, number]> | null {
  const n = a.length;
  const m = b.length;
  // trace[d][k + d] = furthest x on diagonal k after d edits.
  const trace: Int32Array[] = [];
  let prev = new Int32Array(1);
  let found = -1;
  for (let d = 0; d <= Math.min(n + m, maxD) && found < 0; d++) {
    const cur = new Int32Array(2 * d + 1);
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (d === 0) x = 0;
      else if (k === -d || (k !== d && prev[k - 1 + d - 1]! < prev[k + 1 + d - 1]!)) x = prev[k + 1 + d - 1]!;
      else x = prev[k - 1 + d - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      cur[k + d] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(cur);
    prev = cur;
  }
  if (found < 0) return null;
  const pairs: Array<[number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const p = trace[d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && p[k - 1 + d - 1]! < p[k + 1 + d - 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = p[prevK + d - 1]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) pairs.push([--x, --y]);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) pairs.push([--x, --y]);
  return pairs.reverse();
}

/** The hunks that turn `before` into `after` (arrays of lines from `splitLines`). */
export function diffLines(before: readonly string[], after: readonly string[], maxEditDistance = LINE_DIFF_MAX_EDIT_DISTANCE): LineHunk[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let endB = before.length;
  let endA = after.length;
  while (endB > start && endA > start && before[endB - 1] === after[endA - 1]) {
    endB--;
    endA--;
  }
  if (start === endB && start === endA) return [];
  // Lines become small integers so the inner loop compares numbers.
  const ids = new Map<string, number>();
  const intern = (l: string): number => {
    let id = ids.get(l);
    if (id === undefined) ids.set(l, (id = ids.size));
    return id;
  };
  const a = Int32Array.from(before.slice(start, endB), intern);
  const b = Int32Array.from(after.slice(start, endA), intern);
  const matches = myersMatches(a, b, maxEditDistance);
  if (!matches) return [{ beforeStart: start, beforeEnd: endB, afterStart: start, afterEnd: endA }];
  const hunks: LineHunk[] = [];
  let i = 0;
  let j = 0;
  for (const [mi, mj] of [...matches, [a.length, b.length] as [number, number]]) {
    if (mi > i || mj > j) hunks.push({ beforeStart: start + i, beforeEnd: start + mi, afterStart: start + j, afterEnd: start + mj });
    i = mi + 1;
    j = mj + 1;
  }
  return hunks;
}

/** `after` with hunk `h` put back as it was in `before` (both arrays of lines). */
export function revertHunk(before: readonly string[], after: readonly string[], h: LineHunk): string[] {
  return [...after.slice(0, h.afterStart), ...before.slice(h.beforeStart, h.beforeEnd), ...after.slice(h.afterEnd)];
}

/** `before` with hunk `h` applied from `after`. */
export function applyHunk(before: readonly string[], after: readonly string[], h: LineHunk): string[] {
  return [...before.slice(0, h.beforeStart), ...after.slice(h.afterStart, h.afterEnd), ...before.slice(h.beforeEnd)];
}
