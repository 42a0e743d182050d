/**
 * Benchmark: what one checkpoint costs on a big repository (SPEC §4.2; the conventions every
 * benchmark follows are docs/TESTING.md's "Benchmarks"). Not a test: no asserts on timings, only
 * a table with ratios.
 *
 * Run: `node --import=tsx bench/checkpoints.ts [--files 20000] [--mb 200] [--runs 5]
 *       [--shadow-runs 3] [--keep]`   (quick: `--files 2000 --mb 20`).
 *
 * In one process, on one generated repository (seeded, so every run builds the same bytes):
 * FILES files of ~MB megabytes in nested directories — mostly text source of varied sizes, some
 * binaries, a real `.gitignore` with ignored build output (`dist/`, `*.log`, `node_modules/`)
 * present on disk, and one nested repository with its own commits — committed with one
 * `git add -A && git commit`. Then 10 files change (8 tracked files modified, 2 untracked files
 * added; rewritten with fresh content before every timed run) and each approach is timed:
 *
 *   1  `git status --porcelain`                        the floor every approach is compared with
 *   2  Vox capture, full                               temp copy of the real index + add -A +
 *                                                      write-tree + commit-tree + update-ref
 *   2p the same plumbing, bare                         just those five steps, none of the store's
 *                                                      extras (untracked-size check, nested
 *                                                      repositories, metadata): the floor of the
 *                                                      design, to show what the extras cost
 *   3  Vox capture with `changedPaths`                 the warm per-worktree index, add of the
 *                                                      10 reported paths only
 *   4  temp index seeded with `read-tree HEAD`         + add -A + write-tree (t3code, once)
 *   5  shadow repository (Cline / Roo)                 separate git dir with core.worktree = the
 *                                                      repo; `add -A && commit`; first checkpoint
 *                                                      (copies every object) and later ones
 *   6  `git stash create`                              ignores untracked files
 *   7  restores                                        Vox restore of a checkpoint 10 files away
 *                                                      and its undo; the shadow repository's
 *                                                      `clean -f -d` + `reset --hard` (Roo; Cline
 *                                                      runs the reset alone) there and back
 *
 * Row 0 (`git --version`) shows what starting one git process costs from this Node process.
 * Approaches 0–4, 6 and later shadow checkpoints are timed in interleaved rounds (one run of each
 * per round), so load from other processes hits them alike; restores likewise. Every time is the
 * median of the timed rounds (wall time, as a caller sees it). One untimed probe round first
 * (also the warm-up) traces each approach (GIT_TRACE2_EVENT: git processes started, time spent
 * inside git, per subcommand) and measures the disk it added: objects in the user's repository
 * (`count-objects -v` before/after, nested repository included) or `du` of the shadow git dir —
 * so neither tracing nor disk accounting ever sits inside a timed run. The first shadow
 * checkpoint is too slow for a probe: its first timed run is traced, and its disk is the median
 * `du` over its runs. Auto gc is off in the generated repositories (`gc.auto=0`) so no background
 * gc runs mid-measurement (a real shadow repository's first commit starts one on ~20k loose
 * objects). Git runs with no global or system config. Temp dirs live under os.tmpdir() and are
 * removed at the end (by a detached `rm -rf`, see removeTreeInBackground) unless --keep. Nothing
 * leaves the machine. Exits 0 unless something failed.
 *
 * This file holds the command line and the order of the runs; each concern has its module:
 *   bench/checkpoints/repo.ts       the generated repository and the 10 changes
 *   bench/checkpoints/measure.ts    git runner, timing, disk accounting, tracing, rows, the Meter
 *   bench/checkpoints/vox-rows.ts   the Vox rows (2f, 2w, 2, 3, 7a, 7b)
 *   bench/checkpoints/peer-rows.ts  the baseline and peer rows (0, 1, 2p, 4, 5a, 5b, 6, 7c, 7d)
 *   bench/checkpoints/report.ts     the table, the notes under it and the goal lines
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sleep } from '../test/support/wait';
import { Meter, WARMUP_ROUNDS, diskUsage, git, objectStats, timed } from './checkpoints/measure';
import { PeerRows, ShadowRepo } from './checkpoints/peer-rows';
import { ADDED_FILES, FILE_MIN_BYTES, MIN_FILES, MODIFIED_FILES, RACY_SETTLE_MS, generateRepo, pickWorkload, type RepoSize } from './checkpoints/repo';
import { fmtBytes, fmtInt, loadAvg, printReport } from './checkpoints/report';
import { VoxRows } from './checkpoints/vox-rows';

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/** Files on disk in the generated worktree (tracked + ignored + nested repository), by default. */
const DEFAULT_FILES = 20_000;
/** Total bytes of those files, in MB (10^6 bytes), by default. */
const DEFAULT_MB = 200;
/** Timed rounds per approach (the median is reported), by default. */
const DEFAULT_RUNS = 5;
/** Timed first shadow checkpoints by default (each copies the whole repository: the slow one). */
const DEFAULT_SHADOW_FIRST_RUNS = 3;

/** Fixed author/committer of the generated commits (identity via env; fixed dates: same ids every run). */
const BENCH_IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'Vox Bench',
  GIT_AUTHOR_EMAIL: 'bench@vox.invalid',
  GIT_AUTHOR_DATE: '2025-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'Vox Bench',
  GIT_COMMITTER_EMAIL: 'bench@vox.invalid',
  GIT_COMMITTER_DATE: '2025-01-01T00:00:00Z',
} as const;

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

interface Options extends RepoSize {
  runs: number;
  shadowRuns: number;
  keep: boolean;
}

function usage(msg?: string): never {
  if (msg) console.error(msg);
  console.error('usage: node --import=tsx bench/checkpoints.ts [--files N] [--mb N] [--runs N] [--shadow-runs N] [--keep]');
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const o: Options = { files: DEFAULT_FILES, mb: DEFAULT_MB, runs: DEFAULT_RUNS, shadowRuns: -1, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--keep') {
      o.keep = true;
      continue;
    }
    if (a === '--help' || a === '-h') usage();
    const m = /^--(files|mb|runs|shadow-runs)(?:=(.*))?$/.exec(a);
    if (!m) usage(`unknown argument: ${a}`);
    const raw = m[2] ?? argv[++i];
    const n = Number(raw);
    if (raw === undefined || !Number.isFinite(n) || n <= 0) usage(`--${m[1]} needs a positive number`);
    if (m[1] === 'files') o.files = Math.round(n);
    else if (m[1] === 'mb') o.mb = n;
    else if (m[1] === 'runs') o.runs = Math.round(n);
    else o.shadowRuns = Math.round(n);
  }
  if (o.files < MIN_FILES) usage(`--files must be at least ${MIN_FILES}`);
  if ((o.mb * 1e6) / o.files < FILE_MIN_BYTES * 2) usage('--mb is too small for that many files');
  if (o.shadowRuns < 0) o.shadowRuns = Math.min(o.runs, DEFAULT_SHADOW_FIRST_RUNS);
  return o;
}

/**
 * Removes a directory tree with a detached `rm -rf` that outlives this process, and returns its
 * pid (null when it could not start and the tree was removed here, synchronously). Deleting the
 * ~0.5 GB a full run leaves can take minutes on a filesystem mounted with online `discard`
 * (this box's root), which would otherwise dominate the run.
 */
function removeTreeInBackground(dir: string): number | null {
  try {
    const child = spawn('rm', ['-rf', '--', dir], { detached: true, stdio: 'ignore' });
    child.unref();
    if (child.pid !== undefined) return child.pid;
  } catch {
    // fall through
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return null;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-bench-checkpoints-'));
  let cleaned = false;
  const cleanup = (): void => {
    if (cleaned || opts.keep) return;
    cleaned = true;
    const pid = removeTreeInBackground(tmp);
    console.log(pid === null ? `temp dir ${tmp} removed` : `temp dir ${tmp} is being removed in the background (rm -rf, pid ${pid})`);
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });

  // Git with no global/system config and a fixed identity, for this process and its children
  // (the checkpoint store's git calls included).
  const emptyConfig = path.join(tmp, 'empty.gitconfig');
  fs.writeFileSync(emptyConfig, '');
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: emptyConfig, GIT_CONFIG_NOSYSTEM: '1', ...BENCH_IDENTITY_ENV });
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_TRACE2', 'GIT_TRACE2_EVENT', 'GIT_TRACE2_PERF']) delete process.env[k];

  try {
    const gitVersion = (await git(tmp, ['--version'])).stdout.trim().replace(/^git version /, '');
    console.log(`Checkpoint costs: ${fmtInt(opts.files)} files, ${opts.mb} MB, ${MODIFIED_FILES + ADDED_FILES} changed files (${MODIFIED_FILES} modified, ${ADDED_FILES} untracked added)`);
    console.log(`git ${gitVersion}, node ${process.version}, ${os.cpus().length} cores; median of ${opts.runs} runs (first shadow checkpoint: ${opts.shadowRuns}); temp dir ${tmp}${opts.keep ? ' (kept)' : ''}`);
    console.log(`load average at start: ${loadAvg()}`);

    // --- Generate --------------------------------------------------------------------------------
    const root = path.join(tmp, 'repo');
    const gen = await timed(() => generateRepo(root, opts));
    const g = gen.value;
    await sleep(RACY_SETTLE_MS);
    await git(root, ['update-index', '-q', '--refresh'], [0, 1]);
    const repoObjects = await objectStats(root);
    const headTree = (await git(root, ['rev-parse', 'HEAD^{tree}'])).stdout.trim();
    const c = g.counts;
    console.log(
      `generated in ${(gen.ms / 1000).toFixed(1)} s: ${fmtInt(c.totalFiles)} files, ${(c.totalBytes / 1e6).toFixed(1)} MB ` +
        `(${fmtInt(c.tracked)} tracked = ${(c.trackedBytes / 1e6).toFixed(1)} MB incl. ${fmtInt(c.binaries)} binaries; ` +
        `${fmtInt(c.ignored)} ignored in dist/, node_modules/, *.log; nested repository ${g.nestedRel} with ${fmtInt(c.nested)} files and 2 commits); ` +
        `${fmtBytes(repoObjects.bytes).slice(1)} of objects (packed, as in a clone), tree ${headTree.slice(0, 12)}; load average now ${loadAvg()}`,
    );
    const w = pickWorkload(g);
    const nestedRoot = path.join(root, g.nestedRel);

    const shadow = new ShadowRepo(tmp, root);
    /** Bytes on disk for a row's "disk added": objects of the user's repository (nested one included), or the shadow git dir. */
    const meter = new Meter(tmp, async (where) => {
      if (where === 'shadow dir') return diskUsage(shadow.gitDir);
      const [a, b] = await Promise.all([objectStats(root), objectStats(nestedRoot)]);
      return a.bytes + b.bytes;
    });
    const vox = new VoxRows(root, g.nestedRel, w, meter);
    const peers = new PeerRows(root, w, meter, shadow);

    // --- 5a: shadow repository, first checkpoint (each run starts from nothing) ------------------
    await peers.shadowFirstRuns(opts.shadowRuns);
    process.stdout.write(`shadow first checkpoints done (${elapsed()}); `);

    // --- 2f, 2w: a worktree's first capture, the warm-up -------------------------------------------
    await vox.firstCaptures();

    // --- 0–4, 5b, 6: interleaved rounds; the first one is the untimed probe ----------------------
    for (let r = -WARMUP_ROUNDS; r < opts.runs; r++) {
      const t = r >= 0;
      await peers.roundSpawn(t);
      await peers.roundStatus(t);
      await vox.roundFull(t);
      await peers.roundPlain(t);
      // The warm index describes the worktree as of the full capture above; only the 10 reported
      // paths have changed since (the plain capture in between touched no file).
      await vox.roundFast(t);
      await peers.roundReadTree(t);
      await peers.roundStash(t);
      await peers.roundShadowNext(t);
    }
    process.stdout.write(`capture rounds done (${elapsed()}); `);
    // Restores drop the warm index: size it now.
    const warm = vox.warmIndexBytes();
    const realIndex = fs.statSync(path.join(root, '.git', 'index')).size;

    // --- 7: restores ------------------------------------------------------------------------------
    await peers.prepareRestores();
    for (let r = -WARMUP_ROUNDS; r < opts.runs; r++) {
      const t = r >= 0;
      await vox.restoreRound(t);
      await peers.restoreRound(t);
    }
    console.log(`restore rounds done (${elapsed()})`);

    // --- Report -----------------------------------------------------------------------------------
    vox.finishNotes(opts.runs);
    peers.finishNotes(opts.shadowRuns);
    printReport({ root, vox, peers, warm, realIndex, trackedBytes: c.trackedBytes, repoObjectBytes: repoObjects.bytes, elapsed });
  } finally {
    cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
