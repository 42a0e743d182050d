/**
 * CheckpointService: connects the agent loop (through the hook stages installed by ./hooks.ts)
 * to the git checkpoint store. Before every mutating tool call and at every turn end it captures
 * the workspace (when it is a git repository), records a `checkpoint.captured` event (so views list checkpoints with their trigger and what
 * changed), and reports — never silently disables — captures that fail or exceed their budget.
 * Restores support three modes: files, thread (rewind the conversation; runs and their cost
 * stay recorded), or both.
 *
 * Between two captures, the paths the agent's own edit tools report are collected; a capture
 * before the next tool passes them as `changedPaths` (the store then looks at nothing else, at a
 * cost independent of the repository's size) only while that list is complete: any tool that
 * does not report its paths (a shell command), a failed tool, a restore, an external change the
 * host reports (`noteExternalChange`: the user saved a file) or REPORTED_PATHS_MAX_AGE_MS since
 * the last capture makes the next capture look at the whole tree. Turn-end captures always do.
 * When a turn starts, the warm state is prepared in the background if there is none (`prepare`),
 * so the first checkpoint of a turn does not pay for a full snapshot. At the engine's start, a
 * restore a killed process left half-done is finished (`finishInterrupted`) and the user told.
 */
import type { VoxStore } from '../store/store';
import type { ToolCall } from '../providers/types';
import { diskFullOf } from '../platform/disk-full';
import {
  GitPlumbingCheckpointStore,
  CheckpointError,
  type CheckpointReceipt,
  type FileDiffStat,
  type PruneOptions,
  type PruneResult,
  type RestoreResult,
  type RestorePointInfo,
} from './git-checkpoints';

export type RestoreMode = 'files' | 'thread' | 'both';

export interface CheckpointNotice {
  level: 'info' | 'warning' | 'error';
  message: string;
}

export interface RestoreOutcome {
  mode: RestoreMode;
  files: RestoreResult | null;
  rewoundTo: string | null | undefined;
}

/** Longest time since the last capture for which reported paths alone are trusted (ms). */
export const REPORTED_PATHS_MAX_AGE_MS = 60_000;

export class CheckpointService {
  private readonly listeners = new Set<(n: CheckpointNotice) => void>();
  /** The "is this a git repository" probe in flight. */
  private probing: Promise<void> | null = null;
  /** Background preparations in flight. */
  private readonly background = new Set<Promise<void>>();
  /** Paths the agent's tools changed since the last capture, or null when not known completely. */
  private reported: { paths: Set<string>; sinceMs: number } | null = null;
  /** Memo of the "is this a git repository" probe (null until probed). */
  private repoState: 'repo' | 'notRepo' | null = null;

  constructor(
    private readonly store: VoxStore,
    readonly workspaceRoot: string,
    readonly git: GitPlumbingCheckpointStore = new GitPlumbingCheckpointStore(),
  ) {
    // A restore a killed process left half-done, finished by this process: the user is told.
    git.onRecovered((n) => this.notify(n));
  }

  /**
   * At the engine's start: finishes a restore a killed process left half-done in the workspace
   * (checkpoints/restore-journal.ts), in the background (`settle` waits for it); the notice says
   * what was done. Nothing happens outside a repository or without a journal.
   */
  finishInterrupted(): Promise<void> {
    const job = this.git.finishInterrupted(this.workspaceRoot).catch((e: unknown) => this.notify({ level: 'error', message: `Checking for an interrupted restore failed: ${(e as Error).message}` }));
    this.background.add(job);
    void job.finally(() => this.background.delete(job));
    return job;
  }

  /** Notices for the UI/log: over-budget captures, failures, a workspace that is not a repository. */
  onNotice(l: (n: CheckpointNotice) => void): () => void {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }

  private notify(n: CheckpointNotice): void {
    for (const l of [...this.listeners]) {
      try {
        l(n);
      } catch {
        this.listeners.delete(l);
      }
    }
  }

  /**
   * The `beforeTool` stage for file-changing tools (./hooks.ts). Never throws: a failed capture is
   * reported and returned (the hook then asks the user whether the tool may run without it); null
   * when the checkpoint was taken or the workspace is not a repository.
   */
  async beforeMutatingTool(info: { threadId: string; runId: string; call: ToolCall }): Promise<Error | null> {
    const r = this.reported;
    const changedPaths = r && Date.now() - r.sinceMs <= REPORTED_PATHS_MAX_AGE_MS ? [...r.paths] : undefined;
    return this.captureQuietly(info.threadId, info.runId, 'tool', info.call.name, changedPaths);
  }

  /** The `afterTool` stage for file-changing tools: collects the paths the tool reports changing. */
  afterMutatingTool(info: { changedPaths?: string[] }): void {
    if (this.reported && info.changedPaths) for (const p of info.changedPaths) this.reported.paths.add(p);
    else this.reported = null;
  }

  /** Something other than the agent's edit tools may have changed files (the user saved one). */
  noteExternalChange(): void {
    this.reported = null;
  }

  /**
   * The `turnStart` stage: builds the repository's warm state in the background (a
   * full snapshot, no checkpoint) when there is none — at a thread's first turn or after a
   * restore — so the turn's first checkpoint is an incremental one. Returns the work (tests wait
   * for it); failures are ignored (the capture itself then takes the full snapshot and reports).
   */
  prepare(): Promise<void> {
    const job = (async () => {
      if (!(await this.isRepository().catch(() => false))) return;
      await this.git.prepareWarm(this.workspaceRoot);
    })().catch(() => undefined);
    this.background.add(job);
    void job.finally(() => this.background.delete(job));
    return job;
  }

  /** Waits for background preparation (engine shutdown: no temporary index is left behind). */
  async settle(): Promise<void> {
    while (this.background.size) await Promise.all([...this.background]);
  }

  /** The `turnEnd` stage. */
  async onTurnEnd(info: { threadId: string; runId: string }): Promise<void> {
    await this.captureQuietly(info.threadId, info.runId, 'turnEnd', null);
  }

  /** A capture whose failure is reported (a notice) and returned, never thrown. */
  private async captureQuietly(threadId: string, runId: string | null, trigger: 'tool' | 'turnEnd', toolName: string | null, changedPaths?: string[]): Promise<Error | null> {
    try {
      await this.capture(threadId, { runId, trigger, toolName, ...(changedPaths ? { changedPaths } : {}) });
      return null;
    } catch (e) {
      if (e instanceof CheckpointError && e.code === 'notARepository') return null;
      const failure = diskFullOf(e) ?? (e instanceof Error ? e : new Error(String(e)));
      this.notify({ level: 'error', message: `Checkpoint before ${toolName ?? 'turn end'} failed: ${failure.message}` });
      return failure;
    }
  }

  /** True when the workspace is inside a git repository (probed once — concurrent callers share the probe — and re-probed after a miss on manual capture). */
  async isRepository(): Promise<boolean> {
    if (this.repoState === null) {
      this.probing ??= (async () => {
        try {
          await this.git.listRestorePoints(this.workspaceRoot);
          this.repoState = 'repo';
        } catch (e) {
          if (e instanceof CheckpointError && e.code === 'notARepository') {
            this.repoState = 'notRepo';
            this.notify({ level: 'warning', message: `Checkpoints are off: ${this.workspaceRoot} is not a git repository (run \`git init\` to get them).` });
          } else throw e;
        } finally {
          this.probing = null;
        }
      })();
      await this.probing;
    }
    return this.repoState === 'repo';
  }

  async capture(threadId: string, opts: { runId?: string | null; trigger?: 'tool' | 'turnEnd' | 'manual'; toolName?: string | null; changedPaths?: string[] } = {}): Promise<CheckpointReceipt> {
    // Paths reported from now on belong to the next capture. This happens before anything is
    // awaited, so a tool finishing meanwhile (another thread's) is never dropped; the caller read
    // this capture's `changedPaths` in the same tick.
    this.reported = { paths: new Set(), sinceMs: Date.now() };
    const trigger = opts.trigger ?? 'manual';
    let receipt: CheckpointReceipt;
    try {
      if (trigger !== 'manual' && !(await this.isRepository())) throw new CheckpointError('notARepository', `${this.workspaceRoot} is not a git repository`);
      this.store.getThread(threadId);
      receipt = await this.git.captureCheckpoint({
        worktree: this.workspaceRoot,
        threadId,
        trigger: trigger === 'tool' ? { kind: 'tool', ...(opts.toolName ? { toolName: opts.toolName } : {}) } : { kind: trigger },
        ...(opts.changedPaths ? { changedPaths: opts.changedPaths } : {}),
      });
    } catch (e) {
      // No capture: what was reported before it is not covered by any checkpoint.
      this.reported = null;
      throw e;
    }
    this.repoState = 'repo';
    if (receipt.overBudget) {
      this.notify({ level: 'warning', message: `Checkpoint ${receipt.ordinal} took ${receipt.overBudget.tookMs} ms (budget ${receipt.overBudget.budgetMs} ms). Checkpoints stay on; consider ignoring large generated folders.` });
    }
    if (receipt.skipped.length > 0) {
      this.notify({ level: 'info', message: `Checkpoint ${receipt.ordinal} skipped ${receipt.skipped.length} large untracked file(s): ${receipt.skipped.slice(0, 3).map((s) => s.path).join(', ')}` });
    }
    this.store.append({
      type: 'checkpoint.captured',
      threadId,
      runId: opts.runId ?? null,
      ref: receipt.ref,
      ordinal: receipt.ordinal,
      trigger,
      toolName: opts.toolName ?? null,
      changedCount: receipt.changedCount,
      skippedCount: receipt.skipped.length,
      overBudgetMs: receipt.overBudget?.tookMs ?? null,
      rewindTo: this.rewindPoint(threadId, trigger, opts.runId ?? null),
    });
    return receipt;
  }

  /**
   * Where the conversation goes back to when this checkpoint is restored: for a capture before a
   * tool, to before the prompt of that run (the files are as they were then); otherwise the head.
   */
  private rewindPoint(threadId: string, trigger: 'tool' | 'turnEnd' | 'manual', runId: string | null): string | null {
    if (trigger === 'tool' && runId) {
      const run = this.store.runs(threadId).find((r) => r.id === runId);
      const userMsg = run?.userMessageId ? this.store.messages(threadId).find((m) => m.id === run.userMessageId) : undefined;
      if (userMsg) return userMsg.parentId;
    }
    return this.store.headMessageId(threadId);
  }

  async restore(threadId: string, ordinal: number, mode: RestoreMode): Promise<RestoreOutcome> {
    const row = this.store.checkpoints(threadId).find((c) => c.ordinal === ordinal);
    if (mode !== 'files' && !row) throw new CheckpointError('unknownCheckpoint', `checkpoint ${ordinal} of thread ${threadId} is not recorded in this store`);
    if (mode !== 'thread') this.reported = null;
    const files = mode === 'thread' ? null : await this.git.restoreCheckpoint({ worktree: this.workspaceRoot, threadId, ordinal, mode: 'files' });
    let rewoundTo: string | null | undefined;
    if (mode !== 'files') {
      rewoundTo = row!.rewindTo;
      this.store.append({ type: 'thread.rewound', threadId, toMessageId: rewoundTo });
    }
    this.store.append({ type: 'checkpoint.restored', threadId, ordinal, mode, restorePoint: files?.restorePoint ?? null, changedCount: files?.changed.length ?? 0 });
    // A restore that could not keep the warm state dropped it: rebuild it now rather than in the
    // next checkpoint (nothing to do when it was kept).
    if (files) void this.prepare();
    return { mode, files, rewoundTo };
  }

  async undo(restorePoint: string): Promise<RestoreResult> {
    this.reported = null;
    const r = await this.git.undoRestore({ worktree: this.workspaceRoot, restorePoint });
    void this.prepare();
    return r;
  }

  list(threadId: string) {
    return this.git.listCheckpoints(this.workspaceRoot, threadId);
  }

  diff(fromRef: string, toRef: string | 'working'): Promise<FileDiffStat[]> {
    return this.git.diffCheckpoints(this.workspaceRoot, fromRef, toRef);
  }

  readFile(ref: string, relPath: string | Buffer): Promise<Buffer> {
    return this.git.readFileAtCheckpoint(this.workspaceRoot, ref, relPath);
  }

  /** Restore points of the workspace, newest first. */
  async listRestorePoints(): Promise<RestorePointInfo[]> {
    return (await this.git.listRestorePoints(this.workspaceRoot)).sort((a, b) => b.timeMs - a.timeMs);
  }

  async prune(opts: PruneOptions): Promise<PruneResult> {
    const result = await this.git.pruneCheckpoints(this.workspaceRoot, opts);
    const byThread = new Map<string, string[]>();
    for (const ref of result.deletedRefs) {
      const owner = this.store.checkpointOwner(ref);
      if (owner) byThread.set(owner, [...(byThread.get(owner) ?? []), ref]);
    }
    for (const [threadId, refs] of byThread) this.store.append({ type: 'checkpoint.pruned', threadId, refs });
    return result;
  }
}
