/**
 * Where Apply to File may write: the path a code block names (or the user picked), resolved
 * against the workspace folders, refused when it leads outside every one of them — by `..`, by
 * an absolute path elsewhere, or through a symbolic link whose real place is outside. Plain Node
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

/** The nearest existing ancestor's real path joined with the part that does not exist yet. */
function realTarget(abs: string): string {
  let existing = abs;
  const rest: string[] = [];
  while (!fs.existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  return path.join(fs.realpathSync(existing), ...rest);
}

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
  const real = realTarget(abs);
  const root = realRoots.find((r) => inside(r, real));
  if (!root) throw new CodeActionError('outsideWorkspace', `${p} is outside the workspace; Vox applies code only to files inside it.`);
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
