/**
 * GitPlumbingCheckpointStore against real git repositories in temp dirs (SPEC §4.2): capture in
 * normal, empty, linked-worktree and nested-repository layouts and with odd file names; restore,
 * undo, obstacles, diff, read, list, prune, the warm index, the time budget, typed errors and the
 * workspace lease. Every test also checks that HEAD, the branch, the real index and the stash are
 * untouched.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CheckpointError, GitPlumbingCheckpointStore, checkpointRef, encodeThreadIdForRef, decodeThreadRefComponent } from '../../src/engine/checkpoints/git-checkpoints';
import { packMaintenanceIdle as waitForPacks } from '../../src/engine/checkpoints/packs';
import { WorkspaceLeaseMap } from '../../src/engine/platform/workspace-lease';
import { bytesPath, initRepo, snapshotDiff, treeSnapshot } from '../support/git-fixtures';
import { gitBuf, gitOut } from '../support/git';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';
import { assertRejectsCode } from '../support/assert-code';

const T = 'thread:5b0c1d2e-test';
const NON_UTF8 = Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]); // "bad\xff\xfe.txt"

function lsTree(dir: string, rev: string): string[] {
  return gitBuf(dir, ['ls-tree', '-r', '-z', '--name-only', rev])
    .toString('latin1')
    .split('\0')
    .filter(Boolean);
}

describe('GitPlumbingCheckpointStore (real git)', function () {
  this.timeout(60_000);
  let tmp: string;
  let store: GitPlumbingCheckpointStore;

  beforeEach(() => {
    tmp = makeTmpDir('vox-cp-');
    store = new GitPlumbingCheckpointStore();
  });
  afterEach(async () => {
    // Captures and restore points add packs: a background consolidation may still be writing.
    await waitForPacks();
    removeTmpDir(tmp);
  });

  describe('capture', () => {
    it('captures tracked edits, deletions and untracked files in a normal repo without touching HEAD, branch, index or stash', async () => {
      const repo = initRepo(path.join(tmp, 'r'), { 'a.txt': 'a\n', 'b.txt': 'b\n', '.gitignore': '*.log\n' });
      fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
      fs.rmSync(path.join(repo, 'b.txt'));
      fs.writeFileSync(path.join(repo, 'c.txt'), 'c\n');
      fs.writeFileSync(path.join(repo, 'staged.txt'), 'staged\n');
      gitBuf(repo, ['add', 'staged.txt']);
      fs.writeFileSync(path.join(repo, 'x.log'), 'ignored\n');
      fs.writeFileSync(path.join(repo, 'stashme.txt'), 's\n');
      gitBuf(repo, ['stash', 'push', '-u', '-m', 'user stash', '--', 'stashme.txt']);
      const before = userRepoState(repo);
      const worktreeBefore = treeSnapshot(repo);

      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool', toolName: 'write_file' } });
      assert.equal(r.ordinal, 1);
      assert.equal(r.ref, `refs/vox/checkpoints/${encodeThreadIdForRef(T)}/1`);
      assert.equal(r.ref, checkpointRef(T, 1));
      assert.equal(gitOut(repo, ['rev-parse', r.ref]), r.commit);
      assert.equal(gitOut(repo, ['log', '-1', '--format=%s', r.ref]), `vox-checkpoint:${T}:1`);
      assert.deepEqual(lsTree(repo, r.commit).sort(), ['.gitignore', 'a.txt', 'c.txt', 'staged.txt']);
      assert.equal(gitOut(repo, ['show', `${r.commit}:a.txt`]), 'a2');
      assert.deepEqual(r.changed.map((c) => `${c.status} ${c.path}`).sort(), ['added c.txt', 'added staged.txt', 'deleted b.txt', 'modified a.txt']);
      assert.equal(r.changedCount, 4);
      assert.deepEqual(r.skipped, []);
      assert.deepEqual(userRepoState(repo), before);
      assert.deepEqual(snapshotDiff(worktreeBefore, treeSnapshot(repo)), []);
      assert.equal(fs.readdirSync(path.join(repo, '.git')).filter((n) => n.startsWith('vox-index-')).length, 0, 'temporary index removed');

      fs.writeFileSync(path.join(repo, 'c.txt'), 'c2\n');
      const r2 = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'turnEnd' } });
      assert.equal(r2.ordinal, 2);
      assert.equal(r2.parent, r.commit);
      assert.equal(gitOut(repo, ['rev-parse', `${r2.commit}^`]), r.commit, 'parent is the previous checkpoint');
      assert.deepEqual(r2.changed.map((c) => `${c.status} ${c.path}`), ['modified c.txt']);
      assert.deepEqual(userRepoState(repo), before);

      const list = await store.listCheckpoints(repo, T);
      assert.deepEqual(list.map((c) => [c.ordinal, c.trigger.kind, c.changedCount]), [[1, 'tool', 4], [2, 'turnEnd', 1]]);
      assert.deepEqual(list[0]!.trigger, { kind: 'tool', toolName: 'write_file' });
      assert.ok(Math.abs(list[1]!.timeMs - Date.now()) < 60_000);
      assert.deepEqual(list[1]!.changed.map((c) => c.path), ['c.txt']);
    });

    it('captures in a repository with no commits and no index', async () => {
      const repo = initRepo(path.join(tmp, 'empty'));
      assert.equal(fs.existsSync(path.join(repo, '.git', 'index')), false);
      fs.writeFileSync(path.join(repo, 'first.txt'), 'hello\n');
      const before = userRepoState(repo);
      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(lsTree(repo, r.commit), ['first.txt']);
      assert.deepEqual(r.changed.map((c) => `${c.status} ${c.path}`), ['added first.txt']);
      assert.deepEqual(userRepoState(repo), before);
      assert.equal(fs.existsSync(path.join(repo, '.git', 'index')), false, 'no real index was created');
      // ... and one with nothing at all.
      const bare = initRepo(path.join(tmp, 'nothing'));
      const r0 = await store.captureCheckpoint({ worktree: bare, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(lsTree(bare, r0.commit), []);
    });

    it('captures in a linked worktree (its own index, shared object store and refs)', async () => {
      const main = initRepo(path.join(tmp, 'main'), { 'a.txt': 'a\n' });
      const wt = path.join(tmp, 'wt');
      gitBuf(main, ['worktree', 'add', '-q', '-b', 'feature', wt]);
      fs.writeFileSync(path.join(wt, 'a.txt'), 'feature edit\n');
      fs.writeFileSync(path.join(wt, 'new.txt'), 'new\n');
      const beforeMain = userRepoState(main);
      const beforeWt = userRepoState(wt);
      const r = await store.captureCheckpoint({ worktree: wt, threadId: T, trigger: { kind: 'manual' } });
      assert.equal(gitOut(main, ['show', `${r.ref}:a.txt`]), 'feature edit', 'ref visible from the main worktree');
      assert.deepEqual(lsTree(wt, r.commit).sort(), ['a.txt', 'new.txt']);
      assert.deepEqual(userRepoState(main), beforeMain);
      assert.deepEqual(userRepoState(wt), beforeWt);
      assert.equal(gitOut(wt, ['symbolic-ref', 'HEAD']), 'refs/heads/feature');

      fs.writeFileSync(path.join(wt, 'a.txt'), 'later\n');
      fs.rmSync(path.join(wt, 'new.txt'));
      const res = await store.restoreCheckpoint({ worktree: wt, threadId: T, ordinal: 1, mode: 'files' });
      assert.equal(fs.readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'feature edit\n');
      assert.equal(fs.readFileSync(path.join(wt, 'new.txt'), 'utf8'), 'new\n');
      assert.equal(fs.readFileSync(path.join(main, 'a.txt'), 'utf8'), 'a\n', 'main worktree untouched');
      assert.ok(res.restorePoint.startsWith('refs/vox/restore-points/'));
      assert.deepEqual(userRepoState(main), beforeMain);
      assert.deepEqual(userRepoState(wt), beforeWt);
    });

    it('captures nested repositories (with and without commits) inside themselves, as part of the same checkpoint', async () => {
      const repo = initRepo(path.join(tmp, 'outer'), { 'top.txt': 't\n' });
      const sub = initRepo(path.join(repo, 'libs', 'sub'), { 'lib.txt': 'lib\n' });
      const fresh = initRepo(path.join(repo, 'fresh'));
      fs.writeFileSync(path.join(sub, 'lib.txt'), 'lib edited\n');
      fs.writeFileSync(path.join(sub, 'untracked-in-sub.txt'), 'u\n');
      fs.writeFileSync(path.join(fresh, 'f.txt'), 'f\n');
      const before = [userRepoState(repo), userRepoState(sub), userRepoState(fresh)];
      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(r.warnings, []);
      const nested = new Map(r.nested.map((n) => [n.path, n.commit]));
      assert.deepEqual([...nested.keys()].sort(), ['fresh', 'libs/sub']);
      assert.equal(gitOut(sub, ['rev-parse', r.ref]), nested.get('libs/sub'), 'nested repo has its own hidden ref');
      assert.equal(gitOut(fresh, ['rev-parse', r.ref]), nested.get('fresh'));
      assert.equal(gitOut(sub, ['show', `${r.ref}:lib.txt`]), 'lib edited');
      assert.deepEqual(lsTree(sub, r.ref).sort(), ['lib.txt', 'untracked-in-sub.txt']);
      assert.deepEqual(lsTree(fresh, r.ref), ['f.txt']);
      // The outer tree stores a gitlink for the nested repo with commits, nothing for the fresh one.
      assert.match(gitOut(repo, ['ls-tree', r.commit, 'libs/sub']), /^160000 commit /);
      assert.equal(gitOut(repo, ['ls-tree', r.commit, 'fresh']), '');
      assert.deepEqual(r.changed.map((c) => c.path).sort(), ['fresh/f.txt', 'libs/sub/lib.txt', 'libs/sub/untracked-in-sub.txt']);
      assert.deepEqual([userRepoState(repo), userRepoState(sub), userRepoState(fresh)], before);
      assert.ok(fs.existsSync(path.join(sub, '.git')) && fs.existsSync(path.join(fresh, '.git')), 'nested repos never renamed');
    });

    it('captures and restores edits inside a real submodule (a .git file pointing into .git/modules)', async () => {
      const origin = initRepo(path.join(tmp, 'lib-origin'), { 'lib.txt': 'v1\n' });
      const repo = initRepo(path.join(tmp, 'super'), { 'top.txt': 't\n' });
      gitBuf(repo, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', origin, 'deps/lib']);
      gitBuf(repo, ['commit', '-q', '-m', 'add submodule']);
      const sub = path.join(repo, 'deps', 'lib');
      assert.ok(fs.statSync(path.join(sub, '.git')).isFile(), 'the submodule uses a gitfile');
      const states = [userRepoState(repo), userRepoState(sub)];
      fs.writeFileSync(path.join(sub, 'lib.txt'), 'edited in the submodule\n');
      const cp = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(cp.nested.map((n) => n.path), ['deps/lib']);
      assert.deepEqual(cp.changed.map((c) => `${c.status} ${c.path}`), ['modified deps/lib/lib.txt']);
      fs.writeFileSync(path.join(sub, 'lib.txt'), 'later\n');
      fs.writeFileSync(path.join(sub, 'extra.txt'), 'x\n');
      const res = await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: cp.ordinal, mode: 'files' });
      assert.equal(fs.readFileSync(path.join(sub, 'lib.txt'), 'utf8'), 'edited in the submodule\n');
      assert.equal(fs.existsSync(path.join(sub, 'extra.txt')), false);
      assert.deepEqual(res.nested.map((n) => `${n.path}:${n.status}`), ['deps/lib:restored']);
      assert.deepEqual([userRepoState(repo), userRepoState(sub)], states);
      assert.deepEqual(fs.readdirSync(path.join(repo, '.git', 'modules', 'deps', 'lib')).filter((n) => n.startsWith('vox-index-')), []);
    });

    it('handles odd file names: spaces, newlines, non-UTF-8 bytes, leading dashes', async () => {
      const repo = initRepo(path.join(tmp, 'odd'), { 'plain.txt': 'p\n' });
      const names: Array<string | Buffer> = ['with space.txt', 'new\nline.txt', '-leading-dash.txt', '--', 'dir with space/-x', NON_UTF8, ':(exclude)magic.txt', '*.txt'];
      fs.mkdirSync(path.join(repo, 'dir with space'));
      for (const n of names) fs.writeFileSync(bytesPath(repo, n), `content of ${typeof n === 'string' ? n : 'bytes'}\n`);
      const before = userRepoState(repo);
      const snap = treeSnapshot(repo);
      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      const inTree = new Set(lsTree(repo, r.commit));
      for (const n of names) assert.ok(inTree.has(typeof n === 'string' ? Buffer.from(n).toString('latin1') : n.toString('latin1')), `captured ${String(n)}`);
      // Delete them all, then restore.
      for (const n of names) fs.rmSync(bytesPath(repo, n));
      await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: r.ordinal, mode: 'files' });
      assert.deepEqual(snapshotDiff(snap, treeSnapshot(repo)), []);
      assert.deepEqual((await store.readFileAtCheckpoint(repo, r.ref, NON_UTF8)).toString(), 'content of bytes\n');
      assert.deepEqual((await store.readFileAtCheckpoint(repo, r.ref, 'new\nline.txt')).toString(), 'content of new\nline.txt\n');
      assert.deepEqual(userRepoState(repo), before);
    });

    it('skips untracked files over the size cap and reports them; the restore leaves them alone', async () => {
      const repo = initRepo(path.join(tmp, 'big'), { 'a.txt': 'a\n', 'tracked-big.bin': 'small\n' });
      const small = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: 1024 });
      fs.writeFileSync(path.join(repo, 'huge.bin'), Buffer.alloc(4096, 7));
      fs.writeFileSync(path.join(repo, 'tracked-big.bin'), Buffer.alloc(4096, 8)); // tracked: always captured
      fs.writeFileSync(path.join(repo, 'ok.txt'), 'ok\n');
      const r = await small.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(r.skipped.map((s) => [s.path, s.bytes]), [['huge.bin', 4096]]);
      assert.deepEqual(lsTree(repo, r.commit).sort(), ['a.txt', 'ok.txt', 'tracked-big.bin']);
      assert.deepEqual((await small.listCheckpoints(repo, T))[0]!.skipped.map((s) => s.path), ['huge.bin']);
      fs.writeFileSync(path.join(repo, 'a.txt'), 'changed\n');
      await small.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 1, mode: 'files' });
      assert.equal(fs.readFileSync(path.join(repo, 'huge.bin')).length, 4096, 'skipped file untouched');
      assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
    });

    it('does not keep stale tracked files below a path that is now a skipped over-cap file', async () => {
      const repo = initRepo(path.join(tmp, 'stale'), { 'dir/tracked.txt': 'tracked\n', 'keep.txt': 'k\n' });
      const small = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: 1024 });
      fs.rmSync(path.join(repo, 'dir'), { recursive: true });
      fs.writeFileSync(path.join(repo, 'dir'), Buffer.alloc(2048, 1)); // the tracked directory became a big file
      const r = await small.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.deepEqual(r.skipped.map((s) => s.path), ['dir']);
      assert.deepEqual(lsTree(repo, r.commit), ['keep.txt'], 'dir/tracked.txt is gone from the worktree, so from the checkpoint');
      assert.deepEqual(r.changed.map((c) => `${c.status} ${c.path}`), ['deleted dir/tracked.txt']);
    });

    it('reports (never silently skips) a capture over its time budget', async () => {
      const repo = initRepo(path.join(tmp, 'budget'), { 'a.txt': 'a\n' });
      const strict = new GitPlumbingCheckpointStore({ captureBudgetMs: 0 });
      const r = await strict.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.ok(r.overBudget, 'overBudget reported');
      assert.equal(r.overBudget.budgetMs, 0);
      assert.ok(r.overBudget.tookMs > 0 && r.overBudget.tookMs === r.tookMs);
      assert.ok(gitOut(repo, ['rev-parse', r.ref]), 'the checkpoint was still taken');
      const relaxed = await new GitPlumbingCheckpointStore({ captureBudgetMs: 60_000 }).captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.equal(relaxed.overBudget, undefined);
    });

    it('uses the warm index for changedPaths and produces the same tree as a full capture', async () => {
      const repo = initRepo(path.join(tmp, 'warm'), { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'c.txt': 'c\n' });
      const sub = initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
      const first = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'turnEnd' } });
      assert.equal(first.fast, false);
      fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
      fs.rmSync(path.join(repo, 'c.txt'));
      fs.writeFileSync(path.join(repo, 'dir', 'new.txt'), 'n\n');
      const fast = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool', toolName: 'edit' }, changedPaths: ['a.txt', path.join(repo, 'c.txt'), 'dir/new.txt'] });
      assert.equal(fast.fast, true);
      assert.deepEqual(fast.changed.map((c) => `${c.status} ${c.path}`).sort(), ['added dir/new.txt', 'deleted c.txt', 'modified a.txt']);
      assert.equal(fast.nested.length, 1, 'untouched nested repo reused');
      assert.equal(fast.nested[0]!.commit, first.nested[0]!.commit);
      assert.equal(gitOut(sub, ['rev-parse', fast.ref]), first.nested[0]!.commit, 'reused nested commit has this checkpoint ref too');
      const full = await store.captureCheckpoint({ worktree: repo, threadId: 'thread:other', trigger: { kind: 'manual' } });
      assert.equal(fast.tree, full.tree);
      // A changed path inside the nested repository re-snapshots just that repository.
      fs.writeFileSync(path.join(sub, 's.txt'), 's2\n');
      const fast2 = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['sub/s.txt'] });
      assert.equal(fast2.fast, true);
      assert.equal(gitOut(sub, ['show', `${fast2.ref}:s.txt`]), 's2');
      assert.deepEqual(fast2.changed.map((c) => c.path), ['sub/s.txt']);
      // Unusable reports fall back to a full capture.
      fs.writeFileSync(path.join(repo, 'z.txt'), 'z\n');
      const dirReport = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['dir'] });
      assert.equal(dirReport.fast, false);
      assert.ok(lsTree(repo, dirReport.commit).includes('z.txt'));
      const outside = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['../elsewhere.txt'] });
      assert.equal(outside.fast, false);
      // A restore keeps the warm state with its changes journaled: a capture with changedPaths
      // right after it is still a fast one, and holds what the restore wrote.
      await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 1, mode: 'files' });
      const afterRestore = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['a.txt'] });
      assert.deepEqual([afterRestore.incremental, afterRestore.fast], [true, true], 'from the warm state the restore left');
      assert.equal(afterRestore.tree, first.tree);
      for (const n of fs.readdirSync(path.join(repo, '.git')).filter((x) => x.startsWith('vox-warm-index'))) fs.rmSync(path.join(repo, '.git', n));
      const oracle = await new GitPlumbingCheckpointStore().captureCheckpoint({ worktree: repo, threadId: 'thread:oracle', trigger: { kind: 'manual' } });
      assert.deepEqual([oracle.incremental, oracle.tree], [false, first.tree], 'a full snapshot agrees');
    });
  });

  describe('restore and undo', () => {
    it('restores modified, deleted and created files, modes and symlinks, keeps ignored files, and undo returns byte for byte', async () => {
      const repo = initRepo(path.join(tmp, 'r'), { 'keep.txt': 'k\n', 'mod.txt': 'm1\n', 'del.txt': 'd\n', 'run.sh': '#!/bin/sh\n', '.gitignore': 'build/\n*.log\n' });
      fs.symlinkSync('keep.txt', path.join(repo, 'link'));
      fs.writeFileSync(path.join(repo, 'untracked-at-cp.txt'), 'u\n');
      fs.mkdirSync(path.join(repo, 'build'));
      fs.writeFileSync(path.join(repo, 'build', 'out.o'), 'obj\n');
      const before = userRepoState(repo);
      const cp = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      const atCheckpoint = treeSnapshot(repo, (rel) => rel === 'build' || rel.endsWith('.log'));

      fs.writeFileSync(path.join(repo, 'mod.txt'), 'm2\n');
      fs.rmSync(path.join(repo, 'del.txt'));
      fs.writeFileSync(path.join(repo, 'created.txt'), 'c\n');
      fs.mkdirSync(path.join(repo, 'newdir', 'deep'), { recursive: true });
      fs.writeFileSync(path.join(repo, 'newdir', 'deep', 'x.txt'), 'x\n');
      fs.chmodSync(path.join(repo, 'run.sh'), 0o755);
      fs.rmSync(path.join(repo, 'link'));
      fs.symlinkSync('mod.txt', path.join(repo, 'link'));
      fs.rmSync(path.join(repo, 'untracked-at-cp.txt'));
      fs.writeFileSync(path.join(repo, 'build', 'out.o'), 'obj2\n');
      fs.writeFileSync(path.join(repo, 'debug.log'), 'log\n');
      const preRestore = treeSnapshot(repo);

      const res = await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: cp.ordinal, mode: 'files' });
      assert.deepEqual(snapshotDiff(atCheckpoint, treeSnapshot(repo, (rel) => rel === 'build' || rel.endsWith('.log'))), []);
      assert.equal(fs.readFileSync(path.join(repo, 'build', 'out.o'), 'utf8'), 'obj2\n', 'ignored file untouched');
      assert.equal(fs.readFileSync(path.join(repo, 'debug.log'), 'utf8'), 'log\n', 'ignored file untouched');
      assert.equal(fs.readlinkSync(path.join(repo, 'link')), 'keep.txt', 'symlink restored as a symlink');
      assert.equal(fs.statSync(path.join(repo, 'run.sh')).mode & 0o111, 0, 'executable bit restored');
      assert.equal(fs.existsSync(path.join(repo, 'newdir')), false, 'emptied directories removed');
      assert.deepEqual(res.changed.map((c) => `${c.status} ${c.path}`).sort(), [
        'added del.txt', 'added untracked-at-cp.txt', 'deleted created.txt', 'deleted newdir/deep/x.txt', 'modified mod.txt', 'modified run.sh', 'modified link',
      ].sort());
      assert.deepEqual(userRepoState(repo), before);
      assert.equal(gitOut(repo, ['log', '-1', '--format=%s', res.restorePoint]), `vox-restore-point:${cp.ref}`);

      const undo = await store.undoRestore({ worktree: repo, restorePoint: res.restorePoint });
      assert.deepEqual(snapshotDiff(preRestore, treeSnapshot(repo)), [], 'undo returns byte for byte');
      assert.notEqual(undo.restorePoint, res.restorePoint, 'undo leaves its own restore point');
      assert.deepEqual(userRepoState(repo), before);
      const points = await store.listRestorePoints(repo);
      assert.deepEqual(points.map((p) => p.target), [cp.ref, res.restorePoint]);
    });

    it('removes an untracked file created after the checkpoint, recoverable through undo', async () => {
      const repo = initRepo(path.join(tmp, 'u'), { 'a.txt': 'a\n' });
      await store.captureCheckpoint({ worktree: repo, threadId: T, ordinal: 7, trigger: { kind: 'manual' } });
      fs.writeFileSync(path.join(repo, 'precious.txt'), 'do not lose me\n');
      const res = await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 7, mode: 'files' });
      assert.equal(fs.existsSync(path.join(repo, 'precious.txt')), false);
      assert.equal((await store.readFileAtCheckpoint(repo, res.restorePoint, 'precious.txt')).toString(), 'do not lose me\n');
      await store.undoRestore({ worktree: repo, restorePoint: res.restorePoint });
      assert.equal(fs.readFileSync(path.join(repo, 'precious.txt'), 'utf8'), 'do not lose me\n');
    });

    it('saves ignored and over-cap files that stand in the way before replacing them', async () => {
      const repo = initRepo(path.join(tmp, 'o'), { 'a.txt': 'a\n' });
      const small = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: 100 });
      fs.writeFileSync(path.join(repo, 'notes.log'), 'checkpointed notes\n');
      fs.writeFileSync(path.join(repo, 'data.bin'), 'small then\n');
      fs.writeFileSync(path.join(repo, 'file-then'), 'was a file\n');
      await small.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      // Later: *.log becomes ignored, data.bin grows over the cap, file-then becomes a directory of ignored files.
      fs.writeFileSync(path.join(repo, '.gitignore'), '*.log\n');
      fs.writeFileSync(path.join(repo, 'notes.log'), 'precious ignored notes\n');
      fs.writeFileSync(path.join(repo, 'data.bin'), Buffer.alloc(500, 1));
      fs.rmSync(path.join(repo, 'file-then'));
      fs.mkdirSync(path.join(repo, 'file-then'));
      fs.writeFileSync(path.join(repo, 'file-then', 'inner.log'), 'inner\n');
      const pre = treeSnapshot(repo);
      const res = await small.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 1, mode: 'files' });
      assert.deepEqual(res.preserved.map((p) => p.path).sort(), ['data.bin', 'file-then', 'notes.log']);
      assert.equal(fs.readFileSync(path.join(repo, 'notes.log'), 'utf8'), 'checkpointed notes\n');
      assert.equal(fs.readFileSync(path.join(repo, 'file-then'), 'utf8'), 'was a file\n');
      await small.undoRestore({ worktree: repo, restorePoint: res.restorePoint });
      assert.deepEqual(snapshotDiff(pre, treeSnapshot(repo)), []);
    });

    it('restores nested repositories to their own checkpoint state and leaves their HEAD and index alone', async () => {
      const repo = initRepo(path.join(tmp, 'n'), { 'top.txt': 't\n' });
      const sub = initRepo(path.join(repo, 'sub'), { 'lib.txt': 'lib\n' });
      const fresh = initRepo(path.join(repo, 'fresh'));
      fs.writeFileSync(path.join(fresh, 'f.txt'), 'f1\n');
      fs.writeFileSync(path.join(sub, 'lib.txt'), 'lib at cp\n');
      const cp = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      const atCp = treeSnapshot(repo);
      fs.writeFileSync(path.join(sub, 'lib.txt'), 'agent broke it\n');
      fs.writeFileSync(path.join(sub, 'junk.txt'), 'junk\n');
      fs.writeFileSync(path.join(fresh, 'f.txt'), 'f2\n');
      fs.writeFileSync(path.join(repo, 'top.txt'), 't2\n');
      const later = initRepo(path.join(repo, 'later'), { 'l.txt': 'l\n' }); // created after the checkpoint: left alone
      const states = [userRepoState(repo), userRepoState(sub), userRepoState(fresh)];
      const pre = treeSnapshot(repo);
      const res = await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: cp.ordinal, mode: 'files' });
      assert.deepEqual(snapshotDiff(atCp, treeSnapshot(repo, (rel) => rel === 'later')), []);
      assert.equal(fs.readFileSync(path.join(later, 'l.txt'), 'utf8'), 'l\n');
      assert.deepEqual(res.nested.map((n) => `${n.path}:${n.status}`).sort(), ['fresh:restored', 'sub:restored']);
      assert.deepEqual([userRepoState(repo), userRepoState(sub), userRepoState(fresh)], states);
      await store.undoRestore({ worktree: repo, restorePoint: res.restorePoint });
      assert.deepEqual(snapshotDiff(pre, treeSnapshot(repo)), []);
      assert.deepEqual([userRepoState(repo), userRepoState(sub), userRepoState(fresh)], states);
    });
  });

  describe('compare, read, list, prune', () => {
    it('diffs checkpoints with numstat, including binary files, renames, nested repos and the working tree', async () => {
      const repo = initRepo(path.join(tmp, 'd'), { 'a.txt': 'one\ntwo\nthree\n', 'mv-src.txt': 'rename me please, enough content to match\n' });
      const sub = initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
      const c1 = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n2\nthree\nfour\n');
      fs.writeFileSync(path.join(repo, 'img.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
      fs.renameSync(path.join(repo, 'mv-src.txt'), path.join(repo, 'mv-dst.txt'));
      fs.writeFileSync(path.join(sub, 's.txt'), 's\nmore\n');
      const c2 = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      const d = await store.diffCheckpoints(repo, c1.ref, c2.ref);
      const by = new Map(d.map((e) => [e.path, e]));
      assert.deepEqual(by.get('a.txt'), { path: 'a.txt', raw: Buffer.from('a.txt'), additions: 2, deletions: 1, binary: false, status: 'modified' });
      assert.equal(by.get('img.bin')?.binary, true);
      assert.equal(by.get('img.bin')?.status, 'added');
      assert.equal(by.get('mv-dst.txt')?.status, 'renamed');
      assert.equal(by.get('mv-dst.txt')?.from?.path, 'mv-src.txt');
      assert.deepEqual([by.get('sub/s.txt')?.additions, by.get('sub/s.txt')?.deletions], [1, 0]);
      assert.equal(by.has('sub'), false, 'gitlink replaced by the nested file diff');
      fs.writeFileSync(path.join(repo, 'a.txt'), 'x\n');
      const w = await store.diffCheckpoints(repo, c2.ref, 'working');
      assert.deepEqual(w.map((e) => [e.path, e.additions, e.deletions]), [['a.txt', 1, 4]]);
      await assertRejectsCode(store.diffCheckpoints(repo, 'refs/vox/checkpoints/nope/1', 'working'), 'checkpoint/unknownCheckpoint', CheckpointError);
    });

    it('reads files at a checkpoint, including inside nested repositories; typed errors for unknown refs and paths', async () => {
      const repo = initRepo(path.join(tmp, 'rd'), { 'a.txt': 'a\n' });
      const sub = initRepo(path.join(repo, 'sub'), { 's.txt': 'nested\n' });
      fs.symlinkSync('a.txt', path.join(repo, 'ln'));
      const c = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      fs.writeFileSync(path.join(sub, 's.txt'), 'changed\n');
      assert.equal((await store.readFileAtCheckpoint(repo, c.ref, 'a.txt')).toString(), 'a\n');
      assert.equal((await store.readFileAtCheckpoint(repo, c.ref, 'sub/s.txt')).toString(), 'nested\n');
      assert.equal((await store.readFileAtCheckpoint(repo, c.commit, 'ln')).toString(), 'a.txt');
      await assertRejectsCode(store.readFileAtCheckpoint(repo, c.ref, 'missing.txt'), 'checkpoint/pathNotFound', CheckpointError);
      await assertRejectsCode(store.readFileAtCheckpoint(repo, checkpointRef(T, 99), 'a.txt'), 'checkpoint/unknownCheckpoint', CheckpointError);
    });

    it('prunes old checkpoints: refs (and nested refs) deleted, kept history detached, reclaimable bytes reported', async () => {
      const repo = initRepo(path.join(tmp, 'p'), { 'a.txt': 'a\n' });
      const sub = initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
      for (let i = 1; i <= 4; i++) {
        fs.writeFileSync(path.join(repo, `f${i}.bin`), Buffer.alloc(2000, i));
        fs.writeFileSync(path.join(sub, 's.txt'), `s${i}\n`);
        await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      }
      await store.captureCheckpoint({ worktree: repo, threadId: 'thread:other', trigger: { kind: 'manual' } });
      await assertRejectsCode(store.pruneCheckpoints(repo, {}), 'checkpoint/badArgument', CheckpointError);
      const res = await store.pruneCheckpoints(repo, { threadId: T, keepLast: 2 });
      assert.deepEqual(res.deletedRefs.sort(), [checkpointRef(T, 1), checkpointRef(T, 2)]);
      assert.deepEqual((await store.listCheckpoints(repo, T)).map((c) => c.ordinal), [3, 4]);
      assert.equal((await store.listCheckpoints(repo, 'thread:other')).length, 1, 'other threads untouched');
      const history = gitOut(repo, ['log', '--format=%s', checkpointRef(T, 4)]).split('\n');
      assert.deepEqual(history, [`vox-checkpoint:${T}:4`, `vox-checkpoint:${T}:3`], 'kept checkpoints no longer reach pruned ones');
      assert.equal(gitOut(sub, ['for-each-ref', '--format=%(refname)', `refs/vox/checkpoints/${encodeThreadIdForRef(T)}/`]).split('\n').length, 2);
      assert.ok(res.reclaimableBytes > 0, `reclaimable ${res.reclaimableBytes}`);
      assert.ok(res.objectBytesBefore > 0);
      // The kept checkpoints still restore.
      await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 3, mode: 'files' });
      assert.equal(fs.existsSync(path.join(repo, 'f4.bin')), false);
      assert.equal(fs.readFileSync(path.join(sub, 's.txt'), 'utf8'), 's3\n');
      const all = await store.pruneCheckpoints(repo, { threadId: 'thread:other' });
      assert.deepEqual(all.deletedRefs, [checkpointRef('thread:other', 1)]);
      const rpRefs = (await store.listRestorePoints(repo)).map((p) => p.ref);
      assert.equal(rpRefs.length, 1);
      const none = await store.pruneCheckpoints(repo, { restorePointsOlderThanMs: 60_000 });
      assert.deepEqual(none.deletedRefs, []);
      const later = new GitPlumbingCheckpointStore({ now: () => Date.now() + 120_000 });
      const rp = await later.pruneCheckpoints(repo, { restorePointsOlderThanMs: 60_000 });
      assert.deepEqual(rp.deletedRefs, rpRefs);
    });
  });

  describe('errors, ids and the lease', () => {
    it('encodes thread ids into one valid ref component and back', () => {
      for (const id of ['thread:abc', 'subagent:parent:thread%3Ax:task:1', 'ünï cödé/..lock', '@{-1}~^:?*[\\']) {
        const c = encodeThreadIdForRef(id);
        assert.match(c, /^[A-Za-z0-9_%-]+$/);
        assert.equal(decodeThreadRefComponent(c), id);
        gitOut(tmp, ['check-ref-format', `refs/vox/checkpoints/${c}/1`]);
      }
      const long = `thread:${'x'.repeat(500)}`;
      assert.match(encodeThreadIdForRef(long), /^%hash-[0-9a-f]{64}$/);
    });

    it('throws typed errors: not a repository, bad thread id, unknown checkpoint, existing ordinal, bad mode', async () => {
      const notRepo = path.join(tmp, 'plain');
      fs.mkdirSync(notRepo);
      await assertRejectsCode(store.captureCheckpoint({ worktree: notRepo, threadId: T, trigger: { kind: 'manual' } }), 'checkpoint/notARepository', CheckpointError);
      await assertRejectsCode(store.captureCheckpoint({ worktree: path.join(tmp, 'missing'), threadId: T, trigger: { kind: 'manual' } }), 'checkpoint/notARepository', CheckpointError);
      const repo = initRepo(path.join(tmp, 'e'), { 'a.txt': 'a\n' });
      await assertRejectsCode(store.captureCheckpoint({ worktree: repo, threadId: '', trigger: { kind: 'manual' } }), 'checkpoint/badThreadId', CheckpointError);
      await assertRejectsCode(store.captureCheckpoint({ worktree: repo, threadId: 'a\nb', trigger: { kind: 'manual' } }), 'checkpoint/badThreadId', CheckpointError);
      await assertRejectsCode(store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 3, mode: 'files' }), 'checkpoint/unknownCheckpoint', CheckpointError);
      await assertRejectsCode(store.undoRestore({ worktree: repo, restorePoint: 'refs/vox/restore-points/20990101T000000000Z-0-abc' }), 'checkpoint/unknownCheckpoint', CheckpointError);
      await store.captureCheckpoint({ worktree: repo, threadId: T, ordinal: 5, trigger: { kind: 'manual' } });
      await assertRejectsCode(store.captureCheckpoint({ worktree: repo, threadId: T, ordinal: 5, trigger: { kind: 'manual' } }), 'checkpoint/checkpointExists', CheckpointError);
      await assertRejectsCode(store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: 5, mode: 'both' as 'files' }), 'checkpoint/badArgument', CheckpointError);
      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      assert.equal(r.ordinal, 6, 'next ordinal after the highest');
    });

    it('serialises concurrent captures and a restore on the same worktree through the lease', async () => {
      const repo = initRepo(path.join(tmp, 'c'), { 'a.txt': 'a\n' });
      const inner = new WorkspaceLeaseMap();
      let active = 0;
      let maxActive = 0;
      const order: string[] = [];
      const leases = {
        async withWorkspaceLease<R>(p: string, fn: () => Promise<R> | R): Promise<R> {
          return inner.withWorkspaceLease(p, async () => {
            active++;
            maxActive = Math.max(maxActive, active);
            order.push('enter');
            try {
              return await fn();
            } finally {
              order.push('exit');
              active--;
            }
          });
        },
        isBusy: (p: string) => inner.isBusy(p),
      } as unknown as WorkspaceLeaseMap;
      const s = new GitPlumbingCheckpointStore({ leases });
      const c0 = await s.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
      fs.writeFileSync(path.join(repo, 'a.txt'), 'during\n');
      const [x, y, z] = await Promise.all([
        s.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool', toolName: 'x' } }),
        s.captureCheckpoint({ worktree: path.join(repo, '.'), threadId: T, trigger: { kind: 'tool', toolName: 'y' } }),
        s.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: c0.ordinal, mode: 'files' }),
      ]);
      assert.equal(maxActive, 1, 'never two operations inside the lease at once');
      assert.deepEqual(order, ['enter', 'exit', 'enter', 'exit', 'enter', 'exit', 'enter', 'exit']);
      assert.deepEqual([x.ordinal, y.ordinal].sort(), [2, 3], 'distinct ordinals');
      for (const c of [x, y]) assert.ok(['during', 'a'].includes(gitOut(repo, ['show', `${c.ref}:a.txt`])), 'each capture saw a whole state');
      assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
      assert.equal((await s.readFileAtCheckpoint(repo, z.restorePoint, 'a.txt')).toString(), 'during\n');
    });
  });
});
