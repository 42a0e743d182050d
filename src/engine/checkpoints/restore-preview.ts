/**
 * What a restore would do, before it runs: the checkpoint against the working
 * tree now, read as the restore will act on it — files created since the checkpoint are deleted,
 * files changed since are overwritten, files deleted since come back. Ignored files and untracked
 * files over the size cap are outside both sides, as they are outside the restore.
 *
 * Who wrote each file it would delete: a thread's tool call wrote a file when it appears (added,
 * renamed or copied to) between the checkpoint taken before that tool call and the same run's
 * next checkpoint — so shell commands count too, and an edit the user made between turns never
 * does. A file no tool call wrote is hand-made. A restore that would delete another thread's or
 * a hand-made file is to be confirmed (`confirm`); deleting only this thread's own files is not.
 */
import type { CheckpointRow, VoxStore } from '../store/store';
import { checkpointRef } from './refs';
import type { CheckpointService } from './service';
import type { RepoPath } from './types';

/** Most tool-call checkpoint pairs read to tell who wrote the deleted files (newest first); older writes count as hand-made, which only asks more. */
export const MAX_OWNER_PAIRS = 200;

export interface DeletedByOwner {
  thisThread: RepoPath[];
  otherThreads: Array<RepoPath & { threadId: string; title: string }>;
  handMade: RepoPath[];
}

export interface RestorePreview {
  ref: string;
  deleted: RepoPath[];
  overwritten: RepoPath[];
  recreated: RepoPath[];
  deletedBy: DeletedByOwner;
  /** It would delete a file this thread did not write: ask once more, naming them. */
  confirm: boolean;
}

/** Tool-call checkpoint → the same run's next checkpoint, of every thread, the newest `MAX_OWNER_PAIRS` ending at or after `sinceMs`. */
function toolPairs(rows: readonly CheckpointRow[], sinceMs: number): Array<[CheckpointRow, CheckpointRow]> {
  const pairs: Array<[CheckpointRow, CheckpointRow]> = [];
  for (let i = 0; i + 1 < rows.length; i++) {
    const a = rows[i]!;
    const b = rows[i + 1]!;
    if (a.threadId === b.threadId && a.trigger === 'tool' && a.runId !== null && a.runId === b.runId && b.createdAt >= sinceMs) pairs.push([a, b]);
  }
  return pairs.sort((x, y) => x[1].createdAt - y[1].createdAt || x[1].ordinal - y[1].ordinal).slice(-MAX_OWNER_PAIRS);
}

/** Thread that last wrote each path (by its raw bytes, base64), from the tool-call pairs. */
async function writers(checkpoints: CheckpointService, store: VoxStore, sinceMs: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [a, b] of toolPairs(store.allCheckpoints(), sinceMs)) {
    for (const f of await checkpoints.diff(a.ref, b.ref)) {
      if (f.status === 'added' || f.status === 'copied' || f.status === 'renamed' || f.status === 'modified' || f.status === 'typeChanged') {
        out.set(f.raw.toString('base64'), a.threadId);
      }
    }
  }
  return out;
}

export async function previewRestore(checkpoints: CheckpointService, store: VoxStore, threadId: string, ordinal: number): Promise<RestorePreview> {
  const ref = checkpointRef(threadId, ordinal);
  const deletedBy: DeletedByOwner = { thisThread: [], otherThreads: [], handMade: [] };
  const out: RestorePreview = { ref, deleted: [], overwritten: [], recreated: [], deletedBy, confirm: false };
  for (const f of await checkpoints.diff(ref, 'working')) {
    const path = { path: f.path, raw: f.raw };
    if (f.status === 'added' || f.status === 'copied') out.deleted.push(path);
    else if (f.status === 'deleted') out.recreated.push(path);
    else if (f.status === 'renamed') {
      out.deleted.push(path);
      if (f.from) out.recreated.push(f.from);
    } else out.overwritten.push(path);
  }
  if (out.deleted.length === 0) return out;
  const target = store.checkpoints(threadId).find((r) => r.ordinal === ordinal);
  const wrote = await writers(checkpoints, store, target?.createdAt ?? 0);
  const titles = new Map<string, string>();
  const titleOf = (id: string) => {
    if (!titles.has(id)) titles.set(id, store.listThreads().find((t) => t.id === id)?.title ?? id);
    return titles.get(id)!;
  };
  for (const p of out.deleted) {
    const owner = wrote.get(p.raw.toString('base64'));
    if (owner === threadId) deletedBy.thisThread.push(p);
    else if (owner !== undefined) deletedBy.otherThreads.push({ ...p, threadId: owner, title: titleOf(owner) });
    else deletedBy.handMade.push(p);
  }
  out.confirm = deletedBy.otherThreads.length + deletedBy.handMade.length > 0;
  return out;
}
