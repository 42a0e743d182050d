/**
 * Link-safe recursive deletion (SPEC §4.1): the replacement for `git worktree remove --force` and
 * `rm -rf`, which on some platforms and versions traverse directory junctions or symlinks and
 * delete files that live outside the tree.
 *
 * The walk uses lstat only: a symbolic link (to a file or to a directory — on Windows this
 * includes junctions, which Node reports as symbolic links) is unlinked as a link and never
 * entered; only real directories are recursed into; a directory on another device (a mount point
 * inside the tree) is never entered and is left in place and reported. Read-only directories are
 * made writable (they are real directories, checked with lstat) so their entries can go. The walk
 * is asynchronous with a bounded number of filesystem calls in flight, so deleting a large tree
 * does not block the extension host.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Stats } from 'node:fs';

/** Filesystem calls in flight at once during a removal. */
export const REMOVE_MAX_IN_FLIGHT = 32;
/** Owner read/write/search bits added to a read-only directory so its entries can be deleted. */
const OWNER_RWX = 0o700;

export interface SafeRemoveOptions {
  /** Names (directly under the root) to delete last, after everything else (e.g. `.git`). */
  deleteLast?: string[];
}

export interface SafeRemoveResult {
  /** Entries that were not deleted (mount points and the directories that contain them). */
  leftBehind: string[];
  /** Number of symbolic links removed as links. */
  linksUnlinked: number;
}

/** A counting semaphore: at most `limit` callers run at once. */
class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/**
 * Deletes `root` and everything under it without following any symbolic link. If `root` itself is
 * a symbolic link, only the link is removed. Missing `root` is not an error.
 */
export async function removeTreeNoFollow(root: string, opts: SafeRemoveOptions = {}): Promise<SafeRemoveResult> {
  const limiter = new Limiter(REMOVE_MAX_IN_FLIGHT);
  const result: SafeRemoveResult = { leftBehind: [], linksUnlinked: 0 };
  const io = <T>(fn: () => Promise<T>) => limiter.run(fn);

  let rootStat: Stats;
  try {
    rootStat = await fsp.lstat(root);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return result;
    throw e;
  }
  const device = rootStat.dev;

  /** Removes one entry whose lstat is `st`; returns false when it (or something inside) stayed. */
  const removeEntry = async (p: string, st: Stats): Promise<boolean> => {
    if (st.isSymbolicLink()) {
      await io(() => fsp.unlink(p)); // the link itself; its target is never touched
      result.linksUnlinked++;
      return true;
    }
    if (!st.isDirectory()) {
      await io(() => fsp.unlink(p).catch((e) => (errCode(e) === 'ENOENT' ? undefined : Promise.reject(e))));
      return true;
    }
    if (st.dev !== device) {
      result.leftBehind.push(p);
      return false;
    }
    return removeDirectory(p, st, []);
  };

  const removeDirectory = async (dir: string, st: Stats, last: string[]): Promise<boolean> => {
    if ((st.mode & OWNER_RWX) !== OWNER_RWX) await io(() => fsp.chmod(dir, (st.mode & 0o7777) | OWNER_RWX));
    const names = await io(() => fsp.readdir(dir));
    const now = names.filter((n) => !last.includes(n));
    const later = names.filter((n) => last.includes(n));
    const removeNamed = async (name: string): Promise<boolean> => {
      const p = path.join(dir, name);
      let childStat: Stats;
      try {
        childStat = await io(() => fsp.lstat(p));
      } catch (e) {
        if (errCode(e) === 'ENOENT') return true;
        throw e;
      }
      return removeEntry(p, childStat);
    };
    // When something had to stay, the `deleteLast` entries stay too (a worktree keeps its `.git`
    // link, so git still knows the half-removed tree and the removal can be retried).
    const kept = (await Promise.all(now.map(removeNamed))).some((ok) => !ok);
    const keptLast = kept || (await Promise.all(later.map(removeNamed))).some((ok) => !ok);
    if (keptLast) {
      result.leftBehind.push(dir);
      return false;
    }
    await io(() => fsp.rmdir(dir));
    return true;
  };

  if (rootStat.isDirectory()) await removeDirectory(root, rootStat, opts.deleteLast ?? []);
  else await removeEntry(root, rootStat);
  return result;
}
