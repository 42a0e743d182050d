/**
 * What a restore would do, before it runs: the checkpoint against the working
 * tree now, read as the restore will act on it — files created since the checkpoint are deleted,
 * files changed since are overwritten, files deleted since come back. Ignored files and untracked
 * files over the size cap are outside both sides, as they are outside the restore.
 */
import { checkpointRef } from './refs';
import type { CheckpointService } from './service';
import type { RepoPath } from './types';

export interface RestorePreview {
  ref: string;
  deleted: RepoPath[];
  overwritten: RepoPath[];
  recreated: RepoPath[];
}

export async function previewRestore(checkpoints: CheckpointService, threadId: string, ordinal: number): Promise<RestorePreview> {
  const ref = checkpointRef(threadId, ordinal);
  const out: RestorePreview = { ref, deleted: [], overwritten: [], recreated: [] };
  for (const f of await checkpoints.diff(ref, 'working')) {
    const path = { path: f.path, raw: f.raw };
    if (f.status === 'added' || f.status === 'copied') out.deleted.push(path);
    else if (f.status === 'deleted') out.recreated.push(path);
    else if (f.status === 'renamed') {
      out.deleted.push(path);
      if (f.from) out.recreated.push(f.from);
    } else out.overwritten.push(path);
  }
  return out;
}
