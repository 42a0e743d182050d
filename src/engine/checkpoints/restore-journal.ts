/**
 * The restore's journal (SPEC §4.2, all or nothing even when the process is killed): before a
 * restore writes its first file, it records what it is about to do in the worktree's git dir
 * (`<git-dir>/vox-restore-journal.json`, written aside, fsynced and renamed into place) — the
 * restore point and the target, and per repository its trees S (the restore point's) and T
 * (the target's) with the nested repositories whose paths it leaves alone — and removes it
 * (again fsynced) once every file is written, or once a failed restore was rolled back.
 *
 * A journal found at the next start (`finishInterruptedRestore`: the engine's start, any `vox`
 * command, or the next checkpoint operation on the workspace, under the workspace lease) means
 * the process died half-way: the restore is finished forward — the change list S→T is computed
 * again from the two trees and applied; writing a path makes it T's whatever stands there, and a
 * removal of what is gone already is nothing, so applying it to a half-written tree is exact —
 * and the warm state is dropped (it was never updated). The caller says so to the user.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as nodePath from 'node:path';
import type { RepoInfo } from './repo';
import { rawDiff } from './diff';
import { repoSettings } from './conversion';
import { dropWarmIndex } from './warm-state';
import { applyChanges, changesOf, readBlobs } from './restore-writer';
import { parseCheckpointRef, decodeThreadRefComponent } from './refs';
import { CheckpointError } from './types';

/** The journal's file name in the top repository's git dir. */
export const RESTORE_JOURNAL_FILE = 'vox-restore-journal.json';
/** Version of the journal's format. */
const JOURNAL_VERSION = 1;

/** One repository of an interrupted restore. */
export interface JournalRepo {
  repo: RepoInfo;
  /** The restore point's tree (S) and the target's (T). */
  from: string;
  to: string;
  /** Paths (hex of the raw bytes) of nested repositories restored inside themselves: left alone here. */
  owned: string[];
}

export interface RestoreJournal {
  version: typeof JOURNAL_VERSION;
  restorePoint: string;
  target: string;
  timeMs: number;
  /** In the order the restore writes them (the outer repository first). */
  repos: JournalRepo[];
}

/** What finishing an interrupted restore did, for the user. */
export interface RecoveredRestore {
  restorePoint: string;
  target: string;
  /** Paths the finished change lists hold (all repositories). */
  files: number;
  message: string;
}

const journalPath = (top: RepoInfo): string => nodePath.join(top.gitDir, RESTORE_JOURNAL_FILE);

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the journal durably (aside, fsync, rename, fsync of the git dir) before the first file is written. */
export function writeRestoreJournal(top: RepoInfo, journal: RestoreJournal): void {
  const file = journalPath(top);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(journal));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(top.gitDir);
}

/** Removes the journal (the restore is complete, or was rolled back). */
export function clearRestoreJournal(top: RepoInfo): void {
  try {
    fs.unlinkSync(journalPath(top));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  fsyncDir(top.gitDir);
}

const isHex = (s: unknown): s is string => typeof s === 'string' && /^[0-9a-f]*$/.test(s);

function parseJournal(text: string): RestoreJournal | null {
  try {
    const j = JSON.parse(text) as Partial<RestoreJournal>;
    if (j.version !== JOURNAL_VERSION || typeof j.restorePoint !== 'string' || typeof j.target !== 'string' || !Array.isArray(j.repos)) return null;
    const ok = j.repos.every((r: Partial<JournalRepo>) => typeof r.repo?.root === 'string' && typeof r.repo.gitDir === 'string' && typeof r.repo.indexPath === 'string' && isHex(r.from) && isHex(r.to) && Array.isArray(r.owned) && r.owned.every(isHex));
    return ok ? (j as RestoreJournal) : null;
  } catch {
    return null;
  }
}

/** "checkpoint 3 of thread X", or the restore point an undo went back to. */
export function describeRestoreTarget(ref: string): string {
  const cp = parseCheckpointRef(ref);
  if (!cp) return `the state saved in ${ref} (an undo)`;
  const thread = decodeThreadRefComponent(cp.threadComponent);
  return thread === null ? `checkpoint ${cp.ordinal}` : `checkpoint ${cp.ordinal} of thread ${thread}`;
}

/**
 * Finishes the restore a journal in `top`'s git dir describes (see the header); null when there
 * is none. A journal that cannot be read is removed and reported (nothing is written).
 */
export async function finishInterruptedRestore(top: RepoInfo): Promise<RecoveredRestore | null> {
  let text: string;
  try {
    text = await fsp.readFile(journalPath(top), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CheckpointError('gitFailed', `the journal of an interrupted restore in ${top.gitDir} cannot be read: ${(e as Error).message}`, e);
  }
  const journal = parseJournal(text);
  if (!journal) {
    clearRestoreJournal(top);
    return { restorePoint: '', target: '', files: 0, message: `A restore in ${top.root} was interrupted, and its journal could not be read (removed); the files may be partly restored: undo the newest restore point to go back.` };
  }
  let files = 0;
  for (const r of journal.repos) {
    const owned = r.owned.map((h) => Buffer.from(h, 'hex'));
    const own = (rel: Buffer): boolean => owned.some((o) => o.equals(rel) || (rel.length > o.length && rel[o.length] === 0x2f && rel.subarray(0, o.length).equals(o)));
    try {
      const changes = changesOf((await rawDiff(r.repo, r.from, r.to)).filter((e) => !own(e.raw)));
      await applyChanges(r.repo, changes, await readBlobs(r.repo, changes), { symlinks: (await repoSettings(r.repo)).symlinks });
      files += changes.length;
    } catch (err) {
      throw new CheckpointError(err instanceof CheckpointError ? err.code : 'gitFailed', `A restore to ${describeRestoreTarget(journal.target)} was interrupted, and finishing it in ${r.repo.root} failed: ${(err as Error).message}. The state before it is saved in ${journal.restorePoint} (undo that restore to go back).`, err);
    }
    await dropWarmIndex(r.repo);
  }
  clearRestoreJournal(top);
  const what = describeRestoreTarget(journal.target);
  return {
    restorePoint: journal.restorePoint,
    target: journal.target,
    files,
    message: `A restore to ${what} was interrupted (the process doing it stopped half-way); Vox finished it: the files now match ${what} (${files} path${files === 1 ? '' : 's'} checked). The state before that restore is saved in ${journal.restorePoint} (undo the restore to go back).`,
  };
}
