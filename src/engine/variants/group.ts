/**
 * One prompt running as 1..MAX_VARIANTS variants: the handle `VariantPool.startVariants` returns.
 *
 * Each variant gets its own managed worktree (`.vox/worktrees/muse/<thread>/variant-<i>`, created
 * in parallel, each under its own lease), its own child thread (created by the pool before this
 * starts) and its own run, started through the engine's run registry with that worktree as its
 * workspace root, so approvals, live turns, Stop-all and shutdown treat it like any other run. After every mutating tool call and at turn end the variant's diff stats are
 * refreshed (./stats) and published through `onDidChange`.
 *
 * `adoptVariant(i)` (only once the variant has stopped) builds its `--binary` patch against the
 * base commit, applies it to the main workspace's working tree under the main workspace's lease
 * (./apply: refused with a typed `conflict` and nothing changed when it does not fit),
 * then stops the other variants and removes every worktree of the group: adoption ends the pool.
 * `discardVariant(i)` stops one variant and removes its worktree (forced: the changes in it are
 * ours to drop). `cancelAll()` stops every agent loop and keeps the worktrees for inspection.
 * Adoption and discards are serialised per group.
 */
import * as fs from 'node:fs';
import type { TurnResult } from '../agent/runner';
import type { ResolvedModel } from '../providers/types';
import type { RunHandle, RunRegistry } from '../runs/registry';
import { startTurn } from '../runs/start-turn';
import type { VoxStore } from '../store/store';
import { workspaceLeases } from '../platform/workspace-lease';
import { WorktreeError, createManagedWorktree, removeManagedWorktree } from '../worktrees/worktrees';
import { snapshotVariant, worktreeIndexPath } from './diff';
import { applyToWorkspace } from './apply';
import { StatsRefresher } from './stats';
import {
  EMPTY_STATS, REMOVED_STATUSES, SETTLED_STATUSES, VariantError,
  type AdoptResult, type Disposable, type VariantChange, type VariantChangeKind, type VariantDiff, type VariantInfo, type VariantStats, type VariantStatus,
} from './types';

/** What a group needs from the engine (shared by all its variants). */
export interface VariantRunnerDeps {
  /** Starts each variant's run (in its worktree), so Stop-all and shutdown see them too. */
  runs: RunRegistry;
  /** The store the turn start reads the variant's thread from (../runs/start-turn.ts). */
  store: VoxStore;
  /** Receives errors thrown by `onDidChange` listeners; default console.error. */
  onListenerError?: (error: unknown) => void;
}

export interface VariantPlan {
  index: number;
  model: string;
  resolved: ResolvedModel;
  threadId: string;
  /** Expected canonical worktree path (validated by createManagedWorktree). */
  worktreePath: string;
  /** Worktree group segment and slug. */
  group: string;
  slug: string;
}

export interface VariantGroupOptions {
  poolId: string;
  /** Canonical top level of the main workspace's repository. */
  repoRoot: string;
  /** Commit every variant starts from (the main workspace's HEAD when the pool started). */
  base: string;
  prompt: string;
  plans: VariantPlan[];
  deps: VariantRunnerDeps;
}

interface Slot extends VariantPlan {
  runId: string | null;
  status: VariantStatus;
  stats: VariantStats;
  error: string | null;
  statsError: string | null;
  hasWorktree: boolean;
  provisionedEnv: string[];
  /** The worktree's real index (copied, never written, for each snapshot). */
  indexPath: string | undefined;
  turn: RunHandle | null;
  cancelRequested: boolean;
  settled: Promise<void>;
  refresher: StatsRefresher;
}

export class VariantGroup {
  readonly poolId: string;
  readonly repoRoot: string;
  readonly base: string;
  readonly prompt: string;
  /** Resolves when every variant has left `creating`/`running`; carries the snapshots then. */
  readonly done: Promise<VariantInfo[]>;
  private readonly slots: Slot[];
  private readonly listeners = new Set<(c: VariantChange) => void>();
  private adoptedIndex: number | null = null;
  /** Serialises adopt and discard. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: VariantGroupOptions) {
    this.poolId = opts.poolId;
    this.repoRoot = opts.repoRoot;
    this.base = opts.base;
    this.prompt = opts.prompt;
    this.slots = opts.plans.map((p) => {
      const slot: Slot = {
        ...p, runId: null, status: 'creating', stats: EMPTY_STATS, error: null, statsError: null, hasWorktree: false,
        provisionedEnv: [], indexPath: undefined, turn: null, cancelRequested: false, settled: Promise.resolve(),
        refresher: undefined as unknown as StatsRefresher,
      };
      slot.refresher = new StatsRefresher({
        snapshot: () => this.snapshotTarget(slot),
        current: () => slot.stats,
        onResult: (r) => {
          if ('error' in r) slot.statsError = r.error;
          else {
            slot.stats = r.stats;
            slot.statsError = null;
          }
          this.emit('stats', slot);
        },
      });
      return slot;
    });
    for (const slot of this.slots) slot.settled = this.runVariant(slot);
    this.done = Promise.all(this.slots.map((s) => s.settled)).then(() => this.variants);
  }

  /** Snapshots of every variant, by index. */
  get variants(): VariantInfo[] {
    return this.slots.map((s) => this.info(s));
  }

  variant(index: number): VariantInfo {
    return this.info(this.slot(index));
  }

  /** Index of the adopted variant, or null. */
  get adopted(): number | null {
    return this.adoptedIndex;
  }

  /** Live status and stats changes; the listener is called synchronously with a snapshot. */
  onDidChange(listener: (change: VariantChange) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /** Stops every agent loop (and creations not yet turned into runs); worktrees stay. */
  async cancelAll(): Promise<void> {
    for (const s of this.slots) this.requestCancel(s);
    await Promise.all(this.slots.map((s) => s.settled));
  }

  /** The variant's patch against the base commit (binary-safe) and its per-file stats. */
  async diffVariant(index: number): Promise<VariantDiff> {
    const slot = this.slot(index);
    this.assertHasWorktree(slot);
    return workspaceLeases.withWorkspaceLease(slot.worktreePath, async () => {
      this.assertHasWorktree(slot);
      const snap = await this.snapshot(slot, true);
      const patch = snap.patch ?? Buffer.alloc(0);
      return { base: this.base, patch, text: patch.toString('utf8'), stats: snap.stats };
    });
  }

  /** Applies variant `index` to the main workspace and ends the pool; see the file header. */
  adoptVariant(index: number): Promise<AdoptResult> {
    return this.serialised(() => this.adopt(index));
  }

  /** Stops variant `index` (if running) and removes its worktree. Discarding twice is a no-op. */
  discardVariant(index: number): Promise<void> {
    return this.serialised(async () => {
      const slot = this.slot(index);
      if (slot.status === 'adopted') throw new VariantError('alreadyAdopted', `variant ${index} was adopted; its changes are in the workspace`, { index });
      if (slot.status === 'discarded') return;
      await this.remove(slot);
    });
  }

  /**
   * Clears a finished pool: refuses while a variant is still creating or running
   * (`notFinished`), else removes every worktree still there (the pool then leaves the list).
   * Returns the indexes removed.
   */
  async clear(): Promise<number[]> {
    const busy = this.slots.find((s) => !SETTLED_STATUSES.has(s.status) && !REMOVED_STATUSES.has(s.status));
    if (busy) throw new VariantError('notFinished', `variant ${busy.index} is still ${busy.status}; cancel it or wait before clearing the pool`, { index: busy.index });
    const left = this.slots.filter((s) => !REMOVED_STATUSES.has(s.status)).map((s) => s.index);
    await this.discardAll();
    return left;
  }

  /** Stops and removes every variant that is still there (the pool ends without adoption). */
  discardAll(): Promise<void> {
    return this.serialised(async () => {
      for (const s of this.slots) this.requestCancel(s);
      const errors: string[] = [];
      await Promise.all(this.slots.filter((s) => !REMOVED_STATUSES.has(s.status)).map((s) => this.remove(s).catch((e: Error) => void errors.push(e.message))));
      if (errors.length > 0) throw new VariantError('removeFailed', `some variant worktrees could not be removed: ${errors.join('; ')}`);
    });
  }

  // ------------------------------------------------------------------ internals

  private info(s: Slot): VariantInfo {
    return {
      index: s.index, model: s.model, worktreePath: s.worktreePath, threadId: s.threadId, runId: s.runId,
      status: s.status, stats: s.stats, error: s.error, statsError: s.statsError,
    };
  }

  private slot(index: number): Slot {
    const s = Number.isInteger(index) ? this.slots[index] : undefined;
    if (!s) throw new VariantError('unknownVariant', `there is no variant ${String(index)} (this pool has ${this.slots.length}: 0..${this.slots.length - 1})`, { index });
    return s;
  }

  private assertHasWorktree(slot: Slot): void {
    if (slot.status === 'adopted') throw new VariantError('alreadyAdopted', `variant ${slot.index} was adopted; its worktree is gone`, { index: slot.index });
    if (slot.status === 'discarded') throw new VariantError('discarded', `variant ${slot.index} was discarded`, { index: slot.index });
    if (slot.status === 'creating') throw new VariantError('notFinished', `variant ${slot.index}'s worktree is still being created`, { index: slot.index });
    if (!slot.hasWorktree) throw new VariantError('noWorktree', `variant ${slot.index} has no worktree: ${slot.error ?? 'it was never created'}`, { index: slot.index });
  }

  private emit(kind: VariantChangeKind, slot: Slot): void {
    const change: VariantChange = { kind, poolId: this.poolId, variant: this.info(slot) };
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch (e) {
        (this.opts.deps.onListenerError ?? console.error)(e);
      }
    }
  }

  private setStatus(slot: Slot, status: VariantStatus, error: string | null = slot.error): void {
    if (slot.status === status && slot.error === error) return;
    slot.status = status;
    slot.error = error;
    this.emit('status', slot);
  }

  private requestCancel(slot: Slot): void {
    slot.cancelRequested = true;
    slot.turn?.cancel();
  }

  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private snapshotTarget(slot: Slot) {
    return { worktree: slot.worktreePath, repoRoot: this.repoRoot, base: this.base, provisionedEnv: slot.provisionedEnv, indexPath: slot.indexPath };
  }

  private snapshot(slot: Slot, withPatch: boolean) {
    return snapshotVariant({ ...this.snapshotTarget(slot), withPatch }).catch((e: unknown) => {
      throw new VariantError('gitFailed', `reading variant ${slot.index}'s changes failed: ${(e as Error).message}`, { index: slot.index, cause: e });
    });
  }

  /** Creation, then the agent turn, then the final stats; never rejects. */
  private async runVariant(slot: Slot): Promise<void> {
    try {
      const wt = await createManagedWorktree({ repoRoot: this.repoRoot, family: 'pool', group: slot.group, slug: slot.slug, baseRef: this.base });
      slot.worktreePath = wt.path;
      slot.provisionedEnv = wt.env?.copied ?? [];
      slot.hasWorktree = true;
      slot.indexPath = await worktreeIndexPath(wt.path).catch(() => undefined); // each snapshot asks git again then
    } catch (e) {
      this.setStatus(slot, 'failed', `creating the worktree failed: ${(e as Error).message}`);
      return;
    }
    if (slot.cancelRequested) return this.setStatus(slot, 'cancelled');

    let result: TurnResult;
    try {
      // The variant's model was resolved with the pool's checks; its thread is new and its own: the turn starts (or the start's refusal fails the variant).
      const { store, runs } = this.opts.deps;
      const out = await startTurn({ store, runs, resolveModel: async () => slot.resolved, defaultModel: () => slot.model }, {
        threadId: slot.threadId, prompt: this.prompt, model: slot.resolved, ifBusy: 'refuse', what: `start variant ${slot.index}`,
        run: {
          workspaceRoot: slot.worktreePath, kind: 'variant',
          // Live diff stats after every file-changing tool (coalesced and rate-limited by the refresher).
          hooks: (bus) => bus.on('afterTool', (c) => void (c.tool.mutating && slot.refresher.request()), { name: 'variants: diff stats' }),
        },
      });
      if (out.kind !== 'started') throw new Error(`variant ${slot.index}'s turn was ${out.kind}, not started`);
      slot.turn = out.handle;
      slot.runId = slot.turn.runId;
      this.setStatus(slot, 'running');
      if (slot.cancelRequested) slot.turn.cancel();
      result = await slot.turn.done;
    } catch (e) {
      result = { threadId: slot.threadId, runId: slot.runId ?? '', status: 'failed', text: '', error: (e as Error).message, usage: { inputTokens: 0, outputTokens: 0 } };
    }
    await slot.refresher.flush();
    this.setStatus(slot, result.status === 'interrupted' ? 'failed' : result.status, result.error);
  }

  private async adopt(index: number): Promise<AdoptResult> {
    const slot = this.slot(index);
    if (this.adoptedIndex !== null) {
      throw new VariantError('alreadyAdopted', `variant ${this.adoptedIndex} of this pool was already adopted; the pool has ended`, { index });
    }
    if (slot.status === 'discarded') throw new VariantError('discarded', `variant ${index} was discarded`, { index });
    if (slot.status === 'failed') {
      throw new VariantError('failed', `variant ${index} failed (${slot.error ?? 'no reason recorded'}); a failed variant cannot be adopted`, { index });
    }
    if (!SETTLED_STATUSES.has(slot.status)) {
      throw new VariantError('notFinished', `variant ${index} is still ${slot.status}; wait for it to finish or cancel it before adopting`, { index });
    }
    this.assertHasWorktree(slot);

    const label = `variant ${index} (${slot.model})`;
    const files = await workspaceLeases.withWorkspaceLease(this.repoRoot, () =>
      workspaceLeases.withWorkspaceLease(slot.worktreePath, async () => {
        const snap = await this.snapshot(slot, true);
        await applyToWorkspace({ repoRoot: this.repoRoot, patch: snap.patch ?? Buffer.alloc(0), files: snap.stats.files, label, index });
        return snap.stats.files;
      }),
    );
    this.adoptedIndex = index;

    // Adoption ends the pool: stop the others, then remove every worktree, the adopted one too.
    for (const s of this.slots) if (s !== slot) this.requestCancel(s);
    const removalErrors: AdoptResult['removalErrors'] = [];
    await Promise.all(
      this.slots.filter((s) => !REMOVED_STATUSES.has(s.status)).map((s) =>
        this.remove(s, s === slot ? 'adopted' : 'discarded').catch((e: Error) => void removalErrors.push({ index: s.index, message: e.message })),
      ),
    );
    if (slot.status !== 'adopted') this.setStatus(slot, 'adopted'); // applied even if its removal failed
    return { index, files, removalErrors: removalErrors.sort((a, b) => a.index - b.index) };
  }

  /** Stops the variant, waits for it, removes its worktree, marks it `final`. */
  private async remove(slot: Slot, final: 'adopted' | 'discarded' = 'discarded'): Promise<void> {
    this.requestCancel(slot);
    await slot.settled;
    await slot.refresher.stop();
    if (slot.hasWorktree) {
      try {
        await removeManagedWorktree({ repoRoot: this.repoRoot, path: slot.worktreePath, force: true });
      } catch (e) {
        // Already gone (removed by hand): nothing of ours is left, which is what was asked.
        const gone = e instanceof WorktreeError && e.code === 'notLinked' && !fs.existsSync(slot.worktreePath);
        if (!gone) throw new VariantError('removeFailed', `removing variant ${slot.index}'s worktree failed: ${(e as Error).message}`, { index: slot.index, path: slot.worktreePath, cause: e });
      }
      slot.hasWorktree = false;
    }
    this.setStatus(slot, final);
  }
}
