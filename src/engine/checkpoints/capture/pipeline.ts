/**
 * The checkpoint capture as a pipeline (SPEC §4.2). One capture runs these stages in order, each
 * one module with a typed input and output:
 *   0 target         `target.ts`         which checkpoint: ref, ordinal, the thread's previous
 *                                        checkpoint P (remembered, or from the refs)
 *   1 find-changes   `find-changes.ts`   what changed: status mode, reported mode, or the full walk
 *   2 write-objects  `write-objects.ts`  the blobs: inline ids or `hash-object`; `add -A` after a walk
 *   3 commit         `commit.ts`         trees and commit with its metadata: fast-import, or
 *                                        `write-tree` + `commit-tree`
 *   4 move-ref       `move-ref.ts`       create-only at the top, set in nested repositories; the
 *                                        stale-ordinal retry
 *   5 journal        `journal.ts`        the warm state the next capture starts from
 * A repository with a warm state is captured incrementally from its warm tree W
 * (`captureIncremental`); without one, with reported paths that cannot be trusted, or when a
 * stage says `FallBack` or fast-import fails, the full snapshot decides (`captureFull`:
 * `snapshot.ts` runs 1–3 up to the trees, then 3–5). Nested repositories are captured inside
 * themselves by this same pipeline, each incremental or full on its own, their scans alongside
 * the outer one's; the outer tree gets their HEADs as gitlinks.
 *
 * Rule: a stage imports only earlier stages and the helpers in checkpoints/ (repo, refs, paths,
 * concurrency, diff, nested-repos, warm-state, packs, types), and those import nothing from
 * capture/. No stage imports this module or a later stage; only this module (and `snapshot.ts`,
 * for stages 1–3) calls more than one stage.
 *
 * Stages overlap where a git process can start before its input is known: the ref listing (0)
 * runs while the warm state is read; in an incremental capture the scan's process (1) starts
 * first, fast-import (3, which moves the ref too: 4) right after and waits for its input (in a
 * nested repository only when something changed: otherwise its last checkpoint is reused), and a
 * full journal is applied (5) alongside.
 */
import * as fs from 'node:fs';
import { quote } from '../../../protocol/wire/quote';
import { indexIdentity } from '../../git/index-file';
import { createTempIndex, headCommit, type RepoInfo } from '../repo';
import type { CommitMeta } from '../refs';
import { relKey, under } from '../paths';
import { NESTED_CONCURRENCY, deferred, settleLimit, type Deferred } from '../concurrency';
import { MAX_NESTED_DEPTH } from '../nested-repos';
import { maybeConsolidatePacks } from '../packs';
import { WARM_MAX_FAST_CAPTURES, dropWarmIndex, readWarm, warmFiles, type WarmNested, type WarmState } from '../warm-state';
import type { ConversionEntry } from '../conversion';
import { toCheckpointError, type NestedCheckpoint, type RepoPath } from '../types';
import { TargetFailed, chooseTarget, nestedTarget, previousOf, type LastCheckpoints, type Prev, type Target, type TargetRequest } from './target';
import { FallBack, findReportedChanges, findStatusChanges, normalizeReported, stillNested, stillSkipped } from './find-changes';
import { writeChangedObjects, type ChangedObjects, type TreeChange } from './write-objects';
import { commitSnapshotTree, diffPreviousToWarm, fastImportCommit, incrementalCommit, type CommittedTree, type FastImportCommit } from './commit';
import { fastImportForce, moveCheckpointRefs, retryIfStale, reuseNestedRef } from './move-ref';
import { applyJournal, conversionsAfter, journalIsFull, recordIncremental, recordSnapshot } from './journal';
import { collectWarnings, disposeSnapshot, skippedOf, snapshotRepo, type SnapshotNode } from './snapshot';

/** Longest excerpt of the failure quoted in the warning that the warm index was dropped. */
const WARNING_EXCERPT_CHARS = 500;

/** What a capture of one repository produced. */
export interface RepoCapture {
  commit: string;
  tree: string;
  meta: CommitMeta;
  /** The repository's HEAD commit when it was captured (null: no commit yet). */
  head: string | null;
  warnings: string[];
  /** This repository and the nested ones captured inside themselves, with their trees. */
  node: CapturedRepo;
}

/** One captured repository and its nested ones (those whose last checkpoint was reused are not listed). */
export interface CapturedRepo {
  repo: RepoInfo;
  /** Path relative to the parent repository's root; null for the worktree itself. */
  rel: RepoPath | null;
  commit: string;
  tree: string;
  meta: CommitMeta;
  children: CapturedRepo[];
  /** An incremental capture: the warm tree it started from and what changed since (W→tree). */
  delta?: WarmDelta;
}

/** What changed from the warm tree `base` to the captured tree. */
export interface WarmDelta {
  base: string;
  changes: TreeChange[];
  /** W's entry of every changed path (by `relKey`; null: not in W). */
  before: ChangedObjects['before'];
}

export interface CaptureRequest extends TargetRequest {
  /** Paths the edit tools reported (reported mode), as the caller passed them. */
  changedPaths?: Array<string | Buffer>;
  /** The checkpoint's time (metadata). */
  timeMs: number;
  maxUntrackedBytes: number;
}

export interface CaptureOutcome {
  target: Target;
  capture: RepoCapture;
  /** Started from the warm state. */
  incremental: boolean;
  /** Trusted the reported paths. */
  fast: boolean;
}

/** How one repository is captured. */
interface Ctx {
  maxUntrackedBytes: number;
  /** Paths relative to the root (reported mode), or null (status mode). */
  changedPaths: Buffer[] | null;
  isTop: boolean;
  depth: number;
  /** Told the top repository's changes since W once they are known, before anything is written. */
  onPlan?: (delta: WarmDelta) => void;
}

/** Captures the worktree `repo` (and its nested repositories) as one checkpoint. */
export async function captureWorktree(repo: RepoInfo, req: CaptureRequest, memory: LastCheckpoints): Promise<CaptureOutcome> {
  const last = memory.take(repo.root, req.threadId, req.ordinal === undefined);
  // An automatic ordinal another process took meanwhile is retried with the next one.
  return retryIfStale(last, req.ordinal === undefined, async (remembered) => {
    try {
      const out = await captureOnce(repo, req, chooseTarget(repo, req, req.timeMs, remembered));
      // An explicitly chosen ordinal need not be the thread's last: only automatic ones are remembered.
      if (req.ordinal === undefined) memory.remember(repo.root, req.threadId, { ordinal: out.target.header.ordinal, commit: out.capture.commit });
      return out;
    } catch (err) {
      throw toCheckpointError(err, `capturing checkpoint in ${repo.root}`);
    }
  });
}

/**
 * Captures the worktree `repo` (and its nested repositories) as the restore point `ref` before
 * a restore of `target` (status mode from the warm state, or the full snapshot), leaving the
 * warm state behind like any capture.
 */
export async function captureRestorePoint(repo: RepoInfo, req: { ref: string; target: string; timeMs: number; maxUntrackedBytes: number; onPlan?: (delta: WarmDelta) => void }): Promise<RepoCapture> {
  const header = { ref: req.ref, threadId: '', ordinal: 0, trigger: { kind: 'manual' as const }, timeMs: req.timeMs, restorePointOf: req.target };
  try {
    return (await captureOnce(repo, { threadId: '', trigger: header.trigger, timeMs: req.timeMs, maxUntrackedBytes: req.maxUntrackedBytes }, Promise.resolve({ header, prevCommit: null }), req.onPlan)).capture;
  } catch (err) {
    throw toCheckpointError(err, `saving the restore point in ${repo.root}`);
  }
}

async function captureOnce(repo: RepoInfo, req: CaptureRequest, target: Promise<Target>, onPlan?: (delta: WarmDelta) => void): Promise<CaptureOutcome> {
  target.catch(() => undefined);
  const warm = await readWarm(repo);
  // Reported mode while the paths can be trusted and the warm state allows another fast capture
  // in a row; status mode otherwise; untrusted paths: the full snapshot.
  const useReported = req.changedPaths !== undefined && warm !== null && warm.fastRuns < WARM_MAX_FAST_CAPTURES;
  const reported = useReported ? await normalizeReported(repo.root, req.changedPaths!, warm.nested.map((n) => n.rel.raw)) : null;
  const ctx: Ctx = { maxUntrackedBytes: req.maxUntrackedBytes, changedPaths: reported, isTop: true, depth: 0, ...(onPlan ? { onPlan } : {}) };
  const incremental = useReported && !reported ? null : await captureIncremental(repo, warm, target, ctx);
  const t = await target;
  const capture = incremental ?? (await captureFull(repo, null, t, 0, req.maxUntrackedBytes));
  return { target: t, capture, incremental: incremental !== null, fast: incremental !== null && reported !== null };
}

/**
 * Builds the warm state (a full snapshot of the worktree and its nested repositories, kept as
 * their warm indexes; no checkpoint is made) when there is none. False when there already was one.
 */
export async function prepareWarmState(repo: RepoInfo, maxUntrackedBytes: number): Promise<boolean> {
  if (await readWarm(repo)) return false;
  const node = await snapshotRepo(repo, { maxUntrackedBytes });
  try {
    await recordSnapshot(node, null, new Map(), skippedOf(node), 0);
  } finally {
    await disposeSnapshot(node);
  }
  return true;
}

/**
 * The full snapshot of `repo` (top level when `rel` is null, else one nested repository),
 * committed as `target`; its indexes become the warm ones.
 */
async function captureFull(repo: RepoInfo, rel: Buffer | null, target: Target, depth: number, maxUntrackedBytes: number): Promise<RepoCapture> {
  const node = await snapshotRepo(repo, { maxUntrackedBytes, depth }); // 1–3: walk, add, write-tree
  try {
    const committed = await commitSnapshotTree(node, target.header, target.prevCommit, rel === null); // 3
    await moveCheckpointRefs(committed, target.header.ref, rel === null); // 4
    await recordSnapshot(node, committed.commit, new Map(committed.meta.nested.map((n) => [relKey(n.raw), n.commit])), committed.meta.skipped, 0); // 5
    // A nested repository's HEAD becomes its gitlink in the outer tree.
    return { commit: committed.commit, tree: node.tree, meta: committed.meta, warnings: collectWarnings(node), head: rel === null ? null : await headCommit(repo), node: capturedOf(node, committed) };
  } finally {
    await disposeSnapshot(node);
  }
}

/** A committed full snapshot as `CapturedRepo`s (the children are in the same order). */
function capturedOf(node: SnapshotNode, committed: CommittedTree): CapturedRepo {
  return { repo: node.repo, rel: node.rel, commit: committed.commit, tree: node.tree, meta: committed.meta, children: node.children.map((c, i) => capturedOf(c, committed.children[i]!)) };
}

/**
 * Captures `repo` incrementally from its warm state; null when the full snapshot must decide
 * instead (any failure before something is written counts). A failing target throws.
 */
async function captureIncremental(repo: RepoInfo, warm: WarmState | null, target: Promise<Target>, ctx: Ctx): Promise<RepoCapture | null> {
  if (!warm || ctx.depth > MAX_NESTED_DEPTH) return null;
  const flush = journalIsFull(warm);
  const warmIndex = warmFiles(repo).index;
  const warmIndexId = indexIdentity(warmIndex);
  // Status mode scans a copy (the status refreshes it); reported mode reads the index file in
  // place, and copies it only to apply the journal.
  let copy = !ctx.changedPaths || flush ? await createTempIndex(repo, warmIndex) : null;
  try {
    if (!fs.existsSync(copy?.file ?? warmIndex)) return null;
    const scanned = deferred<void>();
    const planP = planIncremental(repo, copy?.file ?? warmIndex, warm, target, ctx, scanned); // 0–3
    planP.catch(() => undefined);
    const spec = deferred<FastImportCommit | null>();
    // At the top, fast-import starts now and waits for its input; in a nested repository (where
    // usually nothing changed and the last checkpoint is reused) only once there is something to write.
    const written = ctx.isTop ? fastImportCommit(repo, spec.promise, fastImportForce(true)) : spec.promise.then((c) => (c ? fastImportCommit(repo, Promise.resolve(c), fastImportForce(false)) : null)); // 3, 4
    written.catch(() => undefined);
    const changes = spec.promise.then((c) => c?.changes ?? null);
    const conv = deferred<ConversionEntry[]>();
    const flushed = flush && copy ? applyJournal(repo, copy.file, warm.pending, changes, ctx.changedPaths ? Promise.resolve() : scanned.promise, warm.tree.length, conv.promise) : Promise.resolve(); // 5
    flushed.catch(() => undefined);
    let plan: Plan;
    try {
      plan = await planP;
    } catch (err) {
      spec.resolve(null);
      scanned.resolve();
      conv.resolve([]);
      await Promise.allSettled([written, flushed]);
      if (err instanceof TargetFailed) throw err.reason;
      return null;
    }
    // A nested repository where nothing changed keeps its last checkpoint (4: its ref is set).
    const reuse = plan.reuse && warm.commit ? { commit: warm.commit, tree: warm.tree } : null;
    spec.resolve(reuse ? null : plan.commit);
    ctx.onPlan?.({ base: warm.tree, changes: plan.commit.changes, before: plan.before });
    conv.resolve(conversionsAfter(warm.conv, plan.conv));
    const reusedRefs = Promise.all([...plan.nested.flatMap((n) => (n.reused ? [n.reused.refSet] : [])), reuse ? reuseNestedRef(repo, target, reuse.commit) : undefined]);
    const [wr, fr, rr] = await Promise.allSettled([written, flushed, reusedRefs]);
    // If fast-import failed (the ref appeared meanwhile, an object is gone), nothing was written:
    // the full snapshot decides, and reports a real failure.
    const w = reuse ?? (wr.status === 'fulfilled' ? wr.value : null);
    if (!w) return null;
    if (fr.status === 'rejected' || rr.status === 'rejected') {
      // The checkpoint exists; only the warm state is in doubt: the next capture starts afresh.
      await dropWarmIndex(repo);
      const reason = String((fr.status === 'rejected' ? fr.reason : (rr as PromiseRejectedResult).reason) as Error);
      return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: [...plan.warnings, quote(`the warm index was dropped: ${reason}`, WARNING_EXCERPT_CHARS)], head: plan.head, node: capturedNode(repo, w, plan) };
    }
    await recordIncremental(repo, { warm, copy: copy?.file ?? null, flushed: flush, warmIndexId, warmIndex, written: w, changes: plan.commit.changes, fast: ctx.changedPaths !== null, nested: plan.nested.map((n) => n.warm), skipped: plan.commit.meta.skipped, conv: plan.conv }); // 5
    copy = null;
    maybeConsolidatePacks(repo);
    return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: plan.warnings, head: plan.head, node: capturedNode(repo, w, plan) };
  } finally {
    if (copy) await copy.dispose();
  }
}

/** An incremental capture's `CapturedRepo`: nested repositories captured now are its children. */
function capturedNode(repo: RepoInfo, w: { commit: string; tree: string }, plan: Plan): CapturedRepo {
  const children = plan.nested.flatMap((n) => (n.capture ? [{ ...n.capture.node, rel: n.warm.rel }] : []));
  return { repo, rel: null, commit: w.commit, tree: w.tree, meta: plan.commit.meta, children, delta: { base: plan.warmTree, changes: plan.commit.changes, before: plan.before } };
}

/** Everything before the first write of an incremental capture. */
interface Plan {
  commit: FastImportCommit & { meta: CommitMeta };
  head: string | null;
  nested: NestedPart[];
  warnings: string[];
  /** The conversion set's new entries (stage 2). */
  conv: Map<string, ConversionEntry | null>;
  /** A nested repository with nothing changed since its last checkpoint, which P (or a restore point) can reuse. */
  reuse: boolean;
  /** The warm tree W and its entries of the changed paths. */
  warmTree: string;
  before: ChangedObjects['before'];
}

/** One nested repository's part of an incremental capture. */
interface NestedPart {
  rel: Buffer;
  capture: RepoCapture | null;
  /** Its last checkpoint, reused (reported mode, nothing inside reported), with its ref being set. */
  reused: (NestedCheckpoint & { refSet: Promise<void> }) | null;
  gitlink: TreeChange | null;
  warm: WarmNested;
}

/** Stages 0–3 up to the commit's description: scan, P, nested repositories, objects, metadata. */
async function planIncremental(repo: RepoInfo, index: string, warm: WarmState, target: Promise<Target>, ctx: Ctx, scanned: Deferred<void>): Promise<Plan> {
  const reported = ctx.changedPaths;
  const inNested = (p: Buffer): WarmNested[] => warm.nested.filter((n) => n.rel.raw.equals(p) || under(n.rel.raw, p));
  const scanP = reported ? findReportedChanges(repo, index, reported.filter((p) => !inNested(p).length), ctx.maxUntrackedBytes, warm) : findStatusChanges(repo, index, warm, ctx.maxUntrackedBytes); // 1
  scanP.then(
    () => scanned.resolve(),
    () => scanned.resolve(),
  );
  const prevP = previousOf(repo, warm, target); // 0
  prevP.catch(() => undefined);
  const dirty = new Set((reported ?? []).flatMap((p) => inNested(p).map((n) => relKey(n.rel.raw))));
  const nestedP = settleLimit(warm.nested, NESTED_CONCURRENCY, (n) => captureNested(repo, n, prevP, ctx, !reported || dirty.has(relKey(n.rel.raw))));
  nestedP.catch(() => undefined);
  // A restore point lists no "files changed".
  const sinceWarmP = prevP.then((p) => (p.header.restorePointOf !== undefined ? [] : diffPreviousToWarm(repo, p, warm.tree)));
  sinceWarmP.catch(() => undefined);
  const scan = await scanP;
  const objects = await writeChangedObjects(repo, warm, scan.candidates, ctx.maxUntrackedBytes); // 2
  const [prev, nested, sinceWarm] = await Promise.all([prevP, nestedP, sinceWarmP]);
  for (const n of nested) if (n.gitlink) objects.changes.push(n.gitlink);
  const captured = nested.flatMap((n) => (n.capture ? [{ rel: n.rel, commit: n.capture.commit, meta: n.capture.meta }] : []));
  const reused = nested.flatMap((n): NestedCheckpoint[] => (n.reused ? [{ path: n.reused.path, raw: n.reused.raw, commit: n.reused.commit }] : []));
  const skipped = reported ? stillSkipped(warm.skipped, reported, captured.map((n) => n.rel)) : scan.skipped;
  const warnings = nested.filter((n) => !n.warm.repo).map((n) => `nested repository ${n.warm.rel.path} was left out: it cannot be entered`);
  for (const n of nested) if (n.capture) warnings.push(...n.capture.warnings);
  const commit = incrementalCommit({ prev, warmTree: warm.tree, isTop: ctx.isTop, objects, sinceWarm, nestedRels: nested.map((n) => n.rel), captured, reused, skipped }); // 3
  const reuse = !ctx.isTop && warm.commit !== null && !objects.changes.length && !nested.length && (prev.header.restorePointOf !== undefined || prev.prevCommit === warm.commit);
  return { commit, nested, warnings, head: scan.head ?? null, conv: objects.conv, reuse, warmTree: warm.tree, before: objects.before };
}

/** Captures (or, in reported mode when nothing inside was reported, reuses) one nested repository. */
async function captureNested(repo: RepoInfo, n: WarmNested, prevP: Promise<Prev>, ctx: Ctx, dirty: boolean): Promise<NestedPart> {
  if (!n.repo) return { rel: n.rel.raw, capture: null, reused: null, gitlink: null, warm: n };
  if (!(await stillNested(repo, n.rel.raw, n.repo))) throw new FallBack('a nested repository changed shape');
  if (!dirty && n.commit) {
    // The caller guarantees nothing changed inside (HEAD included): the gitlink stays as it is,
    // and its last checkpoint stays reachable under this checkpoint's name too (4).
    const refSet = reuseNestedRef(n.repo, prevP, n.commit);
    return { rel: n.rel.raw, capture: null, reused: { ...n.rel, commit: n.commit, refSet }, gitlink: null, warm: n };
  }
  // Its scan starts now; only its commit waits for the outer target.
  const target = nestedTarget(prevP, n.rel.raw);
  const sub: Ctx = { maxUntrackedBytes: ctx.maxUntrackedBytes, changedPaths: null, isTop: false, depth: ctx.depth + 1 };
  const capture = (await captureIncremental(n.repo, await readWarm(n.repo), target, sub)) ?? (await captureFull(n.repo, n.rel.raw, await target, ctx.depth + 1, ctx.maxUntrackedBytes));
  // A nested repository without a commit is left out of the outer tree (as `add -A` would fail on
  // it); the gitlink changes only when its HEAD moved since W.
  const gitlink: TreeChange | null = n.head !== undefined && n.head === capture.head ? null : capture.head ? { kind: 'gitlink', raw: n.rel.raw, sha: capture.head } : { kind: 'delete', raw: n.rel.raw };
  return { rel: n.rel.raw, capture, reused: null, gitlink, warm: { rel: n.rel, commit: capture.commit, repo: n.repo, head: capture.head } };
}
