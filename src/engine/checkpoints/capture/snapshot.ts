/**
 * The full snapshot of a working tree as git trees, without touching HEAD, branches, the real
 * index, the stash or the working tree (SPEC §4.2): stages 1–3 of the capture pipeline
 * (`pipeline.ts`) up to the tree, for one repository and, recursively, its nested ones.
 *
 * The real index (`rev-parse --git-path index`, right in linked worktrees) is copied to a
 * temporary index (the copy keeps its mtime: git's racy-entry check), so git's stat cache makes
 * the work proportional to what changed; a repository with no index starts from an empty one.
 * Then, per repository:
 *   1 find what changed — the full walk (`find-changes.ts`);
 *   2 write the objects — `add -A` of what the walk found, and the raw bytes of whatever git may
 *     have converted (`write-objects.ts`);
 *   3 the tree — `write-tree` (`commit.ts`);
 * while each nested repository the walk found is snapshotted the same way inside itself
 * (neither touches the other's HEAD or index; the gitlink only reads the nested HEAD). The full
 * capture then commits the snapshot; the working-tree side of a comparison and the warm-up use
 * its trees and indexes as they are. The temporary indexes stay alive until
 * `disposeSnapshot`.
 */
import { createTempIndex, removeStaleTempIndexes, type RepoInfo, type TempIndex } from '../repo';
import { joinRel } from '../paths';
import { NESTED_CONCURRENCY, settleLimit } from '../concurrency';
import type { ConversionEntry } from '../conversion';
import { toCheckpointError, type RepoPath, type SkippedFile } from '../types';
import { walkWorktree } from './find-changes';
import { addWalked } from './write-objects';
import { writeTree } from './commit';

export interface SnapshotOptions {
  maxUntrackedBytes: number;
  /** Nesting depth of this repository (0 for the worktree itself). */
  depth?: number;
}

export interface SnapshotNode {
  repo: RepoInfo;
  /** Path relative to the parent repository's root; null for the worktree itself. */
  rel: RepoPath | null;
  /** Its HEAD when it was walked (a nested repository's gitlink in the outer tree; null: none). */
  head: string | null;
  tree: string;
  index: TempIndex;
  /** Over-cap untracked files left out (paths relative to this repository). */
  skipped: SkippedFile[];
  children: SnapshotNode[];
  /** Nested repositories that could not be entered (left out, reported in `warnings`). */
  opaque: RepoPath[];
  warnings: string[];
  /** Whether the tree may hold a `.gitattributes` file (tracked or untracked), or attribute files outside it exist. */
  attributes: boolean;
  /** The conversion set: files an attribute converts, hashed raw (`conversion.ts`). */
  conv: ConversionEntry[];
}

/** Snapshots `repo` (and, recursively, its nested repositories) into temporary indexes and trees. */
export async function snapshotRepo(repo: RepoInfo, opts: SnapshotOptions): Promise<SnapshotNode> {
  const depth = opts.depth ?? 0;
  await removeStaleTempIndexes(repo, Date.now());
  const index = await createTempIndex(repo, repo.indexPath);
  const node: SnapshotNode = { repo, rel: null, head: null, tree: '', index, skipped: [], children: [], opaque: [], warnings: [], attributes: true, conv: [] };
  try {
    const walk = await walkWorktree(repo, index.file, { maxUntrackedBytes: opts.maxUntrackedBytes, depth });
    node.attributes = walk.attributes;
    node.skipped = walk.skipped;
    node.opaque = walk.opaque;
    node.warnings = walk.warnings;
    const own = (async () => {
      node.conv = await addWalked(repo, index.file, walk, node.warnings);
      node.tree = await writeTree(repo, index.file);
    })();
    const nestedDone = settleLimit(
      walk.enter,
      NESTED_CONCURRENCY,
      async (e) => {
        const child = await snapshotRepo(e.repo, { ...opts, depth: depth + 1 });
        child.rel = e.rel;
        child.head = e.head;
        return child;
      },
      (child) => node.children.push(child),
    );
    const [ownR, nestedR] = await Promise.allSettled([own, nestedDone]);
    if (ownR.status === 'rejected') throw ownR.reason;
    if (nestedR.status === 'rejected') throw nestedR.reason;
    return node;
  } catch (err) {
    await disposeSnapshot(node);
    throw toCheckpointError(err, `snapshotting ${repo.root}`);
  }
}

/** Deletes every temporary index of a snapshot tree (safe to call twice). */
export async function disposeSnapshot(node: SnapshotNode): Promise<void> {
  for (const c of node.children) await disposeSnapshot(c);
  await node.index.dispose();
}

/** Over-cap files a snapshot left out, nested ones with their path from the top. */
export function skippedOf(node: SnapshotNode): SkippedFile[] {
  return [...node.skipped, ...node.children.flatMap((c) => skippedOf(c).map((s) => ({ ...joinRel(c.rel, s), bytes: s.bytes })))];
}

/** Warnings of a snapshot and its nested repositories. */
export function collectWarnings(node: SnapshotNode, out: string[] = []): string[] {
  out.push(...node.warnings);
  for (const c of node.children) collectWarnings(c, out);
  return out;
}
