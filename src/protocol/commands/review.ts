/**
 * Review commands: the diff of a write_file / apply_edit call waiting for
 * approval (computed by the tool's own code, nothing written), the files a turn changed (its
 * first pre-edit checkpoint against the working tree now), one file's hunks, and Keep / Undo per
 * file and per hunk. Every undo saves a restore point first, so `undoRestore` takes it back.
 * Bytes travel as base64 so CRLF, a missing final newline and non-UTF-8 text stay exact.
 */
import { arrayOf, bool, int, nullable, object, optional, str, type Infer } from '../wire/validators';
import { count, name } from './common';
import { defineCommand } from './define';
import { fileDiff } from './checkpoints';

const turnFields = { threadId: str, runId: str, baseRef: str, baseOrdinal: int };
export const reviewFile = object({ ...fileDiff.shape, kept: bool });
export type ReviewFileView = Infer<typeof reviewFile>;
export const reviewHunk = object({ index: int, beforeStart: int, beforeEnd: int, afterStart: int, afterEnd: int, removed: str, added: str });
export type ReviewHunkView = Infer<typeof reviewHunk>;

export const reviewCommands = {
  previewToolCall: defineCommand('previewToolCall', {
    readOnly: true,
    summary: 'The file change a write_file/apply_edit call waiting for approval would make: the file now and exactly what the tool will write (nothing is written).',
    requires: ['read'],
    params: { callId: name },
    result: object({ callId: str, threadId: str, runId: str, toolName: str, path: str, beforeBase64: nullable(str), afterBase64: str }),
  }),
  listTurnChanges: defineCommand('listTurnChanges', {
    readOnly: true,
    summary: 'Files changed since a turn\'s first edit (its first pre-tool checkpoint) against the working tree now; default: the thread\'s latest turn that edited files.',
    requires: ['read'],
    params: { threadId: name, runId: optional(name) },
    result: object({ ...turnFields, repoRoot: str, files: arrayOf(reviewFile) }),
  }),
  listFileHunks: defineCommand('listFileHunks', {
    readOnly: true,
    summary: 'One file\'s hunks from the turn\'s baseline to now (none for a binary file).',
    requires: ['read'],
    params: { threadId: name, runId: optional(name), path: name },
    result: object({ ...turnFields, path: str, binary: bool, existedBefore: bool, existsNow: bool, hunks: arrayOf(reviewHunk) }),
  }),
  undoHunk: defineCommand('undoHunk', {
    summary: 'Puts one hunk of a file back as it was before the turn, byte for byte (a restore point is saved first; undoRestore takes it back).',
    requires: ['owner'],
    params: { threadId: name, runId: optional(name), path: name, hunkIndex: count },
    result: object({ restorePoint: str, remaining: int }),
  }),
  undoFile: defineCommand('undoFile', {
    summary: 'Puts a whole file back as it was before the turn (removed if the turn created it); a restore point is saved first.',
    requires: ['owner'],
    params: { threadId: name, runId: optional(name), path: name },
    result: object({ restorePoint: str }),
  }),
  keepFile: defineCommand('keepFile', {
    summary: 'Marks a file the turn changed (or all of them, without `path`) as reviewed and kept.',
    requires: ['owner'],
    params: { threadId: name, runId: optional(name), path: optional(name) },
    result: object({ ...turnFields, kept: arrayOf(str) }),
  }),
};
