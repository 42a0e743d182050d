/**
 * Making a working tree equal a checkpoint without losing a byte (SPEC §4.2).
 *
 * The pitfalls (FIELD-NOTES "Checkpoint costs"): `git restore` + `git clean` judges "untracked"
 * against the real index and deletes the checkpoint's own untracked files; `read-tree --reset -u`
 * only removes paths its index knows and overwrites whatever stands in the way. So:
 *   1. The current state S is snapshotted into a temporary index (`add -A`, exactly like a
 *      capture): every file a restore may remove or overwrite is in S, and S is committed as the
 *      restore point before anything changes.
 *   2. Files outside S that stand in the target's way — ignored files, untracked files over the
 *      size cap — are found (for every path the target adds: the path itself, and any ancestor
 *      that is not a directory) and force-added to S first ("preserved"), so they are in the
 *      restore point too. Everything else outside S (ignored files, big files elsewhere, nested
 *      repositories' contents) is never touched.
 *   3. `read-tree -m -u --no-recurse-submodules S T` on that index: git's two-tree switch, which
 *      writes the files T has (modes and symlinks included), removes the S files T lacks, and
 *      refuses — changing nothing — if any other file would be overwritten. HEAD, branches, the
 *      real index and the stash are never read-for-write.
 *   4. Each nested repository the target recorded is restored the same way inside itself, to the
 *      nested commit the target lists. Nested repositories the target does not list are left as
 *      they are; a listed one that no longer exists is reported `missing`.
 * The snapshot S is the capture's full snapshot (`capture/snapshot.ts`, with fresh stat data);
 * the restore point is committed here (`commitRestorePoint`).
 */
import * as fsp from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { commitTree, createRef, readCommit, run, setRef } from './repo';
import { formatCommitMessage, parseCommitMessage, type CommitMeta } from './refs';
import { rawDiff, type RawDiffEntry } from './diff';
import { absBytes, joinRel, relKey } from './paths';
import { NESTED_CONCURRENCY, settleLimit } from './concurrency';
import { GITLINK_MODE } from './nested-repos';
import type { SnapshotNode } from './capture/snapshot';
import { addAll } from './capture/write-objects';
import { withNestedFiles, writeTree } from './capture/commit';
import { CheckpointError, repoPath, toCheckpointError, type ChangedFile, type NestedCheckpoint, type NestedRestoreOutcome, type RepoPath, type SkippedFile } from './types';

export interface RestoreTarget {
  commit: string;
  tree: string;
  meta: CommitMeta | null;
}

/** A snapshot node paired with what it should become (null: leave this repository alone). */
export interface RestorePlan {
  node: SnapshotNode;
  prefix: RepoPath | null;
  target: RestoreTarget | null;
  children: RestorePlan[];
  /** Raw diff snapshot → target, once computed for the final snapshot tree. */
  diff?: RawDiffEntry[];
}

/** Pairs every snapshot node with its target commit, recursively; records nested repos that are gone. */
export async function planRestore(node: SnapshotNode, targetCommit: string | null, prefix: RepoPath | null, outcomes: NestedRestoreOutcome[]): Promise<RestorePlan> {
  let target: RestoreTarget | null = null;
  if (targetCommit) {
    try {
      const c = await readCommit(node.repo, targetCommit);
      target = { commit: targetCommit, tree: c.tree, meta: parseCommitMessage(c.message) };
    } catch (err) {
      if (!prefix) throw toCheckpointError(err, `reading ${targetCommit}`);
      outcomes.push({ ...prefix, status: 'missing', detail: `commit ${targetCommit} is not in the nested repository` });
    }
  }
  const wanted = new Map((target?.meta?.nested ?? []).map((n) => [relKey(n.raw), n]));
  const children = await settleLimit(node.children, NESTED_CONCURRENCY, (child) => planRestore(child, wanted.get(relKey(child.rel!.raw))?.commit ?? null, joinRel(prefix, child.rel!), outcomes));
  for (const child of node.children) wanted.delete(relKey(child.rel!.raw));
  for (const gone of wanted.values()) outcomes.push({ ...joinRel(prefix, gone), status: 'missing', detail: 'the nested repository no longer exists (or cannot be entered)' });
  return { node, prefix, target, children };
}

/** Paths outside the snapshot that stand where the target puts a file (see header, step 2). */
async function findObstacles(node: SnapshotNode, entries: RawDiffEntry[]): Promise<Buffer[]> {
  const removed = new Set(entries.filter((e) => e.status === 'deleted').map((e) => relKey(e.raw)));
  const stats = new Map<string, Stats | null>();
  const lstat = async (rel: Buffer): Promise<Stats | null> => {
    const key = relKey(rel);
    if (!stats.has(key)) stats.set(key, await fsp.lstat(absBytes(node.repo.root, rel)).catch(() => null));
    return stats.get(key)!;
  };
  const obstacles = new Map<string, Buffer>();
  for (const e of entries) {
    if (e.status !== 'added' || e.dstMode === GITLINK_MODE) continue;
    let blocked = false;
    // Walk the ancestors top-down; stop at the first one that is not a real directory (lstat of
    // anything below it would follow a symlink or fail).
    for (let i = e.raw.indexOf(0x2f); i >= 0 && !blocked; i = e.raw.indexOf(0x2f, i + 1)) {
      const anc = e.raw.subarray(0, i);
      const st = await lstat(anc);
      if (!st) {
        blocked = true; // missing ancestor: nothing below it exists
      } else if (!st.isDirectory()) {
        blocked = true;
        if (!removed.has(relKey(anc))) obstacles.set(relKey(anc), Buffer.from(anc));
      }
    }
    if (!blocked && (await lstat(e.raw))) obstacles.set(relKey(e.raw), Buffer.from(e.raw));
  }
  return [...obstacles.values()];
}

/** Adds every obstacle to each node's snapshot (rewriting its tree); returns them by repository root. */
export async function preserveObstacles(plan: RestorePlan, out: Map<string, SkippedFile[]> = new Map()): Promise<Map<string, SkippedFile[]>> {
  const { node, target } = plan;
  if (target) {
    plan.diff = await rawDiff(node.repo, node.tree, target.tree);
    const obstacles = await findObstacles(node, plan.diff);
    if (obstacles.length) {
      const warnings: string[] = [];
      try {
        await addAll(node.repo, node.index.file, { only: obstacles, force: true }, warnings);
      } catch (err) {
        throw new CheckpointError('conflict', `files in the way of the restore could not be saved first (nothing was changed): ${(err as Error).message}`, err);
      }
      if (warnings.length) throw new CheckpointError('conflict', `files in the way of the restore could not be saved first (nothing was changed): ${warnings.join('; ')}`);
      node.tree = await writeTree(node.repo, node.index.file);
      plan.diff = undefined;
      const sizes = await Promise.all(obstacles.map((o) => fsp.lstat(absBytes(node.repo.root, o)).then((s) => (s.isFile() ? s.size : 0), () => 0)));
      out.set(node.repo.root, obstacles.map((o, i) => ({ ...repoPath(o), bytes: sizes[i]! })));
    }
  }
  await settleLimit(plan.children, NESTED_CONCURRENCY, (c) => preserveObstacles(c, out));
  return out;
}

/** Applies the plan: outer repository first, then nested ones. Returns the changed paths. */
export async function applyRestore(plan: RestorePlan, outcomes: NestedRestoreOutcome[]): Promise<ChangedFile[]> {
  const { node, target, prefix } = plan;
  const changed: ChangedFile[] = [];
  if (target) {
    const childKeys = new Set(plan.children.map((c) => relKey(c.node.rel!.raw)));
    const entries = plan.diff ?? (await rawDiff(node.repo, node.tree, target.tree));
    for (const e of entries) {
      if ((e.srcMode === GITLINK_MODE || e.dstMode === GITLINK_MODE) && childKeys.has(relKey(e.raw))) continue;
      changed.push({ ...joinRel(prefix, e), status: e.status });
    }
    if (entries.length) {
      try {
        await run(node.repo, ['read-tree', '-m', '-u', '--no-recurse-submodules', node.tree, target.tree], { index: node.index.file });
      } catch (err) {
        throw new CheckpointError('conflict', `restoring ${node.repo.root} failed: ${(err as Error).message}`, err);
      }
    }
    if (prefix) outcomes.push({ ...prefix, status: 'restored' });
  }
  for (const list of await settleLimit(plan.children, NESTED_CONCURRENCY, (c) => applyRestore(c, outcomes))) changed.push(...list);
  return changed;
}

/**
 * Commits a restore point for `node` and its nested repositories under `ref` (the caller chose a
 * name with a random part that does not exist yet). `preserved` holds, per repository root, the
 * in-the-way files that were added. Nested commits come first; every repository gets the same
 * ref name (created at the top level, set in nested repositories).
 */
export async function commitRestorePoint(node: SnapshotNode, ref: string, target: string, timeMs: number, preserved: Map<string, SkippedFile[]>, isTop = true): Promise<{ commit: string; meta: CommitMeta }> {
  const children = await settleLimit(node.children, NESTED_CONCURRENCY, async (child) => ({
    rel: child.rel!,
    ...(await commitRestorePoint(child, ref, target, timeMs, preserved, false)),
  }));
  const meta: CommitMeta = {
    kind: 'restorePoint',
    target,
    timeMs,
    changedCount: 0,
    changed: [],
    skipped: withNestedFiles(node.skipped, children, (m) => m.skipped),
    preserved: withNestedFiles(preserved.get(node.repo.root) ?? [], children, (m) => m.preserved),
    nested: children.map((c): NestedCheckpoint => ({ ...c.rel, commit: c.commit })),
  };
  const commit = await commitTree(node.repo, node.tree, [], formatCommitMessage(meta), timeMs);
  if (isTop) {
    if (!(await createRef(node.repo, ref, commit))) throw new CheckpointError('gitFailed', `restore point ${ref} already exists`);
  } else {
    await setRef(node.repo, ref, commit);
  }
  return { commit, meta };
}
