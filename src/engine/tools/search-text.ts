/**
 * `search_text`: a pure-Node recursive grep over the workspace (no ripgrep dependency). Walks in
 * sorted order so results are deterministic, skips `.git`, `node_modules`, symlinks, binaries and
 * files over a size cap, and returns `path:line: text` lines up to a result cap.
 */
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { ToolDefinition } from './schema';
import { SKIPPED_DIRECTORY_NAMES } from './list-files';
import { BINARY_SNIFF_BYTES, TOOL_OUTPUT_BUDGET_CHARS, binaryReason, cutText } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

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

export interface SearchTextArgs {
  query: string;
  path?: string;
  regex?: boolean;
  caseSensitive?: boolean;
  maxResults?: number;
}

type Matcher = (line: string) => boolean;

function buildMatcher(args: SearchTextArgs): Matcher {
  if (args.regex) {
    let re: RegExp;
    try {
      re = new RegExp(args.query, args.caseSensitive ? '' : 'i');
    } catch (e) {
      throw new ToolError('invalidArguments', `Invalid regular expression ${JSON.stringify(args.query)}: ${(e as Error).message}`);
    }
    return (line) => re.test(line);
  }
  if (args.caseSensitive) return (line) => line.includes(args.query);
  const needle = args.query.toLowerCase();
  return (line) => line.toLowerCase().includes(needle);
}

interface WalkStats {
  scanned: number;
  skippedLarge: number;
  skippedBinary: number;
  limitHit: boolean;
}

/** Depth-first, name-sorted walk yielding regular files as [workspace-relative, absolute]. */
async function* walkFiles(rel: string, abs: string, signal: AbortSignal): AsyncGenerator<[string, string]> {
  const stack: Array<[string, string]> = [[rel, abs]];
  while (stack.length > 0) {
    if (signal.aborted) throw new ToolError('cancelled', 'search_text was cancelled.');
    const [dirRel, dirAbs] = stack.pop()!;
    let dirents: Dirent[];
    try {
      dirents = await fs.readdir(dirAbs, { withFileTypes: true });
    } catch {
      continue; // unreadable directory: nothing to search there
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: Array<[string, string]> = [];
    for (const d of dirents) {
      const childRel = dirRel === '.' ? d.name : `${dirRel}/${d.name}`;
      const childAbs = path.join(dirAbs, d.name);
      if (d.isDirectory()) {
        if (!SKIPPED_DIRECTORY_NAMES.has(d.name)) subdirs.push([childRel, childAbs]);
      } else if (d.isFile()) {
        yield [childRel, childAbs];
      }
    }
    // Push in reverse so the alphabetically first directory is searched first.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}

/** Reads a file for searching, or undefined (and a stats bump) when it must be skipped. */
async function readSearchable(abs: string, stats: WalkStats): Promise<string | undefined> {
  try {
    const st = await fs.stat(abs);
    if (st.size > SEARCH_MAX_FILE_BYTES) {
      stats.skippedLarge++;
      return undefined;
    }
    const data = await fs.readFile(abs);
    if (binaryReason(data.subarray(0, BINARY_SNIFF_BYTES)) !== undefined) {
      stats.skippedBinary++;
      return undefined;
    }
    return data.toString('utf8');
  } catch {
    return undefined; // vanished or unreadable between listing and reading
  }
}

async function searchText(args: SearchTextArgs, ctx: ToolContext): Promise<ToolResult> {
  const matches = buildMatcher(args);
  const max = args.maxResults ?? SEARCH_DEFAULT_MAX_RESULTS;
  const resolved = await resolveInWorkspace(ctx.workspaceRoot, args.path ?? '.');
  let st;
  try {
    st = await fs.stat(resolved.real);
  } catch {
    throw new ToolError('notFound', `Path not found: ${resolved.relative}`);
  }

  const stats: WalkStats = { scanned: 0, skippedLarge: 0, skippedBinary: 0, limitHit: false };
  const results: string[] = [];
  let chars = 0;
  let truncated = false;
  const files: AsyncIterable<[string, string]> | Array<[string, string]> = st.isDirectory()
    ? walkFiles(resolved.relative, resolved.real, ctx.signal)
    : [[resolved.relative, resolved.real]];

  outer: for await (const [rel, abs] of files) {
    if (++stats.scanned > SEARCH_MAX_FILES_SCANNED) {
      stats.limitHit = true;
      break;
    }
    const text = await readSearchable(abs, stats);
    if (text === undefined) continue;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i]!;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (!matches(line)) continue;
      const shown = line.trimEnd();
      const cut = cutText(shown, SEARCH_LINE_MAX_CHARS);
      const result = `${rel}:${i + 1}: ${cut}${cut.length < shown.length ? ' …' : ''}`;
      if (results.length >= max || chars + result.length + 1 > TOOL_OUTPUT_BUDGET_CHARS) {
        truncated = true;
        break outer;
      }
      results.push(result);
      chars += result.length + 1;
    }
  }

  const notes: string[] = [];
  if (truncated) notes.push(`[search_text: stopped at ${results.length} results; narrow the query or path]`);
  if (stats.limitHit) notes.push(`[search_text: stopped after ${SEARCH_MAX_FILES_SCANNED} files; narrow the path]`);
  if (stats.skippedLarge > 0) notes.push(`[search_text: skipped ${stats.skippedLarge} files over ${SEARCH_MAX_FILE_BYTES} bytes]`);
  if (stats.skippedBinary > 0) notes.push(`[search_text: skipped ${stats.skippedBinary} binary files]`);
  if (results.length === 0) {
    return { content: [`No matches for ${JSON.stringify(args.query)} in ${resolved.relative}.`, ...notes].join('\n') };
  }
  return { content: [...results, ...notes].join('\n') };
}

export const searchTextTool: ToolDefinition<SearchTextArgs> = {
  spec: {
    name: 'search_text',
    description:
      'Search file contents in the workspace. Returns "path:line: text" lines. Plain substring by default, ' +
      'JavaScript regular expression with regex=true; case-insensitive unless caseSensitive=true. Skips .git, ' +
      `node_modules, binary files and files over ${SEARCH_MAX_FILE_BYTES} bytes.`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Text or regular expression to find (matched per line).', minLength: 1 },
        path: { type: 'string', description: 'File or directory to search (default: whole workspace).', minLength: 1 },
        regex: { type: 'boolean', description: 'Treat query as a JavaScript regular expression.' },
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
  validate(args) {
    buildMatcher(args);
  },
  run: searchText,
};
