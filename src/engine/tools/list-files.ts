/**
 * `list_files`: lists a workspace directory, optionally recursively, breadth-first so that a capped
 * listing still shows the shallow structure. Directories end in `/`; `.git` and `node_modules` are
 * skipped while walking; symlinked directories are listed but never followed. What is listed always
 * comes from Vox's own reads of directories held open from the root (./confined-fs.ts), so a
 * directory swapped for a symlink shows nothing of outside. With ripgrep (`ctx.ripgrepPath`) the
 * listing is .gitignore-aware: `rg --files` says which files .gitignore leaves, and a file it does
 * not list is left out, as is a directory that holds none of them (unless it is empty); entries
 * rg never lists (symlinks, FIFOs, sockets) are shown as they are. Without ripgrep, or when it
 * cannot run, everything but .git and node_modules is listed, with a notice in the second case.
 */
import type { ToolDefinition } from './schema';
import { DirCursor, PathChanged, components, openInWorkspace, specialFileMessage, type WorkspaceDir } from './confined-fs';
import { RipgrepError } from './ripgrep';
import { TOOL_OUTPUT_BUDGET_CHARS } from './text';
import { ToolError, type ToolContext, type ToolResult } from './types';
import { SKIPPED_DIRECTORY_NAMES, ripgrepFiles } from './walk';
import type { ResolvedPath } from './workspace-path';

/** Entries returned when the model does not say how many it wants. */
export const LIST_FILES_DEFAULT_MAX_ENTRIES = 500;
/** Hard upper bound on entries in one listing, whatever the model asks for. */
export const LIST_FILES_MAX_ENTRIES = 5000;
/** Files ripgrep may name to decide what .gitignore leaves; beyond this the listing is not filtered. */
export const LIST_FILES_RIPGREP_MAX_FILES = 100_000;

export interface ListFilesArgs {
  path?: string;
  recursive?: boolean;
  maxEntries?: number;
}

/** What .gitignore leaves under the listed directory: real workspace-relative files and the directories holding them. */
interface IgnoreFilter {
  files: Set<string>;
  dirs: Set<string>;
}

function joinRel(dir: string, name: string): string {
  return dir === '.' ? name : `${dir}/${name}`;
}

async function gitignoreFilter(rgPath: string, resolved: ResolvedPath, ctx: ToolContext, notes: string[]): Promise<IgnoreFilter | undefined> {
  try {
    const list = await ripgrepFiles(rgPath, resolved.realRoot, resolved.realRelative, ctx.signal, LIST_FILES_RIPGREP_MAX_FILES);
    if (list.truncated) {
      notes.push(`[list_files: more than ${LIST_FILES_RIPGREP_MAX_FILES} files under ${resolved.relative}; .gitignore was not applied]`);
      return undefined;
    }
    if (list.warning) notes.push(`[list_files: ripgrep could not read everything: ${list.warning}]`);
    const dirs = new Set<string>();
    for (const f of list.files) {
      for (let i = f.lastIndexOf('/'); i > 0; i = f.lastIndexOf('/', i - 1)) {
        const d = f.slice(0, i);
        if (dirs.has(d)) break;
        dirs.add(d);
      }
    }
    return { files: new Set(list.files), dirs };
  } catch (e) {
    if (!(e instanceof RipgrepError)) throw e;
    notes.push(`[list_files: ripgrep could not run (${e.message}); .gitignore was not applied]`);
    return undefined;
  }
}

async function isEmptyDir(parent: WorkspaceDir, name: string): Promise<boolean> {
  let dir: WorkspaceDir | undefined;
  try {
    dir = await parent.subdir(name);
    return (await dir.entries()).length === 0;
  } catch {
    return false;
  } finally {
    await dir?.close();
  }
}

async function listFiles(args: ListFilesArgs, ctx: ToolContext): Promise<ToolResult> {
  const { resolved, entry } = await openInWorkspace(ctx.workspaceRoot, args.path ?? '.');
  const max = args.maxEntries ?? LIST_FILES_DEFAULT_MAX_ENTRIES;
  if (entry.kind === 'missing') throw new ToolError('notFound', `Directory not found: ${resolved.relative}`);
  if (entry.kind === 'file') {
    await entry.handle.close();
    return { content: `${resolved.relative} is a file, not a directory; use read_file to read it.`, isError: true };
  }
  if (entry.kind === 'special') return { content: specialFileMessage(resolved.relative, entry.stat), isError: true };
  await entry.dir.close();

  const notes: string[] = [];
  const filter = ctx.ripgrepPath ? await gitignoreFilter(ctx.ripgrepPath, resolved, ctx, notes) : undefined;
  const entries: string[] = [];
  const unreadable: string[] = [];
  let chars = 0;
  let truncated = false;
  let ignoredAtTop = 0;
  const cursor = await DirCursor.open(resolved.realRoot);
  try {
    // Breadth-first queue of [workspace-relative dir as shown, its real components].
    const queue: Array<[string, string[]]> = [[resolved.relative, components(resolved.realRelative)]];
    for (let head = 0; head < queue.length && !truncated; head++) {
      if (ctx.signal.aborted) throw new ToolError('cancelled', 'list_files was cancelled.');
      const [rel, comps] = queue[head]!;
      let dir: WorkspaceDir;
      let dirents;
      try {
        dir = await cursor.at(comps);
        dirents = await dir.entries();
      } catch (e) {
        if (!(e instanceof PathChanged) && !(e instanceof Error && 'code' in e)) throw e;
        unreadable.push(rel);
        continue;
      }
      for (const d of dirents) {
        if (d.isDirectory() && SKIPPED_DIRECTORY_NAMES.has(d.name)) continue;
        if (filter && (d.isFile() || d.isDirectory())) {
          const key = [...comps, d.name].join('/');
          const kept = d.isFile() ? filter.files.has(key) : filter.dirs.has(key) || (await isEmptyDir(dir, d.name));
          if (!kept) {
            if (head === 0) ignoredAtTop++;
            continue;
          }
        }
        const childRel = joinRel(rel, d.name);
        const shown = d.isDirectory() ? `${childRel}/` : childRel;
        if (entries.length >= max || chars + shown.length + 1 > TOOL_OUTPUT_BUDGET_CHARS) {
          truncated = true;
          break;
        }
        entries.push(shown);
        chars += shown.length + 1;
        if (args.recursive && d.isDirectory()) queue.push([childRel, [...comps, d.name]]);
      }
    }
  } finally {
    await cursor.close();
  }

  entries.sort();
  const empty = ignoredAtTop > 0 ? `(every entry of ${resolved.relative} is ignored by .gitignore)` : `(${resolved.relative} is empty)`;
  const lines = entries.length > 0 ? entries : [empty];
  if (truncated) {
    lines.push(
      `[list_files: truncated at ${entries.length} entries; list a subdirectory` +
        (entries.length === max && max < LIST_FILES_MAX_ENTRIES ? ` or raise maxEntries (up to ${LIST_FILES_MAX_ENTRIES})]` : ']'),
    );
  }
  if (unreadable.length > 0) lines.push(`[list_files: could not read ${unreadable.join(', ')}]`);
  return { content: [...lines, ...notes].join('\n') };
}

export const listFilesTool: ToolDefinition<ListFilesArgs> = {
  spec: {
    name: 'list_files',
    description:
      'List files and directories in the workspace (directories end with "/"). Paths are relative to the ' +
      'workspace root. .git, node_modules and what .gitignore ignores (with ripgrep) are skipped while walking. ' +
      'Non-recursive by default.',
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
