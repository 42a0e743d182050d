/**
 * Keeping the number of pack files bounded (SPEC §4.2: checkpoints must not slow the user's git).
 *
 * An incremental capture writes its objects with fast-import as one small pack (one file instead
 * of a loose file per object). Every git command opens every pack index it has not seen, so
 * hundreds of small packs would slow down the user's own `git status` and `git log`. After a
 * capture, when the repository holds more than PACK_CONSOLIDATE_THRESHOLD packs, one
 * `git repack -d --geometric=2` runs in the background (never awaited by the capture, at most one
 * per object directory at a time): it rolls the small packs (and loose objects) into one and
 * leaves big packs alone, so its cost follows what checkpoints added, not the repository's size.
 * It deletes no object: every object stays (repacked), and concurrent readers and writers are
 * safe by git's own design (a pack is replaced only after its replacement is in place).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run, type RepoInfo } from './repo';

/** Packs in one object directory above which a consolidation starts. */
export const PACK_CONSOLIDATE_THRESHOLD = 16;
/** Time limit of one consolidation (ms). */
const CONSOLIDATE_TIMEOUT_MS = 10 * 60_000;

const packDirs = new Map<string, Promise<string>>();
const running = new Map<string, Promise<void>>();
/** What consolidation has cost so far in this process (benchmarks report it). */
const stats = { runs: 0, totalMs: 0 };

export function packMaintenanceStats(): { runs: number; totalMs: number } {
  return { ...stats };
}

/** The repository's `objects/pack` directory (shared by linked worktrees), cached per git dir. */
function packDirOf(repo: RepoInfo): Promise<string> {
  let p = packDirs.get(repo.gitDir);
  if (!p) {
    p = run(repo, ['rev-parse', '--git-path', 'objects/pack']).then((r) => path.resolve(repo.root, r.stdout.toString('utf8').trim()));
    packDirs.set(repo.gitDir, p);
    p.catch(() => packDirs.delete(repo.gitDir));
  }
  return p;
}

/** Number of packs in `dir`. */
export function countPacks(dir: string): number {
  try {
    return fs.readdirSync(dir).filter((n) => n.endsWith('.pack')).length;
  } catch {
    return 0;
  }
}

/** Starts a background consolidation when there are too many packs; returns at once. */
export function maybeConsolidatePacks(repo: RepoInfo): void {
  void packDirOf(repo).then(
    (dir) => {
      if (running.has(dir) || countPacks(dir) <= PACK_CONSOLIDATE_THRESHOLD) return;
      const started = Date.now();
      stats.runs++;
      const job = run(repo, ['repack', '-d', '-q', '--geometric=2', '--no-write-bitmap-index'], { timeoutMs: CONSOLIDATE_TIMEOUT_MS })
        .then(() => undefined)
        // A failed consolidation changes nothing; the next capture tries again.
        .catch(() => undefined)
        .finally(() => {
          stats.totalMs += Date.now() - started;
          running.delete(dir);
        });
      running.set(dir, job);
    },
    () => undefined,
  );
}

/** Resolves when every consolidation started so far has finished (tests, benchmarks, shutdown). */
export async function packMaintenanceIdle(): Promise<void> {
  // A consolidation may be about to start (its pack dir lookup in flight).
  await Promise.all([...packDirs.values()].map((p) => p.catch(() => undefined)));
  while (running.size) await Promise.all([...running.values()]);
}
