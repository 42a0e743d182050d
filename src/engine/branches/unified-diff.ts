/**
 * A unified diff (`--- a`, `+++ b`, `@@ -l,n +l,n @@` hunks with context lines) of two texts, from
 * the review's line diff (../review/line-diff.ts). Used for the final answers of compared
 * branches. Identical texts give ''.
 */
import { diffLines, splitLines, type LineHunk } from '../review/line-diff';

/** Unchanged lines shown around each change (git's default). */
export const DIFF_CONTEXT_LINES = 3;

const NO_NEWLINE = '\\ No newline at end of file';

function emit(out: string[], mark: ' ' | '-' | '+', line: string): void {
  if (line.endsWith('\n')) out.push(mark + line.slice(0, line.endsWith('\r\n') ? -2 : -1));
  else out.push(mark + line, NO_NEWLINE);
}

/** `l,n` of a hunk header, as diff -u writes it (`l` alone for one line; the line before for none). */
const range = (start: number, count: number) => (count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`);

export function unifiedDiff(before: string, after: string, labels: { before: string; after: string }, context = DIFF_CONTEXT_LINES): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const hunks = diffLines(a, b);
  if (hunks.length === 0) return '';
  // Hunks closer than two contexts apart share one @@ block.
  const groups: LineHunk[][] = [];
  for (const h of hunks) {
    const last = groups.at(-1);
    if (last && h.beforeStart - last.at(-1)!.beforeEnd <= 2 * context) last.push(h);
    else groups.push([h]);
  }
  const out = [`--- a/${labels.before}`, `+++ b/${labels.after}`];
  for (const g of groups) {
    const first = g[0]!;
    const lastH = g.at(-1)!;
    const start = Math.max(0, first.beforeStart - context);
    const end = Math.min(a.length, lastH.beforeEnd + context);
    const afterStart = first.afterStart - (first.beforeStart - start);
    const afterEnd = lastH.afterEnd + (end - lastH.beforeEnd);
    out.push(`@@ -${range(start, end - start)} +${range(afterStart, afterEnd - afterStart)} @@`);
    let pos = start;
    for (const h of g) {
      for (; pos < h.beforeStart; pos++) emit(out, ' ', a[pos]!);
      for (let i = h.beforeStart; i < h.beforeEnd; i++) emit(out, '-', a[i]!);
      for (let i = h.afterStart; i < h.afterEnd; i++) emit(out, '+', b[i]!);
      pos = h.beforeEnd;
    }
    for (; pos < end; pos++) emit(out, ' ', a[pos]!);
  }
  return `${out.join('\n')}\n`;
}
