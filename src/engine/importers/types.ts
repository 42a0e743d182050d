/**
 * Shared vocabulary of the importers: the sources, the timed Vox events a parser
 * produces, the tally of what was mapped and what was skipped (by reason), the named limits, the
 * typed ImportError, and the derived ids every importer uses so that importing twice changes
 * nothing (SPEC 1.1: ids from the source's own ids).
 */
import type { VoxEvent } from '../../protocol/events';
import { quote } from '../../protocol/wire/quote';
import { VoxError, type ErrorCode } from '../../protocol/wire/vox-error';
import { derive } from '../ids/ids';
import { redact } from '../platform/secrets';

export const IMPORT_SOURCES = ['claude-code', 'codex', 'cursor'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

/** A Vox event with the time the source recorded it (ms since the epoch). */
export interface TimedEvent { event: VoxEvent; time: number }

/** Largest transcript file (or Cursor store) imported; a bigger one is skipped as `fileTooLarge`. */
export const MAX_IMPORT_FILE_BYTES = 512 * 1024 * 1024;
/** Most files one source contributes to one scan; the rest are skipped as `tooManyFiles`. */
export const MAX_IMPORT_FILES_PER_SOURCE = 20_000;
/** Longest single JSONL line parsed; a longer one is skipped as `lineTooLong` (the rest of the file still imports). */
export const MAX_IMPORT_LINE_BYTES = 32 * 1024 * 1024;
/** Longest thread title taken from a first prompt (characters). */
export const MAX_IMPORTED_TITLE_CHARS = 80;
/** How much of a file's head the scan reads to find its title and project (bytes). */
export const SCAN_HEAD_BYTES = 256 * 1024;

export interface ImportLimits { maxFileBytes: number; maxFilesPerSource: number; maxLineBytes: number }
export const DEFAULT_IMPORT_LIMITS: ImportLimits = {
  maxFileBytes: MAX_IMPORT_FILE_BYTES, maxFilesPerSource: MAX_IMPORT_FILES_PER_SOURCE, maxLineBytes: MAX_IMPORT_LINE_BYTES,
};

/** What an import did, per source: counts of mapped things and of skipped lines (or files) by reason. */
export interface ImportTally {
  threads: number;
  messages: number;
  toolCalls: number;
  toolErrors: number;
  lines: number;
  skipped: Record<string, number>;
}

export function emptyTally(): ImportTally {
  return { threads: 0, messages: 0, toolCalls: 0, toolErrors: 0, lines: 0, skipped: {} };
}

export function skip(t: ImportTally, reason: string, n = 1): void {
  t.skipped[reason] = (t.skipped[reason] ?? 0) + n;
}

export function addTally(into: ImportTally, from: ImportTally): void {
  into.threads += from.threads;
  into.messages += from.messages;
  into.toolCalls += from.toolCalls;
  into.toolErrors += from.toolErrors;
  into.lines += from.lines;
  for (const [k, v] of Object.entries(from.skipped)) skip(into, k, v);
}

export type ImportErrorCode = ErrorCode<'import'>;

/** Typed error of the importers: a missing or unreadable source folder, a store that is not Cursor's, a bad id. */
export class ImportError extends VoxError<'import'> {
  override readonly name = 'ImportError';
  readonly domain = 'import' as const;
  constructor(code: ImportErrorCode, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause });
  }
}

/** `thread:source:<source>:session:<id>` — the Vox thread of an imported session. */
export function importedThreadId(source: ImportSource, sessionId: string): string {
  return derive('thread', [['source', source], ['session', sessionId]]);
}

/** `msg:thread:<threadId>:source:<key>` — a message from a source line or record. */
export function importedMessageId(threadId: string, key: string): string {
  return derive('msg', [['thread', threadId], ['source', key]]);
}

/** `run:thread:<threadId>:source:<key>` — the run of one imported turn (keyed by its prompt). */
export function importedRunId(threadId: string, key: string): string {
  return derive('run', [['thread', threadId], ['source', key]]);
}

/** `item:run:<runId>:source:<key>` — a turn item (text, reasoning, tool call) from a source block. */
export function importedItemId(runId: string, key: string): string {
  return derive('item', [['run', runId], ['source', key]]);
}

/** A thread title from a prompt: first line, trimmed, at most MAX_IMPORTED_TITLE_CHARS. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0]!.trim().replace(/\s+/g, ' ');
  return quote(redact(line), MAX_IMPORTED_TITLE_CHARS); // redacted before the cut, which would hide a cut secret from its rule
}

/** A timestamp string or number as ms since the epoch, or `fallback` when absent or unparsable. */
export function timeOf(v: unknown, fallback: number): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v;
  if (typeof v === 'string') {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return t;
  }
  return fallback;
}
