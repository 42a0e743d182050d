/**
 * Capture stage 0, the target: which checkpoint this capture makes (SPEC §4.2) — its ref
 * `refs/vox/checkpoints/<thread>/<ordinal>`, its header (thread, ordinal, trigger, time) and the
 * thread's previous checkpoint P, its parent and the base of "files changed".
 *
 * The store remembers each thread's last checkpoint (`LastCheckpoints`), so a capture needs no
 * ref listing; without a memory (or with an explicit ordinal) the thread's refs are listed. A
 * stale memory (another process captured the thread since) names an ordinal that exists: git
 * refuses to move that ref (`move-ref.ts`) and the capture runs again from the refs.
 *
 * `previousOf` reads P as far as one repository is concerned: when P is the commit the warm state
 * was made for (the usual case), its tree and nested commits are known without reading anything.
 */
import { listRefs, readCommit, type RepoInfo } from '../repo';
import { checkpointRef, parseCheckpointRef, parseCommitMessage, threadRefPrefix, type CheckpointHeader } from '../refs';
import { relKey } from '../paths';
import type { WarmState } from '../warm-state';
import { CheckpointError, type CheckpointTrigger } from '../types';

/** Most (worktree, thread) pairs whose last checkpoint a store remembers. */
const LAST_CHECKPOINT_CACHE_MAX = 1024;

/** A thread's last checkpoint in one worktree. */
export interface LastCheckpoint {
  ordinal: number;
  commit: string;
}

/** The last checkpoint a store made per worktree and thread. */
export class LastCheckpoints {
  private readonly map = new Map<string, LastCheckpoint>();

  /** The remembered one when `use` (an automatic ordinal), forgotten either way until the capture succeeds. */
  take(root: string, threadId: string, use: boolean): LastCheckpoint | undefined {
    const key = `${root}\0${threadId}`;
    const last = use ? this.map.get(key) : undefined;
    this.map.delete(key);
    return last;
  }

  remember(root: string, threadId: string, last: LastCheckpoint): void {
    if (this.map.size >= LAST_CHECKPOINT_CACHE_MAX) this.map.clear();
    this.map.set(`${root}\0${threadId}`, last);
  }

  /** Forgets every thread of a worktree (after a prune). */
  forget(root: string): void {
    for (const k of [...this.map.keys()]) if (k.startsWith(`${root}\0`)) this.map.delete(k);
  }
}

/** What a capture asks for. */
export interface TargetRequest {
  threadId: string;
  /** Explicit ordinal; default one more than the thread's highest. */
  ordinal?: number;
  trigger: CheckpointTrigger;
}

/** The checkpoint to make and the thread's previous checkpoint P (null: its first). */
export interface Target {
  header: CheckpointHeader;
  prevCommit: string | null;
}

/** The new checkpoint's header and the thread's previous checkpoint, from `last` or the refs. */
export async function chooseTarget(repo: RepoInfo, req: TargetRequest, timeMs: number, last: LastCheckpoint | undefined): Promise<Target> {
  const header = (ordinal: number): CheckpointHeader => ({ ref: checkpointRef(req.threadId, ordinal), threadId: req.threadId, ordinal, trigger: req.trigger, timeMs });
  if (last) return { header: header(last.ordinal + 1), prevCommit: last.commit };
  const refs = await listRefs(repo, threadRefPrefix(req.threadId));
  const existing = refs.map((r) => ({ ...r, parsed: parseCheckpointRef(r.ref) })).filter((r) => r.parsed);
  const ordinal = req.ordinal ?? existing.reduce((m, r) => Math.max(m, r.parsed!.ordinal), 0) + 1;
  if (existing.some((r) => r.parsed!.ordinal === ordinal)) throw new CheckpointError('checkpointExists', `${checkpointRef(req.threadId, ordinal)} already exists`);
  const prev = existing.filter((r) => r.parsed!.ordinal < ordinal).sort((a, b) => b.parsed!.ordinal - a.parsed!.ordinal)[0] ?? null;
  return { header: header(ordinal), prevCommit: prev?.commit ?? null };
}

/** The target could not be chosen: the capture cannot happen at all (not a reason to fall back). */
export class TargetFailed extends Error {
  constructor(readonly reason: unknown) {
    super('refs');
  }
}

/** The previous checkpoint P as far as one repository is concerned. */
export interface Prev extends Target {
  /** P's tree when known without reading (it is W), or its commit object (null: no P, or unreadable). */
  prevObj: { tree: string; message?: string } | null;
  /** Commits P recorded for nested repositories, by `relKey`. */
  prevNested: Map<string, string>;
}

/** Resolves the target and reads P (commit, tree, nested commits); a failing target rejects with `TargetFailed`. */
export async function previousOf(repo: RepoInfo, warm: WarmState, target: Promise<Target>): Promise<Prev> {
  const { header, prevCommit } = await target.catch((err: unknown) => {
    throw new TargetFailed(err);
  });
  // When P is the commit the warm state was made for, its tree and nested commits are known.
  if (prevCommit && prevCommit === warm.commit) {
    return { header, prevCommit, prevObj: { tree: warm.tree }, prevNested: new Map(warm.nested.flatMap((n) => (n.commit ? [[relKey(n.rel.raw), n.commit] as const] : []))) };
  }
  const prevObj = prevCommit ? await readCommit(repo, prevCommit).catch(() => null) : null;
  const meta = prevObj ? parseCommitMessage(prevObj.message) : null;
  return { header, prevCommit, prevObj, prevNested: new Map((meta?.nested ?? []).map((n) => [relKey(n.raw), n.commit])) };
}

/** A nested repository's target: the same header, its previous commit as P recorded it. */
export function nestedTarget(prev: Promise<Prev>, rel: Buffer): Promise<Target> {
  return prev.then((p) => ({ header: p.header, prevCommit: p.prevNested.get(relKey(rel)) ?? null }));
}
