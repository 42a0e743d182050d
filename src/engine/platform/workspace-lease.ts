/**
 * WorkspaceLeaseMap (SPEC §4.1): one permit per canonical workspace path. Checkpoint capture,
 * restore, worktree create and remove all run inside `withWorkspaceLease`, so two operations on
 * the same tree never interleave, while different trees proceed in parallel. Waiters are served
 * in FIFO order; a failing holder releases the permit like a successful one.
 *
 * The permit holds across processes too (VS Code and the CLI, two windows): the holder in this
 * process also takes a lock file (./file-lock.ts) in the git directory of the repository the path
 * is in — `<git-dir>/vox-lease-<hash of the path>.lock`, the temp folder outside a repository —
 * so two restores into one repository from two processes run one after the other.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireFileLock, lockDirFor } from './file-lock';

/** Where leases on paths outside any git repository keep their lock files. */
const FALLBACK_LOCK_DIR = path.join(os.tmpdir(), 'vox-leases');

/** The lock file of a lease on `key` (a canonical path). */
export function leaseLockFile(key: string): string {
  return path.join(lockDirFor(key, FALLBACK_LOCK_DIR), `vox-lease-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.lock`);
}

/** Canonical key for a path: symlinks resolved where the path exists, `..` and `.` removed. */
export function canonicalPath(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync.native(abs);
  } catch {
    // Resolve the deepest existing ancestor so a not-yet-created worktree still keys stably.
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(canonicalPath(parent), path.basename(abs));
  }
}

export class WorkspaceLeaseMap {
  /** The tail of each path's queue; absent when nobody holds or waits for the permit. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` while holding the permit for `workspacePath`, in this process and across processes. */
  async withWorkspaceLease<T>(workspacePath: string, fn: () => Promise<T> | T, opts: { lockFile?: string } = {}): Promise<T> {
    const key = canonicalPath(workspacePath);
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    let unlock: (() => void) | undefined;
    try {
      unlock = await acquireFileLock(opts.lockFile ?? leaseLockFile(key));
      return await fn();
    } finally {
      unlock?.();
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** True while some operation holds or waits for `workspacePath`. */
  isBusy(workspacePath: string): boolean {
    return this.tails.has(canonicalPath(workspacePath));
  }
}

/** The process-wide lease map shared by checkpoints, worktrees and variants. */
export const workspaceLeases = new WorkspaceLeaseMap();
