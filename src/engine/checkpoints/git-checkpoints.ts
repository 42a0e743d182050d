/**
 * GitPlumbingCheckpointStore (SPEC §4.2): checkpoints in the user's own object store under hidden
 * refs, at a cost proportional to what changed, without ever touching HEAD, branches, the real
 * index, the stash or (on capture) the working tree, and without losing a byte on restore.
 *
 *   capture   the capture pipeline (`capture/pipeline.ts`): target → find what changed → write
 *             objects → trees and commit → move the ref → journal, incremental from the
 *             repository's warm state when there is one (status or the reported paths,
 *             fast-import, a journal), else the full snapshot (temp copy of the real index, one
 *             walk, `add -A`, `write-tree`, `commit-tree`, create-only `update-ref
 *             refs/vox/checkpoints/<encoded thread>/<ordinal>`), which leaves the warm state
 *             behind. Nested repositories are checkpointed inside themselves under the same ref
 *             name and listed with their commit ids in the outer metadata. The last checkpoint of
 *             each thread is remembered, so a capture needs no ref listing (a stale memory is
 *             caught by git and retried).
 *   restore   restore point first (`refs/vox/restore-points/<stamp>`, captured like a checkpoint,
 *             from the warm state), then the raw blobs of what differs written in place, all or
 *             nothing (`restore.ts`); `undoRestore` restores a restore point the same way
 *             (leaving a new restore point). A restore journals its intent before its first
             write; one a killed process left half-done is finished forward (restored again,
             the half-written tree saved first) by the next operation on the tree or
             `finishInterrupted` (`restore-journal.ts`).
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
import { emptyTree, resolveCommit, resolveRepo, run, type RepoInfo } from './repo';
import { checkpointRef, parseCheckpointRef, parseCommitMessage, restorePointRef, threadRefPrefix, validateOrdinal, validateThreadId, type CommitMeta } from './refs';
import { disposeSnapshot, snapshotRepo } from './capture/snapshot';
import { captureRestorePoint, captureWorktree, prepareWarmState } from './capture/pipeline';
import { LastCheckpoints } from './capture/target';
import { restoreWorktree } from './restore';
import { journalMayExist, readRestoreJournal, recoveryMessage, writeRestoreJournal } from './restore-journal';
import { checkpointSide, readFileAt, workingSide } from './compare';
import { diffSides } from './diff';
import { pruneCheckpoints } from './prune';
import {
  CHECKPOINT_REF_PREFIX,
  CheckpointError,
  DEFAULT_CAPTURE_BUDGET_MS,
  DEFAULT_MAX_UNTRACKED_FILE_BYTES,
  RESTORE_POINT_REF_PREFIX,
  toCheckpointError,
  type CaptureOptions,
  type CheckpointInfo,
  type CheckpointReceipt,
  type FileDiffStat,
  type PruneOptions,
  type PruneResult,
  type RestoreOptions,
  type RestorePointInfo,
  type RestoreResult,
} from './types';

export * from './types';
export { checkpointRef, encodeThreadIdForRef, decodeThreadRefComponent } from './refs';
export { GITLINK_MODE, MAX_NESTED_DEPTH } from './nested-repos';
export { WARM_MAX_FAST_CAPTURES, WARM_MAX_PENDING } from './warm-state';
export { PACK_CONSOLIDATE_THRESHOLD, packMaintenanceIdle, packMaintenanceStats } from './packs';

/** What finishing a restore a killed process left half-done did (or why it could not), for the user. */
export interface RecoveryNotice {
  level: 'warning' | 'error';
  message: string;
}

/** Most resolved repositories remembered by one store. */
const REPO_CACHE_MAX = 256;
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

export class GitPlumbingCheckpointStore {
  private readonly leases: WorkspaceLeaseMap;
  private readonly maxUntrackedBytes: number;
  private readonly budgetMs: number;
  private readonly now: () => number;
  private restoreSeq = 0;
  /**
   * The last checkpoint this store made per worktree and thread, so the next capture needs no ref
   * listing (`capture/target.ts`; a stale one is caught by git and retried, `capture/move-ref.ts`).
   * Pruning forgets the worktree's entries.
   */
  private readonly lastCheckpoints = new LastCheckpoints();
  /** Resolved repositories by the path callers pass (checked to still exist before each use). */
  private readonly repos = new Map<string, RepoInfo>();
  private readonly recoveryListeners = new Set<(n: RecoveryNotice) => void>();
  /** Git dirs whose interrupted restore could not be finished: reported once, tried again at the next start. */
  private readonly unfinished = new Set<string>();

  constructor(opts: CheckpointStoreOptions = {}) {
    this.leases = opts.leases ?? workspaceLeases;
    this.maxUntrackedBytes = opts.maxUntrackedFileBytes ?? DEFAULT_MAX_UNTRACKED_FILE_BYTES;
    this.budgetMs = opts.captureBudgetMs ?? DEFAULT_CAPTURE_BUDGET_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Tells `l` whenever an interrupted restore was finished (or could not be). */
  onRecovered(l: (n: RecoveryNotice) => void): () => void {
    this.recoveryListeners.add(l);
    return () => void this.recoveryListeners.delete(l);
  }

  /**
   * Finishes the restore a killed process left half-done in `worktree`'s repository, if any
   * (`restore-journal.ts`), under the workspace lease; the listeners are told. Outside a
   * repository, or without a journal (looked for without git), there is nothing to do.
   */
  async finishInterrupted(worktree: string): Promise<void> {
    if (!journalMayExist(worktree)) return;
    const repo = await this.repoOf(worktree).catch(() => null);
    if (repo) await this.leases.withWorkspaceLease(repo.root, () => this.finishHere(repo));
  }

  /**
   * Under the lease, before any work on the tree: finishes an interrupted restore first, by
   * restoring its target commit again (the half-written tree becomes a restore point of its own,
   * and a new journal covers this restore). Never throws: the listeners hear what happened.
   */
  private async finishHere(repo: RepoInfo): Promise<void> {
    if (this.unfinished.has(repo.gitDir)) return;
    let notice: RecoveryNotice | null = null;
    try {
      const journal = await readRestoreJournal(repo);
      if (journal === 'unreadable') notice = { level: 'warning', message: recoveryMessage(repo, journal, { error: '' }) };
      else if (journal) {
        const timeMs = this.now();
        const asFound = restorePointRef(timeMs, this.restoreSeq++, randomBytes(RESTORE_POINT_RANDOM_BYTES).toString('hex'));
        // The ref, while it still names the commit (the restore point's label says which checkpoint).
        const target = (await resolveCommit(repo, journal.target).catch(() => null)) === journal.targetCommit ? journal.target : journal.targetCommit;
        try {
          const r = await restoreWorktree(repo, { target, rpRef: asFound, timeMs, maxUntrackedBytes: this.maxUntrackedBytes });
          notice = { level: 'warning', message: recoveryMessage(repo, journal, { files: r.changed.length, asFound }) };
        } catch (err) {
          // The tree is as found again (or as far as the rollback got): the next start tries again.
          this.unfinished.add(repo.gitDir);
          writeRestoreJournal(repo, journal);
          notice = { level: 'error', message: recoveryMessage(repo, journal, { error: toCheckpointError(err, `restoring ${target}`).message }) };
        }
      }
    } catch (err) {
      this.unfinished.add(repo.gitDir);
      notice = { level: 'error', message: `An interrupted restore in ${repo.root} could not be checked: ${(err as Error).message}` };
    }
    if (notice) for (const l of [...this.recoveryListeners]) l(notice);
  }

  /** Captures the worktree (and its nested repositories) as checkpoint `<threadId>/<ordinal>`. */
  async captureCheckpoint(opts: CaptureOptions): Promise<CheckpointReceipt> {
    validateThreadId(opts.threadId);
    if (opts.ordinal !== undefined) validateOrdinal(opts.ordinal);
    if (!opts.trigger || !['tool', 'turnEnd', 'manual'].includes(opts.trigger.kind)) throw new CheckpointError('badArgument', 'trigger.kind must be tool, turnEnd or manual');
    const repo = await this.repoOf(opts.worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      await this.finishHere(repo);
      const started = performance.now();
      const timeMs = this.now();
      const request = { threadId: opts.threadId, ordinal: opts.ordinal, trigger: opts.trigger, changedPaths: opts.changedPaths, timeMs, maxUntrackedBytes: this.maxUntrackedBytes };
      const { target, capture, incremental, fast } = await captureWorktree(repo, request, this.lastCheckpoints);
      const tookMs = Math.round(performance.now() - started);
      return {
        ref: target.header.ref,
        commit: capture.commit,
        tree: capture.tree,
        threadId: opts.threadId,
        ordinal: target.header.ordinal,
        parent: target.prevCommit,
        trigger: opts.trigger,
        timeMs,
        tookMs,
        changedCount: capture.meta.changedCount,
        changed: capture.meta.changed,
        skipped: capture.meta.skipped,
        nested: capture.meta.nested,
        fast,
        incremental,
        warnings: capture.warnings,
        ...(tookMs > this.budgetMs ? { overBudget: { budgetMs: this.budgetMs, tookMs } } : {}),
      };
    });
  }

  /**
   * Builds the warm state (a full snapshot of the worktree and its nested repositories, kept as
   * their warm indexes; no checkpoint is made) when there is none, so the next capture is
   * incremental. Returns false when there already was one.
   */
  async prepareWarm(worktree: string): Promise<boolean> {
    const repo = await this.repoOf(worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      await this.finishHere(repo);
      try {
        return await prepareWarmState(repo, this.maxUntrackedBytes);
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
    await this.finishHere(repo);
    const started = performance.now();
    const timeMs = this.now();
    // Unique by time stamp, per-process sequence and random suffix; the ref is created only if absent.
    const rpRef = restorePointRef(timeMs, this.restoreSeq++, randomBytes(RESTORE_POINT_RANDOM_BYTES).toString('hex'));
    try {
      const r = await restoreWorktree(repo, { target: ref, rpRef, timeMs, maxUntrackedBytes: this.maxUntrackedBytes });
      return { restorePoint: rpRef, target: ref, changed: r.changed, preserved: r.preserved, nested: r.nested, tookMs: Math.round(performance.now() - started) };
    } catch (err) {
      const e = toCheckpointError(err, `restoring ${ref} in ${repo.root}`);
      // Once the restore point exists, say where the pre-restore state is (undoRestore takes it).
      const saved = await resolveCommit(repo, rpRef).catch(() => null);
      throw saved ? new CheckpointError(e.code, `${e.message} (the state before this restore is saved in ${rpRef})`, e.cause ?? err) : e;
    }
  }

  /**
   * Saves the current state as a new restore point (labelled `label`, kept as its `target`) and
   * then runs `change` under the same workspace lease, so no capture or restore comes between:
   * whatever `change` writes is undone exactly by `undoRestore(restorePoint)`. Used for the
   * review's per-file and per-hunk undo (../review/service.ts).
   */
  async withRestorePoint<T>(worktree: string, label: string, change: (repoRoot: string) => Promise<T>): Promise<{ restorePoint: string; value: T }> {
    const repo = await this.repoOf(worktree);
    return this.leases.withWorkspaceLease(repo.root, async () => {
      await this.finishHere(repo);
      const timeMs = this.now();
      const rpRef = restorePointRef(timeMs, this.restoreSeq++, randomBytes(RESTORE_POINT_RANDOM_BYTES).toString('hex'));
      await captureRestorePoint(repo, { ref: rpRef, target: label, timeMs, maxUntrackedBytes: this.maxUntrackedBytes });
      return { restorePoint: rpRef, value: await change(repo.root) };
    });
  }

  /** The top level of the repository `worktree` is in (paths the store reports are relative to it). */
  async repoRoot(worktree: string): Promise<string> {
    return (await this.repoOf(worktree)).root;
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

  /** Every thread that has checkpoint refs in this repository, with how many (e.g. to find a deleted thread's). */
  async listCheckpointThreads(worktree: string): Promise<Array<{ threadId: string; refs: number }>> {
    const repo = await this.repoOf(worktree);
    const counts = new Map<string, number>();
    for (const e of await this.refsWithMeta(repo, CHECKPOINT_REF_PREFIX)) {
      if (e.meta?.kind !== 'checkpoint' || !e.meta.threadId || !parseCheckpointRef(e.ref)) continue;
      counts.set(e.meta.threadId, (counts.get(e.meta.threadId) ?? 0) + 1);
    }
    return [...counts].map(([threadId, refs]) => ({ threadId, refs })).sort((a, b) => (a.threadId < b.threadId ? -1 : 1));
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
        await this.finishHere(repo);
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
      this.lastCheckpoints.forget(repo.root);
      try {
        return await pruneCheckpoints(repo, opts, this.now(), (prefix) => this.refsWithMeta(repo, prefix));
      } catch (err) {
        throw toCheckpointError(err, `pruning checkpoints in ${repo.root}`);
      }
    });
  }
}
