/**
 * Capture stage 3, build the trees and the commit (SPEC §4.2), with the commit's metadata: the
 * header, "files changed" against the thread's previous checkpoint P (against HEAD, or the empty
 * tree, for a thread's first), the over-cap files left out and the nested repositories' commits.
 *
 *   - Incremental (`fastImportCommit`): the change list is exactly what differs from the warm tree
 *     W, so there is no full-index `write-tree`. One `fast-import` process (started early, fed
 *     when the list is ready) starts from the previous tree (`from <parent>`, or `M 040000 <W>
 *     ""` to replace the root), applies the changes, writes the blobs sent inline, the new trees,
 *     the commit (parent, identity, date, message) and the ref, and prints the commit and root
 *     tree ids (`get-mark`, `ls`). The ref update is fast-import's own (`move-ref.ts` explains
 *     the policy). "Files changed" is the diff P→W (nothing when P is the last capture, the usual
 *     case) composed with W→new. Every path is C-quoted, so any name works. The objects go into
 *     one small pack (`fastimport.unpackLimit=0`: no `unpack-objects` child, no loose file per
 *     object), which `packs.ts` consolidates. A fast-import that fails leaves its crash report in
 *     the git dir; it is removed here.
 *   - Full snapshot (`writeTree`, `commitSnapshotTree`): `write-tree` of the temporary index, then
 *     `commit-tree` for every repository, nested ones first so the outer metadata lists each with
 *     its commit id. Only the worktree's own checkpoints have a parent (the thread's previous
 *     checkpoint, so `git log` on the ref browses the thread's history); nested commits stand
 *     alone, so deleting a nested ref on prune really frees its objects, and their "previous"
 *     (the nested commit P recorded) is only the base of their "files changed".
 */
import * as fsp from 'node:fs/promises';
import { quote } from '../../../protocol/wire/quote';
import * as path from 'node:path';
import type { GitResult } from '../../git/git';
import { commitTree, emptyTree, headCommit, readCommit, run, runText, type RepoInfo } from '../repo';
import { formatCommitMessage, parseCommitMessage, type CheckpointHeader, type CommitMeta } from '../refs';
import { rawDiff, type RawDiffEntry } from '../diff';
import { cQuote, joinRel, relKey } from '../paths';
import { NESTED_CONCURRENCY, settleLimit } from '../concurrency';
import { GITLINK_MODE } from '../nested-repos';
import { CHECKPOINT_IDENTITY, CheckpointError, MAX_CHANGED_PATHS_IN_META, repoPath, type ChangeStatus, type ChangedFile, type NestedCheckpoint, type RepoPath, type SkippedFile } from '../types';
import type { Prev } from './target';
import { BLOB_COMPRESSION_LEVEL, changeMode, type ChangedObjects, type TreeChange } from './write-objects';

/** Longest excerpt of fast-import's output quoted in an error. */
const FAST_IMPORT_OUTPUT_EXCERPT_CHARS = 200;
/** Name prefix of the report fast-import leaves in the git dir when it dies. */
const CRASH_REPORT_PREFIX = 'fast_import_crash_';
/** Slack on "written since the run started" for file systems with coarse mtimes (ms). */
const CRASH_REPORT_MTIME_SLACK_MS = 1000;

// ---------------------------------------------------------------------------------------------
// Metadata

/**
 * A repository's own changed paths plus its nested repositories' (already computed) ones,
 * prefixed with their paths: the total count and at most MAX_CHANGED_PATHS_IN_META entries.
 */
export function withNestedChanges(own: ChangedFile[], children: Array<{ rel: RepoPath; meta: CommitMeta }>): { count: number; list: ChangedFile[] } {
  let count = own.length;
  const list: ChangedFile[] = own.slice(0, MAX_CHANGED_PATHS_IN_META);
  for (const c of children) {
    count += c.meta.changedCount;
    for (const ch of c.meta.changed) if (list.length < MAX_CHANGED_PATHS_IN_META) list.push({ ...joinRel(c.rel, ch), status: ch.status });
  }
  return { count, list };
}

/** Files a repository left out plus those its nested repositories left out, prefixed. */
export function withNestedFiles(own: SkippedFile[], children: Array<{ rel: RepoPath; meta: CommitMeta }>, pick: (m: CommitMeta) => SkippedFile[]): SkippedFile[] {
  const out = [...own];
  for (const c of children) for (const s of pick(c.meta)) out.push({ ...joinRel(c.rel, s), bytes: s.bytes });
  return out;
}

/** A checkpoint's (or restore point's) metadata. */
export function checkpointMeta(header: CheckpointHeader, changes: { count: number; list: ChangedFile[] }, skipped: SkippedFile[], nested: NestedCheckpoint[]): CommitMeta {
  if (header.restorePointOf !== undefined) return { kind: 'restorePoint', target: header.restorePointOf, timeMs: header.timeMs, changedCount: 0, changed: [], skipped, preserved: [], nested };
  return { kind: 'checkpoint', threadId: header.threadId, ordinal: header.ordinal, trigger: header.trigger, timeMs: header.timeMs, changedCount: changes.count, changed: changes.list, skipped, preserved: [], nested };
}

function kindOfMode(mode: string): string {
  return mode === '120000' ? 'link' : mode === GITLINK_MODE ? 'gitlink' : 'file';
}

/**
 * "Files changed" against P: the diff P→W (`d1`, from diff-tree) composed with the changes W→new
 * (`changes`, with W's entries in `before`). Gitlinks of repositories captured inside are left to
 * their own lists.
 */
export function composeChanges(d1: RawDiffEntry[], changes: TreeChange[], before: ChangedObjects['before'], nestedKeys: Set<string>): ChangedFile[] {
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

/** The diff P→W, needed only when P's tree is not W (another thread captured last, or a first checkpoint). */
export async function diffPreviousToWarm(repo: RepoInfo, p: Prev, warmTree: string): Promise<RawDiffEntry[]> {
  return p.prevObj?.tree === warmTree ? [] : rawDiff(repo, p.prevObj ? p.prevCommit! : ((await headCommit(repo)) ?? (await emptyTree(repo))), warmTree);
}

// ---------------------------------------------------------------------------------------------
// Incremental: fast-import

export interface FastImportCommit {
  ref: string;
  changes: TreeChange[];
  message: string;
  timeMs: number;
  /** First parent (and, unless `baseTree` is given, the tree the changes apply to). */
  parent: string | null;
  /** Tree the changes apply to, when it is not the parent's (`empty`: none). */
  baseTree: string | 'empty' | null;
}

/** What an incremental commit is made of (one repository). */
export interface IncrementalCommitInput {
  prev: Prev;
  /** The warm tree W the changes apply to. */
  warmTree: string;
  isTop: boolean;
  /** W→new (nested repositories' gitlinks included) and W's entries of those paths. */
  objects: ChangedObjects;
  /** P→W (`diffPreviousToWarm`). */
  sinceWarm: RawDiffEntry[];
  /** Every nested repository the warm state knows: their gitlinks are not "files changed". */
  nestedRels: Buffer[];
  /** Nested repositories captured now. */
  captured: Array<{ rel: Buffer; commit: string; meta: CommitMeta }>;
  /** Nested repositories whose last checkpoint is reused (reported mode, nothing inside reported). */
  reused: NestedCheckpoint[];
  /** Over-cap files this repository leaves out (its own paths). */
  skipped: SkippedFile[];
}

/** Id of the empty tree (sha1 or sha256); it needs no object in the repository. */
export function isEmptyTree(tree: string): boolean {
  return tree === '4b825dc642cb6eb9a060e54bf8d69288fbee4904' || tree === '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';
}

/** The fast-import commit (and its metadata) for an incremental capture. */
export function incrementalCommit(input: IncrementalCommitInput): FastImportCommit & { meta: CommitMeta } {
  const { prev, warmTree, objects } = input;
  const own = composeChanges(input.sinceWarm, objects.changes, objects.before, new Set(input.nestedRels.map((rel) => relKey(rel))));
  const children = input.captured.map((n) => ({ rel: repoPath(n.rel), meta: n.meta }));
  const skipped = withNestedFiles(input.skipped, children, (m) => m.skipped);
  const nested = [...input.captured.map((n): NestedCheckpoint => ({ ...repoPath(n.rel), commit: n.commit })), ...input.reused];
  const meta = checkpointMeta(prev.header, withNestedChanges(own, children), skipped, nested);
  const parent = input.isTop && prev.prevObj ? prev.prevCommit : null;
  // fast-import starts from the parent's tree; W replaces it unless they are the same.
  const baseTree = parent && prev.prevObj?.tree === warmTree ? null : isEmptyTree(warmTree) ? (parent ? 'empty' : null) : warmTree;
  return { ref: prev.header.ref, changes: objects.changes, message: formatCommitMessage(meta), timeMs: prev.header.timeMs, parent, baseTree, meta };
}

/** Deletions first: a file may replace a directory (or the reverse) in one change list. */
export function ordered(changes: TreeChange[]): TreeChange[] {
  return [...changes.filter((c) => c.kind === 'delete'), ...changes.filter((c) => c.kind !== 'delete')];
}

function streamFor(c: FastImportCommit): Buffer {
  const secs = Math.floor(c.timeMs / 1000);
  const who = `${CHECKPOINT_IDENTITY.name} <${CHECKPOINT_IDENTITY.email}> ${secs} +0000`;
  const msg = Buffer.from(c.message, 'utf8');
  const parts: Buffer[] = [Buffer.from(`feature done\ncommit ${c.ref}\nmark :1\nauthor ${who}\ncommitter ${who}\ndata ${msg.length}\n`, 'utf8'), msg, Buffer.from('\n')];
  if (c.parent) parts.push(Buffer.from(`from ${c.parent}\n`));
  if (c.baseTree === 'empty') parts.push(Buffer.from('deleteall\n'));
  else if (c.baseTree) parts.push(Buffer.from(`M 040000 ${c.baseTree} ""\n`));
  for (const ch of ordered(c.changes)) {
    const q = cQuote(ch.raw);
    if (ch.kind === 'delete') parts.push(Buffer.from('D '), q, Buffer.from('\n'));
    else if (ch.kind === 'symlink') parts.push(Buffer.from('M 120000 inline '), q, Buffer.from(`\ndata ${ch.target.length}\n`), ch.target, Buffer.from('\n'));
    else if (ch.kind === 'file' && ch.content) parts.push(Buffer.from(`M ${ch.mode} inline `), q, Buffer.from(`\ndata ${ch.content.length}\n`), ch.content, Buffer.from('\n'));
    else parts.push(Buffer.from(`M ${changeMode(ch)} ${ch.sha} `), q, Buffer.from('\n'));
  }
  parts.push(Buffer.from('\nget-mark :1\nls :1 ""\ndone\n'));
  return Buffer.concat(parts);
}

/**
 * Starts fast-import now (it reads the repository meanwhile) for one commit described later:
 * `spec` resolves with the commit, or with null to end the stream having written nothing (then
 * the result is null). `force`: move the ref even when that is not a fast-forward. Returns the
 * commit and root tree ids.
 */
export async function fastImportCommit(repo: RepoInfo, spec: Promise<FastImportCommit | null>, force: boolean): Promise<{ commit: string; tree: string } | null> {
  let wanted = false;
  const input = spec.then((c) => {
    wanted = c !== null;
    return c ? streamFor(c) : Buffer.from('done\n');
  });
  const args = ['fast-import', '--quiet', '--done'];
  if (force) args.push('--force');
  const startedMs = Date.now();
  let r: GitResult;
  try {
    [r] = await Promise.all([run(repo, args, { input, abortInput: 'done\n', config: { 'fastimport.unpackLimit': '0', 'pack.compression': BLOB_COMPRESSION_LEVEL, 'core.fsmonitor': 'false' } }), input]);
  } catch (err) {
    await removeCrashReports(repo, startedMs);
    throw err;
  }
  if (!wanted) return null;
  const lines = r.stdout.toString('latin1').split('\n');
  const commit = lines[0]?.trim() ?? '';
  const tree = /^040000 tree ([0-9a-f]{40,64})\t/.exec(lines[1] ?? '')?.[1] ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(commit) || !tree) throw new CheckpointError('gitFailed', `fast-import did not report the new commit and tree: ${quote(r.stdout.toString('utf8'), FAST_IMPORT_OUTPUT_EXCERPT_CHARS)}`);
  return { commit, tree };
}

/** Removes crash reports fast-import wrote since `sinceMs` (ours; the user's repository stays clean). */
async function removeCrashReports(repo: RepoInfo, sinceMs: number): Promise<void> {
  const names = await fsp.readdir(repo.gitDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(CRASH_REPORT_PREFIX)) continue;
    const file = path.join(repo.gitDir, name);
    const st = await fsp.stat(file).catch(() => null);
    if (st && st.mtimeMs >= sinceMs - CRASH_REPORT_MTIME_SLACK_MS) await fsp.rm(file, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Full snapshot: write-tree and commit-tree

/** The tree of a temporary index (every blob it names is already written). */
export async function writeTree(repo: RepoInfo, index: string): Promise<string> {
  return runText(repo, ['write-tree'], { index });
}

/** A snapshotted repository as this stage needs it (nested ones in `children`). */
export interface SnapshotTree {
  repo: RepoInfo;
  /** Path relative to the parent repository's root; null for the worktree itself. */
  rel: RepoPath | null;
  tree: string;
  /** Over-cap untracked files left out (paths relative to this repository). */
  skipped: SkippedFile[];
  children: SnapshotTree[];
}

/** A committed repository (nested ones in `children`); no ref moved yet. */
export interface CommittedTree {
  repo: RepoInfo;
  rel: RepoPath | null;
  commit: string;
  meta: CommitMeta;
  children: CommittedTree[];
}

/** Commits with `parents`, retrying without them if a parent object is gone (e.g. a re-created nested repository). */
async function commitWithParents(repo: RepoInfo, tree: string, parents: string[], message: string, timeMs: number): Promise<{ commit: string; parents: string[] }> {
  try {
    return { commit: await commitTree(repo, tree, parents, message, timeMs), parents };
  } catch (err) {
    if (!parents.length) throw err;
    return { commit: await commitTree(repo, tree, [], message, timeMs), parents: [] };
  }
}

/** Changed paths of `node` (its raw diff, minus the gitlinks of nested repositories captured inside) and its children's. */
function changesOf(diff: RawDiffEntry[], children: CommittedTree[]): { count: number; list: ChangedFile[] } {
  const childKeys = new Set(children.map((c) => relKey(c.rel!.raw)));
  const own = diff.filter((e) => !((e.srcMode === GITLINK_MODE || e.dstMode === GITLINK_MODE) && childKeys.has(relKey(e.raw))));
  return withNestedChanges(
    own.map((e) => ({ path: e.path, raw: e.raw, status: e.status })),
    children.map((c) => ({ rel: c.rel!, meta: c.meta })),
  );
}

/**
 * Commits a checkpoint for `node` and its nested repositories (no ref is moved here). `prevCommit`
 * is the thread's previous checkpoint in this repository (null for the first); only the top level
 * (`isTop`) gets it as parent.
 */
export async function commitSnapshotTree(node: SnapshotTree, header: CheckpointHeader, prevCommit: string | null, isTop: boolean): Promise<CommittedTree> {
  const fallbackBase = async (): Promise<string> => (await headCommit(node.repo)) ?? (await emptyTree(node.repo));
  // This repository's own diff runs while the nested ones commit. A nested repository may have
  // been re-created since (its previous commit gone): diff against HEAD then.
  const ownDiff = (async () => {
    if (header.restorePointOf !== undefined) return []; // a restore point lists no "files changed"
    if (prevCommit) {
      try {
        return await rawDiff(node.repo, prevCommit, node.tree);
      } catch {
        // Fall back below.
      }
    }
    return rawDiff(node.repo, await fallbackBase(), node.tree);
  })();
  ownDiff.catch(() => undefined);
  // The previous commit's metadata is only needed to find nested repositories' previous commits.
  const prev = prevCommit && node.children.length ? await readCommit(node.repo, prevCommit).catch(() => null) : null;
  const prevMeta = prev ? parseCommitMessage(prev.message) : null;
  const prevNested = new Map((prevMeta?.nested ?? []).map((n) => [relKey(n.raw), n.commit]));
  const children = await settleLimit(node.children, NESTED_CONCURRENCY, (child) => commitSnapshotTree(child, header, prevNested.get(relKey(child.rel!.raw)) ?? null, false));
  const skipped = withNestedFiles(node.skipped, children.map((c) => ({ rel: c.rel!, meta: c.meta })), (m) => m.skipped);
  const meta = checkpointMeta(header, changesOf(await ownDiff, children), skipped, children.map((c): NestedCheckpoint => ({ ...c.rel!, commit: c.commit })));
  // Only the worktree's own checkpoints form a parent chain (browsable history); nested commits
  // stand alone, so deleting a nested ref on prune really frees its objects.
  const { commit } = await commitWithParents(node.repo, node.tree, prevCommit && isTop ? [prevCommit] : [], formatCommitMessage(meta), header.timeMs);
  return { repo: node.repo, rel: node.rel, commit, meta, children };
}
