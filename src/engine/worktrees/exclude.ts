/**
 * Vox's line in `<common>/info/exclude` (SPEC §4.1): only `.vox/worktrees/` — where the managed
 * worktrees live — is kept out of `git status`, under Vox's marker comment, so a team's
 * `.vox/rules/` and `.vox/permissions.json` stay visible. Owns the migration of the bare `.vox/`
 * line earlier versions appended.
 *
 * How the migration tells Vox's old line from a user's: the earlier code appended exactly `.vox/`
 * (no comment) and only when no equivalent line was there, and only while creating a managed
 * worktree, which makes `<root>/.vox/worktrees/`. So the old line is removed when it is exactly
 * `.vox/`, no equivalent line comes before it, Vox's marker is not in the file yet (the marker
 * says the migration is past: a `.vox/` line a user writes later is theirs) and
 * `.vox/worktrees/` exists in the repository. A user's own `.vox/` in a repository where Vox
 * never made a worktree stays, byte for byte.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceLeases } from '../platform/workspace-lease';
import { VOX_DIR_NAME, WORKTREES_DIR_NAME } from './paths';
import type { RepositoryInfo } from './repo';

/** The line Vox adds to `info/exclude` so its managed worktrees never show up as untracked. */
export const VOX_EXCLUDE_LINE = `${VOX_DIR_NAME}/${WORKTREES_DIR_NAME}/`;
/** The comment Vox writes right above its line: how a later Vox knows the line (and the migration) is its own. */
export const VOX_EXCLUDE_MARKER = '# Added by Vox: its managed worktrees (variants) stay out of git status';
/** Lines that already ignore `.vox/worktrees/` (any of these counts as present). */
const VOX_EXCLUDE_EQUIVALENTS = new Set([VOX_EXCLUDE_LINE, `/${VOX_EXCLUDE_LINE}`, VOX_EXCLUDE_LINE.slice(0, -1), `/${VOX_EXCLUDE_LINE.slice(0, -1)}`]);
/** The exact line earlier versions appended (the whole `.vox/` directory). */
const LEGACY_VOX_EXCLUDE_LINE = `${VOX_DIR_NAME}/`;
/** Lines that ignore the whole `.vox/`: with one of these above it, the earlier Vox wrote nothing. */
const LEGACY_EQUIVALENTS = new Set([VOX_DIR_NAME, `/${VOX_DIR_NAME}`, LEGACY_VOX_EXCLUDE_LINE, `/${VOX_DIR_NAME}/`]);

const excludeFile = (commonDir: string) => path.join(commonDir, 'info', 'exclude');

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return '';
  }
}

/** A file's lines with their own endings kept, so a rewrite is byte-exact outside the lines it changes. */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}
const bare = (line: string) => line.replace(/\r?\n$/, '');

/** Whether Vox made a managed worktree in this repository (the old line was written only then). */
function voxMadeWorktrees(repo: RepositoryInfo): boolean {
  const roots = [repo.root, path.basename(repo.commonDir) === '.git' ? path.dirname(repo.commonDir) : repo.root];
  return roots.some((r) => {
    try {
      return fs.lstatSync(path.join(r, VOX_DIR_NAME, WORKTREES_DIR_NAME)).isDirectory();
    } catch {
      return false;
    }
  });
}

/** Rewrites the earlier Vox's `.vox/` line in place as the marker and `.vox/worktrees/`; true when it did. Call inside the file's lease. */
function migrateLocked(repo: RepositoryInfo, file: string): boolean {
  const lines = linesOf(readOrEmpty(file));
  if (lines.some((l) => bare(l) === VOX_EXCLUDE_MARKER)) return false;
  const at = lines.findIndex((l) => LEGACY_EQUIVALENTS.has(bare(l).trim()));
  if (at < 0 || bare(lines[at]!) !== LEGACY_VOX_EXCLUDE_LINE || !voxMadeWorktrees(repo)) return false;
  lines.splice(at, 1, `${VOX_EXCLUDE_MARKER}\n`, `${VOX_EXCLUDE_LINE}\n`);
  fs.writeFileSync(file, lines.join(''));
  return true;
}

/** Migrates the earlier Vox's `.vox/` line of `repo` (see the header); true when the file changed. */
export function migrateVoxExcludeIn(repo: RepositoryInfo): Promise<boolean> {
  const file = excludeFile(repo.commonDir);
  return workspaceLeases.withWorkspaceLease(file, () => migrateLocked(repo, file));
}

/**
 * Migrates the old line, then appends the marker and `.vox/worktrees/` unless an equivalent line
 * is there (creating the file and `info/` if needed). Serialised per exclude file, so parallel
 * creates add it once. Returns true when the line was added.
 */
export function ensureVoxExcluded(repo: RepositoryInfo): Promise<boolean> {
  const file = excludeFile(repo.commonDir);
  return workspaceLeases.withWorkspaceLease(file, () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (migrateLocked(repo, file)) return true;
    const text = readOrEmpty(file);
    if (text.split(/\r?\n/).some((l) => VOX_EXCLUDE_EQUIVALENTS.has(l.trim()))) return false;
    const sep = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    fs.appendFileSync(file, `${sep}${VOX_EXCLUDE_MARKER}\n${VOX_EXCLUDE_LINE}\n`);
    return true;
  });
}
