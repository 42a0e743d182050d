/**
 * ReviewService: what the agent changed in a turn, per file and per hunk, and Keep / Undo of
 * each (SPEC journey 2). A turn's baseline is its first checkpoint taken before
 * a file-changing tool (the workspace just before the agent's first edit of that run); the
 * changes are that checkpoint against the working tree now. Hunks come from ./line-diff.ts on
 * the raw bytes (CRLF, a missing final newline and non-UTF-8 text are exact). Every undo goes
 * through the checkpoint store: a restore point of the whole workspace is saved first, under the
 * same lease as the write (`withRestorePoint`), so the undo is itself undoable with `undoRestore`.
 * "Keep" marks a file reviewed for that turn; the marks live in this engine's memory (a review
 * state, not history: a new engine starts with every change unreviewed).
 */
import * as fsp from 'node:fs/promises';
import { quote } from '../../protocol/wire/quote';
import * as nodePath from 'node:path';
import type { VoxStore } from '../store/store';
import type { CheckpointRow } from '../store/rows';
import type { CheckpointService } from '../checkpoints/service';
import { CheckpointError, type FileDiffStat } from '../checkpoints/git-checkpoints';
import { REVIEW_RESTORE_LABEL } from '../checkpoints/restore-labels';
import { writeInWorkspace } from '../tools/confined-fs';
import { BINARY_SNIFF_BYTES, binaryReason } from '../tools/text';
import { diffLines, revertHunk, splitLines, type LineHunk } from './line-diff';
import { ReviewError } from './errors';

/** Largest file (either side) split into hunks. */
export const REVIEW_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Characters of each side of a hunk quoted in its view (the diff editor shows everything). */
export const HUNK_TEXT_MAX_CHARS = 2000;

export interface TurnRef { threadId: string; runId: string; baseRef: string; baseOrdinal: number }
export interface ReviewFile extends FileDiffStat { kept: boolean }
export interface ReviewHunk { index: number; hunk: LineHunk; removed: string; added: string }
export interface FileHunks { path: string; binary: boolean; existedBefore: boolean; existsNow: boolean; hunks: ReviewHunk[] }

const latin1 = (b: Buffer): string => b.toString('latin1');
const shown = (lines: string[]): string => {
  const t = Buffer.from(lines.join(''), 'latin1').toString('utf8');
  return quote(t, HUNK_TEXT_MAX_CHARS);
};

export class ReviewService {
  /** `thread\0run` → repository-relative paths the user kept. */
  private readonly kept = new Map<string, Set<string>>();

  constructor(private readonly deps: { store: VoxStore; checkpoints: CheckpointService }) {}

  /** The turn to review: `runId`'s, or the thread's latest run that changed files through a tool. */
  turn(threadId: string, runId?: string): TurnRef {
    const rows = this.deps.store.checkpoints(threadId);
    const firstToolCheckpoint = (id: string): CheckpointRow | undefined => rows.find((c) => c.runId === id && c.trigger === 'tool');
    let base: CheckpointRow | undefined;
    if (runId !== undefined) base = firstToolCheckpoint(runId);
    else {
      const runs = [...this.deps.store.runs(threadId)].sort((a, b) => b.ordinal - a.ordinal);
      for (const r of runs) if ((base = firstToolCheckpoint(r.id))) break;
    }
    if (!base) throw new ReviewError('noTurn', runId !== undefined ? `run ${runId} of thread ${threadId} changed no files through a tool` : `no turn of thread ${threadId} changed files through a tool`);
    return { threadId, runId: base.runId!, baseRef: base.ref, baseOrdinal: base.ordinal };
  }

  /** The files changed since the turn's baseline (its first edit) — kept ones marked. */
  async changes(threadId: string, runId?: string): Promise<{ turn: TurnRef; repoRoot: string; files: ReviewFile[] }> {
    const turn = this.turn(threadId, runId);
    const kept = this.kept.get(key(turn)) ?? new Set<string>();
    const files = (await this.deps.checkpoints.diff(turn.baseRef, 'working')).map((f) => ({ ...f, kept: kept.has(f.path) }));
    return { turn, repoRoot: await this.deps.checkpoints.git.repoRoot(this.deps.checkpoints.workspaceRoot), files };
  }

  private async sides(turn: TurnRef, path: string): Promise<{ root: string; abs: string; before: Buffer | null; now: Buffer | null }> {
    const root = await this.deps.checkpoints.git.repoRoot(this.deps.checkpoints.workspaceRoot);
    const abs = nodePath.resolve(root, path);
    const rel = nodePath.relative(root, abs);
    if (!rel || rel.startsWith('..') || nodePath.isAbsolute(rel)) throw new ReviewError('unknownFile', `${path} is not inside ${root}`);
    let before: Buffer | null;
    try {
      before = await this.deps.checkpoints.readFile(turn.baseRef, path);
    } catch (e) {
      if (!(e instanceof CheckpointError && e.code === 'pathNotFound')) throw e;
      before = null;
    }
    let now: Buffer | null = null;
    const st = await fsp.lstat(abs).catch(() => null);
    if (st) {
      if (!st.isFile()) throw new ReviewError('notAFile', `${path} is not a regular file; review it in the Source Control view.`);
      if (st.size > REVIEW_MAX_FILE_BYTES) throw new ReviewError('tooLarge', `${path} is ${st.size} bytes; hunks are computed for files up to ${REVIEW_MAX_FILE_BYTES}.`);
      now = await fsp.readFile(abs);
    }
    if (before === null && now === null) throw new ReviewError('unknownFile', `${path} did not exist before the turn and does not exist now`);
    return { root, abs, before, now };
  }

  /** The hunks of one file: baseline → now. Binary files have none (whole-file Keep/Undo only). */
  async hunks(threadId: string, runId: string | undefined, path: string): Promise<FileHunks & { turn: TurnRef }> {
    const turn = this.turn(threadId, runId);
    const { before, now } = await this.sides(turn, path);
    const binary = [before, now].some((b) => b !== null && binaryReason(b.subarray(0, BINARY_SNIFF_BYTES)) !== undefined);
    const base = { turn, path, binary, existedBefore: before !== null, existsNow: now !== null };
    if (binary) return { ...base, hunks: [] };
    const b = splitLines(latin1(before ?? Buffer.alloc(0)));
    const a = splitLines(latin1(now ?? Buffer.alloc(0)));
    const hunks = diffLines(b, a).map((h, index) => ({ index, hunk: h, removed: shown(b.slice(h.beforeStart, h.beforeEnd)), added: shown(a.slice(h.afterStart, h.afterEnd)) }));
    return { ...base, hunks };
  }

  /**
   * Puts one hunk back as it was before the turn (a restore point first). The file's other
   * hunks and every other byte stay as they are; a file the turn created that loses its last
   * hunk is removed.
   */
  async undoHunk(threadId: string, runId: string | undefined, path: string, hunkIndex: number): Promise<{ restorePoint: string; remaining: number }> {
    const turn = this.turn(threadId, runId);
    const { abs, root, before, now } = await this.sides(turn, path);
    for (const [side, b] of [['before the turn', before], ['now', now]] as const) {
      const why = b && binaryReason(b.subarray(0, BINARY_SNIFF_BYTES));
      if (why) throw new ReviewError('binaryFile', `${path} is binary ${side} (${why}); undo the whole file instead of a hunk.`);
    }
    const b = splitLines(latin1(before ?? Buffer.alloc(0)));
    const a = splitLines(latin1(now ?? Buffer.alloc(0)));
    const hunks = diffLines(b, a);
    const h = hunks[hunkIndex];
    if (!Number.isInteger(hunkIndex) || !h) throw new ReviewError('unknownHunk', `${path} has ${hunks.length} hunk(s) against the turn's baseline; there is no hunk ${hunkIndex}.`);
    const out = Buffer.from(revertHunk(b, a, h).join(''), 'latin1');
    const remove = before === null && hunks.length === 1;
    const { restorePoint } = await this.deps.checkpoints.git.withRestorePoint(root, `${REVIEW_RESTORE_LABEL}hunk ${hunkIndex + 1} of ${path}`, () => (remove ? removeFile(abs) : write(root, path, out)));
    this.deps.checkpoints.noteExternalChange();
    return { restorePoint, remaining: hunks.length - 1 };
  }

  /** Puts the whole file back as it was before the turn (removed when the turn created it); a restore point first. */
  async undoFile(threadId: string, runId: string | undefined, path: string): Promise<{ restorePoint: string }> {
    const turn = this.turn(threadId, runId);
    const { abs, root, before } = await this.sides(turn, path);
    const { restorePoint } = await this.deps.checkpoints.git.withRestorePoint(root, `${REVIEW_RESTORE_LABEL}${path}`, () => (before === null ? removeFile(abs) : write(root, path, before)));
    this.deps.checkpoints.noteExternalChange();
    this.kept.get(key(turn))?.delete(path);
    return { restorePoint };
  }

  /** Marks a file (or every changed file, `path` undefined) reviewed for the turn: Keep. */
  async keep(threadId: string, runId: string | undefined, path?: string): Promise<{ turn: TurnRef; kept: string[] }> {
    const { turn, files } = await this.changes(threadId, runId);
    const paths = path === undefined ? files.map((f) => f.path) : [path];
    if (path !== undefined && !files.some((f) => f.path === path)) throw new ReviewError('unknownFile', `${path} has no changes in this turn`);
    const set = this.kept.get(key(turn)) ?? new Set<string>();
    for (const p of paths) set.add(p);
    this.kept.set(key(turn), set);
    return { turn, kept: paths };
  }
}

const key = (t: TurnRef): string => `${t.threadId}\0${t.runId}`;

async function write(root: string, path: string, bytes: Buffer): Promise<void> {
  await writeInWorkspace(root, path, bytes);
}

async function removeFile(abs: string): Promise<void> {
  const st = await fsp.lstat(abs).catch(() => null);
  if (st && !st.isFile()) throw new ReviewError('notAFile', `${abs} is not a regular file; it was left alone.`);
  if (st) await fsp.unlink(abs);
}
