/**
 * Types, limits and typed errors of the git checkpoint store (SPEC §4.2).
 *
 * Paths inside a repository are carried as `RepoPath`: the exact bytes git printed (`raw`, which
 * may be non-UTF-8 and may contain newlines) plus a display string (`path`, UTF-8 decoded with
 * U+FFFD for invalid bytes). Everything that talks to git or to the filesystem uses `raw`.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { GitError } from '../git/git';

/** Untracked files larger than this (bytes) are left out of a checkpoint and reported. */
export const DEFAULT_MAX_UNTRACKED_FILE_BYTES = 10 * 1024 * 1024;
/** A capture slower than this (ms) is reported as `overBudget` (never silently skipped). */
export const DEFAULT_CAPTURE_BUDGET_MS = 2_000;
/** Most changed paths listed in one checkpoint's metadata; the total count is always kept. */
export const MAX_CHANGED_PATHS_IN_META = 200;
/** Longest accepted thread id (UTF-16 code units); longer ids are refused as `badThreadId`. */
export const MAX_THREAD_ID_LENGTH = 1024;
/** Author and committer of every checkpoint commit, so capture never needs a user identity. */
export const CHECKPOINT_IDENTITY = { name: 'Vox Checkpoints', email: 'checkpoints@vox.invalid' } as const;
/** Ref namespace of checkpoints: `refs/vox/checkpoints/<encoded thread id>/<ordinal>`. */
export const CHECKPOINT_REF_PREFIX = 'refs/vox/checkpoints/';
/** Ref namespace of restore points: `refs/vox/restore-points/<UTC stamp>-<n>`. */
export const RESTORE_POINT_REF_PREFIX = 'refs/vox/restore-points/';
/** First line of every checkpoint commit: `vox-checkpoint:<threadId>:<ordinal>`. */
export const CHECKPOINT_SUBJECT_PREFIX = 'vox-checkpoint:';
/** First line of every restore point commit: `vox-restore-point:<target ref>`. */
export const RESTORE_POINT_SUBJECT_PREFIX = 'vox-restore-point:';

export type CheckpointErrorCode = ErrorCode<'checkpoint'>;

/** Typed failure of the checkpoint store. Nothing that throws one has deleted a user's byte. */
export class CheckpointError extends VoxError<'checkpoint'> {
  override readonly name = 'CheckpointError';
  readonly domain = 'checkpoint' as const;
  constructor(
    code: CheckpointErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(code, message, { cause });
  }
}

/** Maps a GitError (or anything thrown by a git call) to a CheckpointError. */
export function toCheckpointError(err: unknown, context: string): CheckpointError {
  if (err instanceof CheckpointError) return err;
  if (err instanceof GitError) {
    if (err.code === 'notARepository') return new CheckpointError('notARepository', `${context}: ${err.message}`, err);
    return new CheckpointError('gitFailed', `${context}: ${err.message}`, err);
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new CheckpointError('gitFailed', `${context}: ${msg}`, err);
}

/** A path inside a repository: exact bytes plus a display form. */
export interface RepoPath {
  /** Display form (UTF-8 decoded; invalid bytes become U+FFFD). */
  path: string;
  /** Exact bytes as git stores them. */
  raw: Buffer;
}

export function repoPath(raw: Buffer): RepoPath {
  return { path: raw.toString('utf8'), raw: Buffer.from(raw) };
}

export type CheckpointTrigger = { kind: 'tool'; toolName?: string } | { kind: 'turnEnd' } | { kind: 'manual' };

export interface SkippedFile extends RepoPath {
  bytes: number;
}

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'typeChanged' | 'renamed' | 'copied' | 'unmerged' | 'unknown';

export interface ChangedFile extends RepoPath {
  status: ChangeStatus;
}

/** One nested repository recorded as part of a checkpoint or restore point. */
export interface NestedCheckpoint extends RepoPath {
  /** Commit id of the nested repository's own checkpoint (lives in the nested object store). */
  commit: string;
}

export interface CaptureOptions {
  worktree: string;
  threadId: string;
  /** Explicit ordinal; default is one more than the thread's highest (first is 1). */
  ordinal?: number;
  trigger: CheckpointTrigger;
  /**
   * Paths (relative to the worktree, or absolute inside it) changed since the previous capture of
   * this worktree, as reported by the agent's edit tools. When given, capture updates a warm
   * per-worktree index for just these paths; the caller guarantees nothing else changed.
   */
  changedPaths?: Array<string | Buffer>;
}

export interface CheckpointReceipt {
  ref: string;
  commit: string;
  tree: string;
  threadId: string;
  ordinal: number;
  parent: string | null;
  trigger: CheckpointTrigger;
  timeMs: number;
  tookMs: number;
  changedCount: number;
  /** Changed paths vs the previous checkpoint (vs HEAD for the first), at most MAX_CHANGED_PATHS_IN_META. */
  changed: ChangedFile[];
  skipped: SkippedFile[];
  nested: NestedCheckpoint[];
  /** Whether the reported `changedPaths` were trusted (no look at the rest of the tree). */
  fast: boolean;
  /** Whether the capture started from the warm index (only what changed since was hashed). */
  incremental: boolean;
  /** Things left out that are not over-cap files: unreadable files, nested repositories that cannot be entered. */
  warnings: string[];
  overBudget?: { budgetMs: number; tookMs: number };
}

export interface CheckpointInfo {
  ref: string;
  commit: string;
  threadId: string;
  ordinal: number;
  trigger: CheckpointTrigger;
  timeMs: number;
  changedCount: number;
  changed: ChangedFile[];
  skipped: SkippedFile[];
  nested: NestedCheckpoint[];
}

export interface RestorePointInfo {
  ref: string;
  commit: string;
  target: string;
  timeMs: number;
}

export interface RestoreOptions {
  worktree: string;
  threadId: string;
  ordinal: number;
  /** Only `files` is handled here; thread rewinds belong to the thread store. */
  mode: 'files';
}

export interface NestedRestoreOutcome extends RepoPath {
  status: 'restored' | 'missing';
  detail?: string;
}

export interface RestoreResult {
  /** The restore point saved before anything changed; pass it to `undoRestore`. */
  restorePoint: string;
  target: string;
  /** Paths written, replaced or removed (nested repositories' paths prefixed with theirs). */
  changed: ChangedFile[];
  /** Ignored or over-cap files that stood in the target's way: saved in the restore point, then replaced. */
  preserved: SkippedFile[];
  nested: NestedRestoreOutcome[];
  tookMs: number;
}

export interface FileDiffStat extends RepoPath {
  additions: number;
  deletions: number;
  binary: boolean;
  status: ChangeStatus;
  /** Source path of a rename or copy. */
  from?: RepoPath;
}

export interface PruneOptions {
  threadId?: string;
  /** Keep this many newest checkpoints per thread. */
  keepLast?: number;
  /** Only delete checkpoints older than this (ms before now). */
  olderThanMs?: number;
  /** Also delete restore points older than this (ms before now). */
  restorePointsOlderThanMs?: number;
  /** Run `git gc --auto` afterwards (git's own thresholds and expiry decide). Default true. */
  gcAuto?: boolean;
}

export interface PruneResult {
  deletedRefs: string[];
  /** On-disk bytes of objects reachable only from the deleted refs (git may drop them at its next gc). */
  reclaimableBytes: number;
  /** `count-objects -v` totals (loose + packed, bytes) before and after. */
  objectBytesBefore: number;
  objectBytesAfter: number;
}
