/**
 * bench/checkpoints.ts, the Vox rows — GitPlumbingCheckpointStore, as the agent loop uses it:
 *   2f a worktree's first capture (no warm index yet: the full snapshot), measured twice
 *   2w the warm-up the agent loop runs when a turn starts (prepareWarm; no checkpoint)
 *   2  a full capture (status on the warm index)
 *   3  a capture with `changedPaths` (the 10 paths an agent's edit tools report)
 *   7a a restore of a checkpoint 10 files away ("files" mode; a restore point first), 7b its undo
 * Full and changedPaths captures alternate in one thread, as an agent's turn-end and per-tool
 * checkpoints do; background pack consolidation is let finish outside the timings.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitPlumbingCheckpointStore, packMaintenanceIdle } from '../../src/engine/checkpoints/git-checkpoints';
import { dirty, undirty, type Workload } from './repo';
import { row, WARMUP_ROUNDS, type Meter } from './measure';

const CAPTURE = { trigger: { kind: 'tool', toolName: 'write_file' } } as const;

export class VoxRows {
  readonly first = row('2f Vox capture, first in a worktree (full snapshot)', 'user repo');
  readonly prepare = row('2w Vox warm-up at turn start (background, no checkpoint)', 'user repo');
  readonly full = row('2  Vox capture, full (status on the warm index)', 'user repo');
  readonly fast = row('3  Vox capture, changedPaths (warm index)', 'user repo');
  readonly restore = row('7a Vox restore (10 files differ)', 'user repo');
  readonly undo = row('7b Vox undo of that restore', 'user repo');

  private readonly store = new GitPlumbingCheckpointStore();
  private fullFallbacks = 0;
  private fastFallbacks = 0;
  private fullChanged = -1;
  private readonly restoredCounts = new Set<number>();

  constructor(
    private readonly root: string,
    private readonly nestedRel: string,
    private readonly w: Workload,
    private readonly meter: Meter,
  ) {}

  /** Drops the warm indexes of the repository and its nested one (as a restore does). */
  private forgetWarm(): void {
    for (const gitDir of [path.join(this.root, '.git'), path.join(this.root, this.nestedRel, '.git')]) {
      for (const n of fs.readdirSync(gitDir).filter((x) => x.startsWith('vox-warm-index'))) fs.rmSync(path.join(gitDir, n));
    }
  }

  /**
   * 2f and 2w. A worktree's first capture has no warm index yet: the full snapshot, measured once
   * (traced runs below would otherwise show it instead of the steady state), then once more, timed,
   * after forgetting the warm indexes. What the agent loop does instead: the warm-up runs when a
   * turn starts (while the model thinks), so the turn's first checkpoint is an incremental one.
   */
  async firstCaptures(): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.first, false, () => this.store.captureCheckpoint({ ...CAPTURE, worktree: this.root, threadId: 'bench-first' }));
    this.forgetWarm();
    dirty(this.w);
    await this.meter.measure(this.first, true, () => this.store.captureCheckpoint({ ...CAPTURE, worktree: this.root, threadId: 'bench-first-2' }));
    this.first.note = 'without the warm-up below: once per worktree (and after a restore that could not keep it)';
    this.forgetWarm();
    await this.meter.measure(this.prepare, false, () => this.store.prepareWarm(this.root));
    this.forgetWarm();
    await this.meter.measure(this.prepare, true, () => this.store.prepareWarm(this.root));
    this.prepare.note = 'the first checkpoint after it is incremental (row 2)';
  }

  /** 2: a full capture; pack consolidation then finishes outside the timings (reported on its own). */
  async roundFull(t: boolean): Promise<void> {
    dirty(this.w);
    const full = await this.meter.measure(this.full, t, () => this.store.captureCheckpoint({ ...CAPTURE, worktree: this.root, threadId: 'bench-agent' }));
    this.fullChanged = full.changedCount;
    if (!full.incremental) this.fullFallbacks++;
    await packMaintenanceIdle();
  }

  /** 3: the warm index describes the worktree as of the last full capture; only the 10 reported paths changed since. */
  async roundFast(t: boolean): Promise<void> {
    dirty(this.w);
    const fast = await this.meter.measure(this.fast, t, () => this.store.captureCheckpoint({ ...CAPTURE, worktree: this.root, threadId: 'bench-agent', changedPaths: this.w.paths }));
    if (!fast.fast) this.fastFallbacks++;
    await packMaintenanceIdle();
  }

  /** Bytes of the warm index files (measure before a restore: restores drop them). */
  warmIndexBytes(): number {
    return fs
      .readdirSync(path.join(this.root, '.git'))
      .filter((n) => n.startsWith('vox-warm'))
      .reduce((s, n) => s + fs.statSync(path.join(this.root, '.git', n)).size, 0);
  }

  /** 7a/7b: checkpoint a dirty state, put HEAD's content back, restore the checkpoint, undo. */
  async restoreRound(t: boolean): Promise<void> {
    dirty(this.w);
    const cp = await this.store.captureCheckpoint({ ...CAPTURE, worktree: this.root, threadId: 'bench-restore' });
    undirty(this.w);
    const res = await this.meter.measure(this.restore, t, () => this.store.restoreCheckpoint({ worktree: this.root, threadId: 'bench-restore', ordinal: cp.ordinal, mode: 'files' }));
    this.restoredCounts.add(res.changed.length);
    await this.meter.measure(this.undo, t, () => this.store.undoRestore({ worktree: this.root, restorePoint: res.restorePoint }));
  }

  /** The notes column of these rows (`runs` timed rounds). */
  finishNotes(runs: number): void {
    const all = runs + WARMUP_ROUNDS;
    this.full.note = `${this.fullChanged} paths changed vs its previous checkpoint; ${this.fullFallbacks ? `${this.fullFallbacks} of ${all} took the full snapshot` : 'every run was incremental (warm index + status)'}`;
    this.fast.note = this.fastFallbacks ? `${this.fastFallbacks} of ${all} fell back to a full capture` : 'every run took the fast path';
    this.restore.note = `${[...this.restoredCounts].join('/')} paths restored (restore point first)`;
  }
}
