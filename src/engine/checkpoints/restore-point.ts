/**
 * The restore point of a restore (SPEC §4.2: "restoreCheckpoint first saves the current state"),
 * and the files outside it that stand in the target's way (`restore.ts` runs the restore).
 *
 * The current state S is captured like any checkpoint (`capture/pipeline.ts`,
 * `captureRestorePoint`: status mode from the warm state, or the full snapshot) under
 * `refs/vox/restore-points/<stamp>` in every repository. Files outside S that stand where the
 * target puts a file — ignored files, untracked files over the size cap — are found (for every
 * path the target adds: the path itself, and any ancestor that is not a directory: `findObstacles`)
 * and saved too ("preserved"): their raw bytes (`hash-object --no-filters`; a directory's files
 * and symlinks, never following a link; a nested repository or a special file in the way is a
 * conflict) are added to S by one fast-import per repository that has any, and every restore
 * point commit above it is written again to list the new nested commits (`savePreserved`).
 * Everything else outside S is never touched.
 */
import * as fs from 'node:fs';
import type { Stats } from 'node:fs';
import { parseCommitMessage, formatCommitMessage, type CommitMeta } from './refs';
import type { RawDiffEntry } from './diff';
import { absBytes, relKey, under } from './paths';
import { NESTED_CONCURRENCY, settleLimit } from './concurrency';
import { GITLINK_MODE } from './nested-repos';
import { hashRaw } from './conversion';
import type { CapturedRepo } from './capture/pipeline';
import { blobId, type TreeChange } from './capture/write-objects';
import { fastImportCommit, isEmptyTree, withNestedFiles } from './capture/commit';
import { CheckpointError, repoPath, type NestedCheckpoint, type SkippedFile } from './types';

function lstatOrNull(p: Buffer): Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * Paths outside S that stand where the target puts a file: for every path the diff S→T adds,
 * the first ancestor that is not a real directory (unless S removes it), else the path itself if
 * anything is there. `skip`: paths another repository owns.
 */
export function findObstacles(root: string, entries: RawDiffEntry[], skip: (rel: Buffer) => boolean): Buffer[] {
  const removed = new Set(entries.filter((e) => e.status === 'deleted').map((e) => relKey(e.raw)));
  const stats = new Map<string, Stats | null>();
  const lstat = (rel: Buffer): Stats | null => {
    const key = relKey(rel);
    if (!stats.has(key)) stats.set(key, lstatOrNull(absBytes(root, rel)));
    return stats.get(key)!;
  };
  const obstacles = new Map<string, Buffer>();
  for (const e of entries) {
    if (e.status !== 'added' || e.dstMode === GITLINK_MODE || skip(e.raw)) continue;
    let blocked = false;
    // Ancestors top-down; stop at the first one that is not a real directory (lstat of anything
    // below it would follow a symlink or fail).
    for (let i = e.raw.indexOf(0x2f); i >= 0 && !blocked; i = e.raw.indexOf(0x2f, i + 1)) {
      const anc = e.raw.subarray(0, i);
      const st = lstat(anc);
      if (!st) {
        blocked = true; // missing ancestor: nothing below it exists
      } else if (!st.isDirectory()) {
        blocked = true;
        if (!removed.has(relKey(anc))) obstacles.set(relKey(anc), Buffer.from(anc));
      }
    }
    if (!blocked && lstat(e.raw)) obstacles.set(relKey(e.raw), Buffer.from(e.raw));
  }
  return [...obstacles.values()];
}

/** The files and symlinks of the obstacles (a directory's, recursively), as tree changes. */
function obstacleFiles(root: string, obstacles: Buffer[], hexLength: number): { files: Buffer[]; links: TreeChange[]; sizes: number[] } {
  const files: Buffer[] = [];
  const links: TreeChange[] = [];
  const visit = (rel: Buffer): void => {
    const p = absBytes(root, rel);
    const st = lstatOrNull(p);
    if (!st) return;
    if (st.isSymbolicLink()) {
      const target = fs.readlinkSync(p, { encoding: 'buffer' });
      links.push({ kind: 'symlink', raw: rel, target, sha: blobId(target, hexLength) });
    } else if (st.isFile()) {
      files.push(rel);
    } else if (st.isDirectory()) {
      for (const name of fs.readdirSync(p, { encoding: 'buffer' })) {
        if (name.toString('latin1') === '.git') throw new CheckpointError('conflict', `a nested repository (${rel.toString('utf8')}) stands in the way of the restore (nothing was changed)`);
        visit(Buffer.concat([rel, Buffer.from('/'), name]));
      }
    } else {
      throw new CheckpointError('conflict', `a special file (${rel.toString('utf8')}) stands in the way of the restore (nothing was changed)`);
    }
  };
  for (const o of obstacles) visit(o);
  const sizes = obstacles.map((o) => {
    const st = lstatOrNull(absBytes(root, o));
    return st?.isFile() ? st.size : 0;
  });
  return { files, links, sizes };
}

/** One repository of the restore as this module needs it (nested ones in `children`). */
export interface PointNode {
  node: CapturedRepo;
  /** Obstacles found in this repository (paths from its root). */
  obstacles: Buffer[];
  children: PointNode[];
}

/**
 * Adds the obstacles' raw bytes to the restore point (see the header): rewrites the restore
 * point commit of every repository with obstacles, and of every repository above one, under
 * `ref`. Updates each `node` (commit, tree, meta) in place; returns the top's meta.
 */
export async function savePreserved(p: PointNode, ref: string): Promise<CommitMeta> {
  const { node } = p;
  const childMetas = await settleLimit(p.children, NESTED_CONCURRENCY, async (c) => ({ rel: c.node.rel!, meta: await savePreserved(c, ref) }));
  const nestedChanged = p.children.some((c) => node.meta.nested.find((n) => n.raw.equals(c.node.rel!.raw))?.commit !== c.node.commit);
  if (!p.obstacles.length && !nestedChanged) return node.meta;
  let changes: TreeChange[] = [];
  let own: SkippedFile[] = [];
  if (p.obstacles.length) {
    const { files, links, sizes } = obstacleFiles(node.repo.root, p.obstacles, node.tree.length);
    const shas = await hashRaw(node.repo, files);
    changes = [...links, ...files.map((raw, i): TreeChange => ({ kind: 'file', raw, mode: (lstatOrNull(absBytes(node.repo.root, raw))!.mode & 0o100) !== 0 ? '100755' : '100644', sha: shas[i]! }))];
    own = p.obstacles.map((o, i) => ({ ...repoPath(o), bytes: sizes[i]! }));
  }
  const nested: NestedCheckpoint[] = node.meta.nested.map((n) => {
    const child = p.children.find((c) => c.node.rel!.raw.equals(n.raw));
    return child ? { ...n, commit: child.node.commit } : n;
  });
  const meta: CommitMeta = { ...node.meta, nested, preserved: withNestedFiles(own, childMetas, (m) => m.preserved) };
  // Same parentless commit, its tree plus the obstacles (fast-import moves the ref: forced).
  const written = await fastImportCommit(node.repo, Promise.resolve({ ref, changes, message: formatCommitMessage(meta), timeMs: meta.timeMs, parent: null, baseTree: isEmptyTree(node.tree) ? null : node.tree }), true);
  if (!written) throw new CheckpointError('gitFailed', `the restore point in ${node.repo.root} could not be written`);
  Object.assign(node, { commit: written.commit, tree: written.tree, meta: parseCommitMessage(formatCommitMessage(meta)) ?? meta });
  // The tree is no longer the one the capture's delta leads to.
  if (p.obstacles.length) node.delta = undefined;
  return node.meta;
}

/** Whether `rel` is a nested repository of `node` or lies inside one. */
export function ownedByChild(node: CapturedRepo, rel: Buffer): boolean {
  return node.children.some((c) => c.rel!.raw.equals(rel) || under(c.rel!.raw, rel));
}
