/**
 * Incremental capture from the warm state (SPEC §4.2: a cost proportional to what changed).
 *
 * The repository's warm index (`capture/warm.ts`: an index file W0 plus a journal of changes,
 * together the last captured tree W) tells what changed since W, in one of two ways
 * (`capture/scan.ts`):
 *   - status mode (every capture without `changedPaths`): one `git status --porcelain=v2 -z
 *     -uall` on a copy of the index file, with git's untracked cache on; the journal's paths are
 *     compared too. Gitlinks are ignored there; nested repositories are captured inside
 *     themselves, recursively, by the same mechanism (their scans run alongside);
 *   - reported mode (`changedPaths`, from the agent's own edit tools; the caller guarantees
 *     nothing else changed): the index file read directly for just those paths, one
 *     `check-ignore` for paths not in W — no walk at all.
 * The changes are committed by fast-import on top of W (`capture/fast-import.ts`) and
 * journaled. The commit's "files changed" is relative to the thread's previous checkpoint P:
 * the diff P→W (nothing when P is the last capture, the usual case) composed with W→new.
 *
 * Anything unusual returns null and the caller takes the full snapshot instead (which decides,
 * and reports real failures): no warm state, a new nested repository, an unmerged entry, a
 * special file, a file in W now over the size cap, an unreadable file, a reported directory, a
 * failed fast-import.
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { canonicalPath } from '../../platform/workspace-lease';
import { createTempIndex, emptyTree, headCommit, readCommit, setRef, type RepoInfo, type TempIndex } from '../repo';
import { formatCommitMessage, parseCommitMessage, type CommitMeta } from '../refs';
import { rawDiff, relKey, type RawDiffEntry } from '../diff';
import { GITLINK_MODE, MAX_NESTED_DEPTH, absBytes } from '../nested-repos';
import { settleLimit, NESTED_CONCURRENCY } from './snapshot';
import { applyToIndex, changeMode, deferred, fastImportCommit, type Deferred, type FastImportCommit, type TreeChange } from './fast-import';
import { FallBack, isAttributesPath, lstatOrNull, scanReported, scanStatus, toChanges, under, type Candidate } from './scan';
import { WARM_MAX_FAST_CAPTURES, WARM_MAX_PENDING, dropWarmIndex, keepWarm, readWarm, warmFiles, type PendingEntry, type WarmNested, type WarmState } from './warm';
import { repoPath, type ChangeStatus, type ChangedFile, type NestedCheckpoint } from '../types';
import { checkpointMeta, withNestedChanges, withNestedFiles, type CheckpointHeader } from './commit';
import { maybeConsolidatePacks } from '../packs';
import { indexIdentity, indexReplacedSameEntries } from '../../git/index-file';

/** What a capture of one repository produced. */
export interface RepoCapture {
  commit: string;
  tree: string;
  meta: CommitMeta;
  /** The repository's HEAD commit when it was captured (null: no commit yet). */
  head: string | null;
  warnings: string[];
}

/** Captures a nested repository the full way (the caller's fallback for one nested repository). */
export type FullNestedCapture = (repo: RepoInfo, rel: Buffer, prevCommit: string | null, depth: number) => Promise<RepoCapture>;

export interface DeltaContext {
  /** The header and the thread's previous checkpoint in this repository, once refs are listed. */
  head: Promise<{ header: CheckpointHeader; prevCommit: string | null }>;
  maxUntrackedBytes: number;
  /** Paths relative to the root (reported mode), or null (status mode). */
  changedPaths: Buffer[] | null;
  isTop: boolean;
  depth: number;
  fullNested: FullNestedCapture;
}

function kindOfMode(mode: string): string {
  return mode === '120000' ? 'link' : mode === GITLINK_MODE ? 'gitlink' : 'file';
}

/**
 * "Files changed" against P: the diff P→W (`d1`, from diff-tree) composed with the changes W→new
 * (`changes`, with W's entries in `before`). Gitlinks of repositories captured inside are left to
 * their own lists.
 */
export function composeChanges(d1: RawDiffEntry[], changes: TreeChange[], before: Map<string, Candidate['before']>, nestedKeys: Set<string>): ChangedFile[] {
  const byKey = new Map<string, { raw: Buffer; a: { mode: string; sha: string } | null; c: { mode: string; sha: string } | null }>();
  const present = (mode: string, sha: string): { mode: string; sha: string } | null => (/^0+$/.test(mode) ? null : { mode, sha });
  for (const e of d1) byKey.set(relKey(e.raw), { raw: e.raw, a: present(e.srcMode, e.srcSha), c: present(e.dstMode, e.dstSha) });
  for (const ch of changes) {
    const key = relKey(ch.raw);
    const mode = changeMode(ch);
    const after = mode === null ? null : { mode, sha: (ch as { sha: string }).sha };
    const prev = byKey.get(key);
    byKey.set(key, { raw: ch.raw, a: prev ? prev.a : before.get(key) ?? null, c: after });
  }
  const out: ChangedFile[] = [];
  for (const [key, v] of byKey) {
    if (nestedKeys.has(key)) continue;
    if (v.a && v.c && v.a.mode === v.c.mode && v.a.sha === v.c.sha) continue;
    if (!v.a && !v.c) continue;
    const status: ChangeStatus = !v.a ? 'added' : !v.c ? 'deleted' : kindOfMode(v.a.mode) !== kindOfMode(v.c.mode) ? 'typeChanged' : 'modified';
    out.push({ ...repoPath(v.raw), status });
  }
  return out.sort((x, y) => Buffer.compare(x.raw, y.raw));
}

/** Metadata reads here are synchronous (see `capture/scan.ts`). */
function readTextOr(p: Buffer, fallback: string): string {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return fallback;
  }
}

/** Thrown when the refs say the capture cannot happen at all (not a reason to fall back). */
class HeadFailed extends Error {
  constructor(readonly reason: unknown) {
    super('refs');
  }
}

/**
 * Normalises reported paths to bytes relative to `root`; null when one cannot be trusted (outside
 * the worktree, a `.git` segment, or below a directory holding a `.git` that is not a known
 * nested repository — one may have appeared since the last capture).
 */
export async function normalizeReported(root: string, paths: Array<string | Buffer>, nested: Buffer[]): Promise<Buffer[] | null> {
  const out: Buffer[] = [];
  const checkedDirs = new Map<string, boolean>();
  for (const p of paths) {
    let rel: Buffer;
    if (typeof p === 'string') {
      // Canonicalise the directory only: the last component may itself be a symlink.
      const abs = nodePath.isAbsolute(p) ? nodePath.join(canonicalPath(nodePath.dirname(p)), nodePath.basename(p)) : nodePath.resolve(root, p);
      const r = nodePath.relative(root, abs);
      if (!r || r === '..' || r.startsWith(`..${nodePath.sep}`) || nodePath.isAbsolute(r)) return null;
      rel = Buffer.from(r.split(nodePath.sep).join('/'), 'utf8');
    } else {
      rel = Buffer.from(p);
    }
    const segs = rel.toString('latin1').split('/');
    if (segs.some((x) => x === '' || x === '.' || x === '..' || x === '.git') || rel.includes(0)) return null;
    if (!nested.some((n) => n.equals(rel) || under(n, rel))) {
      for (let i = rel.indexOf(0x2f); i >= 0; i = rel.indexOf(0x2f, i + 1)) {
        const key = relKey(rel.subarray(0, i));
        if (!checkedDirs.has(key)) checkedDirs.set(key, lstatOrNull(absBytes(root, Buffer.concat([rel.subarray(0, i), Buffer.from('/.git')]))) !== null);
        if (checkedDirs.get(key)) return null;
      }
    }
    out.push(rel);
  }
  return out;
}

/** The previous checkpoint P as far as this repository is concerned. */
interface Prev {
  header: CheckpointHeader;
  prevCommit: string | null;
  /** P's tree when known without reading (it is W), or its commit object. */
  prevObj: { tree: string; message?: string } | null;
  prevNested: Map<string, string>;
}

/** Resolves the header and reads P (commit, tree, nested commits) once refs are listed. */
async function readPrev(repo: RepoInfo, warm: WarmState, head: DeltaContext['head']): Promise<Prev> {
  const { header, prevCommit } = await head.catch((err: unknown) => {
    throw new HeadFailed(err);
  });
  // When P is the commit the warm state was made for, its tree and nested commits are known.
  if (prevCommit && prevCommit === warm.commit) {
    return { header, prevCommit, prevObj: { tree: warm.tree }, prevNested: new Map(warm.nested.flatMap((n) => (n.commit ? [[relKey(n.rel.raw), n.commit] as const] : []))) };
  }
  const prevObj = prevCommit ? await readCommit(repo, prevCommit).catch(() => null) : null;
  const meta = prevObj ? parseCommitMessage(prevObj.message) : null;
  return { header, prevCommit, prevObj, prevNested: new Map((meta?.nested ?? []).map((n) => [relKey(n.raw), n.commit])) };
}

/** One nested repository's part of this capture. */
interface NestedPart {
  rel: Buffer;
  capture: RepoCapture | null;
  /** Reused from the last capture (reported mode, nothing reported inside), with its ref being set. */
  reused: (NestedCheckpoint & { refSet: Promise<void> }) | null;
  gitlink: TreeChange | null;
  warm: WarmNested;
}

/** Whether `rel` still holds the nested repository `known` (its `.git` leads to the same git dir). */
async function stillNested(parent: RepoInfo, rel: Buffer, known: RepoInfo): Promise<boolean> {
  const dir = absBytes(parent.root, rel);
  if (!lstatOrNull(dir)?.isDirectory()) return false;
  const dotGit = Buffer.concat([dir, Buffer.from('/.git')]);
  const st = lstatOrNull(dotGit);
  let gitDir: string;
  if (st?.isDirectory()) {
    gitDir = dotGit.toString('utf8');
  } else if (st?.isFile()) {
    // A gitfile (submodule or linked worktree): `gitdir: <path>`, relative to the directory.
    const m = /^gitdir: (.+)$/m.exec(readTextOr(dotGit, ''));
    if (!m) return false;
    gitDir = nodePath.resolve(dir.toString('utf8'), m[1]!.trim());
  } else {
    return false;
  }
  return canonicalPath(gitDir) === canonicalPath(known.gitDir);
}

/** Captures (or, in reported mode when nothing inside was reported, reuses) one nested repository. */
async function captureNested(repo: RepoInfo, n: WarmNested, prevP: Promise<Prev>, ctx: DeltaContext, dirty: boolean): Promise<NestedPart> {
  if (!n.repo) return { rel: n.rel.raw, capture: null, reused: null, gitlink: null, warm: n };
  if (!(await stillNested(repo, n.rel.raw, n.repo))) throw new FallBack('a nested repository changed shape');
  if (!dirty && n.commit) {
    // The caller guarantees nothing changed inside (HEAD included): the gitlink stays as it is.
    // Its commit stays reachable under this checkpoint's name too; the ref is set as soon as the
    // name is known, while the rest is prepared (a full capture that takes over sets it again).
    const repoInfo = n.repo;
    const commit = n.commit;
    const refSet = prevP.then((p) => setRef(repoInfo, p.header.ref, commit));
    refSet.catch(() => undefined);
    return { rel: n.rel.raw, capture: null, reused: { ...n.rel, commit, refSet }, gitlink: null, warm: n };
  }
  // Its scan starts now; only its commit waits for the outer refs.
  const head = prevP.then((p) => ({ header: p.header, prevCommit: p.prevNested.get(relKey(n.rel.raw)) ?? null }));
  const sub: DeltaContext = { ...ctx, changedPaths: null, isTop: false, depth: ctx.depth + 1, head };
  const capture = (await captureDelta(n.repo, sub)) ?? (await ctx.fullNested(n.repo, n.rel.raw, (await head).prevCommit, ctx.depth + 1));
  // A nested repository without a commit is left out of the outer tree (as `add -A` would fail on it).
  const gitlink: TreeChange = capture.head ? { kind: 'gitlink', raw: n.rel.raw, sha: capture.head } : { kind: 'delete', raw: n.rel.raw };
  return { rel: n.rel.raw, capture, reused: null, gitlink, warm: { rel: n.rel, commit: capture.commit, repo: n.repo } };
}

/** Id of the empty tree (sha1 or sha256); it needs no object in the repository. */
function isEmptyTree(tree: string): boolean {
  return tree === '4b825dc642cb6eb9a060e54bf8d69288fbee4904' || tree === '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';
}

/** The journal after `changes` (later entries win; gitlinks of nested repositories included). */
function journal(pending: PendingEntry[], changes: TreeChange[]): PendingEntry[] {
  const byKey = new Map(pending.map((e) => [relKey(e.rel.raw), e]));
  for (const c of changes) {
    const mode = changeMode(c);
    byKey.set(relKey(c.raw), { rel: repoPath(c.raw), entry: mode === null ? null : { mode, sha: (c as { sha: string }).sha } });
  }
  return [...byKey.values()];
}

/** Journal entries as index changes (to apply them to the index file: only mode and id are used). */
function asChanges(pending: PendingEntry[]): TreeChange[] {
  return pending.map((e): TreeChange => {
    if (!e.entry) return { kind: 'delete', raw: e.rel.raw };
    const { mode, sha } = e.entry;
    if (mode === '120000') return { kind: 'symlink', raw: e.rel.raw, target: Buffer.alloc(0), sha };
    if (mode === GITLINK_MODE) return { kind: 'gitlink', raw: e.rel.raw, sha };
    return { kind: 'file', raw: e.rel.raw, mode: mode === '100755' ? '100755' : '100644', sha };
  });
}

/**
 * Captures `repo` incrementally; null when the full snapshot must decide instead (any failure
 * before something is written counts). A failure while writing throws.
 *
 * The changes are journaled in the sidecar instead of being written into the warm index file
 * (an index rewrite costs as much as reading it): the file stays W0 and the journal turns it
 * into W. Once the journal holds WARM_MAX_PENDING entries, a capture applies it
 * (`update-index --index-info` on the copy, alongside fast-import). Status mode keeps its copy
 * (refreshed stat data, untracked cache) as the new index file; reported mode reads the index
 * file in place and copies it only to apply the journal.
 *
 * The scan's process starts first; fast-import starts right after and waits for its input, so
 * its start-up overlaps the scan.
 */
export async function captureDelta(repo: RepoInfo, ctx: DeltaContext): Promise<RepoCapture | null> {
  const warm = await readWarm(repo);
  if (!warm || ctx.depth > MAX_NESTED_DEPTH) return null;
  if (ctx.changedPaths && warm.fastRuns >= WARM_MAX_FAST_CAPTURES) return null;
  const flush = warm.pending.length >= WARM_MAX_PENDING;
  const warmIndex = warmFiles(repo).index;
  const warmId = indexIdentity(warmIndex);
  let index: TempIndex | null = !ctx.changedPaths || flush ? await createTempIndex(repo, warmIndex) : null;
  try {
    if (!fs.existsSync(index?.file ?? warmIndex)) return null;
    const scanned = deferred<void>();
    const planP = prepare(repo, index?.file ?? warmIndex, warm, ctx, scanned);
    planP.catch(() => undefined);
    const commit = deferred<FastImportCommit | null>();
    const written = fastImportCommit(repo, commit.promise, !ctx.isTop);
    written.catch(() => undefined);
    // Applying the journal waits for the status (which writes the copy too) in status mode.
    const toApply = commit.promise.then((c) => (c ? asChanges(journal(warm.pending, c.changes)) : null));
    const indexed = flush && index ? (ctx.changedPaths ? Promise.resolve() : scanned.promise).then(() => applyToIndex(repo, index!.file, toApply, '0'.repeat(warm.tree.length))) : Promise.resolve();
    indexed.catch(() => undefined);
    let plan: Plan;
    try {
      plan = await planP;
    } catch (err) {
      commit.resolve(null);
      scanned.resolve();
      await Promise.allSettled([written, indexed]);
      if (err instanceof HeadFailed) throw err.reason;
      return null;
    }
    commit.resolve(plan.commit);
    const reusedRefs = Promise.all(plan.nested.flatMap((n) => (n.reused ? [n.reused.refSet] : [])));
    const [wr, ir, rr] = await Promise.allSettled([written, indexed, reusedRefs]);
    // If fast-import failed (the ref appeared meanwhile, an object is gone), nothing was written:
    // the full snapshot decides, and reports a real failure.
    const w = wr.status === 'fulfilled' ? wr.value : null;
    if (!w) return null;
    if (ir.status === 'rejected' || rr.status === 'rejected') {
      // The checkpoint exists; only the warm state is in doubt: the next capture starts afresh.
      await dropWarmIndex(repo);
      return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: [...plan.warnings, `the warm index was dropped: ${String((ir.status === 'rejected' ? ir.reason : (rr as PromiseRejectedResult).reason) as Error)}`.slice(0, 500)], head: plan.head };
    }
    const attributes = warm.attributes || plan.commit.changes.some((c) => isAttributesPath(c.raw));
    const pending = flush ? [] : journal(warm.pending, plan.commit.changes);
    const state: WarmState = { tree: w.tree, pending, commit: w.commit, fastRuns: ctx.changedPaths ? warm.fastRuns + 1 : 0, nested: plan.nested.map((n) => n.warm), skipped: plan.commit.meta.skipped, attributes };
    await keepWarm(repo, index?.file ?? null, state);
    // A status refresh leaves the entries as they were: the parsed copy stays good.
    if (index && !flush) indexReplacedSameEntries(warmIndex, warmId);
    index = null;
    maybeConsolidatePacks(repo);
    return { commit: w.commit, tree: w.tree, meta: plan.commit.meta, warnings: plan.warnings, head: plan.head };
  } finally {
    if (index) await index.dispose();
  }
}

interface Plan {
  commit: FastImportCommit & { meta: CommitMeta };
  head: string | null;
  nested: NestedPart[];
  warnings: string[];
}

/** Everything before the first write: scan, hash, nested repositories, metadata. */
async function prepare(repo: RepoInfo, index: string, warm: WarmState, ctx: DeltaContext, scanned: Deferred<void>): Promise<Plan> {
  const reported = ctx.changedPaths;
  {
    const scanP = reported ? scanReported(repo, index, reported.filter((p) => !warm.nested.some((n) => n.rel.raw.equals(p) || under(n.rel.raw, p))), ctx.maxUntrackedBytes, warm) : scanStatus(repo, index, warm, ctx.maxUntrackedBytes);
    scanP.then(
      () => scanned.resolve(),
      () => scanned.resolve(),
    );
    const prevP = readPrev(repo, warm, ctx.head);
    prevP.catch(() => undefined);
    const dirtyNested = new Set((reported ?? []).flatMap((p) => warm.nested.filter((n) => n.rel.raw.equals(p) || under(n.rel.raw, p)).map((n) => relKey(n.rel.raw))));
    const nestedP = settleLimit(warm.nested, NESTED_CONCURRENCY, (n) => captureNested(repo, n, prevP, ctx, !reported || dirtyNested.has(relKey(n.rel.raw))));
    nestedP.catch(() => undefined);
    // P→W, needed only when P's tree is not W (another thread captured last, or a first checkpoint).
    const d1P = prevP.then(async (p) => (p.prevObj?.tree === warm.tree ? [] : rawDiff(repo, p.prevObj ? p.prevCommit! : ((await headCommit(repo)) ?? (await emptyTree(repo))), warm.tree)));
    d1P.catch(() => undefined);
    const scan = await scanP;
    const { changes, before } = await toChanges(repo, warm, scan.candidates, ctx.maxUntrackedBytes);
    const [prev, nested, d1] = await Promise.all([prevP, nestedP, d1P]);
    const { header } = prev;
    for (const n of nested) if (n.gitlink) changes.push(n.gitlink);
    const own = composeChanges(d1, changes, before, new Set(nested.map((n) => relKey(n.rel))));
    const captured = nested.filter((n) => n.capture);
    const children = captured.map((n) => ({ rel: repoPath(n.rel), meta: n.capture!.meta }));
    const changedList = withNestedChanges(own, children);
    const ownSkipped = reported ? warm.skipped.filter((k) => !reported.some((r) => r.equals(k.raw) || under(r, k.raw)) && !captured.some((n) => under(n.rel, k.raw))) : scan.skipped;
    const skipped = withNestedFiles(ownSkipped, children, (m) => m.skipped);
    const warnings = nested.filter((n) => !n.warm.repo).map((n) => `nested repository ${n.warm.rel.path} was left out: it cannot be entered`);
    for (const n of captured) warnings.push(...n.capture!.warnings);
    const meta = checkpointMeta(header, changedList, skipped, [...captured.map((n): NestedCheckpoint => ({ ...repoPath(n.rel), commit: n.capture!.commit })), ...nested.flatMap((n) => (n.reused ? [{ path: n.reused.path, raw: n.reused.raw, commit: n.reused.commit }] : []))]);
    const parent = ctx.isTop && prev.prevObj ? prev.prevCommit : null;
    // fast-import starts from the parent's tree; W replaces it unless they are the same.
    const baseTree = parent && prev.prevObj?.tree === warm.tree ? null : isEmptyTree(warm.tree) ? (parent ? 'empty' : null) : warm.tree;
    return { commit: { ref: header.ref, changes, message: formatCommitMessage(meta), timeMs: header.timeMs, parent, baseTree, meta }, nested, warnings, head: scan.head ?? null };
  }
}
