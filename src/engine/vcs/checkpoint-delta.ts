/**
 * Incremental capture from the warm index (SPEC §4.2: a cost proportional to what changed).
 *
 * A copy of the repository's warm index (`checkpoint-warm.ts`, the exact index of the last
 * captured tree W) finds what changed since W, in one of two ways:
 *   - status mode (every capture without `changedPaths`): one `git status --porcelain=v2 -z
 *     -uall` on the copy, with git's untracked cache enabled on it (directories whose mtime did
 *     not change are not read again) and optional locks allowed (refreshed stat data and the
 *     cache are written back into the copy). Gitlinks are ignored there; nested repositories are
 *     captured inside themselves, recursively, by the same mechanism;
 *   - reported mode (`changedPaths`, from the agent's own edit tools; the caller guarantees
 *     nothing else changed): one `ls-files -s -c -o --exclude-standard` limited to those paths
 *     tells tracked entries from untracked and ignored ones — no walk at all.
 * The changed paths are then hashed, committed by fast-import on top of W and applied to the
 * copy (`checkpoint-fastimport.ts`), which becomes the new warm index. The commit's "files
 * changed" is relative to the thread's previous checkpoint P: the diff P→W (nothing when P's
 * tree is W, the usual case) composed with the changes W→new.
 *
 * Anything unusual returns null and the caller takes the full snapshot instead (which decides,
 * and reports real failures): no warm state, a new nested repository, an unmerged entry, a
 * special file, an over-cap file that is tracked, an unreadable file, a reported directory.
 */
import * as fsp from 'node:fs/promises';
import * as nodePath from 'node:path';
import { canonicalPath } from './workspace-lease';
import { splitNul } from './git';
import { createTempIndex, emptyTree, headCommit, readCommit, run, setRef, type RepoInfo, type TempIndex } from './checkpoint-repo';
import { formatCommitMessage, parseCommitMessage, type CommitMeta } from './checkpoint-refs';
import { rawDiff, relKey, type RawDiffEntry } from './checkpoint-diff';
import { GITLINK_MODE, MAX_NESTED_DEPTH, absBytes, probeNestedRepo } from './nested-repos';
import { joinRel, settleLimit, NESTED_CONCURRENCY, LSTAT_CONCURRENCY, mapLimit } from './checkpoint-snapshot';
import { applyToIndex, blobId, changeMode, fastImportCommit, hashFiles, type TreeChange } from './checkpoint-fastimport';
import { WARM_MAX_FAST_CAPTURES, keepWarm, readWarm, warmFiles, type WarmNested, type WarmState } from './checkpoint-warm';
import { MAX_CHANGED_PATHS_IN_META, repoPath, type ChangeStatus, type ChangedFile, type NestedCheckpoint, type SkippedFile } from './checkpoint-types';
import type { CheckpointHeader } from './checkpoint-commit';

/** What a capture of one repository produced. */
export interface RepoCapture {
  commit: string;
  tree: string;
  meta: CommitMeta;
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

/** A path that may have changed since W, with its entry in W (null: not in W). */
interface Candidate {
  raw: Buffer;
  before: { mode: string; sha: string } | null;
  /** Entries of W below this path (it was a directory there). */
  below?: Array<{ raw: Buffer; mode: string; sha: string }>;
}

interface Scan {
  candidates: Candidate[];
  skipped: SkippedFile[];
}

/** Thrown inside to say "take the full snapshot instead". */
class FallBack extends Error {}

const fileModeCache = new Map<string, Promise<boolean>>();
/** Whether git trusts the executable bit in this repository (`core.fileMode`, cached per git dir). */
function trustsFileMode(repo: RepoInfo): Promise<boolean> {
  let p = fileModeCache.get(repo.gitDir);
  if (!p) {
    p = run(repo, ['config', '--type=bool', '--get', 'core.filemode'], { okExitCodes: [1] }).then((r) => r.stdout.toString('utf8').trim() !== 'false');
    fileModeCache.set(repo.gitDir, p);
  }
  return p;
}

function under(prefix: Buffer, p: Buffer): boolean {
  return p.length > prefix.length && p[prefix.length] === 0x2f && p.subarray(0, prefix.length).equals(prefix);
}

/** Status mode: what differs between the working tree and W, per `git status` on the copy. */
async function scanStatus(repo: RepoInfo, index: string, warm: WarmState, maxBytes: number): Promise<Scan> {
  const r = await run(repo, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--ignore-submodules=all', '--no-renames', '--ignored=no'], {
    index,
    config: { 'core.untrackedCache': 'true', 'status.showUntrackedFiles': 'all', 'core.fsmonitor': 'false', 'status.renames': 'false' },
    env: { GIT_OPTIONAL_LOCKS: '1' },
  });
  const known = new Set(warm.nested.map((n) => relKey(n.rel.raw)));
  const candidates: Candidate[] = [];
  const untracked: Buffer[] = [];
  for (const rec of splitNul(r.stdout)) {
    const kind = rec[0];
    if (kind === 0x31 /* 1 */) {
      // `1 XY sub mH mI mW hH hI path`
      let at = 0;
      for (let i = 0; i < 8; i++) at = rec.indexOf(0x20, at) + 1;
      const f = rec.subarray(0, at - 1).toString('latin1').split(' ');
      if (f[1]?.[1] === '.' || f[4] === GITLINK_MODE) continue;
      candidates.push({ raw: Buffer.from(rec.subarray(at)), before: { mode: f[4]!, sha: f[7]! } });
    } else if (kind === 0x3f /* ? */) {
      const p = Buffer.from(rec.subarray(2));
      if (p[p.length - 1] === 0x2f) {
        // A directory git sees as a repository: fine if it is one we know.
        if (!known.has(relKey(p.subarray(0, p.length - 1)))) throw new FallBack('a new nested repository');
        continue;
      }
      untracked.push(p);
    } else if (kind === 0x75 /* u */ || kind === 0x32 /* 2 */) {
      throw new FallBack('unmerged or renamed entry');
    }
  }
  const skipped: SkippedFile[] = [];
  const sizes = await mapLimit(untracked, LSTAT_CONCURRENCY, async (p) => {
    const st = await fsp.lstat(absBytes(repo.root, p)).catch(() => null);
    return st?.isFile() ? st.size : -1;
  });
  untracked.forEach((p, i) => {
    if (sizes[i]! > maxBytes) skipped.push({ ...repoPath(p), bytes: sizes[i]! });
    else candidates.push({ raw: p, before: null });
  });
  return { candidates, skipped };
}

/** Reported mode: the reported paths, with their entries in W (one index read, no walk). */
async function scanReported(repo: RepoInfo, index: string, paths: Buffer[], maxBytes: number): Promise<Scan> {
  if (!paths.length) return { candidates: [], skipped: [] };
  if (paths.some((p) => Buffer.from(p.toString('utf8'), 'utf8').compare(p) !== 0)) throw new FallBack('a non-UTF-8 path cannot be passed as an argument');
  const r = await run(repo, ['ls-files', '-z', '-s', '-c', '-o', '--exclude-standard', '--', ...paths.map((p) => `:(literal)${p.toString('utf8')}`)], { index });
  const tracked = new Map<string, { mode: string; sha: string; raw: Buffer }>();
  const others = new Set<string>();
  for (const rec of splitNul(r.stdout)) {
    const m = /^(\d{6}) ([0-9a-f]{40,64}) (\d)\t/.exec(rec.subarray(0, Math.min(rec.length, 80)).toString('latin1'));
    if (!m) others.add(relKey(rec));
    else if (m[3] !== '0') throw new FallBack('unmerged entry');
    else {
      const raw = Buffer.from(rec.subarray(m[0].length));
      tracked.set(relKey(raw), { mode: m[1]!, sha: m[2]!, raw });
    }
  }
  const candidates: Candidate[] = [];
  for (const p of paths) {
    const entry = tracked.get(relKey(p));
    const below = [...tracked.values()].filter((t) => under(p, t.raw));
    const st = await fsp.lstat(absBytes(repo.root, p)).catch(() => null);
    if (st?.isDirectory()) throw new FallBack('a reported path is a directory');
    if (st && !entry && !others.has(relKey(p))) {
      // Ignored and not in W: not part of a checkpoint, as with `add -A`.
      if (below.length) candidates.push({ raw: p, before: null, below });
      continue;
    }
    if (st?.isFile() && !entry && st.size > maxBytes) throw new FallBack('a reported untracked file is over the size cap');
    candidates.push({ raw: p, before: entry ? { mode: entry.mode, sha: entry.sha } : null, below });
  }
  return { candidates, skipped: [] };
}

/** Turns candidates into tree changes (hashing files); drops those that match W. */
async function toChanges(repo: RepoInfo, candidates: Candidate[], maxBytes: number, hexLength: number): Promise<{ changes: TreeChange[]; before: Map<string, Candidate['before']> }> {
  const trust = await trustsFileMode(repo);
  const changes: TreeChange[] = [];
  const before = new Map<string, Candidate['before']>();
  const files: Array<{ c: Candidate; mode: '100644' | '100755' }> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    for (const b of c.below ?? []) {
      if (seen.has(relKey(b.raw))) continue;
      seen.add(relKey(b.raw));
      before.set(relKey(b.raw), { mode: b.mode, sha: b.sha });
      changes.push({ kind: 'delete', raw: b.raw });
    }
    const key = relKey(c.raw);
    if (seen.has(key)) continue;
    seen.add(key);
    before.set(key, c.before);
    const st = await fsp.lstat(absBytes(repo.root, c.raw)).catch(() => null);
    if (!st || st.isDirectory() || (c.below?.length && !st.isFile() && !st.isSymbolicLink())) {
      if (c.before) changes.push({ kind: 'delete', raw: c.raw });
    } else if (st.isSymbolicLink()) {
      const target = await fsp.readlink(absBytes(repo.root, c.raw), { encoding: 'buffer' });
      changes.push({ kind: 'symlink', raw: c.raw, target, sha: blobId(target, hexLength) });
    } else if (st.isFile()) {
      // Over the cap and in W: tracked by the user (captured whatever its size) or an untracked
      // file that grew (to be left out). Only the real index can tell: the full snapshot decides.
      if (c.before && st.size > maxBytes) throw new FallBack('a file in the warm index is now over the size cap');
      const exec = trust ? (st.mode & 0o100) !== 0 : c.before?.mode === '100755';
      files.push({ c, mode: exec ? '100755' : '100644' });
    } else {
      throw new FallBack('a special file (fifo, socket or device)');
    }
  }
  const shas = await hashFiles(repo, files.map((f) => f.c.raw));
  files.forEach((f, i) => changes.push({ kind: 'file', raw: f.c.raw, mode: f.mode, sha: shas[i]! }));
  // Entries that ended up equal to W (same mode and content) are not changes.
  const effective = changes.filter((ch) => {
    const b = before.get(relKey(ch.raw));
    if (ch.kind === 'delete') return b !== null;
    return !(b && b.mode === changeMode(ch) && b.sha === (ch as { sha: string }).sha);
  });
  return { changes: effective, before };
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

/** One nested repository's part of this capture. */
interface NestedPart {
  rel: Buffer;
  capture: RepoCapture | null;
  reused: NestedCheckpoint | null;
  gitlink: TreeChange | null;
  warm: WarmNested;
}

async function captureNested(repo: RepoInfo, n: WarmNested, prevNested: Map<string, string>, ctx: DeltaContext, header: CheckpointHeader, dirty: boolean): Promise<NestedPart> {
  if (!n.repo) return { rel: n.rel.raw, capture: null, reused: null, gitlink: null, warm: n };
  const probe = await probeNestedRepo(repo, n.rel.raw);
  if (!probe?.repo || probe.repo.gitDir !== n.repo.gitDir) throw new FallBack('a nested repository changed shape');
  const gitlink: TreeChange = probe.head ? { kind: 'gitlink', raw: n.rel.raw, sha: probe.head } : { kind: 'delete', raw: n.rel.raw };
  if (!dirty && n.commit) {
    // Reported mode, nothing reported inside: keep its last commit reachable under this name too.
    await setRef(probe.repo, header.ref, n.commit);
    return { rel: n.rel.raw, capture: null, reused: { ...n.rel, commit: n.commit }, gitlink, warm: n };
  }
  const prev = prevNested.get(relKey(n.rel.raw)) ?? null;
  const sub: DeltaContext = { ...ctx, changedPaths: null, isTop: false, depth: ctx.depth + 1, head: Promise.resolve({ header, prevCommit: prev }) };
  const capture = (await captureDelta(probe.repo, sub)) ?? (await ctx.fullNested(probe.repo, n.rel.raw, prev, ctx.depth + 1));
  return { rel: n.rel.raw, capture, reused: null, gitlink, warm: { rel: n.rel, commit: capture.commit, repo: probe.repo } };
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
        if (!checkedDirs.has(key)) checkedDirs.set(key, (await fsp.lstat(absBytes(root, Buffer.concat([rel.subarray(0, i), Buffer.from('/.git')]))).catch(() => null)) !== null);
        if (checkedDirs.get(key)) return null;
      }
    }
    out.push(rel);
  }
  return out;
}

/** Id of the empty tree for a hash of `hexLength` digits (it needs no object in the repository). */
function isEmptyTree(tree: string): boolean {
  return tree === '4b825dc642cb6eb9a060e54bf8d69288fbee4904' || tree === '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';
}

/**
 * Captures `repo` incrementally; null when the full snapshot must decide instead (any failure
 * before something is written counts). A failure while writing throws.
 */
export async function captureDelta(repo: RepoInfo, ctx: DeltaContext): Promise<RepoCapture | null> {
  const warm = await readWarm(repo);
  if (!warm || ctx.depth > MAX_NESTED_DEPTH) return null;
  if (ctx.changedPaths && warm.fastRuns >= WARM_MAX_FAST_CAPTURES) return null;
  let index: TempIndex | null = await createTempIndex(repo, warmFiles(repo).index);
  try {
    let plan: Awaited<ReturnType<typeof prepare>>;
    try {
      if ((await fsp.stat(index.file).catch(() => null)) === null) return null;
      plan = await prepare(repo, index.file, warm, ctx);
    } catch (err) {
      if (err instanceof HeadFailed) throw err.reason;
      return null;
    }
    const { header, parent, baseTree, meta, changes, nested, warnings } = plan;
    const all = Promise.resolve(changes);
    const [written] = await Promise.all([
      fastImportCommit(repo, { ref: header.ref, message: formatCommitMessage(meta), timeMs: header.timeMs, parent, baseTree, force: !ctx.isTop }, all),
      applyToIndex(repo, index.file, all, '0'.repeat(warm.tree.length)),
    ]);
    const state: WarmState = { tree: written.tree, commit: written.commit, fastRuns: ctx.changedPaths ? warm.fastRuns + 1 : 0, nested: nested.map((n) => n.warm), skipped: meta.skipped };
    await keepWarm(repo, index.file, state);
    index = null;
    return { commit: written.commit, tree: written.tree, meta, warnings };
  } finally {
    if (index) await index.dispose();
  }
}

/** Everything before the first write: scan, hash, nested repositories, metadata. */
async function prepare(repo: RepoInfo, index: string, warm: WarmState, ctx: DeltaContext) {
  const reported = ctx.changedPaths;
  const scanP = reported ? scanReported(repo, index, reported.filter((p) => !warm.nested.some((n) => n.rel.raw.equals(p) || under(n.rel.raw, p))), ctx.maxUntrackedBytes) : scanStatus(repo, index, warm, ctx.maxUntrackedBytes);
  scanP.catch(() => undefined);
  const { header, prevCommit } = await ctx.head.catch((err: unknown) => {
    throw new HeadFailed(err);
  });
  // P: the previous checkpoint (its tree and nested commits), or HEAD / the empty tree. When P
  // is the commit the warm state was made for, both are known without reading it.
  const prevObj = !prevCommit ? null : prevCommit === warm.commit ? { tree: warm.tree } : await readCommit(repo, prevCommit).catch(() => null);
  const prevNested =
    prevCommit && prevCommit === warm.commit
      ? new Map(warm.nested.flatMap((n) => (n.commit ? [[relKey(n.rel.raw), n.commit] as const] : [])))
      : new Map((prevObj && 'message' in prevObj ? parseCommitMessage(prevObj.message)?.nested ?? [] : []).map((n) => [relKey(n.raw), n.commit]));
  const d1P = prevObj?.tree === warm.tree ? Promise.resolve([]) : (async () => rawDiff(repo, prevObj ? prevCommit! : ((await headCommit(repo)) ?? (await emptyTree(repo))), warm.tree))();
  d1P.catch(() => undefined);
  const dirtyNested = new Set((reported ?? []).flatMap((p) => warm.nested.filter((n) => n.rel.raw.equals(p) || under(n.rel.raw, p)).map((n) => relKey(n.rel.raw))));
  const nestedP = settleLimit(warm.nested, NESTED_CONCURRENCY, (n) => captureNested(repo, n, prevNested, ctx, header, !reported || dirtyNested.has(relKey(n.rel.raw))));
  nestedP.catch(() => undefined);
  const scan = await scanP;
  const { changes, before } = await toChanges(repo, scan.candidates, ctx.maxUntrackedBytes, warm.tree.length);
  const nested = await nestedP;
  const d1 = await d1P;
  for (const n of nested) if (n.gitlink) changes.push(n.gitlink);
  const own = composeChanges(d1, changes, before, new Set(nested.map((n) => relKey(n.rel))));
  const captured = nested.filter((n) => n.capture);
  let count = own.length;
  const list = own.slice(0, MAX_CHANGED_PATHS_IN_META);
  for (const n of captured) {
    count += n.capture!.meta.changedCount;
    for (const ch of n.capture!.meta.changed) if (list.length < MAX_CHANGED_PATHS_IN_META) list.push({ ...joinRel(repoPath(n.rel), ch), status: ch.status });
  }
  const skipped = reported
    ? warm.skipped.filter((k) => !reported.some((r) => r.equals(k.raw) || under(r, k.raw)) && !captured.some((n) => under(n.rel, k.raw)))
    : [...scan.skipped];
  for (const n of captured) for (const s of n.capture!.meta.skipped) skipped.push({ ...joinRel(repoPath(n.rel), s), bytes: s.bytes });
  const warnings = nested.filter((n) => !n.warm.repo).map((n) => `nested repository ${n.warm.rel.path} was left out: it cannot be entered`);
  for (const n of captured) warnings.push(...n.capture!.warnings);
  const meta: CommitMeta = {
    kind: 'checkpoint',
    threadId: header.threadId,
    ordinal: header.ordinal,
    trigger: header.trigger,
    timeMs: header.timeMs,
    changedCount: count,
    changed: list,
    skipped,
    preserved: [],
    nested: [...captured.map((n): NestedCheckpoint => ({ ...repoPath(n.rel), commit: n.capture!.commit })), ...nested.flatMap((n) => (n.reused ? [n.reused] : []))],
  };
  const parent = ctx.isTop && prevObj ? prevCommit : null;
  // fast-import starts from the parent's tree; W replaces it unless they are the same.
  const baseTree = parent && prevObj?.tree === warm.tree ? null : isEmptyTree(warm.tree) ? (parent ? 'empty' : null) : warm.tree;
  return { header, parent, baseTree, meta, changes, nested, warnings };
}
