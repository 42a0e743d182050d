/**
 * Readable restore points for the undo picker: "before restoring #3 of "Fix
 * the parser" — 2 files" instead of `refs/vox/restore-points/…`. A point's target says what it
 * came before: a checkpoint ref (a restore), another restore point (an undo of that restore), or
 * a review label (an undo of a file or hunk, ../review/service.ts). A point is *undone* once a
 * later restore point targets it (undoRestore took it back); the picker hides those. The file
 * count is the number of files the restore changed: the point against its target.
 */
import { decodeThreadRefComponent, parseCheckpointRef } from './refs';
import { RESTORE_POINT_REF_PREFIX, type FileDiffStat, type RestorePointInfo } from './types';

/** Restore points given a file count (each costs one git diff); older ones get a label without it. */
export const RESTORE_LABEL_COUNTED_MAX = 20;
/** Label prefix of restore points the review's undos save (kept in their target). */
export const REVIEW_RESTORE_LABEL = 'vox-review:';

export interface LabelledRestorePoint {
  ref: string;
  timeMs: number;
  target: string;
  label: string;
  /** Files the restore changed; null when not counted. */
  files: number | null;
  undone: boolean;
}

export interface RestoreLabelDeps {
  /** A thread's title, or null when the thread is gone. */
  title(threadId: string): string | null;
  diff(fromRef: string, toRef: string): Promise<FileDiffStat[]>;
}

function describe(target: string, title: (id: string) => string | null, timeOf: (ref: string) => number | undefined): string {
  const cp = parseCheckpointRef(target);
  if (cp) {
    const threadId = decodeThreadRefComponent(cp.threadComponent);
    const t = threadId !== null ? title(threadId) : null;
    return `before restoring #${cp.ordinal}${t ? ` of "${t}"` : threadId !== null ? ' of a deleted thread' : ''}`;
  }
  if (target.startsWith(RESTORE_POINT_REF_PREFIX)) {
    const when = timeOf(target);
    return `before undoing the restore${when !== undefined ? ` of ${new Date(when).toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''}`;
  }
  if (target.startsWith(REVIEW_RESTORE_LABEL)) return `before undoing ${target.slice(REVIEW_RESTORE_LABEL.length)}`;
  return target ? `before restoring ${target}` : 'restore point';
}

/** Labels `points` (newest first); `undone` marks those a later restore point took back. */
export async function labelRestorePoints(points: RestorePointInfo[], deps: RestoreLabelDeps): Promise<LabelledRestorePoint[]> {
  const byRef = new Map(points.map((p) => [p.ref, p]));
  const undone = new Set(points.filter((p) => byRef.has(p.target)).map((p) => p.target));
  const newestFirst = [...points].sort((a, b) => b.timeMs - a.timeMs || (a.ref < b.ref ? 1 : -1));
  return Promise.all(
    newestFirst.map(async (p, i) => {
      let files: number | null = null;
      // A review label names no ref to compare with: such a point has no count.
      if (i < RESTORE_LABEL_COUNTED_MAX && !p.target.startsWith(REVIEW_RESTORE_LABEL) && p.target) {
        files = await deps.diff(p.ref, p.target).then((d) => d.length, () => null);
      }
      const base = describe(p.target, deps.title, (ref) => byRef.get(ref)?.timeMs);
      const label = files === null ? base : `${base} — ${files} file${files === 1 ? '' : 's'}`;
      return { ref: p.ref, timeMs: p.timeMs, target: p.target, label, files, undone: undone.has(p.ref) };
    }),
  );
}
