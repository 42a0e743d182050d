/**
 * Capture stage 4, move the ref (SPEC §4.2): every repository of one checkpoint gets the same ref
 * name, `refs/vox/checkpoints/<thread>/<ordinal>`, which keeps nested commits reachable for as
 * long as the outer ref exists.
 *
 * The policy: at the top level the ref is the thread's new checkpoint and is only ever created
 * (`update-ref <ref> <commit> ""`), so a stale ordinal can never overwrite another capture's
 * checkpoint (`checkpointExists`); in a nested repository the ref is Vox's own and is simply set.
 * Nested refs are set before the outer ref is created, so an outer checkpoint never names a
 * nested commit without a ref.
 *   - Full snapshot: `moveCheckpointRefs` after the commit stage.
 *   - Incremental: fast-import moves the ref itself, in the process that wrote the commit (one
 *     git process fewer per capture); `fastImportForce` gives it the same policy. Without
 *     `--force` fast-import only creates a ref or fast-forwards it, and an existing checkpoint
 *     of the thread is never an ancestor of the new commit (a checkpoint's ancestors all have
 *     lower ordinals), so it refuses it; nested refs get `--force`. A nested repository whose
 *     last checkpoint is reused gets its ref set early (`reuseNestedRef`).
 *
 * The stale-ordinal retry (`retryIfStale`): a remembered last checkpoint (`target.ts`) may be
 * stale when another process captured the thread since; git then refuses the ref (fast-import's
 * refusal falls back to the full snapshot, whose create-only update throws), and the capture
 * runs once more with its target chosen from the refs. Two processes that chose the same
 * automatic ordinal from the refs at the same moment race the same way: the one whose ref git
 * refuses (`checkpointExists`) runs again with the next ordinal.
 */
import { createRef, setRef, type RepoInfo } from '../repo';
import { NESTED_CONCURRENCY, settleLimit } from '../concurrency';
import { CheckpointError } from '../types';
import type { LastCheckpoint, Target } from './target';

/** Captures of one thread racing for the same ordinal: how often one retries with the next. */
export const MAX_ORDINAL_RETRIES = 16;
/** Longest random pause before such a retry (ms), so racing processes fall out of step. */
const ORDINAL_RETRY_JITTER_MS = 20;

/** Moves `ref` to `commit`: created only if absent (`createOnly`, else `checkpointExists`), or set. */
export async function moveRef(repo: RepoInfo, ref: string, commit: string, createOnly: boolean): Promise<void> {
  if (createOnly) {
    if (!(await createRef(repo, ref, commit))) throw new CheckpointError('checkpointExists', `${ref} already exists`);
  } else {
    await setRef(repo, ref, commit);
  }
}

/** A committed repository and its nested ones (`commit.ts`'s `CommittedTree`). */
export interface RefTree {
  repo: RepoInfo;
  commit: string;
  children: RefTree[];
}

/** Full snapshot: sets the nested repositories' refs (deepest first), then moves this one's. */
export async function moveCheckpointRefs(node: RefTree, ref: string, isTop: boolean): Promise<void> {
  await settleLimit(node.children, NESTED_CONCURRENCY, (child) => moveCheckpointRefs(child, ref, false));
  await moveRef(node.repo, ref, node.commit, isTop);
}

/** Whether fast-import may move the ref without a fast-forward (nested repositories only). */
export function fastImportForce(isTop: boolean): boolean {
  return !isTop;
}

/**
 * A nested repository whose last checkpoint `commit` is reused keeps it reachable under this
 * checkpoint's name too: the ref is set as soon as the name is known (a full capture that takes
 * over sets it again).
 */
export function reuseNestedRef(repo: RepoInfo, target: Promise<Target>, commit: string): Promise<void> {
  const refSet = target.then((t) => setRef(repo, t.header.ref, commit));
  refSet.catch(() => undefined);
  return refSet;
}

/**
 * Runs `attempt` with the remembered last checkpoint; if that fails, once more without it (from
 * the refs). With `nextOrdinal` (an automatic ordinal), an attempt whose ordinal another process
 * took meanwhile (`checkpointExists`) runs again from the refs, up to MAX_ORDINAL_RETRIES times.
 */
export async function retryIfStale<T>(last: LastCheckpoint | undefined, nextOrdinal: boolean, attempt: (last: LastCheckpoint | undefined) => Promise<T>): Promise<T> {
  let memory = last;
  for (let retries = 0; ; retries++) {
    try {
      return await attempt(memory);
    } catch (err) {
      if (memory) {
        memory = undefined;
        continue;
      }
      if (!nextOrdinal || !(err instanceof CheckpointError) || err.code !== 'checkpointExists' || retries >= MAX_ORDINAL_RETRIES) throw err;
      // Let the process that took this ordinal move on before the refs are listed again.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * ORDINAL_RETRY_JITTER_MS)));
    }
  }
}
