/**
 * Property test of the checkpoint store (SPEC §4.2): random file operations (create, modify,
 * delete, rename, chmod, symlink, nested repository create/edit, ignored files, over-cap files)
 * interleaved with full and fast captures, restores and undos, in a real repository whose
 * content conversions are random too (`core.autocrlf`, `core.eol`, a `.gitattributes` drawn from
 * text/eol/ident/filter/working-tree-encoding/-text lines, itself edited by the random steps) and
 * whose tracked files may carry the user's assume-unchanged or skip-worktree flags. After every
 * restore or undo the working tree must equal the model's prediction byte for byte (content,
 * executable bit, symlink target, and nothing else: no conversion ever applies); after every
 * capture it must be unchanged and the checkpoint must hold exactly the model's bytes; and HEAD,
 * branches, the real index (its flags included) and the stash of the repository and every nested
 * repository must never change.
 *
 * The model. The random operations act on the disk directly (they play the user and the agent),
 * so the state before a store call is simply read back from disk. What the model predicts is the
 * store's behaviour:
 *   capture(W)  = for the outer repo and each nested repo: every file and symlink except ignored
 *                 files and untracked files over the cap (and, for the outer repo, anything inside
 *                 a nested repo).
 *   restore(W, R) for the outer repo (and each nested repo R recorded):
 *                 S = capture(W); obstacles = for each path P in R not in S, the first ancestor of P
 *                 that is a file in W but not in S, else P itself if it exists in W (file or dir);
 *                 result = R ∪ (W − S − anything at or under an obstacle). Nested repos R did not
 *                 record are left as they are.
 *   restore point = S ∪ the obstacles' files (so undoing restores W exactly).
 *
 * Reproducible: seeded PRNG (mulberry32). Seed from VOX_PROPERTY_SEED (else a fixed default, printed on
 * failure); steps from VOX_PROPERTY_STEPS, else 1000 with `--long`, else DEFAULT_STEPS (sized to
 * finish well within a minute on 2 cores). VOX_PROPERTY_LOG=1 prints every operation.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitPlumbingCheckpointStore, checkpointRef, packMaintenanceIdle } from '../../src/engine/checkpoints/git-checkpoints';
import { commitSnapshot, initRepo, snapshotDiff, treeSnapshot, type Entry } from '../support/git-fixtures';
import { gitBuf, gitOut } from '../support/git';
import { Rng } from '../support/random';
import { drawConversions } from '../support/conversions';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoFingerprint } from '../support/user-repo';

/** Steps in a default (CI) run. */
const DEFAULT_STEPS = 150;
/** Steps with `--long`. */
const LONG_STEPS = 1000;
/** Untracked size cap given to the store under test (bytes). */
const CAP = 2048;
/** Most nested repositories the generator creates (besides the registered `sub0`). */
const MAX_NESTED = 3;
/** Operations kept in the failure report. */
const REPORT_TAIL = 40;

const STEPS = Number(process.env.VOX_PROPERTY_STEPS ?? (process.argv.includes('--long') ? LONG_STEPS : DEFAULT_STEPS));
/** Fixed default seed so CI is deterministic; set VOX_PROPERTY_SEED to explore others. */
const DEFAULT_SEED = 20_261_130;
const SEED = Number(process.env.VOX_PROPERTY_SEED ?? DEFAULT_SEED);

// Paths are latin1 strings (one char per byte) so non-UTF-8 names work as map keys.
const L = (s: string | Buffer): string => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('latin1');
const DIRS = ['', 'd1/', 'd1/d2/', 'd3/'];
const NAMES = ['a', 'b.txt', 'sp ace.md', 'nl\nx', '-dash', 'd1', 'd2'].map(L).concat([L(Buffer.from([0x6e, 0x75, 0xff, 0x2e, 0x62]))]);
const IGNORED = ['x.log', 'd1/y.log', 'd3/z.log', 'ign/cache', 'ign/deep/c2'].map(L);
const NESTED_NAMES = ['f', 'g.txt', 'in/h h', L(Buffer.from([0x71, 0xe9]))].map(L);
const LINK_TARGETS = ['a', 'd1', 'd1/b.txt', 'missing', '../escape', 'nl\nx'];

type Snap = Map<string, Entry>;
interface Rec { outer: Snap; nested: Map<string, Snap> }
interface NestedRepo { root: string; tracked: Set<string>; gitDir: string; fingerprint: string }

describe('checkpoint store property test', function () {
  this.timeout(Math.max(120_000, STEPS * 2_000));
  let tmp: string;
  let failed = false;

  beforeEach(() => {
    tmp = makeTmpDir('vox-cp-prop-');
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      failed = true;
      console.error(`checkpoint property test failed: reproduce with VOX_PROPERTY_SEED=${SEED} VOX_PROPERTY_STEPS=${STEPS}`);
    }
    // Restore points add packs too: a background consolidation may still be writing.
    await packMaintenanceIdle();
    if (!failed || !process.env.VOX_PROPERTY_KEEP) removeTmpDir(tmp);
  });

  it(`keeps the working tree equal to the model over ${STEPS} random steps (seed ${SEED})`, async () => {
    const rng = new Rng(SEED);
    const root = path.join(tmp, 'repo');
    const abs = (p: string): Buffer => Buffer.concat([Buffer.from(`${root}/`), Buffer.from(p, 'latin1')]);
    initRepo(root, { '.gitignore': '*.log\n/ign/\n', a: 'tracked a\n', 'd1/b.txt': 'tracked b\n', 'run.sh': '#!/bin/sh\necho hi\n' });
    // A registered nested repository (gitlink in HEAD and in the real index).
    initRepo(path.join(root, 'sub0'), { 'f': 'sub0 f\n', 'g.txt': 'sub0 g\n' });
    gitBuf(root, ['add', 'sub0']);
    gitBuf(root, ['commit', '-q', '-m', 'add sub0']);
    const trackedOuter = new Set(gitBuf(root, ['ls-files', '-z']).toString('latin1').split('\0').filter(Boolean));
    // Git's content conversions and the user's index flags, drawn once per run (the steps below may edit .gitattributes).
    const conversions = drawConversions(rng, root, ['a', 'd1/b.txt', 'run.sh']);
    const nested: NestedRepo[] = [{ root: 'sub0', tracked: new Set(['f', 'g.txt']), gitDir: path.join(root, 'sub0', '.git'), fingerprint: '' }];
    nested[0]!.fingerprint = userRepoFingerprint(nested[0]!.gitDir);
    const outerFingerprint = userRepoFingerprint(path.join(root, '.git'));

    const store = new GitPlumbingCheckpointStore({ maxUntrackedFileBytes: CAP });
    const threads = ['thread:prop-a', 'thread:prop-b'];
    const checkpoints: Array<{ threadId: string; ordinal: number; rec: Rec }> = [];
    const restorePoints: Array<{ ref: string; rec: Rec; before: Snap; after: Snap }> = [];
    let touched = new Set<string>();
    const log: string[] = [];
    const counts: Record<string, number> = {};

    // ---- model ------------------------------------------------------------------------------
    const nestedOf = (p: string): NestedRepo | undefined => nested.find((n) => p.startsWith(`${n.root}/`));
    const isIgnored = (p: string): boolean => p.startsWith('ign/') || p.split('/').pop()!.endsWith('.log');
    const isBig = (e: Entry, tracked: boolean): boolean => e.kind === 'file' && e.content.length > CAP && !tracked;
    function split(w: Snap): { outerS: Snap; outerRest: Snap; nestedS: Map<string, Snap>; nestedRest: Map<string, Snap> } {
      const outerS: Snap = new Map();
      const outerRest: Snap = new Map();
      const nestedS = new Map(nested.map((n) => [n.root, new Map() as Snap]));
      const nestedRest = new Map(nested.map((n) => [n.root, new Map() as Snap]));
      for (const [p, e] of w) {
        const n = nestedOf(p);
        if (n) {
          const rel = p.slice(n.root.length + 1);
          (isBig(e, n.tracked.has(rel)) ? nestedRest : nestedS).get(n.root)!.set(rel, e);
        } else if (isIgnored(p) || isBig(e, trackedOuter.has(p))) {
          outerRest.set(p, e);
        } else {
          outerS.set(p, e);
        }
      }
      return { outerS, outerRest, nestedS, nestedRest };
    }
    const capture = (w: Snap): Rec => {
      const s = split(w);
      return { outer: s.outerS, nested: s.nestedS };
    };
    const under = (p: string, o: string): boolean => p === o || p.startsWith(`${o}/`);
    /** One repository's restore: returns the resulting files and the restore point's files. */
    function restoreOne(s: Snap, rest: Snap, target: Snap): { result: Snap; saved: Snap } {
      const all = new Map([...s, ...rest]);
      const obstacles = new Set<string>();
      for (const p of target.keys()) {
        if (s.has(p)) continue;
        const parts = p.split('/');
        let blocked = false;
        for (let i = 1; i < parts.length && !blocked; i++) {
          const anc = parts.slice(0, i).join('/');
          if (all.has(anc)) {
            blocked = true;
            if (!s.has(anc)) obstacles.add(anc);
          }
        }
        if (!blocked && [...all.keys()].some((q) => under(q, p))) obstacles.add(p);
      }
      const covered = (p: string): boolean => [...obstacles].some((o) => under(p, o));
      const result: Snap = new Map(target);
      for (const [p, e] of rest) if (!covered(p)) result.set(p, e);
      const saved: Snap = new Map(s);
      for (const [p, e] of rest) if (covered(p)) saved.set(p, e);
      return { result, saved };
    }
    function predictRestore(w: Snap, rec: Rec): { expected: Snap; rp: Rec } {
      const s = split(w);
      const o = restoreOne(s.outerS, s.outerRest, rec.outer);
      const expected: Snap = new Map(o.result);
      const rp: Rec = { outer: o.saved, nested: new Map() };
      for (const n of nested) {
        const ns = s.nestedS.get(n.root)!;
        const nr = s.nestedRest.get(n.root)!;
        const target = rec.nested.get(n.root);
        const r = target ? restoreOne(ns, nr, target) : { result: new Map([...ns, ...nr]), saved: ns };
        for (const [p, e] of r.result) expected.set(`${n.root}/${p}`, e);
        rp.nested.set(n.root, r.saved);
      }
      return { expected, rp };
    }

    // ---- generator helpers -------------------------------------------------------------------
    const disk = (): Snap => treeSnapshot(root);
    const touch = (p: string): void => {
      touched.add(p);
    };
    /** Makes room for a file at `p`: non-directories above it and anything at it are removed. */
    function makeRoom(p: string): void {
      const parts = p.split('/');
      for (let i = 1; i < parts.length; i++) {
        const anc = parts.slice(0, i).join('/');
        const st = fs.lstatSync(abs(anc), { throwIfNoEntry: false });
        if (st && !st.isDirectory()) {
          fs.rmSync(abs(anc));
          touch(anc);
        }
      }
      fs.mkdirSync(abs(parts.slice(0, -1).join('/') || '.'), { recursive: true });
      const st = fs.lstatSync(abs(p), { throwIfNoEntry: false });
      if (st?.isDirectory()) {
        fs.rmSync(abs(p), { recursive: true, force: true });
        touch(p);
      }
    }
    const content = (): Buffer => {
      if (rng.chance(0.1)) return Buffer.alloc(0);
      if (rng.chance(0.2)) return Buffer.from(Array.from({ length: 1 + rng.int(200) }, () => rng.int(256)));
      return Buffer.from(Array.from({ length: 1 + rng.int(6) }, () => `line ${rng.int(1000)}\n`).join(''));
    };
    const normalPath = (): string => rng.pick(DIRS) + rng.pick(NAMES);
    const existingNormal = (w: Snap): string[] => [...w.keys()].filter((p) => !nestedOf(p) && !isIgnored(p) && p !== '.gitignore');
    function write(p: string, data: Buffer, exec = rng.chance(0.2)): void {
      makeRoom(p);
      if (fs.lstatSync(abs(p), { throwIfNoEntry: false })?.isSymbolicLink()) fs.rmSync(abs(p)); // never write through a link
      fs.writeFileSync(abs(p), data);
      fs.chmodSync(abs(p), exec ? 0o755 : 0o644);
      touch(p);
    }
    const label = (p: string): string => JSON.stringify(Buffer.from(p, 'latin1').toString('utf8'));

    async function checkUserState(where: string): Promise<void> {
      assert.equal(userRepoFingerprint(path.join(root, '.git')), outerFingerprint, `${where}: outer HEAD/branch/index/stash changed`);
      for (const n of nested) assert.equal(userRepoFingerprint(n.gitDir), n.fingerprint, `${where}: ${n.root} HEAD/branch/index/stash changed`);
    }
    function fail(msg: string, problems: string[]): never {
      assert.fail(`${msg}\nseed=${SEED} steps=${STEPS}; ${conversions}\n${problems.slice(0, 20).join('\n')}\nlast operations:\n${log.slice(-REPORT_TAIL).join('\n')}`);
    }

    // ---- the run -----------------------------------------------------------------------------
    for (let step = 0; step < STEPS; step++) {
      const op = rng.weighted({
        write: 20, delete: 8, rename: 5, chmod: 5, symlink: 5, nestedCreate: 2, nestedEdit: 8, ignored: 5, big: 3,
        capture: 8, fastCapture: 6, restore: 8, undo: 4,
      });
      counts[op] = (counts[op] ?? 0) + 1;
      try {
        await runStep(step, op);
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        fail(`step ${step} (${op}) threw: ${(err as Error).stack ?? String(err)}`, []);
      }
    }
    // Everything the store wrote is under refs/vox; the temp indexes are gone.
    assert.deepEqual(fs.readdirSync(path.join(root, '.git')).filter((n) => n.startsWith('vox-index-')), []);
    assert.equal(gitOut(root, ['for-each-ref', '--format=%(refname)', 'refs/heads']), 'refs/heads/main');
    console.log(`      seed ${SEED}, ${STEPS} steps, ${conversions}: ${JSON.stringify(counts)}`);
    if (process.env.VOX_PROPERTY_LOG) console.log(log.join('\n'));
    // All three capture paths were exercised (a run of this length always has each of them).
    if (STEPS >= DEFAULT_STEPS) for (const k of ['capturedFull', 'capturedIncremental', 'capturedFast']) assert.ok((counts[k] ?? 0) > 0, `no ${k} in ${STEPS} steps (seed ${SEED})`);
    async function runStep(step: number, op: string): Promise<void> {
      const w = disk();
      const normals = existingNormal(w);
      switch (op) {
        case 'write': {
          const p = rng.chance(0.6) && normals.length ? rng.pick(normals) : normalPath();
          write(p, content());
          log.push(`${step} write ${label(p)}`);
          break;
        }
        case 'delete': {
          if (!normals.length) break;
          const p = rng.pick(normals);
          fs.rmSync(abs(p));
          touch(p);
          log.push(`${step} delete ${label(p)}`);
          break;
        }
        case 'rename': {
          const files = normals.filter((p) => w.get(p)!.kind === 'file');
          if (!files.length) break;
          const from = rng.pick(files);
          const to = normalPath();
          if (to === from || to.startsWith(`${from}/`) || from.startsWith(`${to}/`)) break;
          const data = fs.readFileSync(abs(from));
          const mode = fs.statSync(abs(from)).mode & 0o777;
          fs.rmSync(abs(from));
          touch(from);
          write(to, data, (mode & 0o100) !== 0);
          log.push(`${step} rename ${label(from)} -> ${label(to)}`);
          break;
        }
        case 'chmod': {
          const files = [...w.keys()].filter((p) => w.get(p)!.kind === 'file' && !isIgnored(p));
          if (!files.length) break;
          const p = rng.pick(files);
          const mode = fs.statSync(abs(p)).mode & 0o777;
          fs.chmodSync(abs(p), mode & 0o100 ? 0o644 : 0o755);
          touch(p);
          log.push(`${step} chmod ${label(p)}`);
          break;
        }
        case 'symlink': {
          const p = normalPath();
          makeRoom(p);
          fs.rmSync(abs(p), { force: true });
          fs.symlinkSync(rng.pick(LINK_TARGETS), abs(p));
          touch(p);
          log.push(`${step} symlink ${label(p)}`);
          break;
        }
        case 'nestedCreate': {
          if (nested.length > MAX_NESTED) break;
          const name = `nest${nested.length}`;
          const withCommit = rng.chance(0.5);
          initRepo(path.join(root, name), withCommit ? { f: `${name} f\n` } : undefined);
          fs.writeFileSync(path.join(root, name, 'g.txt'), `${name} untracked\n`);
          nested.push({ root: name, tracked: new Set(withCommit ? ['f'] : []), gitDir: path.join(root, name, '.git'), fingerprint: userRepoFingerprint(path.join(root, name, '.git')) });
          touch(name);
          log.push(`${step} nestedCreate ${name} ${withCommit ? 'with' : 'without'} commit`);
          break;
        }
        case 'nestedEdit': {
          const n = rng.pick(nested);
          const p = `${n.root}/${rng.pick(NESTED_NAMES)}`;
          if (w.has(p) && rng.chance(0.3)) {
            fs.rmSync(abs(p));
            touch(p);
            log.push(`${step} nestedDelete ${label(p)}`);
          } else {
            write(p, content());
            log.push(`${step} nestedWrite ${label(p)}`);
          }
          break;
        }
        case 'ignored': {
          const p = rng.pick(IGNORED);
          write(p, content());
          log.push(`${step} ignored ${label(p)}`);
          break;
        }
        case 'big': {
          const p = rng.chance(0.2) ? `${rng.pick(nested).root}/${rng.pick(NESTED_NAMES)}` : normalPath();
          write(p, Buffer.alloc(CAP + 1 + rng.int(CAP), 0x41 + rng.int(26)));
          log.push(`${step} big ${label(p)}`);
          break;
        }
        case 'capture':
        case 'fastCapture': {
          const threadId = rng.pick(threads);
          const changedPaths = op === 'fastCapture' ? [...touched].map((p) => Buffer.from(p, 'latin1')) : undefined;
          const r = await store.captureCheckpoint({ worktree: root, threadId, trigger: { kind: 'tool', toolName: op }, changedPaths });
          touched = new Set();
          const after = disk();
          const problems = snapshotDiff(w, after);
          if (problems.length) fail(`step ${step}: capture changed the working tree`, problems);
          const rec = capture(w);
          const expectedSkipped = [...split(w).outerRest.keys()].filter((p) => !isIgnored(p))
            .concat(nested.flatMap((n) => [...split(w).nestedRest.get(n.root)!.keys()].map((p) => `${n.root}/${p}`)));
          const gotSkipped = r.skipped.map((s) => L(s.raw)).sort();
          if (JSON.stringify(gotSkipped) !== JSON.stringify(expectedSkipped.sort())) fail(`step ${step}: skipped files ${JSON.stringify(gotSkipped.map(label))}, expected ${JSON.stringify(expectedSkipped.map(label))} (incremental=${r.incremental}, fast=${r.fast})`, []);
          // What the checkpoint holds, read back from git, is exactly the model's capture.
          log.push(`${step} ${op} -> ${r.ref} fast=${r.fast} incremental=${r.incremental}`);
          const held = snapshotDiff(rec.outer, commitSnapshot(root, r.commit));
          if (held.length) fail(`step ${step}: the checkpoint's tree differs from the model (incremental=${r.incremental}, fast=${r.fast})`, held);
          for (const n of r.nested) {
            const want = rec.nested.get(L(n.raw));
            const got = snapshotDiff(want ?? new Map(), commitSnapshot(path.join(root, L(n.raw)), n.commit));
            if (got.length) fail(`step ${step}: nested ${L(n.raw)} checkpoint differs from the model (incremental=${r.incremental})`, got);
          }
          checkpoints.push({ threadId, ordinal: r.ordinal, rec });
          const kind = r.fast ? 'capturedFast' : r.incremental ? 'capturedIncremental' : 'capturedFull';
          counts[kind] = (counts[kind] ?? 0) + 1;
          await checkUserState(`step ${step} ${op}`);
          break;
        }
        case 'restore': {
          if (!checkpoints.length) break;
          const cp = rng.pick(checkpoints);
          const { expected, rp } = predictRestore(w, cp.rec);
          const res = await store.restoreCheckpoint({ worktree: root, threadId: cp.threadId, ordinal: cp.ordinal, mode: 'files' });
          touched = new Set();
          const after = disk();
          const problems = snapshotDiff(expected, after);
          log.push(`${step} restore ${checkpointRef(cp.threadId, cp.ordinal)} -> ${res.restorePoint} preserved=${res.preserved.length}`);
          if (problems.length) fail(`step ${step}: restore result differs from the model`, problems);
          restorePoints.push({ ref: res.restorePoint, rec: rp, before: w, after });
          await checkUserState(`step ${step} restore`);
          break;
        }
        case 'undo': {
          if (!restorePoints.length) break;
          const rp = rng.chance(0.7) ? restorePoints[restorePoints.length - 1]! : rng.pick(restorePoints);
          const { expected, rp: next } = predictRestore(w, rp.rec);
          const res = await store.undoRestore({ worktree: root, restorePoint: rp.ref });
          touched = new Set();
          const after = disk();
          log.push(`${step} undo ${rp.ref} -> ${res.restorePoint}`);
          const problems = snapshotDiff(expected, after);
          if (problems.length) fail(`step ${step}: undo result differs from the model`, problems);
          if (snapshotDiff(rp.after, w).length === 0) {
            const exact = snapshotDiff(rp.before, after);
            if (exact.length) fail(`step ${step}: undo right after its restore is not byte for byte the pre-restore state`, exact);
            counts.exactUndo = (counts.exactUndo ?? 0) + 1;
          }
          restorePoints.push({ ref: res.restorePoint, rec: next, before: w, after });
          await checkUserState(`step ${step} undo`);
          break;
        }
      }
    }
  });
});
