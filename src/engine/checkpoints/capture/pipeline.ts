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
 * first, fast-import (3, which moves the ref too: 4) right after and waits for its input, and a
 * full journal is applied (5) alongside.
 */
import * as fs from 'node:fs';
import { indexIdentity } from '../../git/index-file';
import { createTempIndex, headCommit, type RepoInfo } from '../repo';
import type { CommitMeta } from '../refs';
import { relKey, under } from '../paths';
import { NESTED_CONCURRENCY, deferred, settleLimit, type Deferred } from '../concurrency';
import { MAX_NESTED_DEPTH } from '../nested-repos';
import { maybeConsolidatePacks } from '../packs';
import { WARM_MAX_FAST_CAPTURES, dropWarmIndex, readWarm, warmFiles, type WarmNested, type WarmState } from '../warm-state';
import { toCheckpointError, type NestedCheckpoint } from '../types';
import { TargetFailed, chooseTarget, nestedTarget, previousOf, type LastCheckpoint, type LastCheckpoints, type Prev, type Target, type TargetRequest } from './target';
import { FallBack, findReportedChanges, findStatusChanges, normalizeReported, stillNested, stillSkipped } from './find-changes';
import { writeChangedObjects, type TreeChange } from './write-objects';
import { commitSnapshotTree, diffPreviousToWarm, fastImportCommit, incrementalCommit, type FastImportCommit } from './commit';
import { fastImportForce, moveCheckpointRefs, retryIfStale, reuseNestedRef } from './move-ref';
import { applyJournal, journalIsFull, recordIncremental, recordSnapshot } from './journal';
import { collectWarnings, disposeSnapshot, skippedOf, snapshotRepo } from './snapshot';

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
}

/** Captures the worktree `repo` (and its nested repositories) as one checkpoint. */
export async function captureWorktree(repo: RepoInfo, req: CaptureRequest, memory: LastCheckpoints): Promise<CaptureOutcome> {
  const last = memory.take(repo.root, req.threadId, req.ordinal === undefined);
  return retryIfStale(last, async (remembered) => {
    try {
      const out = await captureOnce(repo, req, remembered);
      // An explicitly chosen ordinal need not be the thread's last: only automatic ones are remembered.
      if (req.ordinal === undefined) memory.remember(repo.root, req.threadId, { ordinal: out.target.header.ordinal, commit: out.capture.commit });
      return out;
    } catch (err) {
      throw toCheckpointError(err, `capturing checkpoint in ${repo.root}`);
    }
  });
}

async function captureOnce(repo: RepoInfo, req: CaptureRequest, last: LastCheckpoint | undefined): Promise<CaptureOutcome> {
  const target = chooseTarget(repo, req, req.timeMs, last);
  target.catch(() => undefined);
  const warm = await readWarm(repo);
  const reported = req.changedPaths && warm ? await normalizeReported(repo.root, req.changedPaths, warm.nested.map((n) => n.rel.raw)) : null;
  // Incremental first (status mode, or reported mode when the paths can be trusted).
  const ctx: Ctx = { maxUntrackedBytes: req.maxUntrackedBytes, changedPaths: reported, isTop: true, depth: 0 };
  const incremental = req.changedPaths && !reported ? null : await captureIncremental(repo, warm, target, ctx);
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
    return { commit: committed.commit, tree: node.tree, meta: committed.meta, warnings: collectWarnings(node), head: rel === null ? null : await headCommit(repo) };
  } finally {
    await disposeSnapshot(node);
  }
}

/**
 * Captures `repo` incrementally from its warm state; null when the full snapshot must decide
 * instead (any failure before something is written counts). A failing target throws.
 */
async function captureIncremental(repo: RepoInfo, warm: WarmState | null, target: Promise<Target>, ctx: Ctx): Promise<RepoCapture | null> {
  if (!warm || ctx.depth > MAX_NESTED_DEPTH) return null;
  if (ctx.changedPaths && warm.fastRuns >= WARM_MAX_FAST_CAPTURES) return null;
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
    const written = fastImportCommit(repo, spec.promise, fastImportForce(ctx.isTop)); // 3, 4
    written.catch(() => undefined);
    const changes = spec.promise.then((c) => c?.changes ?? null);
    const flushed = flush && copy ? applyJournal(repo, copy.file, warm.pending, changes, ctx.changedPaths ? Promise.resolve() : scanned.promise, warm.tree.length) : Promise.resolve(); // 5
    flushed.catch(() => undefined);
    let plan: Plan;
    try {
      plan = await planP;
    } catch (err) {
      spec.resolve(null);
      scanned.resolve();
      await Promise.allSettled([written, flushed]);
      if (err instanceof TargetFailed) throw err.reason;
      return null;
    }
    spec.resolve(plan.commit);
    const reusedRefs = Promise.all(plan.nested.flatMap((n) => (n.reused ? [n.reused.refSet] : [])));
    const [wr, fr, rr] = await Promise.allSettled([written, flushed, reusedRefs]);
    // If fast-import failed (the ref appeared meanwhile, an object is gone), nothing was written:
    // the full snapshot decides, and reports a real failure.
    const w = wr.status === 'fulfilled' ? wr.value : null;
    if (!w) return null;
    if (fr.status === 'rejected' || rr.status === 'rejected') {
      // The checkpoint exists; only the warm state is in doubt: the next capture starts afresh.
      await dropWarmIndex(repo);
      const reason = String((fr.status === 'rejected' ? fr.reason : (rr as PromiseRejectedResult).reason) as Error);
      return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: [...plan.warnings, `the warm index was dropped: ${reason}`.slice(0, WARNING_EXCERPT_CHARS)], head: plan.head };
    }
    await recordIncremental(repo, { warm, copy: copy?.file ?? null, flushed: flush, warmIndexId, warmIndex, written: w, changes: plan.commit.changes, fast: ctx.changedPaths !== null, nested: plan.nested.map((n) => n.warm), skipped: plan.commit.meta.skipped }); // 5
    copy = null;
    maybeConsolidatePacks(repo);
    return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: plan.warnings, head: plan.head };
  } finally {
    if (copy) await copy.dispose();
  }
}

/** Everything before the first write of an incremental capture. */
interface Plan {
  commit: FastImportCommit & { meta: CommitMeta };
  head: string | null;
  nested: NestedPart[];
  warnings: string[];
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
  const sinceWarmP = prevP.then((p) => diffPreviousToWarm(repo, p, warm.tree));
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
  return { commit, nested, warnings, head: scan.head ?? null };
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
  const sub: Ctx = { ...ctx, changedPaths: null, isTop: false, depth: ctx.depth + 1 };
  const capture = (await captureIncremental(n.repo, await readWarm(n.repo), target, sub)) ?? (await captureFull(n.repo, n.rel.raw, await target, ctx.depth + 1, ctx.maxUntrackedBytes));
  // A nested repository without a commit is left out of the outer tree (as `add -A` would fail on it).
  const gitlink: TreeChange = capture.head ? { kind: 'gitlink', raw: n.rel.raw, sha: capture.head } : { kind: 'delete', raw: n.rel.raw };
  return { rel: n.rel.raw, capture, reused: null, gitlink, warm: { rel: n.rel, commit: capture.commit, repo: n.repo } };
}
