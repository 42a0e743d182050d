/**
 * The incremental capture (src/engine/checkpoints/capture/pipeline.ts and its stages) against real git: every
 * checkpoint it writes holds exactly what a full snapshot of the same working tree holds; the
 * journal on the warm index adds up to the captured tree and is applied once it is long; a clean
 * filter does not change what is stored (raw bytes); a stale "last checkpoint" (another store captured the thread) and a
 * fast-import failure fall back without losing or duplicating anything; small packs are
 * consolidated in the background; nothing of Vox's is left in the git dir.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitPlumbingCheckpointStore, PACK_CONSOLIDATE_THRESHOLD, WARM_MAX_PENDING, packMaintenanceIdle } from '../../src/engine/checkpoints/git-checkpoints';
import { commitSnapshot, initRepo, snapshotDiff, treeSnapshot } from '../support/git-fixtures';
import { gitBuf, gitOut } from '../support/git';
import { fastImportCommit } from '../../src/engine/checkpoints/capture/commit';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';

const T = 'thread:incremental-test';

/** The tree a full snapshot takes of the working tree now (a fresh store with no warm state). */
async function fullTree(repo: string, maxUntrackedFileBytes?: number): Promise<string> {
  for (const n of fs.readdirSync(path.join(repo, '.git')).filter((x) => x.startsWith('vox-warm-index'))) fs.rmSync(path.join(repo, '.git', n));
  const r = await new GitPlumbingCheckpointStore({ maxUntrackedFileBytes }).captureCheckpoint({ worktree: repo, threadId: 'thread:oracle', trigger: { kind: 'manual' } });
  assert.equal(r.incremental, false);
  return r.tree;
}

/** Entries of an index file (`ls-files -s`), path → "mode sha". */
function indexEntries(repo: string, indexFile: string): Map<string, string> {
  const out = new Map<string, string>();
  const raw = gitBuf(repo, ['ls-files', '-s', '-z'], { env: { GIT_INDEX_FILE: indexFile } });
  for (const rec of raw.toString('latin1').split('\0').filter(Boolean)) {
    const tab = rec.indexOf('\t');
    const [mode, sha] = rec.slice(0, tab).split(' ');
    out.set(rec.slice(tab + 1), `${mode} ${sha}`);
  }
  return out;
}

function treeEntries(repo: string, rev: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rec of gitBuf(repo, ['ls-tree', '-r', '-z', '--full-tree', rev]).toString('latin1').split('\0').filter(Boolean)) {
    const tab = rec.indexOf('\t');
    const [mode, , sha] = rec.slice(0, tab).split(' ');
    out.set(rec.slice(tab + 1), `${mode} ${sha}`);
  }
  return out;
}

/** Warm index entries with the sidecar's journal applied: must be the captured tree. */
function warmPlusJournal(repo: string): Map<string, string> {
  const entries = indexEntries(repo, path.join(repo, '.git', 'vox-warm-index'));
  const side = JSON.parse(fs.readFileSync(path.join(repo, '.git', 'vox-warm-index.json'), 'utf8')) as { pending: Array<{ p?: string; b?: string; mode?: string; sha?: string }> };
  for (const e of side.pending) {
    const key = e.p !== undefined ? Buffer.from(e.p, 'utf8').toString('latin1') : Buffer.from(e.b!, 'base64').toString('latin1');
    if (e.mode) entries.set(key, `${e.mode} ${e.sha}`);
    else entries.delete(key);
  }
  return entries;
}

describe('incremental checkpoint capture (real git)', function () {
  this.timeout(120_000);
  let tmp: string;
  beforeEach(() => {
    tmp = makeTmpDir('vox-cp-inc-');
  });
  afterEach(async () => {
    await packMaintenanceIdle();
    removeTmpDir(tmp);
  });

  it('writes the same tree as a full snapshot, in status and reported mode, through every kind of change', async () => {
    const repo = initRepo(path.join(tmp, 'r'), { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'dir/deep/c.txt': 'c\n', 'run.sh': '#!/bin/sh\n', '.gitignore': '*.log\nbuild/\n' });
    const store = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: 1000 });
    const before = userRepoState(repo);
    const first = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'turnEnd' } });
    assert.equal(first.incremental, false, 'no warm state yet');
    const steps: Array<{ name: string; act: () => string[] }> = [
      { name: 'modify and add', act: () => (fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n'), fs.writeFileSync(path.join(repo, 'new.txt'), 'n\n'), ['a.txt', 'new.txt']) },
      { name: 'delete', act: () => (fs.rmSync(path.join(repo, 'dir', 'b.txt')), ['dir/b.txt']) },
      { name: 'chmod', act: () => (fs.chmodSync(path.join(repo, 'run.sh'), 0o755), ['run.sh']) },
      { name: 'symlink', act: () => (fs.symlinkSync('a.txt', path.join(repo, 'link')), ['link']) },
      { name: 'file becomes a directory', act: () => (fs.rmSync(path.join(repo, 'new.txt')), fs.mkdirSync(path.join(repo, 'new.txt')), fs.writeFileSync(path.join(repo, 'new.txt', 'inner'), 'i\n'), ['new.txt/inner']) },
      { name: 'directory becomes a file', act: () => (fs.rmSync(path.join(repo, 'dir', 'deep'), { recursive: true }), fs.writeFileSync(path.join(repo, 'dir', 'deep'), 'now a file\n'), ['dir/deep']) },
      { name: 'ignored and over-cap files', act: () => (fs.writeFileSync(path.join(repo, 'x.log'), 'log\n'), fs.writeFileSync(path.join(repo, 'big.bin'), Buffer.alloc(5000, 1)), fs.writeFileSync(path.join(repo, 'ok.txt'), 'ok\n'), ['x.log', 'ok.txt']) },
      { name: 'odd names', act: () => (fs.writeFileSync(path.join(repo, 'sp ace "q" \\ \n nl'), 'odd\n'), fs.writeFileSync(Buffer.from(`${repo}/\xe9t\xe9`, 'latin1'), 'latin1\n'), ['sp ace "q" \\ \n nl']) },
      { name: 'symlink retargeted and file back to a link', act: () => (fs.rmSync(path.join(repo, 'link')), fs.symlinkSync('dir/deep', path.join(repo, 'link')), ['link']) },
      { name: 'revert to the content of an earlier checkpoint', act: () => (fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n'), ['a.txt']) },
    ];
    for (const [i, step] of steps.entries()) {
      const reported = step.act();
      // Alternate the two modes; the odd-name step has a non-UTF-8 name it does not report, so
      // it runs in status mode.
      const useReported = i % 2 === 1 && step.name !== 'odd names' && step.name !== 'ignored and over-cap files';
      const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool', toolName: step.name }, ...(useReported ? { changedPaths: reported } : {}) });
      assert.equal(r.incremental, true, `${step.name}: incremental`);
      assert.equal(r.fast, useReported, `${step.name}: reported mode`);
      assert.deepEqual([...warmPlusJournal(repo)].sort(), [...treeEntries(repo, r.commit)].sort(), `${step.name}: warm index + journal = the checkpoint's tree`);
      const expected = await fullTree(repo, 1000);
      assert.equal(r.tree, expected, `${step.name}: same tree as a full snapshot`);
      // The oracle dropped the warm state; the next capture rebuilds it, then goes on incrementally.
      await store.captureCheckpoint({ worktree: repo, threadId: 'thread:rewarm', trigger: { kind: 'manual' } });
    }
    const skipped = (await store.listCheckpoints(repo, T)).at(-1)!.skipped.map((s) => s.path);
    assert.deepEqual(skipped, ['big.bin'], 'over-cap untracked file reported');
    assert.deepEqual(userRepoState(repo), before, 'HEAD, branch, index and stash untouched');
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((n) => n.startsWith('vox-index-') || n.startsWith('fast_import_crash')), []);
  });

  it('lists exactly the files changed since the previous checkpoint, across threads and for a first checkpoint', async () => {
    const repo = initRepo(path.join(tmp, 'c'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const store = new GitPlumbingCheckpointStore();
    await store.captureCheckpoint({ worktree: repo, threadId: 'thread:one', trigger: { kind: 'manual' } });
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
    const other = await store.captureCheckpoint({ worktree: repo, threadId: 'thread:two', trigger: { kind: 'manual' } });
    assert.equal(other.incremental, true);
    assert.deepEqual(other.changed.map((c) => `${c.status} ${c.path}`), ['modified a.txt'], 'first checkpoint of a thread: against HEAD');
    fs.writeFileSync(path.join(repo, 'b.txt'), 'b2\n');
    fs.writeFileSync(path.join(repo, 'c.txt'), 'c\n');
    const back = await store.captureCheckpoint({ worktree: repo, threadId: 'thread:one', trigger: { kind: 'manual' }, changedPaths: ['b.txt', 'c.txt'] });
    assert.equal(back.fast, true);
    // thread:one last saw a.txt=a, b.txt=b: everything since then, including thread:two's edit.
    assert.deepEqual(back.changed.map((c) => `${c.status} ${c.path}`), ['modified a.txt', 'modified b.txt', 'added c.txt']);
    fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
    const reverted = await store.captureCheckpoint({ worktree: repo, threadId: 'thread:one', trigger: { kind: 'manual' } });
    assert.deepEqual(reverted.changed.map((c) => `${c.status} ${c.path}`), ['modified b.txt']);
    const same = await store.captureCheckpoint({ worktree: repo, threadId: 'thread:one', trigger: { kind: 'manual' }, changedPaths: ['a.txt'] });
    assert.equal(same.changedCount, 0, 'a reported path whose content did not change is not a change');
    assert.equal(same.tree, reverted.tree);
  });

  it(`applies the journal to the warm index once it holds ${WARM_MAX_PENDING} entries`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < WARM_MAX_PENDING + 20; i++) files[`f/${String(i).padStart(4, '0')}.txt`] = `${i}\n`;
    const repo = initRepo(path.join(tmp, 'j'), files);
    const store = new GitPlumbingCheckpointStore();
    await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    const changed = Object.keys(files);
    for (const f of changed) fs.writeFileSync(path.join(repo, f), 'changed\n');
    const big = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: changed });
    const side = (): { pending: unknown[] } => JSON.parse(fs.readFileSync(path.join(repo, '.git', 'vox-warm-index.json'), 'utf8')) as { pending: unknown[] };
    assert.equal(side().pending.length, changed.length, 'journaled, index file untouched');
    assert.deepEqual([...warmPlusJournal(repo)].sort(), [...treeEntries(repo, big.commit)].sort());
    fs.writeFileSync(path.join(repo, 'f/0000.txt'), 'again\n');
    const flushed = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['f/0000.txt'] });
    assert.equal(side().pending.length, 0, 'journal applied');
    assert.deepEqual([...indexEntries(repo, path.join(repo, '.git', 'vox-warm-index'))].sort(), [...treeEntries(repo, flushed.commit)].sort(), 'the index file alone is the tree now');
    fs.writeFileSync(path.join(repo, 'f/0001.txt'), 'status mode after a flush\n');
    const status = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    assert.equal(status.incremental, true);
    assert.deepEqual(status.changed.map((c) => c.path), ['f/0001.txt']);
    assert.equal(status.tree, await fullTree(repo));
  });

  it('stores the raw bytes when a clean filter applies (.gitattributes), not what git add would store', async () => {
    const repo = initRepo(path.join(tmp, 'f'), { '.gitattributes': '*.up filter=upper\n', 'a.up': 'HELLO\n' });
    gitBuf(repo, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    gitBuf(repo, ['config', 'filter.upper.smudge', 'cat']);
    const store = new GitPlumbingCheckpointStore();
    await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    fs.writeFileSync(path.join(repo, 'a.up'), 'lower case\n');
    const status = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    assert.equal(status.incremental, true);
    assert.equal(gitOut(repo, ['cat-file', '-p', `${status.commit}:a.up`]), 'lower case');
    fs.writeFileSync(path.join(repo, 'b.up'), 'new file\n');
    const reported = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' }, changedPaths: ['b.up'] });
    assert.equal(reported.fast, true);
    assert.equal(gitOut(repo, ['cat-file', '-p', `${reported.commit}:b.up`]), 'new file');
    assert.equal(reported.tree, await fullTree(repo));
    assert.deepEqual(snapshotDiff(treeSnapshot(repo), commitSnapshot(repo, reported.commit)), [], 'the bytes on disk, every file');
  });

  it('a restore keeps the warm state: the captures after it are incremental and hold what a full snapshot holds, nested HEADs included', async () => {
    const repo = initRepo(path.join(tmp, 'rw'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const sub = initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
    const store = new GitPlumbingCheckpointStore();
    const cp1 = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
    fs.writeFileSync(path.join(sub, 's.txt'), 's2\n');
    gitBuf(sub, ['commit', '-q', '-am', 'sub moves on']);
    initRepo(path.join(repo, 'late'), { 'l.txt': 'l\n' });
    await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    // cp1 has neither `late` nor sub's new HEAD: the restore leaves both HEADs, writes the files.
    const res = await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: cp1.ordinal, mode: 'files' });
    assert.deepEqual(res.changed.map((c) => c.path).sort(), ['a.txt', 'sub/s.txt']);
    assert.ok(fs.existsSync(path.join(repo, '.git', 'vox-warm-index.json')), 'the warm state was kept');
    const next = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: [] });
    assert.deepEqual([next.incremental, next.fast], [true, false], 'incremental; a gitlink moved, so it looks at everything');
    assert.equal(next.tree, await fullTree(repo), 'the same tree as a full snapshot (HEADs as gitlinks)');
    fs.writeFileSync(path.join(repo, 'b.txt'), 'b2\n');
    await store.restoreCheckpoint({ worktree: repo, threadId: T, ordinal: next.ordinal, mode: 'files' });
    const fast = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: [] });
    assert.deepEqual([fast.incremental, fast.fast], [true, true], 'a restore that moved no gitlink: reported mode may follow');
    assert.equal(fast.tree, next.tree);
    assert.equal(fast.tree, await fullTree(repo));
  });

  it('a stale remembered checkpoint (another store captured the thread) and a fast-import failure fall back without duplicates', async () => {
    const repo = initRepo(path.join(tmp, 's'), { 'a.txt': 'a\n' });
    const one = new GitPlumbingCheckpointStore();
    const two = new GitPlumbingCheckpointStore();
    await one.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    for (let i = 0; i < 4; i++) {
      fs.writeFileSync(path.join(repo, 'a.txt'), `a${i}\n`);
      const s = i % 2 ? one : two;
      await s.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    }
    const list = await one.listCheckpoints(repo, T);
    assert.deepEqual(list.map((c) => c.ordinal), [1, 2, 3, 4, 5], 'ordinals unique and in sequence');
    assert.deepEqual(list.map((c) => gitOut(repo, ['show', `${c.commit}:a.txt`])), ['a', 'a0', 'a1', 'a2', 'a3']);
    // A warm state naming a tree that does not exist: fast-import fails; the full snapshot takes over.
    const sidecar = path.join(repo, '.git', 'vox-warm-index.json');
    const side = JSON.parse(fs.readFileSync(sidecar, 'utf8')) as { tree: string; commit: string | null };
    side.tree = '1'.repeat(40);
    side.commit = null;
    fs.writeFileSync(sidecar, JSON.stringify(side));
    fs.writeFileSync(path.join(repo, 'a.txt'), 'after\n');
    const r = await one.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    assert.equal(r.incremental, false, 'fell back to the full snapshot');
    assert.equal(gitOut(repo, ['show', `${r.commit}:a.txt`]), 'after');
    assert.equal(r.ordinal, 6);
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((n) => n.startsWith('fast_import_crash') || n.startsWith('vox-index-')), [], 'no crash report or temporary index left');
  });

  it(`consolidates checkpoint packs in the background beyond ${PACK_CONSOLIDATE_THRESHOLD}, keeping every object`, async () => {
    const repo = initRepo(path.join(tmp, 'p'), { 'a.txt': 'a\n' });
    const store = new GitPlumbingCheckpointStore();
    await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'manual' } });
    const commits: string[] = [];
    for (let i = 0; i < PACK_CONSOLIDATE_THRESHOLD + 8; i++) {
      fs.writeFileSync(path.join(repo, 'a.txt'), `version ${i}\n`);
      commits.push((await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' }, changedPaths: ['a.txt'] })).commit);
    }
    await packMaintenanceIdle();
    const packs = fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
    assert.ok(packs.length <= PACK_CONSOLIDATE_THRESHOLD, `${packs.length} packs`);
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.startsWith('tmp_')), [], 'no temporary pack left');
    gitBuf(repo, ['fsck', '--connectivity-only', '--no-dangling']);
    commits.forEach((c, i) => assert.equal(gitOut(repo, ['show', `${c}:a.txt`]), `version ${i}`));
    // The last checkpoint holds exactly the working tree.
    assert.deepEqual(snapshotDiff(treeSnapshot(repo), commitSnapshot(repo, commits.at(-1)!)), []);
  });

  it('fast-import: a failed commit leaves no crash report or ref; a cancelled one writes nothing', async () => {
    const repo = initRepo(path.join(tmp, 'fi'), { 'a.txt': 'a\n' });
    const info = { root: fs.realpathSync(repo), gitDir: path.join(fs.realpathSync(repo), '.git'), indexPath: path.join(fs.realpathSync(repo), '.git', 'index') };
    const packsBefore = fs.readdirSync(path.join(repo, '.git', 'objects', 'pack'));
    const spec = { ref: 'refs/vox/test/x', changes: [], message: 'm\n', timeMs: 0, baseTree: null };
    await assert.rejects(fastImportCommit(info, Promise.resolve({ ...spec, parent: '1'.repeat(40) }), false), /fast-import/);
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((n) => n.startsWith('fast_import_crash')), [], 'crash report removed');
    assert.equal(await fastImportCommit(info, Promise.resolve(null), false), null);
    assert.equal(gitBuf(repo, ['for-each-ref', 'refs/vox']).length, 0, 'no ref');
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')), packsBefore, 'no pack');
    const ok = await fastImportCommit(info, Promise.resolve({ ...spec, parent: gitOut(repo, ['rev-parse', 'HEAD']), changes: [{ kind: 'file', raw: Buffer.from('dir/"q" \\ \n.txt'), mode: '100755', sha: '', content: Buffer.from('inline\n') }] }), false);
    assert.ok(ok);
    assert.equal(gitOut(repo, ['rev-parse', `${ok.commit}^{tree}`]), ok.tree);
    assert.equal(gitOut(repo, ['show', `refs/vox/test/x:dir/"q" \\ \n.txt`]), 'inline');
  });

  it('prepareWarm builds the warm state without a checkpoint, so even a thread\'s first capture is incremental', async () => {
    const repo = initRepo(path.join(tmp, 'w'), { 'a.txt': 'a\n', '.gitignore': '*.log\n' });
    initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
    fs.writeFileSync(path.join(repo, 'untracked.txt'), 'u\n');
    fs.writeFileSync(path.join(repo, 'sub', 'new.txt'), 'n\n');
    const store = new GitPlumbingCheckpointStore();
    const before = userRepoState(repo);
    assert.equal(await store.prepareWarm(repo), true);
    assert.equal(await store.prepareWarm(repo), false, 'already warm');
    assert.equal(gitBuf(repo, ['for-each-ref', 'refs/vox']).length, 0, 'no checkpoint made');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
    const r = await store.captureCheckpoint({ worktree: repo, threadId: T, trigger: { kind: 'tool' } });
    assert.equal(r.incremental, true);
    assert.deepEqual(r.changed.map((c) => `${c.status} ${c.path}`).sort(), ['added sub/new.txt', 'added untracked.txt', 'modified a.txt'], 'first checkpoint: against HEAD, nested included');
    assert.equal(gitOut(path.join(repo, 'sub'), ['show', `${r.ref}:new.txt`]), 'n');
    assert.equal(r.tree, await fullTree(repo));
    assert.deepEqual(userRepoState(repo), before);
    await assert.rejects(store.prepareWarm(path.join(tmp)), /not inside a git work tree|not a directory/);
  });
});
