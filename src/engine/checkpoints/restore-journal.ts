/**
 * The restore's journal (SPEC §4.2, all or nothing even when the process is killed): before a
 * restore writes its first file, it records what it is about to do in the worktree's git dir
 * (`<git-dir>/vox-restore-journal.json`, written aside, fsynced and renamed into place) — the
 * restore point holding the state before, the target ref and its commit, and per repository the
 * trees S and T — and removes it (fsynced too) once every file is written, or once a failed
 * restore was rolled back.
 *
 * A journal found later means the process died half-way. The store (`git-checkpoints.ts`, under
 * the workspace lease: at the engine's start, any `vox` command, or the next checkpoint
 * operation) then finishes it forward by restoring the journal's target commit once more: the
 * half-written tree is saved as a new restore point first (so nothing changed since is lost),
 * then every path that differs from T is written, exactly. This module reads and writes the
 * journal and words what the user is told.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as nodePath from 'node:path';
import type { RepoInfo } from './repo';
import { parseCheckpointRef, decodeThreadRefComponent } from './refs';
import { CheckpointError } from './types';

/** The journal's file name in the top repository's git dir. */
export const RESTORE_JOURNAL_FILE = 'vox-restore-journal.json';
/** Version of the journal's format. */
const JOURNAL_VERSION = 1;

/** One repository an interrupted restore was writing (for whoever looks into it). */
export interface JournalRepo {
  root: string;
  /** The restore point's tree (S) and the target's (T). */
  from: string;
  to: string;
}

export interface RestoreJournal {
  version: typeof JOURNAL_VERSION;
  /** The restore point that holds the state before the restore. */
  restorePoint: string;
  /** The ref restored, and the commit it named. */
  target: string;
  targetCommit: string;
  timeMs: number;
  /** In the order the restore writes them (the outer repository first). */
  repos: JournalRepo[];
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

/**
 * Whether the repository `dir` is in may hold a journal, found without running git (a start in a
 * workspace without one costs no process): the nearest `.git` folder above `dir`, or the git dir
 * a `.git` file (a linked worktree) names. Unusual layouts (GIT_DIR) read as true.
 */
export function journalMayExist(dir: string): boolean {
  for (let d = nodePath.resolve(dir); ; d = nodePath.dirname(d)) {
    const dotGit = nodePath.join(d, '.git');
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(dotGit);
    } catch {
      // Not here: look further up.
    }
    if (st?.isDirectory()) return fs.existsSync(nodePath.join(dotGit, RESTORE_JOURNAL_FILE));
    if (st?.isFile()) {
      let named: string | undefined;
      try {
        named = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1];
      } catch {
        return true; // unreadable: let git say
      }
      return named ? fs.existsSync(nodePath.join(nodePath.resolve(d, named), RESTORE_JOURNAL_FILE)) : true;
    }
    if (nodePath.dirname(d) === d) return process.env.GIT_DIR !== undefined;
  }
}

const isHex = (s: unknown): s is string => typeof s === 'string' && /^[0-9a-f]*$/.test(s);

function parseJournal(text: string): RestoreJournal | null {
  try {
    const j = JSON.parse(text) as Partial<RestoreJournal>;
    if (j.version !== JOURNAL_VERSION || typeof j.restorePoint !== 'string' || typeof j.target !== 'string' || !isHex(j.targetCommit) || !j.targetCommit || !Array.isArray(j.repos)) return null;
    return j as RestoreJournal;
  } catch {
    return null;
  }
}

/**
 * The journal an interrupted restore left in `top`'s git dir; null when there is none;
 * 'unreadable' when it cannot be parsed (it is removed: nothing can be finished from it).
 */
export async function readRestoreJournal(top: RepoInfo): Promise<RestoreJournal | 'unreadable' | null> {
  let text: string;
  try {
    text = await fsp.readFile(journalPath(top), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CheckpointError('gitFailed', `the journal of an interrupted restore in ${top.gitDir} cannot be read: ${(e as Error).message}`, e);
  }
  const journal = parseJournal(text);
  if (journal) return journal;
  clearRestoreJournal(top);
  return 'unreadable';
}

/** "checkpoint 3 of thread X", or the restore point an undo went back to. */
export function describeRestoreTarget(ref: string): string {
  const cp = parseCheckpointRef(ref);
  if (!cp) return `the state saved in ${ref} (an undo)`;
  const thread = decodeThreadRefComponent(cp.threadComponent);
  return thread === null ? `checkpoint ${cp.ordinal}` : `checkpoint ${cp.ordinal} of thread ${thread}`;
}

/** What the user is told about an interrupted restore: finished (`asFound`: the new restore point of the half-written tree), or why not. */
export function recoveryMessage(top: RepoInfo, journal: RestoreJournal | 'unreadable', outcome: { files: number; asFound: string } | { error: string }): string {
  if (journal === 'unreadable') return `A restore in ${top.root} was interrupted, and its journal could not be read (removed); the files may be partly restored: undo the newest restore point to go back.`;
  const what = describeRestoreTarget(journal.target);
  const head = `A restore to ${what} was interrupted (the process doing it stopped half-way)`;
  if ('error' in outcome) return `${head}, and finishing it failed: ${outcome.error} The state before it is saved in ${journal.restorePoint} (undo that restore to go back).`;
  return `${head}; Vox finished it: the files now match ${what} (${outcome.files} path${outcome.files === 1 ? '' : 's'} written). The state before that restore is saved in ${journal.restorePoint} (undo the restore to go back), the half-restored tree as found in ${outcome.asFound}.`;
}
