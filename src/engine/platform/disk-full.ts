/**
 * A full disk, recognised in one place. Whatever ran out of space — SQLite (`SQLITE_FULL`), a
 * file write (`ENOSPC`), or git, which says "No space left on device" in its output — becomes one
 * typed error, `platform/diskFull` with the words "the disk is full", so every client (the chat,
 * `vox`, a failed run) says the same thing and never shows the library's own text.
 */
import { VoxError } from '../../protocol/wire/vox-error';

/** What a user is told: the run's error, the CLI's line. */
export const DISK_FULL_MESSAGE = 'the disk is full';

/** How deep `isDiskFull` follows `cause` links (a typed error wrapping a library's). */
const CAUSE_DEPTH_MAX = 8;

/** git's and the C library's words for ENOSPC. */
const NO_SPACE_RE = /no space left on device|database or disk is full/i;

export class DiskFullError extends VoxError<'platform'> {
  override readonly name = 'DiskFullError';
  readonly domain = 'platform' as const;
  /** The file (or folder) that could not be written, for logs; not part of the message. */
  readonly path: string | null;
  constructor(path: string | null = null, cause?: unknown) {
    super('diskFull', DISK_FULL_MESSAGE, cause === undefined ? undefined : { cause });
    this.path = path;
  }
}

/** True when `e` (or what it wraps) says the disk is full. */
export function isDiskFull(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && cur; depth++) {
    if (cur instanceof DiskFullError) return true;
    const err = cur as { code?: unknown; message?: unknown; stderr?: unknown; cause?: unknown };
    if (err.code === 'ENOSPC' || err.code === 'SQLITE_FULL') return true;
    if (typeof err.message === 'string' && NO_SPACE_RE.test(err.message)) return true;
    if (typeof err.stderr === 'string' && NO_SPACE_RE.test(err.stderr)) return true;
    cur = err.cause;
  }
  return false;
}

/** `e` as the typed DiskFullError when it is a full disk, else null. */
export function diskFullOf(e: unknown, path: string | null = null): DiskFullError | null {
  if (e instanceof DiskFullError) return e;
  return isDiskFull(e) ? new DiskFullError(path, e) : null;
}
