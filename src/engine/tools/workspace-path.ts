/**
 * Workspace confinement for the agent's tools: turns a path the model wrote into an absolute path
 * that is guaranteed to stay inside the workspace root, both lexically (`..`, absolute paths,
 * Windows separators) and physically (symlinks, including symlinked ancestors of files that do not
 * exist yet). Writes into any `.git` directory are refused: tools never touch repository internals.
 * This is the check; using the result without a gap for a swapper to exploit (opening the real path
 * component by component, never following a symlink) is ./confined-fs.ts, which every file tool goes
 * through (run_command, which runs arbitrary code after approval anyway, uses only the check for its cwd).
 */
import * as fsSync from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ToolError } from './types';

/** Symlink hops followed while resolving one path before it is refused (Linux uses 40 for ELOOP). */
export const MAX_SYMLINK_HOPS = 40;

/** Directory name (compared case-insensitively) that write tools may never enter. */
const GIT_DIR_NAME = '.git';

export interface ResolveOptions {
  /** The caller is about to create or modify the path: `.git` internals are refused as well. */
  forWrite?: boolean;
}

export interface ResolvedPath {
  /** Absolute path under the real workspace root, symlinks not followed. */
  absolute: string;
  /** Workspace-relative path with forward slashes; `.` for the root itself. */
  relative: string;
  /** Absolute path with every existing symlink resolved; this is what the OS will actually touch. */
  real: string;
  /** `real` relative to the real workspace root, forward slashes; `.` for the root itself. */
  realRelative: string;
  /** The workspace root with every symlink resolved (what `real` and `realRelative` are relative to). */
  realRoot: string;
}

function refuse(userPath: string, why: string): ToolError {
  return new ToolError('pathEscape', `Path ${JSON.stringify(userPath)} is refused: ${why}.`);
}

/** True when `child` is `parent` or lies below it (both absolute, normalised). */
function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function toForwardSlashes(rel: string): string {
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/** Windows ignores trailing dots and spaces and case, so `.GIT.` is `.git` there. */
function isGitSegment(segment: string): boolean {
  return segment.toLowerCase().replace(/[. ]+$/, '') === GIT_DIR_NAME;
}

function touchesGitDir(relative: string): boolean {
  return relative.split('/').some(isGitSegment);
}

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

/**
 * Resolves `p` like realpath(3) but also for paths that do not exist yet: the deepest existing
 * ancestor is realpath'd and the missing tail appended. Dangling symlinks are followed through
 * their target so that a write through one cannot land outside the workspace — nor, for the
 * permission rules (../permissions/service.ts), be judged by the link's name instead of the file
 * it creates. Synchronous: the rules decide synchronously, and each step is one system call.
 */
export function resolveRealPath(p: string, userPath: string, hops = { left: MAX_SYMLINK_HOPS }): string {
  try {
    return fsSync.realpathSync(p);
  } catch (e) {
    const code = errnoCode(e);
    if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') {
      throw new ToolError('io', `Cannot resolve ${JSON.stringify(userPath)}: ${(e as Error).message}`);
    }
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = resolveRealPath(parent, userPath, hops);
  const candidate = path.join(realParent, path.basename(p));
  let isLink = false;
  try {
    isLink = fsSync.lstatSync(candidate).isSymbolicLink();
  } catch {
    // Missing entry: the tail simply does not exist yet.
  }
  if (!isLink) return candidate;
  if (--hops.left < 0) throw refuse(userPath, 'too many levels of symbolic links');
  let target: string;
  try {
    target = fsSync.readlinkSync(candidate);
  } catch {
    // The link changed between lstat and readlink (removed, or replaced): resolve that step again.
    return resolveRealPath(p, userPath, hops);
  }
  return resolveRealPath(path.resolve(realParent, target), userPath, hops);
}

/**
 * Resolves `userPath` (relative to `root`, or absolute inside it) and proves it stays inside the
 * workspace. Throws `ToolError('pathEscape')` for empty paths, NUL bytes, escapes by `..`, absolute
 * paths elsewhere (including drive-letter and UNC paths), symlinks leading outside, and — with
 * `forWrite` — anything inside a `.git` directory. Backslashes are treated as separators on every
 * platform, since models often write Windows-style paths.
 */
export async function resolveInWorkspace(
  root: string,
  userPath: string,
  opts: ResolveOptions = {},
): Promise<ResolvedPath> {
  if (typeof userPath !== 'string' || userPath.trim() === '') throw refuse(String(userPath), 'the path is empty');
  if (userPath.includes('\0')) throw refuse(userPath, 'it contains a NUL byte');

  let realRoot: string;
  try {
    realRoot = await fs.realpath(root);
  } catch (e) {
    throw new ToolError('io', `Workspace root ${root} is not accessible: ${(e as Error).message}`);
  }

  const slashed = userPath.replace(/\\/g, '/');
  const driveLetter = /^[A-Za-z]:(\/|$)/.test(slashed);
  if (driveLetter && process.platform !== 'win32') throw refuse(userPath, 'it is an absolute path outside the workspace');
  const native = slashed.split('/').join(path.sep);

  // Lexical check, accepting absolute paths spelled with either the given or the canonical root.
  let relative: string | undefined;
  if (path.isAbsolute(native)) {
    const abs = path.resolve(native);
    for (const base of [path.resolve(root), realRoot]) {
      if (isInside(base, abs)) {
        relative = path.relative(base, abs);
        break;
      }
    }
    if (relative === undefined) throw refuse(userPath, 'it is an absolute path outside the workspace');
  } else {
    const abs = path.resolve(realRoot, native);
    if (!isInside(realRoot, abs)) throw refuse(userPath, 'it leads outside the workspace');
    relative = path.relative(realRoot, abs);
  }
  const absolute = path.join(realRoot, relative);
  const relPosix = toForwardSlashes(relative);

  // Physical check: follow symlinks (existing or dangling) and require the result inside too.
  const real = resolveRealPath(absolute, userPath);
  if (!isInside(realRoot, real)) throw refuse(userPath, 'it resolves through a symbolic link to outside the workspace');
  const realRelative = toForwardSlashes(path.relative(realRoot, real));

  if (opts.forWrite && (touchesGitDir(relPosix) || touchesGitDir(realRelative))) {
    throw refuse(userPath, 'tools never write inside .git (repository internals)');
  }
  return { absolute, relative: relPosix, real, realRelative, realRoot };
}
