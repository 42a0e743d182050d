/**
 * Where Apply to File may write: the path a code block names (or the user picked), resolved
 * against the workspace folders, refused when it leads outside every one of them — by `..`, by
 * an absolute path elsewhere, or through a symbolic link whose real place is outside (a dangling
 * link is followed to where it points: writing through it would create that file) — and refused
 * inside any `.git` folder (`.git/hooks/pre-commit` would run as a program). Plain Node
 * (no vscode), so the rules are unit-tested. Failures are typed CodeActionErrors.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxError } from '../../protocol/wire/vox-error';

export class CodeActionError extends VoxError<'codeAction'> {
  readonly domain = 'codeAction' as const;
}

export interface WorkspaceTarget {
  /** The workspace folder it is in (real path). */
  root: string;
  /** The absolute path to write (real path of its nearest existing ancestor, plus the rest). */
  abs: string;
  /** Relative to `root`, with forward slashes (for titles and messages). */
  rel: string;
  /** Whether a file is there now. */
  exists: boolean;
}

/** Most symbolic links followed while resolving one target; more is a loop. */
const MAX_LINK_HOPS = 40;

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * Where a write to `abs` would land: the nearest existing ancestor's real path joined with the
 * part that does not exist yet. A dangling symbolic link counts as existing and is followed to
 * where it points (writing through it would create its target), so a link to a missing file
 * outside the workspace resolves outside.
 */
function realTarget(abs: string, shown: string): string {
  let current = abs;
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    let existing = current;
    const rest: string[] = [];
    while (!lstatOrNull(existing)) {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
    try {
      return path.join(fs.realpathSync(existing), ...rest);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') break;
      if (code !== 'ENOENT' || !lstatOrNull(existing)?.isSymbolicLink()) throw new CodeActionError('invalidPath', `${shown} cannot be resolved (${code ?? 'error'}).`);
      // A dangling link: go on from where it points.
      current = path.resolve(fs.realpathSync(path.dirname(existing)), fs.readlinkSync(existing), ...rest);
    }
  }
  throw new CodeActionError('invalidPath', `${shown} is a loop of symbolic links.`);
}

/** Whether `rel` (relative to a workspace folder) lies in a `.git` folder: hooks there run code, and the repository's own files live there. */
const inGitDir = (rel: string): boolean => rel.split(/[\\/]/).some((seg) => seg.toLowerCase() === '.git');

const inside = (root: string, p: string): boolean => {
  const rel = path.relative(root, p);
  return rel.length > 0 && !rel.startsWith('..') && !path.isAbsolute(rel);
};

/** Resolves `requested` (relative to the first folder, or absolute) to a file inside a workspace folder. */
export function resolveWorkspaceTarget(roots: readonly string[], requested: string): WorkspaceTarget {
  const p = requested.trim();
  if (roots.length === 0) throw new CodeActionError('noWorkspace', 'Open a folder first: Apply to File writes only inside the workspace.');
  if (p.length === 0 || p.includes('\0')) throw new CodeActionError('invalidPath', `"${requested}" is not a file path.`);
  const realRoots = roots.map((r) => fs.realpathSync(r));
  const abs = path.isAbsolute(p) ? path.normalize(p) : path.resolve(realRoots[0]!, p);
  const real = realTarget(abs, p);
  const root = realRoots.find((r) => inside(r, real));
  if (!root) {
    const lexical = realRoots.some((r) => inside(r, abs));
    throw new CodeActionError('outsideWorkspace', lexical
      ? `${p} is a symbolic link (or lies inside one) that points outside the workspace, to ${real}; Vox applies code only to files inside it.`
      : `${p} is outside the workspace; Vox applies code only to files inside it.`);
  }
  const rel = path.relative(root, real);
  if (inGitDir(rel) || inGitDir(path.relative(root, abs))) {
    throw new CodeActionError('protectedPath', `${p} is inside a .git folder (${rel.split(path.sep).join('/')}): files there are git's own, and hooks there run as programs, so Vox never writes them.`);
  }
  let exists = false;
  try {
    const st = fs.statSync(real);
    if (!st.isFile()) throw new CodeActionError('notAFile', `${p} is not a file (it is a folder or a device).`);
    exists = true;
  } catch (e) {
    if (e instanceof CodeActionError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new CodeActionError('invalidPath', `${p} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  return { root, abs: real, rel: path.relative(root, real).split(path.sep).join('/'), exists };
}
