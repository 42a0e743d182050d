/**
 * Variants (SPEC §4.3): the shared vocabulary — limits, the typed `VariantError`,
 * per-variant status and diff stats, the snapshots and change events the pool publishes.
 *
 * Status life cycle of one variant:
 *   creating → running → completed | failed | cancelled → adopted | discarded
 *   creating → failed (worktree could not be made) | cancelled (cancelAll before the turn began)
 * `adopted` and `discarded` are final and mean the variant's worktree is gone.
 */
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';

/** Most variants one prompt may run as (SPEC §4.3: 1..4). */
export const MAX_VARIANTS = 4;
/** Fewest variants (one is a single isolated run in a worktree). */
export const MIN_VARIANTS = 1;
/**
 * Shortest time between two live stats refreshes of one variant (ms). A burst of edits coalesces
 * into one `git add -A` + `git diff` instead of one per tool call; the final refresh at turn end
 * always runs.
 */
export const STATS_REFRESH_MIN_INTERVAL_MS = 250;
/** Time limit for one git call made while computing stats or building a patch (ms). */
export const VARIANT_GIT_TIMEOUT_MS = 60_000;
/** Most conflicting files probed one by one (one `git apply --check` each) to name them exactly. */
export const MAX_CONFLICT_PROBES = 200;
/** Most conflicting files named in a `conflict` error's message (the `files` list holds them all). */
export const MAX_CONFLICT_FILES_IN_MESSAGE = 10;
/** Characters of the prompt used in a variant thread's title. */
export const VARIANT_TITLE_PROMPT_CHARS = 60;

export type VariantStatus = 'creating' | 'running' | 'completed' | 'failed' | 'cancelled' | 'adopted' | 'discarded';

/** Statuses in which the agent loop has stopped and the worktree still exists. */
export const SETTLED_STATUSES: ReadonlySet<VariantStatus> = new Set(['completed', 'failed', 'cancelled']);
/** Statuses after which the variant no longer has a worktree. */
export const REMOVED_STATUSES: ReadonlySet<VariantStatus> = new Set(['adopted', 'discarded']);

export type VariantErrorCode = ErrorCode<'variant'>;

export interface VariantErrorDetails {
  /** Conflicting paths (repository-relative, `/`-separated), for `conflict`. */
  files?: string[];
  /** Per-model problems, for `invalidModels`. */
  models?: Array<{ index: number; ref: string; message: string }>;
  index?: number;
  path?: string;
  /** git's own words (stderr), for `conflict` and `gitFailed`. */
  gitOutput?: string;
  cause?: unknown;
}

export class VariantError extends VoxError<'variant'> {
  override readonly name = 'VariantError';
  readonly domain = 'variant' as const;
  constructor(
    code: VariantErrorCode,
    message: string,
    readonly details: VariantErrorDetails = {},
  ) {
    super(code, message);
  }
}

export type FileChangeStatus = 'added' | 'modified' | 'deleted' | 'typeChanged';

export interface VariantFileStat {
  /** Repository-relative path with `/` separators. */
  path: string;
  status: FileChangeStatus;
  /** Added / deleted lines; 0 for binary files. */
  additions: number;
  deletions: number;
  binary: boolean;
  /** Octal git modes (`100644`, `100755`, `120000`); null on the side where the file is absent. */
  oldMode: string | null;
  newMode: string | null;
}

export interface VariantStats {
  files: VariantFileStat[];
  additions: number;
  deletions: number;
}

export const EMPTY_STATS: VariantStats = Object.freeze({ files: [], additions: 0, deletions: 0 }) as VariantStats;

/** A snapshot of one variant, as the UI shows it. */
export interface VariantInfo {
  index: number;
  /** The model ref as given (`openai:gpt-4o`). */
  model: string;
  worktreePath: string;
  threadId: string;
  /** Null until the agent turn has started. */
  runId: string | null;
  status: VariantStatus;
  stats: VariantStats;
  /** Why the variant failed (worktree creation or the agent run), else null. */
  error: string | null;
  /** Last stats refresh failure (`stats` then show the last good state), else null. */
  statsError: string | null;
}

export type VariantChangeKind = 'status' | 'stats';

export interface VariantChange {
  kind: VariantChangeKind;
  poolId: string;
  variant: VariantInfo;
}

export interface Disposable {
  dispose(): void;
}

/** What `diffVariant` returns: the patch of the variant's worktree against its base commit. */
export interface VariantDiff {
  base: string;
  /** `git diff --binary` output, byte for byte (apply this). */
  patch: Buffer;
  /** The same patch decoded as UTF-8 for display (lossy only for non-UTF-8 text files). */
  text: string;
  stats: VariantStats;
}

export interface AdoptResult {
  index: number;
  /** Files written into the main workspace. */
  files: VariantFileStat[];
  /** Worktrees that could not be removed afterwards (the adoption itself succeeded). */
  removalErrors: Array<{ index: number; message: string }>;
}
