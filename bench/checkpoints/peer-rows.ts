/**
 * bench/checkpoints.ts, the baseline and peer rows — everything that is not Vox's store:
 *   0  `git --version` (what starting one git process costs from this Node process)
 *   1  `git status --porcelain` (the floor every approach is compared with)
 *   2p Vox's plumbing, bare: temp copy of the real index + add -A + write-tree + commit-tree +
 *      update-ref, none of the store's extras (the floor of the design)
 *   4  a temp index seeded with `read-tree HEAD` + add -A + write-tree (t3code, once)
 *   5  a shadow repository (Cline / Roo): a separate git dir with core.worktree = the repo,
 *      `add -A && commit`; 5a its first checkpoint (copies every object), 5b later ones
 *   6  `git stash create` (ignores untracked files)
 *   7c/7d the shadow repository's restore (`clean -f -d` + `reset --hard`, as Roo; Cline runs the
 *      reset alone) to a checkpoint 10 files away, and back
 * Each round method runs one (timed or probe) run of its row, as the interleaved rounds call them.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { dirty, undirty, type Workload } from './repo';
import { diskUsage, git, GIT_MAX_BUFFER_BYTES, median, row, timed, traced, type GitOut, type Meter } from './measure';

/** A Cline/Roo-style shadow repository of the user's worktree `root`; each first checkpoint gets a fresh one. */
export class ShadowRepo {
  root: string;
  gitDir: string;

  constructor(
    private readonly tmp: string,
    private readonly worktree: string,
  ) {
    this.root = path.join(tmp, 'shadow-0');
    this.gitDir = path.join(this.root, '.git');
  }

  /** Points at a fresh shadow directory (`shadow-<n>`), not created yet. */
  use(n: number): void {
    this.root = path.join(this.tmp, `shadow-${n}`);
    this.gitDir = path.join(this.root, '.git');
  }

  git(args: string[], ok?: number[]): Promise<GitOut> {
    return git(this.worktree, ['--git-dir', this.gitDir, '-c', 'advice.addEmbeddedRepo=false', ...args], ok);
  }

  /** A checkpoint: `add -A` + commit; resolves with the commit. */
  async commit(): Promise<string> {
    await this.git(['add', '-A']);
    await this.git(['commit', '-q', '--allow-empty', '--no-verify', '-m', 'checkpoint']);
    return (await this.git(['rev-parse', 'HEAD'])).stdout.trim();
  }

  /** The first checkpoint: init the shadow repository, configure it, commit. */
  async first(): Promise<void> {
    await git(this.tmp, ['init', '-q', this.root]);
    await this.git(['config', 'core.worktree', this.worktree]);
    await this.git(['config', 'commit.gpgSign', 'false']);
    await this.git(['config', 'gc.auto', '0']);
    await this.commit();
  }

  /** Roo's restore (Cline runs the reset alone). */
  async restoreTo(commit: string): Promise<void> {
    await this.git(['clean', '-f', '-d', '-q']);
    await this.git(['reset', '-q', '--hard', commit]);
  }
}

export class PeerRows {
  readonly spawnFloor = row('0  git --version (one process start)');
  readonly status = row('1  git status --porcelain (floor)');
  readonly plain = row('2p the same plumbing, bare (no store extras)', 'user repo');
  readonly readTree = row('4  temp index: read-tree HEAD + add -A + write-tree', 'user repo');
  readonly shadowFirst = row('5a shadow repo, first checkpoint (init+add+commit)', 'shadow dir');
  readonly shadowNext = row('5b shadow repo, later checkpoint (add -A + commit)', 'shadow dir');
  readonly stash = row('6  git stash create', 'user repo');
  readonly shadowRestore = row('7c shadow restore: clean -f -d + reset --hard', 'shadow dir');
  readonly shadowBack = row('7d shadow restore back (its "undo")', 'shadow dir');

  private readonly tempIndex: string;
  private plainParent: string | null = null;
  private plainSeq = 0;
  private shadowClean = '';
  private shadowDirty = '';

  constructor(
    private readonly root: string,
    private readonly w: Workload,
    private readonly meter: Meter,
    private readonly shadow: ShadowRepo,
  ) {
    this.tempIndex = path.join(root, '.git', 'bench-tmp-index');
  }

  /** git on the temporary index; resolves with stdout, trimmed. */
  private gitWithIndex(args: string[]): Promise<string> {
    return new Promise((resolve, reject) =>
      execFile('git', args, { cwd: this.root, env: { ...process.env, GIT_INDEX_FILE: this.tempIndex }, maxBuffer: GIT_MAX_BUFFER_BYTES, encoding: 'utf8' }, (err, out, stderr) =>
        err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(out.trim()),
      ),
    );
  }

  /**
   * 5a: each run starts from nothing in a fresh shadow dir (deleting one mid-run costs more than
   * the checkpoint on this box); the last one is used for everything after. Too slow for an
   * untimed probe: the first run is traced too (a few trace lines per process, nothing next to
   * the copy), and its disk is the median `du` over the runs.
   */
  async shadowFirstRuns(runs: number): Promise<void> {
    const firstDisk: number[] = [];
    for (let r = 0; r < runs; r++) {
      this.shadow.use(r);
      dirty(this.w);
      const first = (): Promise<void> => this.shadow.first();
      if (r === 0) {
        const t = await traced(this.meter.traceFile(), first);
        Object.assign(this.shadowFirst, { procs: t.procs, gitMs: t.gitMs, calls: t.calls });
        this.shadowFirst.samples.push(t.ms);
      } else {
        this.shadowFirst.samples.push((await timed(first)).ms);
      }
      firstDisk.push(diskUsage(this.shadow.gitDir));
    }
    this.shadowFirst.disk = median(firstDisk);
  }

  async roundSpawn(t: boolean): Promise<void> {
    await this.meter.measure(this.spawnFloor, t, () => git(this.root, ['--version']));
  }

  async roundStatus(t: boolean): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.status, t, () => git(this.root, ['status', '--porcelain']));
  }

  async roundPlain(t: boolean): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.plain, t, async () => {
      fs.copyFileSync(path.join(this.root, '.git', 'index'), this.tempIndex);
      await this.gitWithIndex(['-c', 'advice.addEmbeddedRepo=false', 'add', '-A']);
      const tree = await this.gitWithIndex(['write-tree']);
      const commit = (await git(this.root, ['commit-tree', tree, ...(this.plainParent ? ['-p', this.plainParent] : []), '-m', 'bench checkpoint'])).stdout.trim();
      await git(this.root, ['update-ref', `refs/bench/plain/${++this.plainSeq}`, commit]);
      this.plainParent = commit;
    });
    fs.rmSync(this.tempIndex, { force: true });
  }

  async roundReadTree(t: boolean): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.readTree, t, async () => {
      await this.gitWithIndex(['read-tree', 'HEAD']);
      await this.gitWithIndex(['-c', 'advice.addEmbeddedRepo=false', 'add', '-A']);
      await this.gitWithIndex(['write-tree']);
    });
    fs.rmSync(this.tempIndex, { force: true });
  }

  async roundStash(t: boolean): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.stash, t, () => git(this.root, ['stash', 'create']));
  }

  async roundShadowNext(t: boolean): Promise<void> {
    dirty(this.w);
    await this.meter.measure(this.shadowNext, t, () => this.shadow.commit());
  }

  /** Shadow checkpoints of HEAD's content and of a dirty state: 10 files apart. Leaves HEAD's content. */
  async prepareRestores(): Promise<void> {
    undirty(this.w);
    this.shadowClean = await this.shadow.commit();
    dirty(this.w);
    this.shadowDirty = await this.shadow.commit();
    undirty(this.w);
  }

  /** 7c/7d: to the dirty checkpoint (10 files differ) and back. */
  async restoreRound(t: boolean): Promise<void> {
    await this.meter.measure(this.shadowRestore, t, () => this.shadow.restoreTo(this.shadowDirty));
    await this.meter.measure(this.shadowBack, t, () => this.shadow.restoreTo(this.shadowClean));
  }

  /** The notes column of these rows. */
  finishNotes(shadowRuns: number): void {
    this.readTree.note = 'tree only: no commit, no ref';
    this.plain.note = 'reference: the design without the store\'s extras';
    this.shadowFirst.note = `a second copy of every object (disk: median of ${shadowRuns})`;
    this.stash.note = 'ignores the 2 untracked files';
    this.shadowRestore.note = 'Roo; Cline runs reset --hard alone';
  }
}
