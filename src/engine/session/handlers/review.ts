/** Handlers of the review commands (../../../protocol/commands/review.ts): ../../review/. */
import { previewEdit } from '../../review/preview';
import { ReviewError } from '../../review/errors';
import type { TurnRef } from '../../review/service';
import { pathView } from './checkpoints';
import type { HandlerTable } from './types';

const turnView = (t: TurnRef) => ({ threadId: t.threadId, runId: t.runId, baseRef: t.baseRef, baseOrdinal: t.baseOrdinal });
const opt = <T>(v: T | undefined): T | undefined => v;

export const reviewHandlers: HandlerTable<'previewToolCall' | 'listTurnChanges' | 'listFileHunks' | 'undoHunk' | 'undoFile' | 'keepFile'> = {
  async previewToolCall({ services: { gate, runs, tools, workspaceRoot } }, cmd) {
    const call = gate.pending().find((p) => p.callId === cmd.callId);
    if (!call) throw new ReviewError('unknownCall', `call ${cmd.callId} is not waiting for approval`);
    // A variant's run edits its own worktree: preview against the root the tool will use.
    const root = runs.active().find((r) => r.runId === call.runId)?.workspaceRoot ?? workspaceRoot;
    const p = await previewEdit(tools, root, call.toolName, call.argumentsJson);
    return {
      callId: call.callId, threadId: call.threadId, runId: call.runId, toolName: call.toolName, path: p.path,
      beforeBase64: p.before ? p.before.toString('base64') : null, afterBase64: p.after.toString('base64'),
    };
  },
  async listTurnChanges({ services: { review } }, cmd) {
    const { turn, repoRoot, files } = await review.changes(cmd.threadId, opt(cmd.runId));
    return {
      ...turnView(turn),
      repoRoot,
      files: files.map((f) => ({
        ...pathView(f), status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary, kept: f.kept, ...(f.from ? { from: pathView(f.from) } : {}),
      })),
    };
  },
  async listFileHunks({ services: { review } }, cmd) {
    const r = await review.hunks(cmd.threadId, opt(cmd.runId), cmd.path);
    return {
      ...turnView(r.turn), path: r.path, binary: r.binary, existedBefore: r.existedBefore, existsNow: r.existsNow,
      hunks: r.hunks.map((h) => ({ index: h.index, ...h.hunk, removed: h.removed, added: h.added })),
    };
  },
  async undoHunk({ services: { review } }, cmd) {
    return review.undoHunk(cmd.threadId, opt(cmd.runId), cmd.path, cmd.hunkIndex);
  },
  async undoFile({ services: { review } }, cmd) {
    return review.undoFile(cmd.threadId, opt(cmd.runId), cmd.path);
  },
  async keepFile({ services: { review } }, cmd) {
    const r = await review.keep(cmd.threadId, opt(cmd.runId), cmd.path);
    return { ...turnView(r.turn), kept: r.kept };
  },
};
