/**
 * Import commands (SPEC 6.6): what Claude Code, Codex and Cursor sessions
 * are on disk (`scanExternalSessions`) and importing them as Vox threads (`importExternalSessions`),
 * idempotently. Each folder is the tool's home as its own variables name it: a Claude config dir
 * holding `projects/` (CLAUDE_CONFIG_DIR), a Codex home holding `sessions/` (CODEX_HOME), a Cursor
 * dir holding `chats/`; `folders` names several of one kind; none given means the standard locations. Clients show progress by
 * importing the scanned ids in batches (each call answers with its counts).
 */
import { arrayOf, int, literal, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { defineCommand } from './define';

/** Longest folder path a client may send. */
export const MAX_IMPORT_DIR_CHARS = 4_096;
/** Most session ids one import call may name (clients batch larger imports, which also paces their progress). */
export const MAX_IMPORT_IDS = 1_000;

export const importSource = literal('claude-code', 'codex', 'cursor');
const dir = refine(str, (s) => s.length > 0 && s.length <= MAX_IMPORT_DIR_CHARS, `a folder path of 1 to ${MAX_IMPORT_DIR_CHARS} characters`);
/** Most folders one call may name in `folders`. */
export const MAX_IMPORT_FOLDERS = 64;
/** A folder of one kind; `folders` names any number of each (the same folder twice counts once). */
export const importFolder = object({ source: importSource, dir });
export type ImportFolderView = Infer<typeof importFolder>;
const dirParams = {
  claudeDir: optional(dir), codexDir: optional(dir), cursorDir: optional(dir),
  folders: optional(refine(arrayOf(importFolder), (a) => a.length <= MAX_IMPORT_FOLDERS, `at most ${MAX_IMPORT_FOLDERS} folders`)),
};

/** Skipped lines or files, by reason (e.g. `corruptLine`, `fileTooLarge`, `attachment`). */
export const skippedCount = object({ reason: str, count: int });

export const scannedSession = object({
  /** `<source>:<session id>`; what `importExternalSessions {ids}` takes. */
  id: str,
  source: importSource,
  /** The session's working directory (or its project folder), when known. */
  project: nullable(str),
  /** Last change (ms since the epoch). */
  date: int,
  title: str,
  /** Bytes on disk, all its files. */
  size: int,
  files: int,
  /** `yes`: every file imported as it is now; `partial`: grown (or partly imported) since; `no`. */
  imported: literal('no', 'partial', 'yes'),
});
export type ScannedSessionView = Infer<typeof scannedSession>;

export const scannedSource = object({
  source: importSource,
  dir: str,
  /** Set when a standard location is absent or unreadable (a folder given explicitly fails the command instead). */
  error: nullable(object({ code: str, message: str })),
  skipped: arrayOf(skippedCount),
});

export const importCounts = object({
  source: importSource,
  /** The folder these counts are of (absolute). */
  dir: str,
  sessions: int,
  files: int,
  /** Files unchanged since their last import (nothing read). */
  unchangedFiles: int,
  threads: int,
  messages: int,
  toolCalls: int,
  toolErrors: int,
  lines: int,
  skipped: arrayOf(skippedCount),
});
export type ImportCountsView = Infer<typeof importCounts>;

export const importerCommands = {
  scanExternalSessions: defineCommand('scanExternalSessions', {
    readOnly: true,
    summary: 'Claude Code, Codex and Cursor sessions found on disk (source, project, date, title, size, imported or not), newest first.',
    requires: ['read'],
    params: dirParams,
    result: object({ sessions: arrayOf(scannedSession), sources: arrayOf(scannedSource) }),
  }),
  importExternalSessions: defineCommand('importExternalSessions', {
    summary: 'Imports the sessions named by `ids` (every one found, when absent) as Vox threads; importing again changes nothing, a grown session imports only what is new. Counts per source.',
    requires: ['write', 'startThreads'],
    params: { ...dirParams, ids: optional(refine(arrayOf(str), (a) => a.length <= MAX_IMPORT_IDS, `at most ${MAX_IMPORT_IDS} ids`)) },
    result: object({ sources: arrayOf(importCounts) }),
  }),
};
