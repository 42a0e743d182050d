/**
 * `list_files`: lists a workspace directory, optionally recursively, breadth-first so that a capped
 * listing still shows the shallow structure. Directories end in `/`; `.git` and `node_modules` are
 * skipped while walking; symlinked directories are listed but never followed. Also owns the shared
 * list of directory names every walking tool skips.
 */
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { ToolDefinition } from './schema';
import { TOOL_OUTPUT_BUDGET_CHARS } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { resolveInWorkspace } from './workspace-path';

/** Directory names skipped while walking the workspace (list_files, search_text). */
export const SKIPPED_DIRECTORY_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** Entries returned when the model does not say how many it wants. */
export const LIST_FILES_DEFAULT_MAX_ENTRIES = 500;
/** Hard upper bound on entries in one listing, whatever the model asks for. */
export const LIST_FILES_MAX_ENTRIES = 5000;

export interface ListFilesArgs {
  path?: string;
  recursive?: boolean;
  maxEntries?: number;
}

function joinRel(dir: string, name: string): string {
  return dir === '.' ? name : `${dir}/${name}`;
}

async function listFiles(args: ListFilesArgs, ctx: ToolContext): Promise<ToolResult> {
  const resolved = await resolveInWorkspace(ctx.workspaceRoot, args.path ?? '.');
  const max = args.maxEntries ?? LIST_FILES_DEFAULT_MAX_ENTRIES;
  let stat;
  try {
    stat = await fs.stat(resolved.real);
  } catch {
    throw new ToolError('notFound', `Directory not found: ${resolved.relative}`);
  }
  if (!stat.isDirectory()) {
    return { content: `${resolved.relative} is a file, not a directory; use read_file to read it.`, isError: true };
  }

  const entries: string[] = [];
  const unreadable: string[] = [];
  let chars = 0;
  let truncated = false;
  // Breadth-first queue of [workspace-relative dir, real absolute dir].
  const queue: Array<[string, string]> = [[resolved.relative, resolved.real]];
  for (let head = 0; head < queue.length && !truncated; head++) {
    if (ctx.signal.aborted) throw new ToolError('cancelled', 'list_files was cancelled.');
    const [rel, abs] = queue[head]!;
    let dirents: Dirent[];
    try {
      dirents = await fs.readdir(abs, { withFileTypes: true });
    } catch {
      unreadable.push(rel);
      continue;
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      if (d.isDirectory() && SKIPPED_DIRECTORY_NAMES.has(d.name)) continue;
      const childRel = joinRel(rel, d.name);
      const entry = d.isDirectory() ? `${childRel}/` : childRel;
      if (entries.length >= max || chars + entry.length + 1 > TOOL_OUTPUT_BUDGET_CHARS) {
        truncated = true;
        break;
      }
      entries.push(entry);
      chars += entry.length + 1;
      if (args.recursive && d.isDirectory()) queue.push([childRel, path.join(abs, d.name)]);
    }
  }

  entries.sort();
  const lines = entries.length > 0 ? entries : [`(${resolved.relative} is empty)`];
  if (truncated) {
    lines.push(
      `[list_files: truncated at ${entries.length} entries; list a subdirectory` +
        (entries.length === max && max < LIST_FILES_MAX_ENTRIES ? ` or raise maxEntries (up to ${LIST_FILES_MAX_ENTRIES})]` : ']'),
    );
  }
  if (unreadable.length > 0) lines.push(`[list_files: could not read ${unreadable.join(', ')}]`);
  return { content: lines.join('\n') };
}

export const listFilesTool: ToolDefinition<ListFilesArgs> = {
  spec: {
    name: 'list_files',
    description:
      'List files and directories in the workspace (directories end with "/"). Paths are relative to the ' +
      'workspace root. .git and node_modules are skipped while walking. Non-recursive by default.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory relative to the workspace root (default ".").', minLength: 1 },
        recursive: { type: 'boolean', description: 'List subdirectories too (breadth-first).' },
        maxEntries: {
          type: 'integer',
          description: `Most entries to return (default ${LIST_FILES_DEFAULT_MAX_ENTRIES}).`,
          minimum: 1,
          maximum: LIST_FILES_MAX_ENTRIES,
        },
      },
      required: [],
      additionalProperties: false,
    },
  },
  toolClass: 'read',
  mutating: false,
  run: listFiles,
};
