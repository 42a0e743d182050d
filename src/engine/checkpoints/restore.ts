/**
 * Making a working tree equal a checkpoint without losing a byte (SPEC §4.2), all or nothing.
 *
 *   1. The restore point first (`restore-point.ts`): the current state S is captured under
 *      `refs/vox/restore-points/<stamp>` like a checkpoint — incremental from the warm state
 *      when there is one, which the capture leaves behind either way — and the ignored or over-cap
 *      files that stand in the target's way are added to it ("preserved").
 *   2. Per repository, the raw diff S→T (`diff-tree`) is the change list: what T has that S lacks
 *      or has otherwise is written, what S has and T lacks is removed. Nothing else is touched:
 *      ignored files, over-cap files elsewhere, nested repositories' contents (each nested
 *      repository the target lists is restored inside itself, to the nested commit it lists; the
 *      others are left as they are, and a listed one that no longer exists is reported
 *      `missing`). Every blob is read before the first write (a missing object changes nothing).
 *   3. The files are written by `restore-writer.ts`: raw bytes, never git's checkout (no smudge,
 *      eol, ident or encoding conversion, no hooks). HEAD, branches, the real index (its flags
 *      included) and the stash are never touched.
 *   4. If anything fails half-way, every repository already written to is put back by applying
 *      the reverse change list (to the restore point's bytes), and the error says so. Before the
 *      first write the intent is journaled (`restore-journal.ts`), so a restore whose process is
 *      killed half-way is finished at the next start instead.
 *   5. The warm state then describes T: the capture's warm index with the change list journaled
 *      on top (a nested repository's gitlink as T has it; the next capture sets its real HEAD
 *      again), so the next capture is incremental. Where that could differ from a full snapshot
 *      (preserved files, attributes in the tree, paths a nested repository owns) the warm state
 *      is dropped instead, and the service prepares it again in the background.
 */
import { deleteRefs, readCommit, readCommitAt, type CommitObject, type RepoInfo } from './repo';
import { parseCommitMessage, type CommitMeta } from './refs';
import { rawDiff, type RawDiffEntry } from './diff';
import { isAttributesPath, joinRel, relKey } from './paths';
import { NESTED_CONCURRENCY, settleLimit } from './concurrency';
import { GITLINK_MODE } from './nested-repos';
import { repoSettings } from './conversion';
import { WARM_MAX_FAST_CAPTURES, dropWarmIndex, keepWarm, readWarm } from './warm-state';
import { applyChanges, changesOf, prefetchBlobs, readBlobs, type Blobs, type PathChange } from './restore-writer';
import { clearRestoreJournal, writeRestoreJournal } from './restore-journal';
import { findObstacles, ownedByChild, savePreserved, type PointNode } from './restore-point';
import { captureRestorePoint, type CapturedRepo, type WarmDelta } from './capture/pipeline';
import { journalAfter } from './capture/journal';
import { changeMode, type TreeChange } from './capture/write-objects';
import { CheckpointError, repoPath, toCheckpointError, type ChangedFile, type NestedRestoreOutcome, type RepoPath, type SkippedFile } from './types';

export interface RestoreTarget {
  commit: string;
  tree: string;
  meta: CommitMeta | null;
}

/** A captured repository paired with what it should become (null: leave this repository alone). */
export interface RestorePlan {
  node: CapturedRepo;
  prefix: RepoPath | null;
  target: RestoreTarget | null;
  children: RestorePlan[];
  /** Raw diff S→T (S with the preserved files once they are added). */
  entries: RawDiffEntry[];
  obstacles: Buffer[];
  /** What is written: `entries` minus what nested repositories own. */
  changes: PathChange[];
}

/** Pairs every captured repository with its target commit, recursively; records nested repos that are gone. */
export async function planRestore(node: CapturedRepo, targetCommit: string | null, prefix: RepoPath | null, outcomes: NestedRestoreOutcome[], read?: Promise<CommitObject>): Promise<RestorePlan> {
  let target: RestoreTarget | null = null;
  if (targetCommit === node.commit) {
    // The restore point reused the target (a nested repository where nothing changed).
    target = { commit: targetCommit, tree: node.tree, meta: node.meta };
  } else if (targetCommit) {
    try {
      const c = await (read ?? readCommit(node.repo, targetCommit));
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
  return { node, prefix, target, children, entries: [], obstacles: [], changes: [] };
}

/**
 * The diff S→W when the capture of S started from W (its changes reversed, no `diff-tree`):
 * restoring the tree the warm state was made from, usually the last checkpoint. Null when the
 * changes involve a gitlink (the diff then tells).
 */
function reverseDelta(delta: WarmDelta, hexLength: number): RawDiffEntry[] | null {
  if (delta.changes.some((c) => c.kind === 'gitlink')) return null;
  const zero = { mode: '000000', sha: '0'.repeat(hexLength) };
  return delta.changes.map((c): RawDiffEntry => {
    const mode = changeMode(c);
    const src = mode === null ? zero : { mode, sha: (c as { sha: string }).sha };
    const dst = delta.before.get(relKey(c.raw)) ?? zero;
    const kind = (m: string): string => (m === '120000' ? 'link' : 'file');
    const status = src === zero ? 'added' : dst === zero ? 'deleted' : kind(src.mode) !== kind(dst.mode) ? 'typeChanged' : 'modified';
    return { ...repoPath(c.raw), status, srcMode: src.mode, srcSha: src.sha, dstMode: dst.mode, dstSha: dst.sha };
  });
}

/** Restores this process made lately, by repository root: undoing one needs no `diff-tree`. */
const recentRestores = new Map<string, { from: string; to: string; entries: RawDiffEntry[] }>();
/** Repositories whose latest restore is remembered. */
const RECENT_RESTORES_MAX = 16;

function rememberRestore(plan: RestorePlan): void {
  if (!plan.target || !plan.entries.length) return;
  if (recentRestores.size >= RECENT_RESTORES_MAX) recentRestores.clear();
  recentRestores.set(plan.node.repo.root, { from: plan.target.tree, to: plan.node.tree, entries: plan.entries });
}

/** The diff `from`→`to` when it is the reverse of a restore this process made (its undo). */
function knownDiff(root: string, from: string, to: string): RawDiffEntry[] | null {
  const r = recentRestores.get(root);
  if (!r || r.from !== from || r.to !== to) return null;
  const flip = { added: 'deleted', deleted: 'added' } as const;
  return r.entries.map((e) => ({ ...e, status: e.status === 'added' || e.status === 'deleted' ? flip[e.status] : e.status, srcMode: e.dstMode, dstMode: e.srcMode, srcSha: e.dstSha, dstSha: e.srcSha }));
}

/** The diff S→T of every repository with a target, its obstacles and its change list. */
async function diffAll(plan: RestorePlan, withObstacles: boolean): Promise<void> {
  const { node, target } = plan;
  if (target) {
    const reversed = withObstacles && node.delta?.base === target.tree ? reverseDelta(node.delta, target.tree.length) : null;
    plan.entries = target.tree === node.tree ? [] : (reversed ?? knownDiff(node.repo.root, node.tree, target.tree) ?? (await rawDiff(node.repo, node.tree, target.tree)));
    const owned = (rel: Buffer): boolean => ownedByChild(node, rel);
    if (withObstacles) plan.obstacles = findObstacles(node.repo.root, plan.entries, owned);
    plan.changes = changesOf(plan.entries.filter((e) => !owned(e.raw)));
  }
  await settleLimit(plan.children, NESTED_CONCURRENCY, (c) => diffAll(c, withObstacles));
}

/**
 * While the restore point is written: when the capture started from the target's tree (the
 * usual restore of the last checkpoint), the change list is its changes reversed, so the blob
 * sizes and the first batch of contents are read meanwhile.
 */
function readAhead(repo: RepoInfo, targetTree: Promise<string | null>, delta: WarmDelta): Promise<Blobs | null> {
  const ahead = targetTree.then(async (tree) => {
    const entries = !tree ? null : delta.base === tree ? reverseDelta(delta, tree.length) : !delta.changes.length ? knownDiff(repo.root, delta.base, tree) : null;
    if (!entries) return null;
    const changes = changesOf(entries);
    const blobs = await readBlobs(repo, changes);
    await prefetchBlobs(repo, changes, blobs);
    return blobs;
  });
  ahead.catch(() => undefined);
  return ahead;
}

/** Deletes the restore point `ref` again (a restore that cannot happen). */
async function dropRestorePoint(node: CapturedRepo, ref: string): Promise<void> {
  for (const c of node.children) await dropRestorePoint(c, ref);
  await deleteRefs(node.repo, [{ ref, commit: node.commit }]).catch(() => undefined);
}

function flatten(plan: RestorePlan): RestorePlan[] {
  return [plan, ...plan.children.flatMap(flatten)];
}

function pointTree(plan: RestorePlan): PointNode {
  return { node: plan.node, obstacles: plan.obstacles, children: plan.children.map(pointTree) };
}

export interface WorktreeRestore {
  changed: ChangedFile[];
  preserved: SkippedFile[];
  nested: NestedRestoreOutcome[];
}

/**
 * Restores the worktree `repo` (and its nested repositories) to `targetCommit`, saving the
 * current state as the restore point `rpRef` first (see the header).
 */
export async function restoreWorktree(repo: RepoInfo, req: { target: string; rpRef: string; timeMs: number; maxUntrackedBytes: number }): Promise<WorktreeRestore> {
  // The target is read while the restore point is captured (one that names no commit: the
  // restore point goes again, and nothing was changed).
  const targetP = readCommitAt(repo, req.target);
  targetP.catch(() => undefined);
  let ahead: Promise<Blobs | null> = Promise.resolve(null);
  const onPlan = (delta: WarmDelta): void => void (ahead = readAhead(repo, targetP.then((t) => t?.tree ?? null), delta));
  const captured = await captureRestorePoint(repo, { ref: req.rpRef, target: req.target, timeMs: req.timeMs, maxUntrackedBytes: req.maxUntrackedBytes, onPlan });
  const target = await targetP;
  if (!target) {
    await dropRestorePoint(captured.node, req.rpRef);
    throw new CheckpointError('unknownCheckpoint', `${req.target} does not exist in ${repo.root}`);
  }
  const outcomes: NestedRestoreOutcome[] = [];
  const plan = await planRestore(captured.node, target.commit, null, outcomes, Promise.resolve(target));
  const plans = flatten(plan);
  let blobs: Blobs[];
  try {
    await diffAll(plan, true);
    if (plans.some((p) => p.obstacles.length)) {
      try {
        await savePreserved(pointTree(plan), req.rpRef);
      } catch (err) {
        throw new CheckpointError('conflict', `files in the way of the restore could not be saved first (nothing was changed): ${(err as Error).message}`, err);
      }
      // S now holds the preserved files: the change lists are against it.
      const obstacles = new Map(plans.map((p) => [p, p.obstacles]));
      await diffAll(plan, false);
      for (const [p, o] of obstacles) p.obstacles = o;
    }
    // The top's blobs, when they were read ahead for the same change list.
    const early = await ahead.catch(() => null);
    const covers = (b: Blobs | null, p: RestorePlan): b is Blobs => b !== null && p.changes.every((c) => !c.to || c.to.mode === GITLINK_MODE || b.sizes.has(c.to.sha));
    blobs = await settleLimit(plans, NESTED_CONCURRENCY, (p) => (p === plan && covers(early, p) ? Promise.resolve(early) : readBlobs(p.node.repo, p.changes)));
  } catch (err) {
    throw toCheckpointError(err, 'preparing the restore (nothing was changed)');
  }
  const applied: RestorePlan[] = [];
  const writing = plans.filter((p) => p.changes.length && p.target);
  // The intent, durably, before the first write: a process killed half-way is finished at the next start.
  if (writing.length) {
    try {
      writeRestoreJournal(repo, { version: 1, restorePoint: req.rpRef, target: req.target, targetCommit: target.commit, timeMs: req.timeMs, repos: writing.map((p) => ({ root: p.node.repo.root, from: p.node.tree, to: p.target!.tree })) });
    } catch (err) {
      throw new CheckpointError('gitFailed', `the restore's journal could not be written in ${repo.gitDir} (nothing was changed): ${(err as Error).message}`, err);
    }
  }
  try {
    // Outer repository first, then the nested ones.
    for (const [i, p] of plans.entries()) {
      if (!p.changes.length) continue;
      applied.push(p);
      await applyChanges(p.node.repo, p.changes, blobs[i]!, { symlinks: (await repoSettings(p.node.repo)).symlinks });
    }
  } catch (err) {
    const rolledBack = await rollBack(applied.reverse());
    for (const p of plans) await dropWarmIndex(p.node.repo).catch(() => undefined);
    // Rolled back: nothing to finish. Not rolled back: the next start finishes the restore.
    if (rolledBack === null) {
      try {
        clearRestoreJournal(repo);
      } catch {
        // The error below says what happened; a journal left behind is finished forward later.
      }
    }
    const why = err instanceof Error ? err.message : String(err);
    throw new CheckpointError(err instanceof CheckpointError ? err.code : 'gitFailed', rolledBack === null ? `the restore failed half-way and was rolled back: ${why}` : `the restore failed half-way (${why}) and could not be rolled back (it is finished at the next start): ${rolledBack}`, err);
  }
  // Every file is written; a journal that cannot be removed only makes the next start restore T again (the tree as found saved first).
  if (writing.length) {
    try {
      clearRestoreJournal(repo);
    } catch {
      // See above.
    }
  }
  for (const p of plans) {
    await rewarm(p);
    rememberRestore(p);
  }
  const changed: ChangedFile[] = [];
  for (const p of plans) {
    if (!p.target) continue;
    const childKeys = new Set(p.children.map((c) => relKey(c.node.rel!.raw)));
    for (const e of p.entries) if (!((e.srcMode === GITLINK_MODE || e.dstMode === GITLINK_MODE) && childKeys.has(relKey(e.raw)))) changed.push({ ...joinRel(p.prefix, e), status: e.status });
    if (p.prefix) outcomes.push({ ...p.prefix, status: 'restored' });
  }
  return { changed, preserved: plan.node.meta.preserved, nested: outcomes };
}

/** Puts back every repository in `plans` (the reverse change lists); null, or why it failed. */
async function rollBack(plans: RestorePlan[]): Promise<string | null> {
  const failures: string[] = [];
  for (const p of plans) {
    const reverse = p.changes.map((c) => ({ raw: c.raw, from: c.to, to: c.from }));
    try {
      await applyChanges(p.node.repo, reverse, await readBlobs(p.node.repo, reverse), { symlinks: (await repoSettings(p.node.repo)).symlinks });
    } catch (err) {
      failures.push(`${p.node.repo.root}: ${(err as Error).message}`);
    }
  }
  return failures.length ? failures.join('; ') : null;
}

/** Whether no file was preserved in `plan`'s repository or below it (in this restore or the target). */
function preservedNone(plan: RestorePlan): boolean {
  return !plan.obstacles.length && !(plan.target?.meta?.preserved.length ?? 0) && plan.children.every(preservedNone);
}

/** Whether the restore changed anything in `plan`'s repository or below it. */
function changedAnything(plan: RestorePlan): boolean {
  return plan.entries.length > 0 || plan.children.some(changedAnything);
}

/** The warm state after a repository was restored (see the header, step 5). */
async function rewarm(plan: RestorePlan): Promise<void> {
  const { node, target } = plan;
  if (!target || !changedAnything(plan)) return;
  const warm = await readWarm(node.repo);
  const childOf = (e: RawDiffEntry): RestorePlan | undefined => plan.children.find((c) => c.node.rel!.raw.equals(e.raw));
  // Entries the writer left alone: only the gitlinks of nested repositories (T's HEAD for them,
  // or none); their HEADs did not move, so the next capture sets them again (`head` below).
  const left = plan.entries.filter((e) => !plan.changes.some((c) => c.raw.equals(e.raw)));
  const gitlinksOnly = left.every((e) => childOf(e) && (e.dstMode === GITLINK_MODE || /^0+$/.test(e.dstMode)));
  const exact =
    warm !== null &&
    warm.tree === node.tree &&
    !warm.attributes &&
    !warm.conv.length &&
    !plan.obstacles.length &&
    !(target.meta?.preserved.length ?? 0) &&
    gitlinksOnly &&
    !plan.changes.some((c) => c.from?.mode === GITLINK_MODE || c.to?.mode === GITLINK_MODE || isAttributesPath(c.raw));
  if (!exact) {
    await dropWarmIndex(node.repo);
    return;
  }
  const changes = [...plan.changes, ...left.map((e) => ({ raw: e.raw, from: null, to: /^0+$/.test(e.dstMode) ? null : { mode: e.dstMode, sha: e.dstSha } }))].map((c): TreeChange => {
    if (!c.to) return { kind: 'delete', raw: c.raw };
    if (c.to.mode === GITLINK_MODE) return { kind: 'gitlink', raw: c.raw, sha: c.to.sha };
    if (c.to.mode === '120000') return { kind: 'symlink', raw: c.raw, target: Buffer.alloc(0), sha: c.to.sha };
    return { kind: 'file', raw: c.raw, mode: c.to.mode === '100755' ? '100755' : '100644', sha: c.to.sha };
  });
  // Nested repositories restored inside themselves now hold their target commits; W's gitlink of
  // each is T's now (their real HEADs go back in with the next capture).
  const nested = warm.nested.map((n) => {
    const child = plan.children.find((c) => c.node.rel!.raw.equals(n.rel.raw));
    const link = left.find((e) => e.raw.equals(n.rel.raw));
    return { ...n, ...(child?.target ? { commit: child.target.commit } : {}), ...(link ? { head: /^0+$/.test(link.dstMode) ? null : link.dstSha } : {}) };
  });
  const tree = plan.entries.length ? target.tree : warm.tree;
  // Every change is journaled; when no preserved file was involved anywhere below (the over-cap
  // files left out are the same as before) and every gitlink is a HEAD, even a reported-mode
  // capture may follow; else the next one looks at everything.
  await keepWarm(node.repo, null, { ...warm, tree, pending: journalAfter(warm.pending, changes), commit: null, nested, fastRuns: preservedNone(plan) && !left.length ? warm.fastRuns : WARM_MAX_FAST_CAPTURES });
}
