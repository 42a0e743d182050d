/**
 * The warm per-worktree index behind fast captures (SPEC §4.2, stretch: capture cost independent
 * of repository size).
 *
 * After every full capture, the temporary index (which then describes the working tree exactly)
 * is kept as `<git-dir>/vox-warm-index`, with a sidecar JSON naming the tree it produced and the
 * nested repositories with the commits they were captured at. A capture that is given
 * `changedPaths` — the agent's edit tools report them, and the caller guarantees nothing else
 * changed since the previous capture of this worktree — copies the warm index and runs
 * `add -A` on just those paths (literal pathspecs on stdin), so its cost depends on the change,
 * not on the repository. Nested repositories with a changed path inside are snapshotted in full;
 * the others reuse the commit recorded last time.
 *
 * It falls back to a full capture (never guesses) when: there is no warm index or sidecar; a
 * changed path is a directory, is over the untracked size cap, lies outside the worktree,
 * contains a `.git` segment, or lies below a directory holding a `.git` that is not a known nested
 * repository (one may have appeared); or after
 * `WARM_MAX_FAST_CAPTURES` fast captures in a row (bounding how long an edit made outside the
 * agent can go unseen). Restores delete the warm index.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { createTempIndex, removeIndexFile, setRef, type RepoInfo } from './checkpoint-repo';
import { canonicalPath } from './workspace-lease';
import { pathFromJson, pathToJson } from './checkpoint-refs';
import { relKey } from './checkpoint-diff';
import { absBytes, probeNestedRepo } from './nested-repos';
import { addAll, snapshotRepo, writeTree, disposeSnapshot, type SnapshotNode } from './checkpoint-snapshot';
import { repoPath, type RepoPath, type SkippedFile } from './checkpoint-types';

/** File name (in the worktree's git dir) of the warm index. */
export const WARM_INDEX_NAME = 'vox-warm-index';
/** File name (in the worktree's git dir) of the warm index's sidecar. */
export const WARM_SIDECAR_NAME = 'vox-warm-index.json';
/** Fast captures allowed in a row before a full one is forced. */
export const WARM_MAX_FAST_CAPTURES = 100;

interface Sidecar {
  v: 1;
  tree: string;
  fastRuns: number;
  nested: Array<{ p?: string; b?: string; commit: string | null; repo: RepoInfo | null }>;
  /** Over-cap untracked files the last capture skipped (paths from the worktree root). */
  skipped: Array<{ p?: string; b?: string; bytes: number }>;
}

function files(repo: RepoInfo): { index: string; sidecar: string } {
  return { index: path.join(repo.gitDir, WARM_INDEX_NAME), sidecar: path.join(repo.gitDir, WARM_SIDECAR_NAME) };
}

/** Forgets the warm index (after a restore, or when it cannot be trusted). */
export async function dropWarmIndex(repo: RepoInfo): Promise<void> {
  const f = files(repo);
  await fsp.rm(f.sidecar, { force: true });
  await removeIndexFile(f.index);
}

/**
 * Keeps `node`'s temporary index as the warm index (moving the file; the snapshot's dispose then
 * finds nothing to delete). `nested` lists every nested repository path with the commit it was
 * captured at (null when it could not be captured inside).
 */
export async function keepWarmIndex(node: SnapshotNode, nested: Array<{ rel: RepoPath; commit: string | null; repo: RepoInfo | null }>, skipped: SkippedFile[], fastRuns: number): Promise<void> {
  const f = files(node.repo);
  try {
    await fsp.rm(f.sidecar, { force: true });
    await fsp.rename(node.index.file, f.index);
    const sidecar: Sidecar = { v: 1, tree: node.tree, fastRuns, nested: nested.map((n) => ({ ...pathToJson(n.rel.raw), commit: n.commit, repo: n.repo })), skipped: skipped.map((k) => ({ ...pathToJson(k.raw), bytes: k.bytes })) };
    await fsp.writeFile(f.sidecar, JSON.stringify(sidecar));
  } catch {
    await dropWarmIndex(node.repo);
  }
}

async function readSidecar(repo: RepoInfo): Promise<Sidecar | null> {
  try {
    const s = JSON.parse(await fsp.readFile(files(repo).sidecar, 'utf8')) as Sidecar;
    return s.v === 1 && typeof s.tree === 'string' && Array.isArray(s.nested) && Array.isArray(s.skipped) ? s : null;
  } catch {
    return null;
  }
}

/** Normalises a reported path to bytes relative to the root; null when it is unusable. */
function relativeBytes(root: string, p: string | Buffer): Buffer | null {
  let rel: Buffer;
  if (typeof p === 'string') {
    // Canonicalise the directory only: the last component may itself be a symlink.
    const abs = path.isAbsolute(p) ? path.join(canonicalPath(path.dirname(p)), path.basename(p)) : path.resolve(root, p);
    const r = path.relative(root, abs);
    if (!r || r === '..' || r.startsWith(`..${path.sep}`) || path.isAbsolute(r)) return null;
    rel = Buffer.from(r.split(path.sep).join('/'), 'utf8');
  } else {
    rel = Buffer.from(p);
  }
  const segs = rel.toString('latin1').split('/');
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s === '.git') || rel.includes(0)) return null;
  return rel;
}

function under(prefix: Buffer, p: Buffer): boolean {
  return p.length > prefix.length && p[prefix.length] === 0x2f && p.subarray(0, prefix.length).equals(prefix);
}

/** A nested repository reused from the previous capture (no snapshot, same commit, ref set). */
export interface ReusedNested {
  rel: RepoPath;
  commit: string;
  repo: RepoInfo;
}

export interface FastSnapshot {
  node: SnapshotNode;
  reused: ReusedNested[];
  fastRuns: number;
}

/**
 * Tries a fast snapshot; returns null when it must fall back to a full capture. Throws only for
 * real git failures.
 */
export async function fastSnapshot(repo: RepoInfo, changedPaths: Array<string | Buffer>, maxUntrackedBytes: number, ref: string): Promise<FastSnapshot | null> {
  const sidecar = await readSidecar(repo);
  if (!sidecar || sidecar.fastRuns >= WARM_MAX_FAST_CAPTURES) return null;
  const nested = sidecar.nested.map((n) => ({ rel: pathFromJson(n), commit: n.commit, repo: n.repo }));
  const dirtyNested = new Set<string>();
  const outer: Buffer[] = [];
  const reported: Buffer[] = [];
  const checkedDirs = new Map<string, boolean>();
  for (const p of changedPaths) {
    const rel = relativeBytes(repo.root, p);
    if (!rel) return null;
    reported.push(rel);
    const owner = nested.find((n) => under(n.rel.raw, rel) || n.rel.raw.equals(rel));
    if (owner) {
      dirtyNested.add(relKey(owner.rel.raw));
      continue;
    }
    const st = await fsp.lstat(absBytes(repo.root, rel)).catch(() => null);
    if (st?.isDirectory() || (st?.isFile() && st.size > maxUntrackedBytes)) return null;
    // A repository may have appeared above the path since the last capture (`git init` by a shell tool).
    for (let i = rel.indexOf(0x2f); i >= 0; i = rel.indexOf(0x2f, i + 1)) {
      const key = relKey(rel.subarray(0, i));
      if (!checkedDirs.has(key)) checkedDirs.set(key, (await fsp.lstat(absBytes(repo.root, Buffer.concat([rel.subarray(0, i), Buffer.from('/.git')]))).catch(() => null)) !== null);
      if (checkedDirs.get(key)) return null;
    }
    outer.push(rel);
  }
  const index = await createTempIndex(repo, files(repo).index);
  const node: SnapshotNode = { repo, rel: null, tree: '', index, skipped: [], children: [], opaque: [], warnings: [] };
  try {
    if ((await fsp.stat(index.file).catch(() => null)) === null) {
      await index.dispose();
      return null;
    }
    await addAll(repo, index.file, { only: outer }, node.warnings);
    // Files skipped last time are still skipped unless reported (a reported over-cap file means a
    // full capture) or inside a nested repository that is re-snapshotted (which reports its own).
    const dirtyRoots = nested.filter((n) => dirtyNested.has(relKey(n.rel.raw))).map((n) => n.rel.raw);
    node.skipped = sidecar.skipped
      .map((k) => ({ ...pathFromJson(k), bytes: k.bytes }))
      .filter((k) => !reported.some((r) => r.equals(k.raw) || under(r, k.raw)) && !dirtyRoots.some((r) => under(r, k.raw)));
    node.tree = await writeTree(repo, index.file);
    const reused: ReusedNested[] = [];
    for (const n of nested) {
      if (!dirtyNested.has(relKey(n.rel.raw))) {
        if (n.commit && n.repo) {
          // Keep the reused commit reachable under this checkpoint's name too.
          await setRef(n.repo, ref, n.commit);
          reused.push({ rel: n.rel, commit: n.commit, repo: n.repo });
        } else {
          node.opaque.push(n.rel);
        }
        continue;
      }
      const probe = await probeNestedRepo(repo, n.rel.raw);
      if (!probe?.repo) throw new Error('a nested repository changed shape');
      const child = await snapshotRepo(probe.repo, { maxUntrackedBytes, depth: 1 });
      child.rel = repoPath(n.rel.raw);
      node.children.push(child);
    }
    return { node, reused, fastRuns: sidecar.fastRuns + 1 };
  } catch {
    // Anything unexpected (a path beyond a symlink, a nested repository that changed shape):
    // the full capture decides, and reports real failures.
    await disposeSnapshot(node);
    return null;
  }
}
