/**
 * The stages of the checkpoint capture pipeline (src/engine/checkpoints/capture/), each on its
 * own against real git repositories in temp dirs: find-changes returns exactly the edited, added
 * and deleted paths (status mode, reported mode, full walk) and says FallBack on what it does not
 * handle; write-objects gives raw-byte blob ids (inline, whatever filters the attributes name); commit writes the tree and metadata without moving a ref; move-ref refuses an
 * existing checkpoint and a stale parent, and the capture retries from the refs; the journal and
 * the warm-state sidecar round-trip. Last, the pipeline's import rule: no stage imports the
 * orchestrator or a later stage, and the helpers below the stages import nothing from capture/.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveRepo, createTempIndex, type RepoInfo } from '../../src/engine/checkpoints/repo';
import { parseCommitMessage, checkpointRef, type CheckpointHeader } from '../../src/engine/checkpoints/refs';
import { CheckpointError, repoPath } from '../../src/engine/checkpoints/types';
import { GitPlumbingCheckpointStore } from '../../src/engine/checkpoints/git-checkpoints';
import { packMaintenanceIdle as waitForPacks } from '../../src/engine/checkpoints/packs';
import { keepWarm, readWarm, warmFiles, WARM_MAX_PENDING, type WarmState } from '../../src/engine/checkpoints/warm-state';
import { FallBack, findReportedChanges, findStatusChanges, normalizeReported, walkWorktree, type ChangeScan } from '../../src/engine/checkpoints/capture/find-changes';
import { writeChangedObjects } from '../../src/engine/checkpoints/capture/write-objects';
import { commitSnapshotTree, diffPreviousToWarm, fastImportCommit, incrementalCommit } from '../../src/engine/checkpoints/capture/commit';
import { fastImportForce, moveCheckpointRefs, moveRef, retryIfStale } from '../../src/engine/checkpoints/capture/move-ref';
import { applyJournal, journalAfter, journalIsFull, recordIncremental } from '../../src/engine/checkpoints/capture/journal';
import { LastCheckpoints, chooseTarget, previousOf, type LastCheckpoint } from '../../src/engine/checkpoints/capture/target';
import { captureWorktree, prepareWarmState } from '../../src/engine/checkpoints/capture/pipeline';
import { disposeSnapshot, snapshotRepo } from '../../src/engine/checkpoints/capture/snapshot';
import { commitSnapshot, gitBuf, gitOut, initRepo, treeSnapshot } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { assertRejectsCode } from '../support/assert-code';

const T = 'thread:stages-test';
/** Untracked size cap used here (bytes). */
const CAP = 1000;
const NON_UTF8 = Buffer.from([0x62, 0xff, 0x2e, 0x74]);

/** Candidate paths of a scan, sorted, with whether W had them. */
function candidatePaths(scan: ChangeScan): string[] {
  return scan.candidates.map((c) => `${c.raw.toString('latin1')}${c.before ? '' : ' (new)'}`).sort();
}

/** `ls-files -s` of an index file: path → "mode sha". */
function indexEntries(dir: string, indexFile: string): Map<string, string> {
  const out = new Map<string, string>();
  const raw = execIndex(dir, indexFile, ['ls-files', '-s', '-z']);
  for (const rec of raw.toString('latin1').split('\0').filter(Boolean)) {
    const tab = rec.indexOf('\t');
    const [mode, sha] = rec.slice(0, tab).split(' ');
    out.set(rec.slice(tab + 1), `${mode} ${sha}`);
  }
  return out;
}

/** git on another index file (the fixtures' helper scrubs GIT_INDEX_FILE). */
function execIndex(dir: string, indexFile: string, args: string[]): Buffer {
  return execFileSync('git', args, { cwd: dir, env: { ...process.env, GIT_INDEX_FILE: indexFile } });
}

function header(ordinal: number): CheckpointHeader {
  return { ref: checkpointRef(T, ordinal), threadId: T, ordinal, trigger: { kind: 'manual' }, timeMs: 1_700_000_000_000 };
}

describe('checkpoint capture stages (real git)', function () {
  this.timeout(60_000);
  let tmp: string;
  beforeEach(() => {
    tmp = makeTmpDir('vox-cp-stages-');
  });
  afterEach(async () => {
    // Captures and restore points add packs: a background consolidation may still be writing.
    await waitForPacks();
    removeTmpDir(tmp);
  });

  /** A committed repository with a warm state (prepared, no checkpoint). */
  async function warmRepo(name: string, files: Record<string, string>): Promise<{ dir: string; repo: RepoInfo; warm: WarmState }> {
    const dir = initRepo(path.join(tmp, name), files);
    const repo = await resolveRepo(dir);
    assert.equal(await prepareWarmState(repo, CAP), true);
    const warm = await readWarm(repo);
    assert.ok(warm);
    return { dir, repo, warm };
  }

  /** Status mode on a copy of the warm index, as an incremental capture runs it. */
  async function statusScan(repo: RepoInfo, warm: WarmState): Promise<ChangeScan> {
    const copy = await createTempIndex(repo, warmFiles(repo).index);
    try {
      return await findStatusChanges(repo, copy.file, warm, CAP);
    } finally {
      await copy.dispose();
    }
  }

  describe('find-changes', () => {
    it('status mode: exactly the edited, added and deleted paths (ignored and over-cap files left out), with their entries in W', async () => {
      const { dir, repo, warm } = await warmRepo('s', { 'a.txt': 'a\n', 'b.txt': 'b\n', 'same.txt': 's\n', 'd/c.txt': 'c\n', '.gitignore': '*.log\n' });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a2\n');
      fs.rmSync(path.join(dir, 'b.txt'));
      fs.writeFileSync(path.join(dir, 'd', 'new.txt'), 'n\n');
      fs.writeFileSync(path.join(dir, 'same.txt'), 's\n'); // rewritten, same bytes
      fs.writeFileSync(path.join(dir, 'x.log'), 'ignored\n');
      fs.writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(CAP + 1, 7));
      const scan = await statusScan(repo, warm);
      assert.deepEqual(candidatePaths(scan), ['a.txt', 'b.txt', 'd/new.txt (new)']);
      const a = scan.candidates.find((c) => c.raw.toString() === 'a.txt')!;
      assert.deepEqual(a.before, { mode: '100644', sha: gitOut(dir, ['rev-parse', `${warm.tree}:a.txt`]) });
      assert.deepEqual(scan.skipped.map((s) => `${s.path} ${s.bytes}`), [`big.bin ${CAP + 1}`]);
      assert.equal(scan.head, gitOut(dir, ['rev-parse', 'HEAD']));
    });

    it('status mode: a new nested repository is a FallBack', async () => {
      const { dir, repo, warm } = await warmRepo('n', { 'a.txt': 'a\n' });
      initRepo(path.join(dir, 'inner'), { 'i.txt': 'i\n' });
      await assert.rejects(statusScan(repo, warm), (err: unknown) => err instanceof FallBack);
    });

    it('reported mode: the reported paths looked up in the warm index, ignored new ones dropped, no walk', async () => {
      const { dir, repo, warm } = await warmRepo('r', { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', '.gitignore': '*.log\n' });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a2\n');
      fs.writeFileSync(path.join(dir, 'new.txt'), 'n\n');
      fs.writeFileSync(path.join(dir, 'x.log'), 'ignored\n');
      fs.writeFileSync(path.join(dir, 'unreported.txt'), 'not looked at\n');
      const reported = await normalizeReported(repo.root, ['a.txt', path.join(dir, 'new.txt'), 'x.log'], []);
      assert.deepEqual(reported?.map((p) => p.toString()), ['a.txt', 'new.txt', 'x.log']);
      const scan = await findReportedChanges(repo, warmFiles(repo).index, reported!, CAP, warm);
      assert.deepEqual(candidatePaths(scan), ['a.txt', 'new.txt (new)']);
      // A file replacing a directory of W: the entries below it go too.
      fs.rmSync(path.join(dir, 'dir'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'dir'), 'now a file\n');
      const replaced = await findReportedChanges(repo, warmFiles(repo).index, [Buffer.from('dir')], CAP, warm);
      assert.deepEqual(replaced.candidates.map((c) => [c.raw.toString(), (c.below ?? []).map((b) => b.raw.toString())]), [['dir', ['dir/b.txt']]]);
      fs.mkdirSync(path.join(dir, 'sub'));
      await assert.rejects(findReportedChanges(repo, warmFiles(repo).index, [Buffer.from('sub')], CAP, warm), (err: unknown) => err instanceof FallBack);
    });

    it('reported paths that cannot be trusted are refused (null)', async () => {
      const dir = initRepo(path.join(tmp, 't'), { 'a.txt': 'a\n' });
      const root = fs.realpathSync(dir);
      initRepo(path.join(dir, 'unknown'), { 'u.txt': 'u\n' });
      assert.equal(await normalizeReported(root, ['../outside.txt'], []), null);
      assert.equal(await normalizeReported(root, ['.git/config'], []), null);
      assert.equal(await normalizeReported(root, ['unknown/u.txt'], []), null, 'below a repository the warm state does not know');
      assert.deepEqual((await normalizeReported(root, ['unknown/u.txt'], [Buffer.from('unknown')]))?.map(String), ['unknown/u.txt']);
      assert.deepEqual((await normalizeReported(root, [NON_UTF8], []))?.map((p) => p.toString('hex')), [NON_UTF8.toString('hex')]);
    });

    it('full walk: the changed, deleted and untracked paths, over-cap files and nested repositories', async () => {
      const dir = initRepo(path.join(tmp, 'w'), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'same.txt': 's\n', '.gitignore': '*.log\n' });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a2\n');
      fs.rmSync(path.join(dir, 'b.txt'));
      fs.writeFileSync(path.join(dir, 'new.txt'), 'n\n');
      fs.writeFileSync(path.join(dir, 'x.log'), 'ignored\n');
      fs.writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(CAP + 1, 7));
      initRepo(path.join(dir, 'sub'), { 's.txt': 's\n' });
      initRepo(path.join(dir, 'empty'));
      const repo = await resolveRepo(dir);
      const copy = await createTempIndex(repo, repo.indexPath);
      try {
        const walk = await walkWorktree(repo, copy.file, { maxUntrackedBytes: CAP, depth: 0 });
        assert.deepEqual([...new Set(walk.paths.map(String))].sort(), ['a.txt', 'b.txt', 'big.bin', 'empty', 'new.txt', 'sub']);
        assert.deepEqual(walk.exclude.map(String).sort(), ['big.bin', 'empty'], 'over-cap file and the commit-less repository stay out of the outer add');
        assert.deepEqual(walk.skipped.map((s) => s.path), ['big.bin']);
        assert.deepEqual(walk.enter.map((e) => e.rel.path).sort(), ['empty', 'sub'], 'both are captured inside themselves');
        assert.deepEqual([walk.opaque, walk.warnings], [[], []]);
        assert.equal(walk.attributes, false);
      } finally {
        await copy.dispose();
      }
    });
  });

  describe('write-objects', () => {
    it('gives the blob ids git would (inline contents), deletions, symlinks; drops what equals W, the journal included', async () => {
      const { dir, repo, warm } = await warmRepo('o', { 'a.txt': 'a\n', 'b.txt': 'b\n', 'run.sh': '#!/bin/sh\n' });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a2\n');
      fs.rmSync(path.join(dir, 'b.txt'));
      fs.symlinkSync('a.txt', path.join(dir, 'link'));
      fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
      const { changes } = await writeChangedObjects(repo, warm, (await statusScan(repo, warm)).candidates, CAP);
      const shown = changes.map((c) => (c.kind === 'delete' ? `D ${String(c.raw)}` : `${c.kind} ${String(c.raw)} ${c.sha}${c.kind === 'file' ? ` ${c.mode}${c.content ? ' inline' : ''}` : ''}`)).sort();
      const blob = (rel: string): string => gitOut(dir, ['hash-object', rel]);
      assert.deepEqual(shown, [`D b.txt`, `file a.txt ${blob('a.txt')} 100644 inline`, `file run.sh ${blob('run.sh')} 100755 inline`, `symlink link ${gitOut(dir, ['hash-object', '--stdin'], 'a.txt')}`].sort());
      // Capture it (the journal now holds these paths over an unchanged index file): a status
      // that still sees them as changed against W0 yields no change against W.
      const r = await captureWorktree(repo, { threadId: T, trigger: { kind: 'manual' }, timeMs: Date.now(), maxUntrackedBytes: CAP, changedPaths: ['a.txt', 'b.txt', 'link', 'run.sh'] }, new LastCheckpoints());
      assert.deepEqual([r.incremental, r.fast], [true, true]);
      const after = (await readWarm(repo))!;
      assert.equal(after.pending.length, 4);
      const again = await writeChangedObjects(repo, after, (await statusScan(repo, after)).candidates, CAP);
      assert.deepEqual(again.changes, []);
    });

    it('stores the raw bytes when a clean filter applies (inline, like any file); the filtered file is in the conversion set', async () => {
      const { dir, repo, warm } = await warmRepo('f', { '.gitattributes': '*.up filter=upper\n', 'a.up': 'A\n' });
      gitBuf(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
      assert.deepEqual(warm.conv.map((e) => String(e.raw)), ['a.up'], 'only the file the attribute converts');
      fs.writeFileSync(path.join(dir, 'a.up'), 'lower\n');
      const { changes, conv } = await writeChangedObjects(repo, warm, (await statusScan(repo, warm)).candidates, CAP);
      assert.equal(changes.length, 1);
      const c = changes[0]!;
      assert.ok(c.kind === 'file' && c.content?.equals(Buffer.from('lower\n')), 'inline raw content');
      assert.equal(c.sha, gitOut(dir, ['hash-object', '--no-filters', 'a.up']));
      assert.equal(conv.get(Buffer.from('a.up').toString('hex'))?.sha, c.sha, 'the conversion set gets the new entry');
    });
  });

  describe('commit', () => {
    it('incremental: fast-import writes W plus the changes with the metadata (files changed since P)', async () => {
      const { dir, repo, warm } = await warmRepo('c', { 'a.txt': 'a\n', 'b.txt': 'b\n' });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a2\n');
      fs.writeFileSync(path.join(dir, 'n.txt'), 'n\n');
      const objects = await writeChangedObjects(repo, warm, (await statusScan(repo, warm)).candidates, CAP);
      const prev = await previousOf(repo, warm, Promise.resolve({ header: header(1), prevCommit: null }));
      const spec = incrementalCommit({ prev, warmTree: warm.tree, isTop: true, objects, sinceWarm: await diffPreviousToWarm(repo, prev, warm.tree), nestedRels: [], captured: [], reused: [], skipped: [] });
      assert.deepEqual([spec.parent, spec.baseTree], [null, warm.tree], 'a first checkpoint: no parent, W as the base');
      const written = await fastImportCommit(repo, Promise.resolve(spec), fastImportForce(true));
      assert.ok(written);
      assert.deepEqual(commitSnapshot(dir, written.commit), treeSnapshot(dir));
      assert.equal(gitOut(dir, ['rev-parse', header(1).ref]), written.commit, 'fast-import moved the ref');
      const meta = parseCommitMessage(gitOut(dir, ['cat-file', 'commit', written.commit]).split('\n\n').slice(1).join('\n\n'))!;
      assert.deepEqual([meta.threadId, meta.ordinal, meta.changed.map((c) => `${c.status} ${c.path}`)], [T, 1, ['modified a.txt', 'added n.txt']]);
    });

    it('full snapshot: commits every repository, nested ones listed with their commits, and moves no ref', async () => {
      const dir = initRepo(path.join(tmp, 'fs'), { 'a.txt': 'a\n' });
      initRepo(path.join(dir, 'sub'), { 's.txt': 's\n' });
      fs.writeFileSync(path.join(dir, 'sub', 's.txt'), 's2\n');
      const repo = await resolveRepo(dir);
      const node = await snapshotRepo(repo, { maxUntrackedBytes: CAP });
      try {
        const committed = await commitSnapshotTree(node, header(1), null, true);
        assert.equal(gitBuf(dir, ['for-each-ref', 'refs/vox']).length + gitBuf(path.join(dir, 'sub'), ['for-each-ref', 'refs/vox']).length, 0, 'no ref yet');
        assert.deepEqual(committed.meta.nested.map((n) => n.path), ['sub']);
        assert.deepEqual(committed.meta.changed.map((c) => `${c.status} ${c.path}`), ['modified sub/s.txt']);
        assert.equal(committed.children[0]!.commit, committed.meta.nested[0]!.commit);
        assert.equal(gitOut(path.join(dir, 'sub'), ['show', `${committed.children[0]!.commit}:s.txt`]), 's2');
        await moveCheckpointRefs(committed, header(1).ref, true);
        assert.equal(gitOut(dir, ['rev-parse', header(1).ref]), committed.commit);
        assert.equal(gitOut(path.join(dir, 'sub'), ['rev-parse', header(1).ref]), committed.children[0]!.commit);
      } finally {
        await disposeSnapshot(node);
      }
    });
  });

  describe('move-ref', () => {
    it('creates the top-level ref only if absent; nested refs are set first and simply moved', async () => {
      const dir = initRepo(path.join(tmp, 'm'), { 'a.txt': 'a\n' });
      initRepo(path.join(dir, 'sub'), { 's.txt': 's\n' });
      const repo = await resolveRepo(dir);
      const sub = await resolveRepo(path.join(dir, 'sub'));
      const head = gitOut(dir, ['rev-parse', 'HEAD']);
      const subHead = gitOut(sub.root, ['rev-parse', 'HEAD']);
      const ref = header(1).ref;
      await moveRef(repo, ref, head, true);
      const other = gitOut(dir, ['commit-tree', '-m', 'other', 'HEAD^{tree}']);
      await assertRejectsCode(moveRef(repo, ref, other, true), 'checkpoint/checkpointExists', CheckpointError);
      assert.equal(gitOut(dir, ['rev-parse', ref]), head, 'left where it was');
      // The outer ref exists: the nested one is still set (first), the outer one is refused.
      await assertRejectsCode(moveCheckpointRefs({ repo, commit: head, children: [{ repo: sub, commit: subHead, children: [] }] }, ref, true), 'checkpoint/checkpointExists', CheckpointError);
      assert.equal(gitOut(sub.root, ['rev-parse', ref]), subHead);
    });

    it('fast-import refuses to move an existing checkpoint from a stale parent; nested refs (force) move', async () => {
      const dir = initRepo(path.join(tmp, 'st'), { 'a.txt': 'a\n' });
      const repo = await resolveRepo(dir);
      const first = await new GitPlumbingCheckpointStore().captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
      fs.writeFileSync(path.join(dir, 'a.txt'), 'another process\n');
      const second = await new GitPlumbingCheckpointStore().captureCheckpoint({ worktree: dir, threadId: T, trigger: { kind: 'manual' } });
      assert.equal(second.ordinal, 2);
      // This process still remembers ordinal 1 as the last: it aims at ordinal 2 with parent 1.
      const spec = { ref: second.ref, changes: [], message: 'stale\n', timeMs: 0, parent: first.commit, baseTree: null };
      await assert.rejects(fastImportCommit(repo, Promise.resolve(spec), fastImportForce(true)));
      assert.equal(gitOut(dir, ['rev-parse', second.ref]), second.commit, 'the other checkpoint stays');
      const forced = await fastImportCommit(repo, Promise.resolve(spec), fastImportForce(false));
      assert.equal(gitOut(dir, ['rev-parse', second.ref]), forced!.commit);
    });

    it('a stale remembered checkpoint: the target names an existing ordinal, the capture retries from the refs', async () => {
      const dir = initRepo(path.join(tmp, 'rt'), { 'a.txt': 'a\n' });
      const repo = await resolveRepo(dir);
      const memory = new LastCheckpoints();
      const req = { threadId: T, trigger: { kind: 'manual' as const }, timeMs: Date.now(), maxUntrackedBytes: CAP };
      const one = await captureWorktree(repo, req, memory);
      await captureWorktree(repo, req, new LastCheckpoints()); // another process: ordinal 2
      const stale = memory.take(repo.root, T, true);
      assert.deepEqual(stale, { ordinal: 1, commit: one.capture.commit });
      assert.equal((await chooseTarget(repo, req, req.timeMs, stale)).header.ordinal, 2, 'the memory names an ordinal that exists');
      memory.remember(repo.root, T, stale!);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a3\n');
      const three = await captureWorktree(repo, req, memory);
      assert.equal(three.target.header.ordinal, 3);
      assert.equal(three.target.prevCommit, gitOut(dir, ['rev-parse', checkpointRef(T, 2)]));
      assert.deepEqual(memory.take(repo.root, T, true), { ordinal: 3, commit: three.capture.commit });
      // retryIfStale: once more without the memory, only when there was one.
      const seen: unknown[] = [];
      const attempt = async (l: LastCheckpoint | undefined): Promise<string> => {
        seen.push(l);
        if (l) throw new Error('stale');
        return 'ok';
      };
      assert.equal(await retryIfStale(stale, true, attempt), 'ok');
      assert.deepEqual(seen, [stale, undefined]);
      await assert.rejects(retryIfStale(undefined, true, async () => Promise.reject(new Error('real'))), /real/);
    });
  });

  describe('journal', () => {
    it('the warm-state sidecar round-trips (odd paths as bytes, deletions, nested, skipped)', async () => {
      const dir = initRepo(path.join(tmp, 'j'), { 'a.txt': 'a\n' });
      const repo = await resolveRepo(dir);
      const copy = await createTempIndex(repo, repo.indexPath);
      const state: WarmState = {
        tree: gitOut(dir, ['rev-parse', 'HEAD^{tree}']),
        commit: gitOut(dir, ['rev-parse', 'HEAD']),
        fastRuns: 7,
        nested: [
          { rel: repoPath(Buffer.from('sub')), commit: '1'.repeat(40), repo: { root: '/x/sub', gitDir: '/x/sub/.git', indexPath: '/x/sub/.git/index' } },
          { rel: repoPath(NON_UTF8), commit: null, repo: null },
        ],
        skipped: [{ ...repoPath(Buffer.from('big\nname')), bytes: 12345 }],
        attributes: false,
        pending: [
          { rel: repoPath(NON_UTF8), entry: { mode: '100755', sha: '2'.repeat(40) } },
          { rel: repoPath(Buffer.from('gone.txt')), entry: null },
        ],
        conv: [{ raw: Buffer.from('crlf\n.txt'), mode: '100644', sha: '4'.repeat(40), sig: '1:2:3:4:5:6' }],
      };
      await keepWarm(repo, copy.file, state);
      assert.ok(!fs.existsSync(copy.file) && fs.existsSync(warmFiles(repo).index), 'the index file became the warm index');
      assert.deepEqual(await readWarm(repo), state);
      const json = JSON.parse(fs.readFileSync(warmFiles(repo).sidecar, 'utf8')) as { v: number; pending: Array<{ b?: string; p?: string }> };
      assert.equal(json.v, 4);
      assert.deepEqual(json.pending.map((e) => e.b ?? e.p), [NON_UTF8.toString('base64'), 'gone.txt']);
      fs.writeFileSync(warmFiles(repo).sidecar, '{"v":2}');
      assert.equal(await readWarm(repo), null, 'another version is not trusted');
    });

    it('merges changes into the journal, applies a full one to the index, and records the capture', async () => {
      const { dir, repo, warm } = await warmRepo('ja', { 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const sha = (s: string): string => gitOut(dir, ['hash-object', '-w', '--stdin'], s);
      const journal = journalAfter([{ rel: repoPath(Buffer.from('a.txt')), entry: { mode: '100644', sha: sha('old\n') } }], [
        { kind: 'file', raw: Buffer.from('a.txt'), mode: '100755', sha: sha('a2\n') },
        { kind: 'delete', raw: Buffer.from('b.txt') },
      ]);
      assert.deepEqual(journal.map((e) => [e.rel.path, e.entry]), [['a.txt', { mode: '100755', sha: sha('a2\n') }], ['b.txt', null]], 'later entries win');
      assert.equal(journalIsFull({ ...warm, pending: journal }), false);
      assert.equal(journalIsFull({ ...warm, pending: Array.from({ length: WARM_MAX_PENDING }, () => journal[0]!) }), true);
      const copy = await createTempIndex(repo, warmFiles(repo).index);
      await applyJournal(repo, copy.file, journal, Promise.resolve([{ kind: 'file', raw: Buffer.from('c.txt'), mode: '100644', sha: sha('c\n') }]), Promise.resolve(), warm.tree.length, Promise.resolve([]));
      assert.deepEqual([...indexEntries(dir, copy.file)], [['a.txt', `100755 ${sha('a2\n')}`], ['c.txt', `100644 ${sha('c\n')}`]]);
      const written = { commit: '3'.repeat(40), tree: gitOut(dir, ['rev-parse', 'HEAD^{tree}']) };
      const base = { warm, warmIndexId: null, warmIndex: warmFiles(repo).index, written, changes: [{ kind: 'delete' as const, raw: Buffer.from('b.txt') }], nested: [], skipped: [], conv: new Map() };
      await recordIncremental(repo, { ...base, copy: null, flushed: false, fast: true });
      const kept = (await readWarm(repo))!;
      assert.deepEqual([kept.tree, kept.commit, kept.fastRuns, kept.pending.map((e) => [e.rel.path, e.entry])], [written.tree, written.commit, warm.fastRuns + 1, [['b.txt', null]]]);
      await recordIncremental(repo, { ...base, warm: kept, copy: copy.file, flushed: true, fast: false });
      const flushed = (await readWarm(repo))!;
      assert.deepEqual([flushed.fastRuns, flushed.pending], [0, []], 'a flush starts a new journal; a status capture resets the fast-run count');
      assert.deepEqual([...indexEntries(dir, warmFiles(repo).index)].map(([p]) => p), ['a.txt', 'c.txt'], 'the applied copy is the warm index now');
    });
  });

  it('the pipeline import rule: no stage imports the orchestrator or a later stage; helpers import nothing from capture/', () => {
    const root = path.resolve(__dirname, '../../src/engine/checkpoints');
    const order = ['target', 'find-changes', 'write-objects', 'commit', 'move-ref', 'journal'];
    const importsOf = (file: string): string[] => [...fs.readFileSync(file, 'utf8').matchAll(/from\s*'([^']+)'/g)].map((m) => m[1]!);
    const problems: string[] = [];
    order.forEach((stage, i) => {
      for (const imp of importsOf(path.join(root, 'capture', `${stage}.ts`))) {
        if (!imp.startsWith('./')) continue;
        const j = order.indexOf(imp.slice(2));
        if (j < 0 || j >= i) problems.push(`${stage} imports ${imp}`);
      }
    });
    for (const helper of ['repo', 'refs', 'paths', 'concurrency', 'diff', 'nested-repos', 'conversion', 'index-listing', 'warm-state', 'packs', 'restore-writer', 'types']) {
      for (const imp of importsOf(path.join(root, `${helper}.ts`))) if (imp.includes('capture')) problems.push(`${helper} imports ${imp}`);
    }
    assert.deepEqual(problems, []);
  });
});
