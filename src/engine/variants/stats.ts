/**
 * Live diff stats of one variant. `request()` is called after every mutating tool call (from the
 * run's `afterTool` hook, for file-changing tools) and returns at once: refreshes run one at a time, a burst of
 * requests coalesces into one refresh, and two refreshes start at least
 * STATS_REFRESH_MIN_INTERVAL_MS apart. `flush()` runs one more refresh right away (after any in
 * flight) — the turn-end refresh whose result the final status carries. `stop()` ends refreshing
 * before the worktree is removed.
 *
 * Each refresh runs under the worktree's lease (so it never overlaps a removal or a checkpoint of
 * the same tree) and reports only stats that changed. A failing refresh keeps the last good stats
 * and reports the failure (the UI shows it) instead of pretending nothing changed.
 */
import { workspaceLeases } from '../platform/workspace-lease';
import { sameStats, snapshotVariant, type SnapshotOptions } from './diff';
import { STATS_REFRESH_MIN_INTERVAL_MS, type VariantStats } from './types';

export interface StatsRefresherOptions {
  snapshot: () => Omit<SnapshotOptions, 'withPatch'>;
  /** Called with new stats (only when they differ from the last ones) or a refresh failure. */
  onResult: (r: { stats: VariantStats } | { error: string }) => void;
  current: () => VariantStats;
  now?: () => number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class StatsRefresher {
  private loop: Promise<void> | null = null;
  private pending = false;
  private stopped = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(private readonly opts: StatsRefresherOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Schedules a refresh (coalesced, rate-limited); never throws. */
  request(): void {
    if (this.stopped) return;
    this.pending = true;
    this.loop ??= this.drain().finally(() => {
      this.loop = null;
    });
  }

  /** Waits for any refresh in flight, then refreshes once more immediately. */
  async flush(): Promise<void> {
    while (this.loop) await this.loop;
    if (this.stopped) return;
    this.lastStart = this.now();
    await this.refreshOnce();
  }

  /** No refresh starts after this; waits for the one in flight (if any). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending = false;
    while (this.loop) await this.loop;
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      const wait = this.lastStart + STATS_REFRESH_MIN_INTERVAL_MS - this.now();
      if (wait > 0) await sleep(wait);
      if (this.stopped) return;
      this.pending = false;
      this.lastStart = this.now();
      await this.refreshOnce();
    }
  }

  private async refreshOnce(): Promise<void> {
    const target = this.opts.snapshot();
    try {
      await workspaceLeases.withWorkspaceLease(target.worktree, async () => {
        if (this.stopped) return;
        const { stats } = await snapshotVariant({ ...target, withPatch: false });
        if (!this.stopped && !sameStats(stats, this.opts.current())) this.opts.onResult({ stats });
      });
    } catch (e) {
      if (!this.stopped) this.opts.onResult({ error: `diff stats failed: ${(e as Error).message ?? String(e)}` });
    }
  }
}
