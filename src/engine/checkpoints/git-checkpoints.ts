/**
 * GitPlumbingCheckpointStore (SPEC §4.2): checkpoints in the user's own object store under hidden
 * refs, at a cost proportional to what changed, without ever touching HEAD, branches, the real
 * index, the stash or (on capture) the working tree, and without losing a byte on restore.
 *
 *   capture   incremental from the repository's warm state when there is one
 *             (`capture/delta.ts`: status or the reported paths, fast-import, a journal),
 *             else the full snapshot (`capture/snapshot.ts`: temp copy of the real index,
 *             `add -A` minus over-cap untracked files and commit-less nested repositories,
 *             `write-tree`; then `commit-tree` with the thread's previous checkpoint as parent and
 *             a create-only `update-ref refs/vox/checkpoints/<encoded thread>/<ordinal>`,
 *             `capture/commit.ts`), which leaves the warm state behind. Nested repositories are
 *             checkpointed inside themselves under the same ref name and listed with their commit
 *             ids in the outer metadata. The last checkpoint of each thread is remembered, so a
 *             capture needs no ref listing (a stale memory is caught by git and retried).
 *   restore   restore point first (`refs/vox/restore-points/<stamp>`), then git's two-tree switch
 *             on a temporary index (`restore.ts`); `undoRestore` restores a restore
 *             point the same way (leaving a new restore point).
 *   compare   `diffCheckpoints`, `readFileAtCheckpoint` (`diff.ts`).
 *   list      `listCheckpoints`, `listRestorePoints` — from commit metadata, no database.
 *   prune     `pruneCheckpoints` (`prune.ts`): deletes refs, reports reclaimable bytes,
 *             runs `git gc --auto` at most.
 * Capture, restore, undo and prune run under the workspace lease of the worktree's top level.
 */
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as nodePath from 'node:path';
import { performance } from 'node:perf_hooks';
import { canonicalPath, workspaceLeases, type WorkspaceLeaseMap } from '../platform/workspace-lease';
import { emptyTree, headCommit, listRefs, resolveCommit, resolveRepo, run, type RepoInfo } from './repo';
import { checkpointRef, parseCheckpointRef, parseCommitMessage, restorePointRef, threadRefPrefix, validateOrdinal, validateThreadId, type CommitMeta } from './refs';
import { disposeSnapshot, joinRel, snapshotRepo, type SnapshotNode } from './capture/snapshot';
import { commitCheckpoint, commitRestorePoint, type CheckpointHeader } from './capture/commit';
import { applyRestore, planRestore, preserveObstacles } from './restore';
import { dropWarmIndex, keepWarmSnapshot, readWarm } from './capture/warm';
import { captureDelta, normalizeReported, type RepoCapture } from './capture/delta';
import { checkpointSide, readFileAt, workingSide } from './compare';
import { diffSides } from './diff';
import { pruneCheckpoints } from './prune';
import {
  CheckpointError,
  DEFAULT_CAPTURE_BUDGET_MS,
  DEFAULT_MAX_UNTRACKED_FILE_BYTES,
  RESTORE_POINT_REF_PREFIX,
  toCheckpointError,
  type CaptureOptions,
  type CheckpointInfo,
  type CheckpointReceipt,
  type FileDiffStat,
  type NestedRestoreOutcome,
  type PruneOptions,
  type PruneResult,
  type RestoreOptions,
  type RestorePointInfo,
  type RestoreResult,
  type SkippedFile,
} from './types';

export * from './types';
export { checkpointRef, encodeThreadIdForRef, decodeThreadRefComponent } from './refs';
export { GITLINK_MODE, MAX_NESTED_DEPTH } from './nested-repos';
export { WARM_MAX_FAST_CAPTURES, WARM_MAX_PENDING } from './capture/warm';
export { PACK_CONSOLIDATE_THRESHOLD, packMaintenanceIdle, packMaintenanceStats } from './packs';

/** Most resolved repositories remembered by one store. */
const REPO_CACHE_MAX = 256;
/** Most (worktree, thread) pairs whose last checkpoint a store remembers. */
const LAST_CHECKPOINT_CACHE_MAX = 1024;
/** Random bytes in a restore point name (on top of the time stamp and sequence number). */
const RESTORE_POINT_RANDOM_BYTES = 3;

export interface CheckpointStoreOptions {
  /** Lease map shared with worktrees and variants (default: the process-wide one). */
  leases?: WorkspaceLeaseMap;
  /** Untracked files bigger than this are skipped (default DEFAULT_MAX_UNTRACKED_FILE_BYTES). */
  maxUntrackedFileBytes?: number;
  /** Captures slower than this are reported `overBudget` (default DEFAULT_CAPTURE_BUDGET_MS). */
  captureBudgetMs?: number;
  /** Wall clock for metadata and restore point names (tests pass a manual clock). */
  now?: () => number;
}

/** Over-cap files a snapshot left out, nested ones with their path from the top. */
function skippedOf(node: SnapshotNode): SkippedFile[] {
  return [...node.skipped, ...node.children.flatMap((c) => skippedOf(c).map((s) => ({ ...joinRel(c.rel, s), bytes: s.bytes })))];
}

function collectWarnings(node: SnapshotNode, out: string[] = []): string[] {
  out.push(...node.warnings);
  for (const c of node.children) collectWarnings(c, out);
  return out;
}

export class GitPlumbingCheckpointStore {
  private readonly leases: WorkspaceLeaseMap;
  private readonly maxUntrackedBytes: number;
  private readonly budgetMs: number;
  private readonly now: () => number;
  private restoreSeq = 0;
  /**
   * The last checkpoint this store made per worktree and thread (`root\0threadId`), so the next
   * capture needs no ref listing. If another process captured the thread since, the new ref
   * exists and is not a descendant: git refuses to move it, and the capture runs again from the
   * refs. Pruning forgets the worktree's entries.
   */
  private readonly lastCheckpoint = new Map<string, { ordinal: number; commit: string }>();
  /** Resolved repositories by the path callers pass (checked to still exist before each use). */
  private readonly repos = new Map<string, RepoInfo>();

  constructor(opts: CheckpointStoreOptions = {}) {
    this.leases = opts.leases ?? workspaceLeases;
    this.maxUntrackedBytes = opts.maxUntrackedFileBytes ?? DEFAULT_MAX_UNTRACKED_FILE_BYTES;
    this.budgetMs = opts.captureBudgetMs ?? DEFAULT_CAPTURE_BUDGET_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Captures the worktree (and its nested repositories) as checkpoint `<threadId>/<ordinal>`. */
  async captureCheckpoint(opts: CaptureOptions): Promise<CheckpointReceipt> {
    validateThreadId(opts.threadId);
    if (opts.ordinal !== undefined) validateOrdinal(opts.ordinal);
    if (!opts.trigger || !['tool', 'turnEnd', 'manual'].includes(opts.trigger.kind)) throw new CheckpointError('badArgument', 'trigger.kind must be tool, turnEnd or manual');
    const repo = await this.repoOf(opts.worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      const started = performance.now();
      const timeMs = this.now();
      const cacheKey = `${repo.root}\0${opts.threadId}`;
      const cached = opts.ordinal === undefined ? this.lastCheckpoint.get(cacheKey) : undefined;
      this.lastCheckpoint.delete(cacheKey);
      try {
        return await this.capture(repo, opts, started, timeMs, cached);
      } catch (err) {
        // The remembered last checkpoint may be stale (another process captured this thread):
        // once more from the refs.
        if (!cached) throw err;
        return await this.capture(repo, opts, started, timeMs, undefined);
      }
    });
  }

  /** The new checkpoint's header and the thread's previous checkpoint (from memory or the refs). */
  private async headFor(repo: RepoInfo, opts: CaptureOptions, timeMs: number, cached: { ordinal: number; commit: string } | undefined): Promise<{ header: CheckpointHeader; prevCommit: string | null }> {
    const header = (ordinal: number): CheckpointHeader => ({ ref: checkpointRef(opts.threadId, ordinal), threadId: opts.threadId, ordinal, trigger: opts.trigger, timeMs });
    if (cached) return { header: header(cached.ordinal + 1), prevCommit: cached.commit };
    const refs = await listRefs(repo, threadRefPrefix(opts.threadId));
    const existing = refs.map((r) => ({ ...r, parsed: parseCheckpointRef(r.ref) })).filter((r) => r.parsed);
    const ordinal = opts.ordinal ?? existing.reduce((m, r) => Math.max(m, r.parsed!.ordinal), 0) + 1;
    if (existing.some((r) => r.parsed!.ordinal === ordinal)) throw new CheckpointError('checkpointExists', `${checkpointRef(opts.threadId, ordinal)} already exists`);
    const prev = existing.filter((r) => r.parsed!.ordinal < ordinal).sort((a, b) => b.parsed!.ordinal - a.parsed!.ordinal)[0] ?? null;
    return { header: header(ordinal), prevCommit: prev?.commit ?? null };
  }

  private async capture(repo: RepoInfo, opts: CaptureOptions, started: number, timeMs: number, cached: { ordinal: number; commit: string } | undefined): Promise<CheckpointReceipt> {
    try {
      const head = this.headFor(repo, opts, timeMs, cached);
      head.catch(() => undefined);
      const warm = await readWarm(repo);
      const reported = opts.changedPaths && warm ? await normalizeReported(repo.root, opts.changedPaths, warm.nested.map((n) => n.rel.raw)) : null;
      // Incremental first (status mode, or reported mode when the paths can be trusted).
      const delta = opts.changedPaths && !reported ? null : await captureDelta(repo, { head, maxUntrackedBytes: this.maxUntrackedBytes, changedPaths: reported, isTop: true, depth: 0, fullNested: (r, rel, prev, depth) => this.captureFull(r, rel, head, prev, depth) });
      const { header, prevCommit } = await head;
      const result = delta ?? (await this.captureFull(repo, null, head, prevCommit, 0));
      // An explicitly chosen ordinal need not be the thread's last: only automatic ones are remembered.
      if (opts.ordinal === undefined) this.rememberLast(`${repo.root}\0${opts.threadId}`, { ordinal: header.ordinal, commit: result.commit });
      const tookMs = Math.round(performance.now() - started);
      return {
        ref: header.ref,
        commit: result.commit,
        tree: result.tree,
        threadId: opts.threadId,
        ordinal: header.ordinal,
        parent: prevCommit,
        trigger: opts.trigger,
        timeMs,
        tookMs,
        changedCount: result.meta.changedCount,
        changed: result.meta.changed,
        skipped: result.meta.skipped,
        nested: result.meta.nested,
        fast: delta !== null && reported !== null,
        incremental: delta !== null,
        warnings: result.warnings,
        ...(tookMs > this.budgetMs ? { overBudget: { budgetMs: this.budgetMs, tookMs } } : {}),
      };
    } catch (err) {
      throw toCheckpointError(err, `capturing checkpoint in ${repo.root}`);
    }
  }

  private rememberLast(key: string, last: { ordinal: number; commit: string }): void {
    if (this.lastCheckpoint.size >= LAST_CHECKPOINT_CACHE_MAX) this.lastCheckpoint.clear();
    this.lastCheckpoint.set(key, last);
  }

  /**
   * The full snapshot of `repo` (top level when `rel` is null, else one nested repository):
   * temporary index copied from the real one, one walk, targeted `add`, `write-tree`, commits for
   * it and its nested repositories; its indexes become the warm ones.
   */
  private async captureFull(repo: RepoInfo, rel: Buffer | null, head: Promise<{ header: CheckpointHeader; prevCommit: string | null }>, prevCommit: string | null, depth: number): Promise<RepoCapture> {
    const { header } = await head;
    const node = await snapshotRepo(repo, { maxUntrackedBytes: this.maxUntrackedBytes, depth });
    try {
      const { commit, meta } = await commitCheckpoint(node, header, prevCommit, [], rel === null);
      const nestedCommits = new Map(meta.nested.map((n) => [n.raw.toString('hex'), n.commit]));
      await keepWarmSnapshot(node, commit, nestedCommits, meta.skipped, 0);
      // A nested repository's HEAD becomes its gitlink in the outer tree.
      return { commit, tree: node.tree, meta, warnings: collectWarnings(node), head: rel === null ? null : await headCommit(repo) };
    } finally {
      await disposeSnapshot(node);
    }
  }

  /**
   * Builds the warm state (a full snapshot of the worktree and its nested repositories, kept as
   * their warm indexes; no checkpoint is made) when there is none, so the next capture is
   * incremental. Returns false when there already was one.
   */
  async prepareWarm(worktree: string): Promise<boolean> {
    const repo = await this.repoOf(worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      if (await readWarm(repo)) return false;
      try {
        const node = await snapshotRepo(repo, { maxUntrackedBytes: this.maxUntrackedBytes });
        try {
          await keepWarmSnapshot(node, null, new Map(), skippedOf(node), 0);
        } finally {
          await disposeSnapshot(node);
        }
        return true;
      } catch (err) {
        throw toCheckpointError(err, `preparing checkpoints in ${repo.root}`);
      }
    });
  }

  private async repoOf(worktree: string): Promise<RepoInfo> {
    const key = nodePath.resolve(worktree);
    const cached = this.repos.get(key);
    if (cached && (await fsp.stat(cached.gitDir).catch(() => null))?.isDirectory() && (await fsp.stat(key).catch(() => null))?.isDirectory()) return cached;
    const repo = await resolveRepo(worktree);
    if (this.repos.size >= REPO_CACHE_MAX) this.repos.clear();
    this.repos.set(key, repo);
    return repo;
  }

  /** Makes the working tree equal checkpoint `<threadId>/<ordinal>` (restore point first). */
  async restoreCheckpoint(opts: RestoreOptions): Promise<RestoreResult> {
    validateThreadId(opts.threadId);
    validateOrdinal(opts.ordinal);
    if (opts.mode !== 'files') throw new CheckpointError('badArgument', `restore mode ${String(opts.mode)} is not handled by the checkpoint store (files only)`);
    const ref = checkpointRef(opts.threadId, opts.ordinal);
    const repo = await this.repoOf(opts.worktree);
    return this.leases.withWorkspaceLease(repo.root, () => this.restoreTo(repo, ref));
  }

  /** Restores the state saved in a restore point (leaving a new restore point). */
  async undoRestore(opts: { worktree: string; restorePoint: string }): Promise<RestoreResult> {
    if (!opts.restorePoint.startsWith(RESTORE_POINT_REF_PREFIX)) throw new CheckpointError('badArgument', `${opts.restorePoint} is not a restore point ref`);
    const repo = await this.repoOf(opts.worktree);
    return this.leases.withWorkspaceLease(repo.root, () => this.restoreTo(repo, opts.restorePoint));
  }

  private async restoreTo(repo: RepoInfo, ref: string): Promise<RestoreResult> {
    const started = performance.now();
    const target = await resolveCommit(repo, ref);
    if (!target) throw new CheckpointError('unknownCheckpoint', `${ref} does not exist in ${repo.root}`);
    let node: SnapshotNode | null = null;
    let saved: string | null = null;
    try {
      node = await snapshotRepo(repo, { maxUntrackedBytes: this.maxUntrackedBytes, freshIndex: true });
      const outcomes: NestedRestoreOutcome[] = [];
      const plan = await planRestore(node, target, null, outcomes);
      const preserved = await preserveObstacles(plan);
      const timeMs = this.now();
      // Unique by time stamp, per-process sequence and random suffix; the ref is created only if absent.
      const rpRef = restorePointRef(timeMs, this.restoreSeq++, randomBytes(RESTORE_POINT_RANDOM_BYTES).toString('hex'));
      const rp = await commitRestorePoint(node, rpRef, ref, timeMs, preserved);
      saved = rpRef;
      const changed = await applyRestore(plan, outcomes);
      await this.dropWarm(node);
      return { restorePoint: rpRef, target: ref, changed, preserved: rp.meta.preserved, nested: outcomes, tookMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (node) await this.dropWarm(node).catch(() => undefined);
      const e = toCheckpointError(err, `restoring ${ref} in ${repo.root}`);
      // Once the restore point exists, say where the pre-restore state is (undoRestore takes it).
      throw saved ? new CheckpointError(e.code, `${e.message} (the state before this restore is saved in ${saved})`, e.cause ?? err) : e;
    } finally {
      if (node) await disposeSnapshot(node);
    }
  }

  private async dropWarm(node: SnapshotNode): Promise<void> {
    await dropWarmIndex(node.repo);
    for (const c of node.children) await this.dropWarm(c);
  }

  /** Checkpoints of a thread, oldest first, from commit metadata. */
  async listCheckpoints(worktree: string, threadId: string): Promise<CheckpointInfo[]> {
    validateThreadId(threadId);
    const repo = await this.repoOf(worktree);
    const out: CheckpointInfo[] = [];
    for (const e of await this.refsWithMeta(repo, threadRefPrefix(threadId))) {
      const parsed = parseCheckpointRef(e.ref);
      if (!parsed || e.meta?.kind !== 'checkpoint') continue;
      const m = e.meta;
      out.push({ ref: e.ref, commit: e.commit, threadId: m.threadId ?? threadId, ordinal: parsed.ordinal, trigger: m.trigger ?? { kind: 'manual' }, timeMs: m.timeMs, changedCount: m.changedCount, changed: m.changed, skipped: m.skipped, nested: m.nested });
    }
    return out.sort((a, b) => a.ordinal - b.ordinal);
  }

  /** Restore points, oldest first. */
  async listRestorePoints(worktree: string): Promise<RestorePointInfo[]> {
    const repo = await this.repoOf(worktree);
    return (await this.refsWithMeta(repo, RESTORE_POINT_REF_PREFIX))
      .filter((e) => e.meta?.kind === 'restorePoint')
      .map((e) => ({ ref: e.ref, commit: e.commit, target: e.meta!.target ?? '', timeMs: e.meta!.timeMs }))
      .sort((a, b) => a.timeMs - b.timeMs || (a.ref < b.ref ? -1 : 1));
  }

  private async refsWithMeta(repo: RepoInfo, prefix: string): Promise<Array<{ ref: string; commit: string; meta: CommitMeta | null }>> {
    try {
      const out = (await run(repo, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(contents)%00', prefix])).stdout.toString('utf8');
      const tokens = out.split('\0');
      const result: Array<{ ref: string; commit: string; meta: CommitMeta | null }> = [];
      for (let i = 0; i + 2 < tokens.length; i += 3) result.push({ ref: tokens[i]!.replace(/^\n/, ''), commit: tokens[i + 1]!, meta: parseCommitMessage(tokens[i + 2]!) });
      return result;
    } catch (err) {
      throw toCheckpointError(err, `listing ${prefix}`);
    }
  }

  /** Per-file numstat between two checkpoints (refs or commit ids), or a checkpoint and the working tree. */
  async diffCheckpoints(worktree: string, fromRef: string, toRef: string | 'working'): Promise<FileDiffStat[]> {
    const repo = await this.repoOf(worktree);
    const emptyTrees = new Map<string, Promise<string>>();
    const emptyOf = (r: RepoInfo): Promise<string> => {
      if (!emptyTrees.has(r.root)) emptyTrees.set(r.root, emptyTree(r));
      return emptyTrees.get(r.root)!;
    };
    try {
      const from = await checkpointSide(repo, fromRef);
      if (toRef !== 'working') return await diffSides(from, await checkpointSide(repo, toRef), emptyOf);
      return await this.leases.withWorkspaceLease(repo.root, async () => {
        const node = await snapshotRepo(repo, { maxUntrackedBytes: this.maxUntrackedBytes });
        try {
          return await diffSides(from, workingSide(node), emptyOf);
        } finally {
          await disposeSnapshot(node);
        }
      });
    } catch (err) {
      throw toCheckpointError(err, `comparing ${fromRef} with ${toRef}`);
    }
  }

  /**
   * Bytes of `path` at a checkpoint or restore point (a ref or commit id). `path` is relative to
   * the repository's top level, like every path the store reports, or absolute inside it; a
   * Buffer is taken as exact repository-relative bytes. Follows nested repositories.
   */
  async readFileAtCheckpoint(worktree: string, ref: string, path: string | Buffer): Promise<Buffer> {
    const repo = await this.repoOf(worktree);
    let rel: Buffer;
    if (typeof path === 'string') {
      // Relative to the repository's top level like every path the store reports (or absolute
      // inside it); always `/`-separated inside git.
      const r = nodePath.relative(repo.root, nodePath.isAbsolute(path) ? nodePath.join(canonicalPath(nodePath.dirname(path)), nodePath.basename(path)) : nodePath.resolve(repo.root, path));
      if (!r || r === '..' || r.startsWith(`..${nodePath.sep}`) || nodePath.isAbsolute(r)) throw new CheckpointError('badArgument', `${path} is not inside ${repo.root}`);
      rel = Buffer.from(r.split(nodePath.sep).join('/'), 'utf8');
    } else {
      rel = path;
    }
    try {
      return await readFileAt(repo, ref, rel);
    } catch (err) {
      throw toCheckpointError(err, `reading ${String(path)} at ${ref}`);
    }
  }

  /** Deletes old checkpoints' refs (and their nested refs); see `prune.ts`. */
  async pruneCheckpoints(worktree: string, opts: PruneOptions): Promise<PruneResult> {
    if (opts.threadId !== undefined) validateThreadId(opts.threadId);
    const repo = await this.repoOf(worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      for (const k of [...this.lastCheckpoint.keys()]) if (k.startsWith(`${repo.root}\0`)) this.lastCheckpoint.delete(k);
      try {
        return await pruneCheckpoints(repo, opts, this.now(), (prefix) => this.refsWithMeta(repo, prefix));
      } catch (err) {
        throw toCheckpointError(err, `pruning checkpoints in ${repo.root}`);
      }
    });
  }
}
