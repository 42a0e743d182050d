/**
 * The disk reserve: a file of DISK_RESERVE_BYTES beside the database (`<db>-reserve`), written when
 * a writable store opens, so that the write ending a run still lands when the disk fills mid-turn.
 * A write the store must not lose (`VoxStore.appendEnding`: a run's `run.ended`) that fails for a
 * full disk frees the reserve and is tried once more; without it the run would stay `running`
 * until the next start closed it. The reserve comes back at the next open that has room for it.
 */
import * as fs from 'node:fs';
import { isDiskFull } from '../platform/disk-full';

/** The reserve's size: room for a run's last transaction (its end, message and projections) in the WAL. */
export const DISK_RESERVE_BYTES = 1024 * 1024;

export function reservePath(dbFile: string): string {
  return `${dbFile}-reserve`;
}

/** Writes the reserve when it is missing or short; a disk without room for it leaves none (never throws). */
export function keepDiskReserve(dbFile: string): void {
  const file = reservePath(dbFile);
  try {
    if (fs.statSync(file).size >= DISK_RESERVE_BYTES) return;
  } catch {
    /* missing: written below */
  }
  try {
    // Real bytes, not a sparse file: the space must be taken now to be given back later.
    fs.writeFileSync(file, Buffer.alloc(DISK_RESERVE_BYTES));
  } catch {
    fs.rmSync(file, { force: true });
  }
}

/** Frees the reserve; false when there was none. */
function freeDiskReserve(dbFile: string): boolean {
  const file = reservePath(dbFile);
  if (!fs.existsSync(file)) return false;
  fs.rmSync(file, { force: true });
  return true;
}

/** Runs `write`; when it fails for a full disk and a reserve was there, frees it and runs `write` once more. */
export function withDiskReserve<T>(dbFile: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    if (!isDiskFull(e) || !freeDiskReserve(dbFile)) throw e;
    return write();
  }
}
