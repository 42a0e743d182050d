/**
 * `search_text`: grep over the workspace, returning `path:line: text` lines up to a result cap.
 * Which files: with ripgrep (`ctx.ripgrepPath`), what `rg --files` lists — .gitignore-aware —,
 * otherwise the built-in walk (no .gitignore); both skip .git, node_modules and symlinks and run
 * in path order (./walk.ts). Every file is opened by Vox through the confined cursor
 * (./confined-fs.ts) — never a FIFO, socket or device, never through a swapped directory — and
 * skipped when binary or over SEARCH_MAX_FILE_BYTES. How lines are tested (./line-matchers.ts):
 * plain text by a linear substring match; a regular expression in ripgrep's linear-time engine
 * when rg is there and accepts the pattern, otherwise in JavaScript in a worker thread under a
 * per-file time budget (a catastrophic pattern ends in a `timeout` ToolError, never a frozen
 * process). Without ripgrep nothing is refused: plain text and regular expressions both work,
 * only .gitignore is not applied. Abort (Stop, SIGINT in the CLI) cancels at once. The whole
 * call is bounded by SEARCH_TIME_BUDGET_MS, after which it returns what it found with a notice.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { ToolDefinition } from './schema';
import { DirCursor, PathChanged, components, openInWorkspace, specialFileMessage } from './confined-fs';
import { createLineMatcher, type LineMatcher } from './line-matchers';
import { RipgrepError } from './ripgrep';
import { BINARY_SNIFF_BYTES, TOOL_OUTPUT_BUDGET_CHARS, binaryReason, cutText } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { ripgrepFiles, shownPath, walkFiles, type WalkStats } from './walk';
import type { ResolvedPath } from './workspace-path';

/** Matches returned when the model does not say how many it wants. */
export const SEARCH_DEFAULT_MAX_RESULTS = 100;
/** Hard upper bound on matches in one call. */
export const SEARCH_MAX_RESULTS = 1000;
/** Files larger than this are skipped (generated bundles, data dumps). */
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024;
/** Files examined before the search gives up, so a huge tree cannot stall the agent. */
export const SEARCH_MAX_FILES_SCANNED = 50_000;
/** Characters of a matching line shown in a result (minified code has very long lines). */
export const SEARCH_LINE_MAX_CHARS = 240;
/** Wall-clock time one search may take; then it stops and returns what it found. */
export const SEARCH_TIME_BUDGET_MS = 30_000;

export interface SearchTextArgs {
  query: string;
  path?: string;
  regex?: boolean;
  caseSensitive?: boolean;
  maxResults?: number;
}

const cancelled = (): ToolError => new ToolError('cancelled', 'search_text was cancelled.');

/** Refuses an invalid regular expression at parse time (compiling never runs it). */
function checkQuery(args: SearchTextArgs): void {
  if (!args.regex) return;
  try {
    new RegExp(args.query, args.caseSensitive ? '' : 'i');
  } catch (e) {
    throw new ToolError('invalidArguments', `Invalid regular expression ${JSON.stringify(args.query)}: ${(e as Error).message}`);
  }
}

interface SearchState {
  results: string[];
  chars: number;
  max: number;
  truncated: boolean;
  scanned: number;
  skippedLarge: number;
  skippedBinary: number;
  limitHit: boolean;
  timeUp: boolean;
  walk: WalkStats;
  /** Notices about ripgrep, shown last. */
  ripgrepNotes: string[];
}

/** Adds one hit; false once the result cap or the output budget is reached. */
function addResult(s: SearchState, rel: string, lineNo: number, line: string): boolean {
  const shown = line.trimEnd();
  const cut = cutText(shown, SEARCH_LINE_MAX_CHARS);
  const result = `${rel}:${lineNo}: ${cut}${cut.length < shown.length ? ' …' : ''}`;
  if (s.results.length >= s.max || s.chars + result.length + 1 > TOOL_OUTPUT_BUDGET_CHARS) {
    s.truncated = true;
    return false;
  }
  s.results.push(result);
  s.chars += result.length + 1;
  return true;
}

/** The text of an open file (closed here), or undefined (and a count) when it is too large or binary. */
async function readSearchable(handle: FileHandle, stat: Stats, s: SearchState): Promise<string | undefined> {
  try {
    if (stat.size > SEARCH_MAX_FILE_BYTES) {
      s.skippedLarge++;
      return undefined;
    }
    const data = Buffer.alloc(stat.size);
    let got = 0;
    while (got < data.length) {
      const { bytesRead } = await handle.read(data, got, data.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (binaryReason(data.subarray(0, Math.min(got, BINARY_SNIFF_BYTES))) !== undefined) {
      s.skippedBinary++;
      return undefined;
    }
    return data.subarray(0, got).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The files to search under a directory: rg's list, or the built-in walk (also when rg cannot run). */
async function filesUnder(resolved: ResolvedPath, cursor: DirCursor, ctx: ToolContext, s: SearchState): Promise<AsyncIterable<string[]> | string[][]> {
  const base = components(resolved.realRelative);
  if (ctx.ripgrepPath) {
    try {
      const list = await ripgrepFiles(ctx.ripgrepPath, resolved.realRoot, resolved.realRelative, ctx.signal, SEARCH_MAX_FILES_SCANNED);
      if (list.truncated) s.limitHit = true;
      if (list.warning) s.ripgrepNotes.push(`[search_text: ripgrep could not read everything: ${list.warning}]`);
      return list.files.map(components);
    } catch (e) {
      if (!(e instanceof RipgrepError)) throw e;
      s.ripgrepNotes.push(`[search_text: ripgrep could not run (${e.message}); .gitignore was not applied]`);
    }
  }
  return walkFiles(cursor, base, ctx.signal, s.walk);
}

async function searchDirectory(resolved: ResolvedPath, ctx: ToolContext, matcher: LineMatcher, s: SearchState): Promise<void> {
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS;
  const cursor = await DirCursor.open(resolved.realRoot);
  try {
    for await (const comps of await filesUnder(resolved, cursor, ctx, s)) {
      if (ctx.signal.aborted) throw cancelled();
      if (Date.now() > deadline) {
        s.timeUp = true;
        return;
      }
      if (++s.scanned > SEARCH_MAX_FILES_SCANNED) {
        s.limitHit = true;
        return;
      }
      let entry;
      try {
        entry = await (await cursor.at(comps.slice(0, -1))).open(comps[comps.length - 1]!);
      } catch (e) {
        if (!(e instanceof PathChanged) && !(e instanceof Error && 'code' in e)) throw e;
        s.walk.unreadable++; // vanished, unreadable, or changed while being opened
        continue;
      }
      if (entry.kind === 'directory') await entry.dir.close();
      if (entry.kind !== 'file') continue;
      const text = await readSearchable(entry.handle, entry.stat, s);
      if (text === undefined) continue;
      await matcher.feed(shownPath(resolved.realRelative, resolved.relative, comps.join('/')), text);
      if (s.truncated) return;
    }
  } finally {
    await cursor.close();
  }
}

function notesOf(s: SearchState): string[] {
  const notes: string[] = [];
  if (s.truncated) notes.push(`[search_text: stopped at ${s.results.length} results; narrow the query or path]`);
  if (s.limitHit) notes.push(`[search_text: stopped after ${SEARCH_MAX_FILES_SCANNED} files; narrow the path]`);
  if (s.timeUp) notes.push(`[search_text: stopped after ${SEARCH_TIME_BUDGET_MS} ms; narrow the path or the query]`);
  if (s.skippedLarge > 0) notes.push(`[search_text: skipped ${s.skippedLarge} files over ${SEARCH_MAX_FILE_BYTES} bytes]`);
  if (s.skippedBinary > 0) notes.push(`[search_text: skipped ${s.skippedBinary} binary files]`);
  if (s.walk.unreadable > 0) notes.push(`[search_text: skipped ${s.walk.unreadable} files or directories that could not be read]`);
  if (s.walk.tooDeep > 0) notes.push(`[search_text: skipped ${s.walk.tooDeep} directories nested too deep]`);
  return [...notes, ...s.ripgrepNotes];
}

async function searchText(args: SearchTextArgs, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) throw cancelled();
  const { resolved, entry } = await openInWorkspace(ctx.workspaceRoot, args.path ?? '.');
  if (entry.kind === 'missing') throw new ToolError('notFound', `Path not found: ${resolved.relative}`);
  if (entry.kind === 'special') return { content: specialFileMessage(resolved.relative, entry.stat), isError: true };
  if (entry.kind === 'directory') await entry.dir.close();

  const s: SearchState = {
    results: [], chars: 0, max: args.maxResults ?? SEARCH_DEFAULT_MAX_RESULTS, truncated: false, scanned: 0,
    skippedLarge: 0, skippedBinary: 0, limitHit: false, timeUp: false, walk: { unreadable: 0, tooDeep: 0 }, ripgrepNotes: [],
  };
  let matcher: LineMatcher | undefined;
  try {
    matcher = await createLineMatcher(
      {
        query: args.query, regex: args.regex ?? false, caseSensitive: args.caseSensitive ?? false, signal: ctx.signal,
        sink: (rel, lineNo, line) => addResult(s, rel, lineNo, line), cwd: resolved.realRoot,
        ...(ctx.ripgrepPath ? { ripgrepPath: ctx.ripgrepPath } : {}),
      },
      s.ripgrepNotes,
    );
    if (entry.kind === 'file') {
      s.scanned = 1;
      const text = await readSearchable(entry.handle, entry.stat, s);
      if (text !== undefined) await matcher.feed(resolved.relative, text);
    } else {
      await searchDirectory(resolved, ctx, matcher, s);
    }
    await matcher.end();
  } finally {
    if (entry.kind === 'file' && matcher === undefined) await entry.handle.close();
    await matcher?.dispose();
  }
  if (ctx.signal.aborted) throw cancelled();

  const notes = notesOf(s);
  if (s.results.length === 0) {
    return { content: [`No matches for ${JSON.stringify(args.query)} in ${resolved.relative}.`, ...notes].join('\n') };
  }
  return { content: [...s.results, ...notes].join('\n') };
}

export const searchTextTool: ToolDefinition<SearchTextArgs> = {
  spec: {
    name: 'search_text',
    description:
      'Search file contents in the workspace. Returns "path:line: text" lines. Plain substring by default, ' +
      'regular expression with regex=true (JavaScript syntax; look-around and backreferences run under a time limit); ' +
      'case-insensitive unless caseSensitive=true. Skips .git, node_modules, files .gitignore ignores (with ripgrep), binary ' +
      `files and files over ${SEARCH_MAX_FILE_BYTES} bytes.`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Text or regular expression to find (matched per line).', minLength: 1 },
        path: { type: 'string', description: 'File or directory to search (default: whole workspace).', minLength: 1 },
        regex: { type: 'boolean', description: 'Treat query as a regular expression.' },
        caseSensitive: { type: 'boolean', description: 'Match case exactly (default false).' },
        maxResults: {
          type: 'integer',
          description: `Most matching lines to return (default ${SEARCH_DEFAULT_MAX_RESULTS}).`,
          minimum: 1,
          maximum: SEARCH_MAX_RESULTS,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  validate: checkQuery,
  run: searchText,
};
