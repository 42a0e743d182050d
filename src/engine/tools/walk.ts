/**
 * Which files a walking tool (`search_text`, `list_files`) sees under a workspace directory. Owns
 * the directory names every walk skips, the .gitignore-aware file list from ripgrep
 * (`rg --files`, in path order) and the built-in walk used without ripgrep (the same order, no
 * .gitignore), which descends through `DirCursor` (./confined-fs.ts) so that a directory swapped
 * for a symlink mid-walk is never entered. Both yield real workspace-relative paths as
 * components; the caller opens each file itself through the cursor.
 */
import { DirCursor, PathChanged } from './confined-fs';
import { RipgrepError, ripgrepComplaint, runRipgrep } from './ripgrep';

/** Directory names skipped while walking the workspace (unless named as the walk's own path). */
export const SKIPPED_DIRECTORY_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** Deepest directory level the built-in walk descends to (each level holds a descriptor open). */
export const WALK_MAX_DEPTH = 64;
/** Output allowed per file `rg --files` may list (a path and its NUL), so its output cap follows the file cap. */
const RIPGREP_LIST_BYTES_PER_FILE = 512;

/** `rg --files` under `realRel` (relative to `realRoot`): non-ignored regular files, hidden ones included, in path order. */
export interface RipgrepFileList {
  /** Real workspace-relative paths, forward slashes. */
  files: string[];
  /** More than `max` files: the list stops there. */
  truncated: boolean;
  /** rg reported errors (e.g. an unreadable directory); the list holds what it could read. */
  warning?: string;
}

/**
 * Lists the files ripgrep would search under `realRel`: what .gitignore (and .ignore, and git's
 * excludes) leave, without .git and node_modules. Throws RipgrepError when rg cannot run or fails.
 */
export async function ripgrepFiles(rgPath: string, realRoot: string, realRel: string, signal: AbortSignal, max: number): Promise<RipgrepFileList> {
  const globs = [...SKIPPED_DIRECTORY_NAMES].flatMap((name) => ['--glob', `!${name}`]);
  const r = await runRipgrep(rgPath, ['--files', '--null', '--sort', 'path', '--hidden', ...globs, '--', realRel === '.' ? '.' : `./${realRel}`], {
    cwd: realRoot,
    signal,
    maxBuffer: max * RIPGREP_LIST_BYTES_PER_FILE,
  });
  if (r.timedOut) throw new RipgrepError('failed', 'ripgrep took too long listing files');
  const records = r.stdout.split('\0');
  records.pop(); // after the last separator: nothing, or a record cut short by the output cap
  const files = records.slice(0, max).map((f) => (f.startsWith('./') ? f.slice(2) : f));
  const truncated = r.overflow || records.length > max;
  if (r.code === 2) {
    if (files.length === 0) throw new RipgrepError('failed', ripgrepComplaint(r.stderr));
    return { files, truncated, warning: ripgrepComplaint(r.stderr) };
  }
  return { files, truncated };
}

/** Counts of what the built-in walk left out. */
export interface WalkStats {
  /** Directories that could not be read, or changed while being entered. */
  unreadable: number;
  /** Directories below WALK_MAX_DEPTH. */
  tooDeep: number;
}

/**
 * The built-in walk: regular files under `comps` (real components from the root) in path order
 * (entries by name, directories entered where they sort), skipping SKIPPED_DIRECTORY_NAMES and
 * never following a symlink. Yields each file's components.
 */
export async function* walkFiles(
  cursor: DirCursor,
  comps: readonly string[],
  signal: AbortSignal,
  stats: WalkStats,
  depth = 0,
): AsyncGenerator<string[]> {
  if (signal.aborted) return;
  if (depth > WALK_MAX_DEPTH) {
    stats.tooDeep++;
    return;
  }
  let names: Array<{ name: string; dir: boolean }>;
  try {
    const dir = await cursor.at(comps);
    names = (await dir.entries()).filter((d) => d.isFile() || d.isDirectory()).map((d) => ({ name: d.name, dir: d.isDirectory() }));
  } catch (e) {
    if (!(e instanceof PathChanged) && !(e instanceof Error && 'code' in e)) throw e;
    stats.unreadable++;
    return;
  }
  for (const { name, dir } of names) {
    if (signal.aborted) return;
    if (!dir) yield [...comps, name];
    else if (!SKIPPED_DIRECTORY_NAMES.has(name)) yield* walkFiles(cursor, [...comps, name], signal, stats, depth + 1);
  }
}

/** How a real workspace-relative path under `realBase` is shown under the user's spelling `shownBase` of it. */
export function shownPath(realBase: string, shownBase: string, realPath: string): string {
  const tail = realBase === '.' ? realPath : realPath.slice(realBase.length + 1);
  if (tail === '') return shownBase;
  return shownBase === '.' ? tail : `${shownBase}/${tail}`;
}
