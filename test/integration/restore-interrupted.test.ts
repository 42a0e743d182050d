/**
 * A restore killed half-way (kill -9 of the process doing it) is finished at the next start:
 * the restore journals its intent (in the repository's git dir, before its first write), and the
 * next engine start, any `vox` command on the workspace, or the next checkpoint operation finishes
 * it forward to the target (the journal names the target commit; the half-written tree is saved
 * as a restore point first) and says so. The tree is then byte-exactly the checkpoint; HEAD,
 * branch, index and stash are untouched.
 *
 * The restore runs in a separate process (test/support/restore-process.ts) that stops before
 * writing file N+1 and waits there to be killed; nothing is timed.
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitPlumbingCheckpointStore } from '../../src/engine/checkpoints/git-checkpoints';
import { REPO_ROOT, runVox } from '../support/cli';
import { initRepo, snapshotDiff, treeSnapshot, type Entry } from '../support/git-fixtures';
import { startTestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';
import { waitFor } from '../support/wait';

/** Files the checkpoint has (each rewritten by the restore). */
const FILES = 4000;
/** Files the current state adds (removed by the restore). */
const EXTRA = 100;
/** Longest wait for the restoring process to reach its stop (a loaded machine). */
const CHILD_WAIT_MS = 240_000;
const THREAD = 'thread:interrupted-restore';
const CHILD = path.join(REPO_ROOT, 'test/support/restore-process.ts');

const name = (i: number): string => `d${i % 40}/f${i}.txt`;

describe('checkpoints: a restore killed half-way is finished at the next start', function () {
  this.timeout(600_000);
  let dir: string;
  let repo: string;
  let target: Map<string, Entry>;
  let current: Map<string, Entry>;

  beforeEach(async () => {
    dir = fs.realpathSync(makeTmpDir());
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[name(i)] = `checkpoint ${i}\n`;
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), files));
    // Also a file where the current state has a folder, and a link.
    fs.writeFileSync(path.join(repo, 'shape'), 'a file at the checkpoint\n');
    fs.symlinkSync('d0/f0.txt', path.join(repo, 'link'));
    await new GitPlumbingCheckpointStore().captureCheckpoint({ worktree: repo, threadId: THREAD, ordinal: 1, trigger: { kind: 'manual' } });
    target = treeSnapshot(repo);
    // The current state: every file changed, some new ones, `shape` a folder, the link elsewhere.
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(repo, name(i)), `working ${i} — changed after the checkpoint\n`);
    for (let i = 0; i < EXTRA; i++) fs.writeFileSync(path.join(repo, `d${i % 40}`, `new-${i}.txt`), `new ${i}\n`);
    fs.rmSync(path.join(repo, 'shape'));
    fs.mkdirSync(path.join(repo, 'shape'));
    fs.writeFileSync(path.join(repo, 'shape/inner.txt'), 'a folder now\n');
    fs.rmSync(path.join(repo, 'link'));
    fs.symlinkSync('d1/f1.txt', path.join(repo, 'link'));
    current = treeSnapshot(repo);
  });
  afterEach(() => removeTmpDir(dir));

  /** Runs the restore in its own process, stops it after `n` files were written, and kills it (-9). */
  async function killRestoreAfter(n: number): Promise<void> {
    const marker = path.join(dir, `stopped-${n}`);
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, repo, THREAD, '1', String(n), marker], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    await waitFor(`the restoring process to stop after ${n} files`, CHILD_WAIT_MS, () => {
      if (child.exitCode !== null) throw new Error(`the restoring process exited (${child.exitCode}): ${err}`);
      return fs.existsSync(marker);
    }, { everyMs: 50, failFast: true });
    assert.equal(fs.readFileSync(marker, 'utf8'), String(n), 'stopped at the wanted point');
    child.kill('SIGKILL');
    await exited;
    // The kill left a mixed tree: neither the state before the restore nor the checkpoint.
    const now = treeSnapshot(repo);
    assert.notDeepEqual(snapshotDiff(target, now), [], 'the killed restore left the tree short of the checkpoint');
    assert.notDeepEqual(snapshotDiff(current, now), [], 'the killed restore had started changing the tree');
  }

  const journalLeft = (): string[] => fs.readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('vox-restore-journal'));
  const assertFinished = (): void => {
    assert.deepEqual(snapshotDiff(target, treeSnapshot(repo)).slice(0, 10), [], 'the tree is byte-exactly the checkpoint');
    assert.deepEqual(journalLeft(), [], 'the journal is removed');
  };

  // Killed once the removals are done (no file written yet), half-way, and before the last file.
  for (const n of [0, 2000, FILES - 1]) {
    it(`killed after ${n} files written: any vox command on the workspace finishes it and says so on stderr`, async () => {
      const before = userRepoState(repo);
      await killRestoreAfter(n);
      const env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
      const r = await runVox(['threads', '--cwd', repo], env);
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /checkpoints: A restore to checkpoint 1 of thread thread:interrupted-restore was interrupted .*Vox finished it/);
      assert.match(r.err, /refs\/vox\/restore-points\//, 'it names the restore point that holds the state before');
      assertFinished();
      assert.deepEqual(userRepoState(repo), before, 'HEAD, branch, index and stash untouched');
      // Said once: the next start has nothing to finish.
      const store = new GitPlumbingCheckpointStore();
      const told: string[] = [];
      store.onRecovered((x) => told.push(x.message));
      await store.finishInterrupted(repo);
      assert.deepEqual(told, []);
    });
  }

  it('killed half-way: an engine start (VS Code) finishes it and tells the user with a notice', async () => {
    await killRestoreAfter(1);
    const t = startTestEngine({ dir, workspaceRoot: repo });
    await t.engine.dispose(); // waits for the checkpoints' background work, the recovery included
    const notice = t.host.notices.find((x) => x.source === 'checkpoints' && /interrupted/.test(x.message));
    assert.ok(notice, `a notice; got ${JSON.stringify(t.host.notices)}`);
    assert.equal(notice.level, 'warning');
    assert.match(notice.message, /Vox finished it: the files now match checkpoint 1/);
    assertFinished();
    // The notice names the restore point of the state before: undoing it gives that state back, exactly.
    const before = /saved in (refs\/vox\/restore-points\/\S+) \(undo/.exec(notice.message)?.[1];
    assert.ok(before, notice.message);
    const points = (await new GitPlumbingCheckpointStore().listRestorePoints(repo)).map((p) => p.ref);
    assert.equal(points.length, 2, 'the killed restore\'s point, and the half-written tree as found');
    assert.ok(points.includes(before));
    await new GitPlumbingCheckpointStore().undoRestore({ worktree: repo, restorePoint: before });
    assert.deepEqual(snapshotDiff(current, treeSnapshot(repo)).slice(0, 10), []);
  });

  it('killed half-way: the next checkpoint operation finishes it first, so the checkpoint is of the target', async () => {
    await killRestoreAfter(3000);
    const store = new GitPlumbingCheckpointStore();
    const told: string[] = [];
    store.onRecovered((r) => told.push(r.message));
    const receipt = await store.captureCheckpoint({ worktree: repo, threadId: THREAD, trigger: { kind: 'manual' } });
    assert.equal(told.length, 1);
    assertFinished();
    assert.equal(receipt.changedCount, 0, 'the capture after the finished restore sees the checkpoint itself');
  });
});
