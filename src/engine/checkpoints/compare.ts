/**
 * The two sides of a checkpoint comparison, and reading one file out of a checkpoint
 * (SPEC §4.2: "Compare with working tree", "Compare with previous", the read-only
 * `vox-checkpoint:` documents).
 *
 * A side is a tree plus, for every nested repository the checkpoint recorded, a lazy loader of
 * that repository's own side (its checkpoint commit inside itself). The working tree's side comes
 * from a snapshot (`capture/snapshot.ts`), which writes blobs for changed files into the object
 * store (unreferenced; git's normal gc expiry applies) and changes nothing else.
 */
import { readCommit, resolveCommit, type RepoInfo } from './repo';
import { parseCommitMessage } from './refs';
import { readBlobAt, type DiffSide } from './diff';
import { relKey } from './paths';
import { probeNestedRepo } from './nested-repos';
import type { SnapshotNode } from './capture/snapshot';
import { CheckpointError } from './types';

async function requireCommit(repo: RepoInfo, rev: string): Promise<string> {
  const commit = await resolveCommit(repo, rev);
  if (!commit) throw new CheckpointError('unknownCheckpoint', `${rev} is not a checkpoint in ${repo.root}`);
  return commit;
}

/** Side of a checkpoint or restore point (`rev`: a ref or commit id). */
export async function checkpointSide(repo: RepoInfo, rev: string): Promise<DiffSide> {
  const commit = await requireCommit(repo, rev);
  const c = await readCommit(repo, commit);
  const meta = parseCommitMessage(c.message);
  const nested: DiffSide['nested'] = new Map();
  for (const n of meta?.nested ?? []) {
    nested.set(relKey(n.raw), {
      rel: { path: n.path, raw: n.raw },
      side: async () => {
        const probe = await probeNestedRepo(repo, n.raw);
        if (!probe?.repo || !(await resolveCommit(probe.repo, n.commit))) return null;
        return checkpointSide(probe.repo, n.commit);
      },
    });
  }
  return { repo, tree: c.tree, nested };
}

/** Side of the working tree, from a snapshot. */
export function workingSide(node: SnapshotNode): DiffSide {
  const nested: DiffSide['nested'] = new Map();
  for (const child of node.children) nested.set(relKey(child.rel!.raw), { rel: child.rel!, side: async () => workingSide(child) });
  return { repo: node.repo, tree: node.tree, nested };
}

function isUnder(prefix: Buffer, p: Buffer): boolean {
  return p.length > prefix.length && p[prefix.length] === 0x2f && p.subarray(0, prefix.length).equals(prefix);
}

/** Bytes of `rel` at `rev`, following the checkpoint into nested repositories. */
export async function readFileAt(repo: RepoInfo, rev: string, rel: Buffer): Promise<Buffer> {
  const commit = await requireCommit(repo, rev);
  const meta = parseCommitMessage((await readCommit(repo, commit)).message);
  const owner = (meta?.nested ?? []).find((n) => isUnder(n.raw, rel));
  if (owner) {
    const probe = await probeNestedRepo(repo, owner.raw);
    if (!probe?.repo || !(await resolveCommit(probe.repo, owner.commit))) throw new CheckpointError('pathNotFound', `nested repository ${owner.path} is no longer available`);
    return readFileAt(probe.repo, owner.commit, rel.subarray(owner.raw.length + 1));
  }
  return readBlobAt(repo, commit, rel);
}
