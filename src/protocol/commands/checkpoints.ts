/**
 * Checkpoint commands (SPEC 4.2): capture, list (from the store, per thread or all), the files a
 * checkpoint changed, diff two checkpoints or one against the working tree, read a file at a
 * checkpoint, restore (files, thread or both; a restore point is saved first), undo a restore,
 * list restore points, prune. Paths travel as display strings (`path`) plus the exact bytes in
 * base64 (`rawBase64`) when those are not the path's UTF-8.
 */
import { arrayOf, bool, int, nullable, object, optional, str, type Infer } from '../wire/validators';
import { checkpointTrigger, restoreMode } from '../events';
import { count, name, positive } from './common';
import { defineCommand } from './define';

export const changeStatus = str; // added | modified | deleted | typeChanged | renamed | copied | unmerged | unknown
export const pathFields = { path: str, rawBase64: optional(str) };
export const changedFile = object({ ...pathFields, status: changeStatus });
export type ChangedFileView = Infer<typeof changedFile>;
export const skippedFile = object({ ...pathFields, bytes: int });

export const checkpointView = object({
  threadId: str, ordinal: int, ref: str, runId: nullable(str), trigger: checkpointTrigger, toolName: nullable(str),
  changedCount: int, skippedCount: int, overBudgetMs: nullable(int), rewindTo: nullable(str), createdAt: int,
});
export type CheckpointView = Infer<typeof checkpointView>;

export const captureReceipt = object({
  ref: str, threadId: str, ordinal: int, tookMs: int, changedCount: int, changed: arrayOf(changedFile), skipped: arrayOf(skippedFile),
  incremental: bool, warnings: arrayOf(str), overBudgetMs: nullable(int),
});
export type CaptureReceiptView = Infer<typeof captureReceipt>;

export const fileDiff = object({ ...pathFields, status: changeStatus, additions: int, deletions: int, binary: bool, from: optional(object(pathFields)) });
export type FileDiffView = Infer<typeof fileDiff>;

export const restoredFiles = object({
  restorePoint: str, changed: arrayOf(changedFile), preserved: arrayOf(skippedFile), tookMs: int,
  nested: arrayOf(object({ ...pathFields, status: str, detail: optional(str) })),
});
export type RestoredFilesView = Infer<typeof restoredFiles>;

const threadTitle = object({ threadId: str, title: str });

export const checkpointCommands = {
  captureCheckpoint: defineCommand('captureCheckpoint', {
    summary: 'Captures the workspace now as the thread\'s next checkpoint.',
    requires: ['write'],
    params: { threadId: name },
    result: captureReceipt,
  }),
  listCheckpoints: defineCommand('listCheckpoints', {
    readOnly: true,
    summary: 'Checkpoints recorded in the store, oldest first: of one thread, or of every thread (with their titles). Turn-end checkpoints that changed nothing are left out unless `includeEmpty`.',
    requires: ['read'],
    params: { threadId: optional(name), includeEmpty: optional(bool) },
    result: object({ checkpoints: arrayOf(checkpointView), threads: arrayOf(threadTitle) }),
  }),
  listCheckpointFiles: defineCommand('listCheckpointFiles', {
    readOnly: true,
    summary: 'The files a checkpoint changed against the one before it (from its git metadata).',
    requires: ['read'],
    params: { threadId: name, ordinal: positive },
    result: object({ files: arrayOf(changedFile), changedCount: int }),
  }),
  diffCheckpoints: defineCommand('diffCheckpoints', {
    readOnly: true,
    summary: 'Per-file additions/deletions from one checkpoint ref to another, or to the working tree (`working`).',
    requires: ['read'],
    params: { from: name, to: name },
    result: object({ files: arrayOf(fileDiff) }),
  }),
  readCheckpointFile: defineCommand('readCheckpointFile', {
    readOnly: true,
    summary: 'A file\'s bytes at a checkpoint (or any ref); `checkpoint/pathNotFound` when it did not exist there.',
    requires: ['read'],
    params: { ref: name, path: name, rawBase64: optional(str) },
    result: object({ dataBase64: str, size: int }),
  }),
  restoreCheckpoint: defineCommand('restoreCheckpoint', {
    exclusive: 'workspace',
    summary: 'Restores a checkpoint: files (a restore point is saved first), thread (rewinds the conversation) or both.',
    requires: ['owner'],
    params: { threadId: name, ordinal: positive, mode: restoreMode },
    result: object({ mode: restoreMode, files: nullable(restoredFiles), rewoundTo: nullable(str) }),
  }),
  undoRestore: defineCommand('undoRestore', {
    exclusive: 'workspace',
    summary: 'Puts the files back as they were just before a restore (default: the newest restore point).',
    requires: ['owner'],
    params: { restorePoint: optional(name) },
    result: object({ undone: str, files: restoredFiles }),
  }),
  listRestorePoints: defineCommand('listRestorePoints', {
    readOnly: true,
    summary: 'Restore points, newest first, with readable labels ("before restoring #3 of "…" — 2 files"); points already undone are left out unless `all`.',
    requires: ['read'],
    params: { all: optional(bool) },
    result: object({ restorePoints: arrayOf(object({ ref: str, timeMs: int, target: str, label: str, files: nullable(int), undone: bool })) }),
  }),
  previewRestore: defineCommand('previewRestore', {
    readOnly: true,
    summary: 'What restoring a checkpoint would do to the files, before it runs: what it deletes (created since, by who wrote them: this thread, another thread, nobody = hand-made), overwrites and brings back; `confirm` when it would delete a file this thread did not write.',
    requires: ['read'],
    params: { threadId: name, ordinal: positive },
    result: object({
      ref: str, deleted: arrayOf(object(pathFields)), overwritten: arrayOf(object(pathFields)), recreated: arrayOf(object(pathFields)),
      deletedBy: object({
        thisThread: arrayOf(object(pathFields)),
        otherThreads: arrayOf(object({ ...pathFields, threadId: str, title: str })),
        handMade: arrayOf(object(pathFields)),
      }),
      confirm: bool,
    }),
  }),
  listOrphanedCheckpoints: defineCommand('listOrphanedCheckpoints', {
    readOnly: true,
    summary: 'Threads that still have checkpoint refs in the repository but are deleted (or unknown to this store), with how many: candidates for `pruneCheckpoints {threadId}`.',
    requires: ['read'],
    params: {},
    result: object({ threads: arrayOf(object({ threadId: str, refs: int })) }),
  }),
  pruneCheckpoints: defineCommand('pruneCheckpoints', {
    summary: 'Deletes old checkpoint refs (keep the last N per thread, or older than an age); git\'s gc reclaims the space.',
    requires: ['owner'],
    params: { threadId: optional(name), keepLast: optional(count), olderThanMs: optional(count), restorePointsOlderThanMs: optional(count) },
    result: object({ deletedRefs: arrayOf(str), reclaimableBytes: int }),
  }),
};
