/**
 * A checkpoint gives back exactly the bytes that were on disk (SPEC §4.2), whatever git's content
 * conversions say, and a restore is all or nothing. Against real git in temp dirs:
 *   - `core.autocrlf=true`, `* text=auto`, `text eol=crlf`, `ident`, a clean/smudge `filter` and
 *     `working-tree-encoding`: tracked and untracked files, on the first (full) capture and on
 *     incremental ones (status and reported mode), read back from the checkpoint and restored;
 *   - files the user marked `assume-unchanged` or `skip-worktree`: captured as they are on disk,
 *     restored, and the user's flags (the real index, byte for byte) kept;
 *   - a restore that fails half-way (a nested repository's object gone, or a write that fails)
 *     leaves the working tree as it was before the restore;
 *   - captures of one thread from separate processes at the same moment (one database file, one
 *     repository) each take their own ordinal.
 * Every test also checks that HEAD, the branch, the real index and the stash are untouched.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CheckpointError, GitPlumbingCheckpointStore, packMaintenanceIdle, type CheckpointReceipt } from '../../src/engine/checkpoints/git-checkpoints';
import { VoxStore } from '../../src/engine/store/store';
import { commitSnapshot, initRepo, snapshotDiff, treeSnapshot } from '../support/git-fixtures';
import { gitBuf, gitOut } from '../support/git';
import { REPO_ROOT } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';
import { waitFor } from '../support/wait';

const T = 'thread:exact-bytes';
/** Capturing processes started at once in the concurrency test. */
const CONCURRENT_PROCESSES = 4;
/** How long the concurrency test waits for its processes (ms). */
const PROCESS_TIMEOUT_MS = 60_000;

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
const utf16le = (s: string): Buffer => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')]);

/** Writes `files` (raw bytes) into `dir`, creating directories. */
function writeAll(dir: string, files: Record<string, Buffer>): void {
  for (const [rel, data] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), data);
  }
}

/** The checkpoint holds exactly the working tree (minus `skip`ped paths). */
function assertHolds(dir: string, r: CheckpointReceipt, what: string, skip: (rel: string) => boolean = () => false): void {
  const disk = treeSnapshot(dir, skip);
  const held = commitSnapshot(dir, r.commit);
  for (const k of [...held.keys()]) if (skip(k)) held.delete(k);
  assert.deepEqual(snapshotDiff(disk, held), [], `${what}: the checkpoint holds the bytes on disk (incremental=${r.incremental}, fast=${r.fast})`);
}

describe('checkpoints give back exactly the bytes on disk (real git)', function () {
  this.timeout(120_000);
  let tmp: string;
  beforeEach(() => {
    tmp = makeTmpDir('vox-cp-exact-');
  });
  afterEach(async () => {
    await packMaintenanceIdle();
    removeTmpDir(tmp);
  });

  /**
   * Captures the state `a` (first a full capture, then incremental ones in status and reported
   * mode), changes every file, restores, and compares byte for byte; then the same for `b`.
   */
  async function roundTrip(dir: string, a: Record<string, Buffer>, b: Record<string, Buffer>): Promise<void> {
    const store = new GitPlumbingCheckpointStore();
    const user = userRepoState(dir);
    writeAll(dir, a);
    const first = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    assert.equal(first.incremental, false);
    assertHolds(dir, first, 'first capture');
    const atFirst = treeSnapshot(dir);
    writeAll(dir, b);
    const status = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    assert.equal(status.incremental, true);
    assertHolds(dir, status, 'status-mode capture');
    const atStatus = treeSnapshot(dir);
    writeAll(dir, a);
    const reported = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'tool' }, changedPaths: Object.keys(a) });
    assert.equal(reported.fast, true);
    assertHolds(dir, reported, 'reported-mode capture');
    for (const [cp, want] of [[status, atStatus], [first, atFirst], [status, atStatus]] as const) {
      await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' });
      assert.deepEqual(snapshotDiff(want, treeSnapshot(dir)), [], `restore of checkpoint ${cp.ordinal} gives back its bytes`);
    }
    const undo = await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: first.ordinal, mode: 'files' });
    await store.undoRestore({ worktree: dir, restorePoint: undo.restorePoint });
    assert.deepEqual(snapshotDiff(atStatus, treeSnapshot(dir)), [], 'undo gives back the bytes before the restore');
    assert.deepEqual(userRepoState(dir), user, 'HEAD, branch, index and stash untouched');
  }

  it('core.autocrlf=true: LF and CRLF files, tracked and untracked, come back as they were', async () => {
    const dir = initRepo(path.join(tmp, 'crlf'), { 'lf.txt': 'lf\n', 'crlf.txt': 'one\r\ntwo\r\n', 'mixed.txt': 'a\r\nb\n' });
    gitBuf(dir, ['config', 'core.autocrlf', 'true']);
    await roundTrip(
      dir,
      { 'lf.txt': bytes('lf\n'), 'crlf.txt': bytes('one\r\ntwo\r\n'), 'u-lf.txt': bytes('u\n'), 'u-crlf.txt': bytes('u\r\n') },
      { 'lf.txt': bytes('lf\r\nnow crlf\r\n'), 'crlf.txt': bytes('now lf\n'), 'u-lf.txt': bytes('u\r\n'), 'u-crlf.txt': bytes('u\n'), 'mixed.txt': bytes('x\r\ny\n') },
    );
  });

  it('attributes: text=auto, eol=crlf, ident, a clean/smudge filter and working-tree-encoding', async () => {
    const dir = initRepo(path.join(tmp, 'attrs'), {
      '.gitattributes': '* text=auto\n*.crlf text eol=crlf\n*.id ident\n*.up filter=upper\n*.u16 working-tree-encoding=UTF-16LE-BOM\n',
      'tracked.txt': 'tracked\n',
    });
    gitBuf(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    gitBuf(dir, ['config', 'filter.upper.smudge', 'tr A-Z a-z']);
    await roundTrip(
      dir,
      { 'tracked.txt': bytes('tracked\r\n'), 'u.txt': bytes('one\r\ntwo\r\n'), 'e.crlf': bytes('lf only\n'), 'x.id': bytes('$Id$\n'), 'a.up': bytes('Mixed Case\n'), 'w.u16': utf16le('hi\r\n') },
      { 'tracked.txt': bytes('tracked\n'), 'u.txt': bytes('one\ntwo\n'), 'e.crlf': bytes('crlf\r\n'), 'x.id': bytes('$Id: 0123 $\n'), 'a.up': bytes('UPPER\n'), 'w.u16': utf16le('ho\n') },
    );
  });

  it('files marked assume-unchanged or skip-worktree: their bytes on disk are captured and restored; the flags stay', async () => {
    const dir = initRepo(path.join(tmp, 'flags'), { 'au.txt': 'committed au\n', 'sw.txt': 'committed sw\n', 'plain.txt': 'p\n' });
    gitBuf(dir, ['update-index', '--assume-unchanged', 'au.txt']);
    gitBuf(dir, ['update-index', '--skip-worktree', 'sw.txt']);
    const flags = gitOut(dir, ['ls-files', '-v']);
    const store = new GitPlumbingCheckpointStore();
    writeAll(dir, { 'au.txt': bytes('local au\n'), 'sw.txt': bytes('local sw\n') });
    const user = userRepoState(dir);
    const cp = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    assertHolds(dir, cp, 'full capture');
    assert.deepEqual(cp.changed.map((c) => `${c.status} ${c.path}`).sort(), ['modified au.txt', 'modified sw.txt']);
    const atCp = treeSnapshot(dir);
    writeAll(dir, { 'au.txt': bytes('later au\n'), 'sw.txt': bytes('later sw\n'), 'plain.txt': bytes('p2\n') });
    const later = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    assertHolds(dir, later, 'incremental capture');
    const res = await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' });
    assert.deepEqual(res.changed.map((c) => c.path).sort(), ['au.txt', 'plain.txt', 'sw.txt']);
    assert.deepEqual(snapshotDiff(atCp, treeSnapshot(dir)), [], 'restored byte for byte');
    assert.equal(gitOut(dir, ['ls-files', '-v']), flags, 'the user\'s flags are as they were');
    assert.deepEqual(userRepoState(dir), user, 'HEAD, branch, index (bytes) and stash untouched');
  });

  it('a file over the in-memory limit is restored byte for byte (unpack-file), in a linked worktree too, leaving nothing behind', async () => {
    const { RESTORE_INLINE_MAX_BYTES } = await import('../../src/engine/checkpoints/restore-writer');
    const main = initRepo(path.join(tmp, 'bigmain'), { 'small.txt': 's\n' });
    const dir = path.join(tmp, 'bigwt');
    gitBuf(main, ['worktree', 'add', '-q', '-b', 'big', dir]);
    const big = Buffer.alloc(RESTORE_INLINE_MAX_BYTES + 4096);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 9)) & 0xff;
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    const store = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: 2 * big.length });
    const cp = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    const atCp = treeSnapshot(dir);
    fs.writeFileSync(path.join(dir, 'big.bin'), 'replaced\n');
    await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' });
    assert.deepEqual(snapshotDiff(atCp, treeSnapshot(dir)), [], 'restored byte for byte');
    const gitDir = gitOut(dir, ['rev-parse', '--absolute-git-dir']);
    assert.deepEqual(fs.readdirSync(gitDir).filter((n) => n.startsWith('.merge_file')), [], 'no temporary file left');
  });

  it('a restore that fails half-way (a nested repository lost an object) leaves the working tree as it was', async () => {
    const dir = initRepo(path.join(tmp, 'half'), { 'top.txt': 'top v1\n' });
    const sub = initRepo(path.join(dir, 'sub'), { 's.txt': 'sub v0\n' });
    fs.writeFileSync(path.join(sub, 's.txt'), 'sub v1, only in the checkpoint\n');
    const store = new GitPlumbingCheckpointStore();
    const cp = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    const blob = gitOut(sub, ['rev-parse', `${cp.nested[0]!.commit}:s.txt`]);
    fs.rmSync(path.join(sub, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    fs.writeFileSync(path.join(dir, 'top.txt'), 'top v2\n');
    fs.writeFileSync(path.join(sub, 's.txt'), 'sub v2\n');
    const before = treeSnapshot(dir);
    const users = [userRepoState(dir), userRepoState(sub)];
    const err = await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof CheckpointError, `a typed error, got ${String(err)}`);
    assert.deepEqual(snapshotDiff(before, treeSnapshot(dir)), [], 'nothing half-done');
    assert.deepEqual([userRepoState(dir), userRepoState(sub)], users);
  });

  it('a restore whose writes fail half-way rolls itself back to its restore point', async () => {
    const { restoreFaults } = await import('../../src/engine/checkpoints/restore-writer');
    const dir = initRepo(path.join(tmp, 'rollback'), { 'a.txt': 'a1\n', 'b.txt': 'b1\n', 'd/c.txt': 'c1\n', 'gone.txt': 'g\n' });
    const store = new GitPlumbingCheckpointStore();
    const cp = await store.captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
    writeAll(dir, { 'a.txt': bytes('a2\n'), 'b.txt': bytes('b2\n'), 'd/c.txt': bytes('c2\n'), 'new/n.txt': bytes('n\n') });
    fs.rmSync(path.join(dir, 'gone.txt'));
    fs.writeFileSync(path.join(dir, 'x.log'), 'x\n');
    const before = treeSnapshot(dir);
    let writes = 0;
    restoreFaults.beforeWrite = () => {
      if (++writes === 3) throw new Error('simulated write failure');
    };
    try {
      const err = await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof CheckpointError, `a typed error, got ${String(err)}`);
      assert.match(err.message, /rolled back/);
      assert.ok(writes >= 3, 'the failure came half-way');
    } finally {
      restoreFaults.beforeWrite = null;
    }
    assert.deepEqual(snapshotDiff(before, treeSnapshot(dir)), [], 'rolled back byte for byte');
    const again = await store.restoreCheckpoint({ worktree: dir, threadId: T, ordinal: cp.ordinal, mode: 'files' });
    assert.equal(again.changed.length, 6, 'a later restore works (x.log, created after the checkpoint, goes too)');
  });

  it(`${CONCURRENT_PROCESSES} processes capturing one thread at the same moment each take the next ordinal`, async () => {
    const dir = initRepo(path.join(tmp, 'conc'), { 'a.txt': 'a\n' });
    const dbFile = path.join(tmp, 'vox.db');
    const store = VoxStore.open(dbFile);
    store.append({ type: 'thread.created', threadId: T, title: 'concurrent' });
    store.close();
    const go = path.join(tmp, 'go');
    const child = path.join(REPO_ROOT, 'test/support/capture-process.ts');
    const results = Array.from({ length: CONCURRENT_PROCESSES }, (_v, i) => {
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `${i}\n`);
      return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const p = spawn(process.execPath, ['--import', 'tsx', child, dbFile, dir, T, go], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.on('exit', (code) => resolve({ code, out, err }));
      });
    });
    await waitFor('every process ready', PROCESS_TIMEOUT_MS, () => fs.readdirSync(tmp).filter((n) => n.startsWith('ready-')).length === CONCURRENT_PROCESSES);
    fs.writeFileSync(go, '');
    const done = await Promise.all(results);
    for (const d of done) assert.equal(d.code, 0, `a capturing process failed: ${d.err}${d.out}`);
    const ordinals = done.map((d) => (JSON.parse(d.out.trim().split('\n').pop()!) as { ordinal: number }).ordinal).sort((x, y) => x - y);
    assert.deepEqual(ordinals, Array.from({ length: CONCURRENT_PROCESSES }, (_v, i) => i + 1));
    const db = VoxStore.open(dbFile);
    try {
      assert.deepEqual(db.checkpoints(T).map((c) => c.ordinal).sort((x, y) => x - y), ordinals, 'each recorded once in the database');
    } finally {
      db.close();
    }
    assert.equal(gitOut(dir, ['for-each-ref', '--format=%(refname)', 'refs/vox/checkpoints/']).split('\n').length, CONCURRENT_PROCESSES);
  });
});
