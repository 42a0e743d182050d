/**
 * Turning a snapshot (`capture/snapshot.ts`) into commits and hidden refs (SPEC §4.2).
 *
 * Nested repositories are committed first, inside themselves, so the outer commit's metadata can
 * list each one with its commit id; every repository gets the same ref name
 * (`refs/vox/checkpoints/<thread>/<ordinal>` or `refs/vox/restore-points/<stamp>`), which keeps
 * the nested commits reachable (never garbage) for as long as the outer ref exists.
 *
 * A checkpoint's parent is the thread's previous checkpoint, so `git log` on the ref browses the
 * thread's history (objects are shared by content either way). Nested commits have no parent —
 * nobody browses them, and it lets prune free them by deleting their ref — but their "previous"
 * (the nested commit the previous outer checkpoint recorded) is still the base of "files
 * changed", which is the raw diff against the previous tree (against HEAD, or the empty tree, for
 * a thread's first checkpoint).
 */
import { commitTree, createRef, emptyTree, headCommit, readCommit, setRef, type RepoInfo } from '../repo';
import { formatCommitMessage, parseCommitMessage, type CommitMeta } from '../refs';
import { rawDiff, relKey } from '../diff';
import { GITLINK_MODE } from '../nested-repos';
import { NESTED_CONCURRENCY, joinRel, settleLimit, type SnapshotNode } from './snapshot';
import { CheckpointError, MAX_CHANGED_PATHS_IN_META, type ChangedFile, type NestedCheckpoint, type RepoPath, type SkippedFile } from '../types';

export interface CommittedNode {
  commit: string;
  meta: CommitMeta;
}

/** What a checkpoint records besides files (the same for every repository in one capture). */
export interface CheckpointHeader {
  ref: string;
  threadId: string;
  ordinal: number;
  trigger: NonNullable<CommitMeta['trigger']>;
  timeMs: number;
}

/** Commits with `parents`, retrying without them if a parent object is gone (e.g. a re-created nested repository). */
async function commitWithParents(repo: RepoInfo, tree: string, parents: string[], message: string, timeMs: number): Promise<{ commit: string; parents: string[] }> {
  try {
    return { commit: await commitTree(repo, tree, parents, message, timeMs), parents };
  } catch (err) {
    if (!parents.length) throw err;
    return { commit: await commitTree(repo, tree, [], message, timeMs), parents: [] };
  }
}

/**
 * A repository's own changed paths plus its nested repositories' (already computed) ones,
 * prefixed with their paths: the total count and at most MAX_CHANGED_PATHS_IN_META entries.
 */
export function withNestedChanges(own: ChangedFile[], children: Array<{ rel: RepoPath; meta: CommitMeta }>): { count: number; list: ChangedFile[] } {
  let count = own.length;
  const list: ChangedFile[] = own.slice(0, MAX_CHANGED_PATHS_IN_META);
  for (const c of children) {
    count += c.meta.changedCount;
    for (const ch of c.meta.changed) if (list.length < MAX_CHANGED_PATHS_IN_META) list.push({ ...joinRel(c.rel, ch), status: ch.status });
  }
  return { count, list };
}

/** Files a repository left out plus those its nested repositories left out, prefixed. */
export function withNestedFiles(own: SkippedFile[], children: Array<{ rel: RepoPath; meta: CommitMeta }>, pick: (m: CommitMeta) => SkippedFile[]): SkippedFile[] {
  const out = [...own];
  for (const c of children) for (const s of pick(c.meta)) out.push({ ...joinRel(c.rel, s), bytes: s.bytes });
  return out;
}

/** A checkpoint's metadata. */
export function checkpointMeta(header: CheckpointHeader, changes: { count: number; list: ChangedFile[] }, skipped: SkippedFile[], nested: NestedCheckpoint[]): CommitMeta {
  return { kind: 'checkpoint', threadId: header.threadId, ordinal: header.ordinal, trigger: header.trigger, timeMs: header.timeMs, changedCount: changes.count, changed: changes.list, skipped, preserved: [], nested };
}

/** Changed paths of `node` (its raw diff, minus the gitlinks of nested repositories captured inside) and its children's. */
function changesOf(diff: Awaited<ReturnType<typeof rawDiff>>, children: Array<{ node: SnapshotNode; meta: CommitMeta }>): { count: number; list: ChangedFile[] } {
  const childKeys = new Set(children.map((c) => relKey(c.node.rel!.raw)));
  const own = diff.filter((e) => !((e.srcMode === GITLINK_MODE || e.dstMode === GITLINK_MODE) && childKeys.has(relKey(e.raw))));
  return withNestedChanges(
    own.map((e) => ({ path: e.path, raw: e.raw, status: e.status })),
    children.map((c) => ({ rel: c.node.rel!, meta: c.meta })),
  );
}

function prefixed(node: SnapshotNode, children: Array<{ node: SnapshotNode; meta: CommitMeta }>, pick: (m: CommitMeta) => SkippedFile[]): SkippedFile[] {
  return withNestedFiles(node.skipped, children.map((c) => ({ rel: c.node.rel!, meta: c.meta })), pick);
}

/**
 * Commits a checkpoint for `node` and its nested repositories. `prevCommit` is the thread's
 * previous checkpoint in this repository (null for the first). `reused` lists nested repositories
 * a fast capture did not re-snapshot (their refs are already set). The top-level ref is created
 * only if absent (`checkpointExists` otherwise); nested refs are Vox-owned and simply set.
 */
export async function commitCheckpoint(node: SnapshotNode, header: CheckpointHeader, prevCommit: string | null, reused: NestedCheckpoint[] = [], isTop = true): Promise<CommittedNode> {
  const fallbackBase = async (): Promise<string> => (await headCommit(node.repo)) ?? (await emptyTree(node.repo));
  // This repository's own diff runs while the nested ones commit. A nested repository may have
  // been re-created since (its previous commit gone): diff against HEAD then.
  const ownDiff = (async () => {
    if (prevCommit) {
      try {
        return await rawDiff(node.repo, prevCommit, node.tree);
      } catch {
        // Fall back below.
      }
    }
    return rawDiff(node.repo, await fallbackBase(), node.tree);
  })();
  ownDiff.catch(() => undefined);
  // The previous commit's metadata is only needed to find nested repositories' previous commits.
  const prev = prevCommit && node.children.length ? await readCommit(node.repo, prevCommit).catch(() => null) : null;
  const prevMeta = prev ? parseCommitMessage(prev.message) : null;
  const prevNested = new Map((prevMeta?.nested ?? []).map((n) => [relKey(n.raw), n.commit]));
  const children = await settleLimit(node.children, NESTED_CONCURRENCY, async (child) => ({
    node: child,
    ...(await commitCheckpoint(child, header, prevNested.get(relKey(child.rel!.raw)) ?? null, [], false)),
  }));
  const meta = checkpointMeta(header, changesOf(await ownDiff, children), prefixed(node, children, (m) => m.skipped), [...children.map((c): NestedCheckpoint => ({ ...c.node.rel!, commit: c.commit })), ...reused]);
  // Only the worktree's own checkpoints form a parent chain (browsable history); nested commits
  // stand alone, so deleting a nested ref on prune really frees its objects.
  const { commit } = await commitWithParents(node.repo, node.tree, prevCommit && isTop ? [prevCommit] : [], formatCommitMessage(meta), header.timeMs);
  if (isTop) {
    if (!(await createRef(node.repo, header.ref, commit))) throw new CheckpointError('checkpointExists', `${header.ref} already exists`);
  } else {
    await setRef(node.repo, header.ref, commit);
  }
  return { commit, meta };
}

/**
 * Commits a restore point for `node` and its nested repositories under `ref` (the caller chose a
 * name with a random part that does not exist yet). `preserved` holds, per repository root, the in-the-way files that were added.
 */
export async function commitRestorePoint(node: SnapshotNode, ref: string, target: string, timeMs: number, preserved: Map<string, SkippedFile[]>, isTop = true): Promise<CommittedNode> {
  const children = await settleLimit(node.children, NESTED_CONCURRENCY, async (child) => ({
    node: child,
    ...(await commitRestorePoint(child, ref, target, timeMs, preserved, false)),
  }));
  const meta: CommitMeta = {
    kind: 'restorePoint',
    target,
    timeMs,
    changedCount: 0,
    changed: [],
    skipped: prefixed(node, children, (m) => m.skipped),
    preserved: prefixed({ ...node, skipped: preserved.get(node.repo.root) ?? [] }, children, (m) => m.preserved),
    nested: children.map((c): NestedCheckpoint => ({ ...c.node.rel!, commit: c.commit })),
  };
  const commit = await commitTree(node.repo, node.tree, [], formatCommitMessage(meta), timeMs);
  if (isTop) {
    if (!(await createRef(node.repo, ref, commit))) throw new CheckpointError('gitFailed', `restore point ${ref} already exists`);
  } else {
    await setRef(node.repo, ref, commit);
  }
  return { commit, meta };
}
