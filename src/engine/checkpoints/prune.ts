/**
 * Pruning old checkpoints (SPEC §4.2) without ever deleting an object the user could need.
 *
 * Vox only deletes its own refs: the selected checkpoint refs, the same-named refs in the nested
 * repositories they list, and (if asked) old restore points. It never runs `git prune` or
 * `gc --prune=now`: objects become unreachable and git's own `gc` drops them on its normal expiry
 * (`gc.pruneExpire`, two weeks by default). Afterwards `git gc --auto` runs at most, which does
 * nothing unless git's own thresholds are exceeded.
 *
 * Checkpoints of a thread form a parent chain, so a kept checkpoint would keep every deleted
 * ancestor reachable. The kept checkpoints whose ancestry passes through a deleted one are
 * therefore re-committed (same tree, message, identity and dates; parent rewritten or dropped)
 * and their refs moved with a compare-and-swap, oldest first — their commit ids change, their
 * refs and contents do not.
 *
 * `reclaimableBytes` is `rev-list --objects --disk-usage` of the deleted commits minus everything
 * still reachable from any ref, reflog or the index: what git's gc can drop once they expire.
 */
import { commitTree, deleteRefs, readCommit, resolveCommit, run, runText, type RepoInfo } from './repo';
import { parseCheckpointRef, parseCommitMessage, threadRefPrefix, type CommitMeta } from './refs';
import { probeNestedRepo } from './nested-repos';
import { CHECKPOINT_REF_PREFIX, CheckpointError, RESTORE_POINT_REF_PREFIX, type NestedCheckpoint, type PruneOptions, type PruneResult } from './types';

type RefsWithMeta = (prefix: string) => Promise<Array<{ ref: string; commit: string; meta: CommitMeta | null }>>;

/** Bytes in loose objects plus packs, from `count-objects -v` (which reports KiB). */
export async function countObjectBytes(repo: RepoInfo): Promise<number> {
  const out = await runText(repo, ['count-objects', '-v']);
  let kib = 0;
  for (const line of out.split('\n')) {
    const [k, v] = line.split(':').map((s) => s.trim());
    if (k === 'size' || k === 'size-pack' || k === 'size-garbage') kib += Number(v) || 0;
  }
  return kib * 1024;
}

/** Disk usage of objects reachable from `commits` but from no ref, reflog or index entry. */
async function reclaimable(repo: RepoInfo, commits: string[]): Promise<number> {
  if (!commits.length) return 0;
  const out = await runText(repo, ['rev-list', '--objects', '--disk-usage', '--ignore-missing', '--stdin', '--not', '--all', '--reflog', '--indexed-objects'], { input: `${commits.join('\n')}\n` });
  return Number(out.trim()) || 0;
}

/** Deletes `ref` in every nested repository listed in `nested` (recursively); returns bytes reclaimable there. */
async function deleteNestedRefs(repo: RepoInfo, ref: string, nested: NestedCheckpoint[]): Promise<number> {
  let bytes = 0;
  for (const n of nested) {
    const probe = await probeNestedRepo(repo, n.raw);
    if (!probe?.repo) continue;
    const current = await resolveCommit(probe.repo, ref);
    if (!current) continue;
    const meta = parseCommitMessage((await readCommit(probe.repo, current)).message);
    bytes += await deleteNestedRefs(probe.repo, ref, meta?.nested ?? []);
    await deleteRefs(probe.repo, [{ ref, commit: current }]);
    bytes += await reclaimable(probe.repo, [current]);
  }
  return bytes;
}

/** Re-commits kept checkpoints whose parents were deleted or re-committed (oldest first). */
async function detachKept(repo: RepoInfo, kept: Array<{ ref: string; commit: string; ordinal: number }>, deleted: Set<string>): Promise<string[]> {
  const rewritten = new Map<string, string>();
  const oldIds: string[] = [];
  for (const k of [...kept].sort((a, b) => a.ordinal - b.ordinal)) {
    const c = await readCommit(repo, k.commit);
    const parents = c.parents.filter((p) => !deleted.has(p)).map((p) => rewritten.get(p) ?? p);
    if (parents.length === c.parents.length && parents.every((p, i) => p === c.parents[i])) continue;
    const meta = parseCommitMessage(c.message);
    const fresh = await commitTree(repo, c.tree, parents, c.message, meta?.timeMs ?? Date.now());
    await run(repo, ['update-ref', k.ref, fresh, k.commit]);
    rewritten.set(k.commit, fresh);
    oldIds.push(k.commit);
  }
  return oldIds;
}

export async function pruneCheckpoints(repo: RepoInfo, opts: PruneOptions, nowMs: number, refsWithMeta: RefsWithMeta): Promise<PruneResult> {
  const { keepLast, olderThanMs, restorePointsOlderThanMs } = opts;
  for (const [name, v] of Object.entries({ keepLast, olderThanMs, restorePointsOlderThanMs })) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) throw new CheckpointError('badArgument', `${name} must be a non-negative integer`);
  }
  const criteria = keepLast !== undefined || olderThanMs !== undefined;
  if (!opts.threadId && !criteria && restorePointsOlderThanMs === undefined) {
    throw new CheckpointError('badArgument', 'prune needs a threadId, keepLast, olderThanMs or restorePointsOlderThanMs (refusing to delete every checkpoint)');
  }
  const before = await countObjectBytes(repo);
  const deleted: Array<{ ref: string; commit: string; meta: CommitMeta | null }> = [];
  const oldCommits: string[] = [];
  if (opts.threadId || criteria) {
    const entries = await refsWithMeta(opts.threadId ? threadRefPrefix(opts.threadId) : CHECKPOINT_REF_PREFIX);
    const byThread = new Map<string, Array<{ ref: string; commit: string; meta: CommitMeta | null; ordinal: number }>>();
    for (const e of entries) {
      const p = parseCheckpointRef(e.ref);
      if (!p) continue;
      byThread.set(p.threadComponent, [...(byThread.get(p.threadComponent) ?? []), { ...e, ordinal: p.ordinal }]);
    }
    for (const list of byThread.values()) {
      list.sort((a, b) => b.ordinal - a.ordinal);
      const kept: typeof list = [];
      list.forEach((e, i) => {
        const keepByCount = keepLast !== undefined && i < keepLast;
        const keepByAge = olderThanMs !== undefined && nowMs - (e.meta?.timeMs ?? 0) <= olderThanMs;
        if (criteria && (keepByCount || keepByAge)) kept.push(e);
        else deleted.push(e);
      });
      const gone = new Set(list.filter((e) => !kept.includes(e)).map((e) => e.commit));
      if (gone.size && kept.length) oldCommits.push(...(await detachKept(repo, kept, gone)));
    }
  }
  if (restorePointsOlderThanMs !== undefined) {
    for (const e of await refsWithMeta(RESTORE_POINT_REF_PREFIX)) if (nowMs - (e.meta?.timeMs ?? 0) > restorePointsOlderThanMs) deleted.push(e);
  }
  let bytes = 0;
  for (const d of deleted) bytes += await deleteNestedRefs(repo, d.ref, d.meta?.nested ?? []);
  await deleteRefs(repo, deleted);
  bytes += await reclaimable(repo, [...deleted.map((d) => d.commit), ...oldCommits]);
  if (opts.gcAuto !== false) await run(repo, ['gc', '--auto', '--quiet']);
  return { deletedRefs: deleted.map((d) => d.ref), reclaimableBytes: bytes, objectBytesBefore: before, objectBytesAfter: await countObjectBytes(repo) };
}
