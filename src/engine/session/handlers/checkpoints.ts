/**
 * Handlers of the checkpoint commands (../../../protocol/commands/checkpoints.ts): the engine's
 * CheckpointService and git store answers turned into wire views. Paths go out as display text
 * plus their exact bytes (base64) when those are not the text's UTF-8, and come back the same way.
 */
import type { ChangedFileView, FileDiffView, RestoredFilesView } from '../../../protocol/commands/checkpoints';
import { labelRestorePoints } from '../../checkpoints/restore-labels';
import { previewRestore } from '../../checkpoints/restore-preview';
import { CheckpointError, type ChangedFile, type FileDiffStat, type RepoPath, type RestoreResult, type SkippedFile } from '../../checkpoints/git-checkpoints';
import type { HandlerTable } from './types';

type CheckpointCommand =
  | 'captureCheckpoint' | 'listCheckpoints' | 'listCheckpointFiles' | 'diffCheckpoints' | 'readCheckpointFile'
  | 'restoreCheckpoint' | 'undoRestore' | 'listRestorePoints' | 'previewRestore' | 'listOrphanedCheckpoints' | 'pruneCheckpoints';

export function pathView(p: RepoPath): { path: string; rawBase64?: string } {
  return Buffer.from(p.path, 'utf8').equals(p.raw) ? { path: p.path } : { path: p.path, rawBase64: p.raw.toString('base64') };
}
const changedView = (f: ChangedFile): ChangedFileView => ({ ...pathView(f), status: f.status });
const skippedView = (f: SkippedFile) => ({ ...pathView(f), bytes: f.bytes });
const diffView = (f: FileDiffStat): FileDiffView => ({
  ...pathView(f), status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary, ...(f.from ? { from: pathView(f.from) } : {}),
});
function restoredView(r: RestoreResult): RestoredFilesView {
  return {
    restorePoint: r.restorePoint, changed: r.changed.map(changedView), preserved: r.preserved.map(skippedView), tookMs: Math.round(r.tookMs),
    nested: r.nested.map((n) => ({ ...pathView(n), status: n.status, ...(n.detail ? { detail: n.detail } : {}) })),
  };
}

export const checkpointHandlers: HandlerTable<CheckpointCommand> = {
  async captureCheckpoint({ services: { checkpoints } }, cmd) {
    const r = await checkpoints.capture(cmd.threadId, { trigger: 'manual' });
    return {
      ref: r.ref, threadId: r.threadId, ordinal: r.ordinal, tookMs: Math.round(r.tookMs), changedCount: r.changedCount,
      changed: r.changed.map(changedView), skipped: r.skipped.map(skippedView), incremental: r.incremental, warnings: r.warnings,
      overBudgetMs: r.overBudget ? Math.round(r.overBudget.tookMs) : null,
    };
  },
  listCheckpoints({ services: { store } }, cmd) {
    const all = cmd.threadId !== undefined ? (store.getThread(cmd.threadId), store.checkpoints(cmd.threadId)) : store.allCheckpoints();
    // A turn that changed nothing adds no row (its checkpoint equals the one before it).
    const checkpoints = cmd.includeEmpty ? all : all.filter((c) => !(c.trigger === 'turnEnd' && c.changedCount === 0));
    // Threads most recently active first, as the thread list orders them.
    const threads = [...new Set(checkpoints.map((c) => c.threadId))].map((id) => store.getThread(id)).sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
    return { checkpoints, threads: threads.map((t) => ({ threadId: t.id, title: t.title })) };
  },
  async listCheckpointFiles({ services: { checkpoints } }, cmd) {
    const info = (await checkpoints.list(cmd.threadId)).find((c) => c.ordinal === cmd.ordinal);
    if (!info) throw new CheckpointError('unknownCheckpoint', `checkpoint ${cmd.ordinal} of thread ${cmd.threadId} does not exist in this repository`);
    return { files: info.changed.map(changedView), changedCount: info.changedCount };
  },
  async diffCheckpoints({ services: { checkpoints } }, cmd) {
    return { files: (await checkpoints.diff(cmd.from, cmd.to)).map(diffView) };
  },
  async readCheckpointFile({ services: { checkpoints } }, cmd) {
    const buf = await checkpoints.readFile(cmd.ref, cmd.rawBase64 !== undefined ? Buffer.from(cmd.rawBase64, 'base64') : cmd.path);
    return { dataBase64: buf.toString('base64'), size: buf.length };
  },
  async restoreCheckpoint({ services: { checkpoints } }, cmd) {
    const r = await checkpoints.restore(cmd.threadId, cmd.ordinal, cmd.mode);
    return { mode: r.mode, files: r.files ? restoredView(r.files) : null, rewoundTo: r.rewoundTo ?? null };
  },
  async undoRestore({ services: { checkpoints } }, cmd) {
    const point = cmd.restorePoint ?? (await checkpoints.listRestorePoints())[0]?.ref;
    if (!point) throw new CheckpointError('unknownCheckpoint', 'there is no restore point to undo');
    return { undone: point, files: restoredView(await checkpoints.undo(point)) };
  },
  async listRestorePoints({ services: { checkpoints, store } }, cmd) {
    const title = (id: string): string | null => {
      try {
        return store.getThread(id).title;
      } catch {
        return null;
      }
    };
    const labelled = await labelRestorePoints(await checkpoints.listRestorePoints(), { title, diff: (a, b) => checkpoints.diff(a, b) });
    return { restorePoints: cmd.all ? labelled : labelled.filter((p) => !p.undone) };
  },
  async previewRestore({ services: { checkpoints, store } }, cmd) {
    const r = await previewRestore(checkpoints, store, cmd.threadId, cmd.ordinal);
    const by = r.deletedBy;
    return {
      ref: r.ref, deleted: r.deleted.map(pathView), overwritten: r.overwritten.map(pathView), recreated: r.recreated.map(pathView),
      deletedBy: {
        thisThread: by.thisThread.map(pathView), handMade: by.handMade.map(pathView),
        otherThreads: by.otherThreads.map((p) => ({ ...pathView(p), threadId: p.threadId, title: p.title })),
      },
      confirm: r.confirm,
    };
  },
  async listOrphanedCheckpoints({ services: { checkpoints, store } }) {
    const live = new Set(store.listThreads().map((t) => t.id));
    return { threads: (await checkpoints.git.listCheckpointThreads(checkpoints.workspaceRoot)).filter((t) => !live.has(t.threadId)) };
  },
  async pruneCheckpoints({ services: { checkpoints } }, cmd) {
    const r = await checkpoints.prune({
      ...(cmd.threadId !== undefined ? { threadId: cmd.threadId } : {}),
      ...(cmd.keepLast !== undefined ? { keepLast: cmd.keepLast } : {}),
      ...(cmd.olderThanMs !== undefined ? { olderThanMs: cmd.olderThanMs } : {}),
      ...(cmd.restorePointsOlderThanMs !== undefined ? { restorePointsOlderThanMs: cmd.restorePointsOlderThanMs } : {}),
    });
    return { deletedRefs: r.deletedRefs, reclaimableBytes: r.reclaimableBytes };
  },
};
