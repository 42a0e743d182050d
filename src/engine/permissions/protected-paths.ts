/**
 * Protected paths: Vox's own configuration and the files that make an editor, git or the shell
 * run code. A write to one is asked in every permission mode (Full auto included), whatever allow
 * rule matches — only a deny rule or Plan mode decides before it — and the approval card says why.
 * The built-in list is fixed; the settings (`vox.protectedPaths`, the CLI's $VOX_PROTECTED_PATHS)
 * may only add to it. Matching is on a normalised path: backslashes are separators, `.` and `..`
 * are resolved, case is ignored, and Windows' trailing dots and spaces and `::$DATA` stream
 * suffixes are dropped, so `.VOX\permissions.json` or `a/../.vox/x` is the same file. The caller
 * passes every spelling of the path it knows (the given one and, through symlinks, the real one).
 */
import path from 'node:path';
import { pathMatches } from './path-globs';
import { MAX_RULE_FIELD_CHARS, PermissionRulesError } from './rules';

export interface ProtectedPath {
  /** A workspace-relative glob (./decide.ts `pathMatches`; `dir/**` also covers `dir` itself). */
  glob: string;
  /** Why it is protected, shown on the approval card: "Vox's own configuration". */
  why: string;
}

const VOX_CONFIG = "Vox's own configuration (permission rules, rules, MCP servers)";
const EDITOR_RUNS = 'the editor runs code from it';
const MCP_CONFIG = 'it starts MCP servers (programs) for an agent';
const GIT_RUNS = 'git runs code from it (hooks, config)';

/** The built-in protected paths; settings add to these, never remove one. */
export const BUILTIN_PROTECTED_PATHS: readonly ProtectedPath[] = Object.freeze([
  { glob: '.vox/**', why: VOX_CONFIG },
  { glob: '.vscode/settings.json', why: `editor settings: they can change Vox's permission mode and rules, and ${EDITOR_RUNS}` },
  { glob: '.vscode/tasks.json', why: `${EDITOR_RUNS} (tasks may run when the folder opens)` },
  { glob: '.vscode/launch.json', why: EDITOR_RUNS },
  { glob: '.vscode/mcp.json', why: MCP_CONFIG },
  { glob: '.mcp.json', why: MCP_CONFIG },
  { glob: '.claude/settings*.json', why: "an agent's permission settings and hooks" },
  { glob: '**/.git/**', why: GIT_RUNS },
  { glob: '.husky/**', why: GIT_RUNS },
  { glob: '.githooks/**', why: GIT_RUNS },
  { glob: '**/.envrc', why: 'direnv runs it when a shell enters the folder' },
]);

/** Most extra protected paths the settings may add. */
export const MAX_EXTRA_PROTECTED_PATHS = 200;

/** What a user-added entry is protected for. */
const USER_LISTED = 'listed in the protected paths setting';

/** The files whose change is a change of permissions: approving it lets it apply from the next turn only. */
const PERMISSION_FILES: readonly string[] = ['.vox/**', '.vscode/settings.json', '.claude/settings*.json'];

/** Windows ignores a segment's trailing dots and spaces, and `name::$DATA` is the file itself. */
function windowsSegment(s: string): string {
  const noStream = s.replace(/::\$data$/, '').replace(/:\$data$/, '');
  const trimmed = noStream.replace(/[. ]+$/, '');
  return trimmed === '' ? noStream : trimmed;
}

/**
 * A path as the matcher compares it: forward slashes, `.`/`..` resolved (null when it leaves the
 * workspace), lower case, Windows' trailing dots and spaces dropped. Absolute paths must be
 * given relative already (the caller knows the workspace root).
 */
export function normaliseProtectedPath(rel: string): string | null {
  const slashed = rel.replace(/\\/g, '/');
  const norm = path.posix.normalize(slashed.startsWith('/') ? slashed.slice(1) : slashed);
  if (norm === '..' || norm.startsWith('../')) return null;
  const segments = norm.split('/').filter((s) => s !== '' && s !== '.').map((s) => windowsSegment(s.toLowerCase()));
  return segments.length === 0 ? '.' : segments.join('/');
}

function globCovers(glob: string, rel: string): boolean {
  const g = glob.toLowerCase();
  if (pathMatches(g, rel)) return true;
  if (!g.endsWith('/**')) return false;
  // `dir/**` covers `dir` itself too (a file written where the directory should be), at the same depth only.
  const dir = g.slice(0, -3);
  return dir.includes('/') ? pathMatches(dir, rel) : rel === dir;
}

/** The protected entry one of `paths` falls under (first of the built-ins, then the extras), or null. */
export function protectedEntry(paths: readonly string[], extra: readonly ProtectedPath[] = []): { entry: ProtectedPath; path: string } | null {
  const entries = [...BUILTIN_PROTECTED_PATHS, ...extra];
  for (const p of paths) {
    const rel = normaliseProtectedPath(p);
    if (rel === null) continue;
    const entry = entries.find((e) => globCovers(e.glob, rel));
    if (entry) return { entry, path: p.replace(/\\/g, '/') };
  }
  return null;
}

/** Whether a protected path's change is a change of permissions (the reason says it applies from the next turn). */
export function isPermissionFile(p: string): boolean {
  const rel = normaliseProtectedPath(p);
  return rel !== null && PERMISSION_FILES.some((g) => globCovers(g, rel));
}

/** Where the extra list is named in errors. */
export const PROTECTED_PATHS_SOURCE = 'settings (vox.protectedPaths)';

/** Validates the settings' extra list (`vox.protectedPaths`): an array of workspace-relative globs. */
export function validateProtectedPaths(value: unknown, source: string = PROTECTED_PATHS_SOURCE): ProtectedPath[] {
  if (value === undefined || value === null) return [];
  const at = '$';
  if (!Array.isArray(value)) throw new PermissionRulesError('invalidRules', source, at, `must be an array of path globs, got ${JSON.stringify(value)}`);
  if (value.length > MAX_EXTRA_PROTECTED_PATHS) throw new PermissionRulesError('invalidRules', source, at, `more than ${MAX_EXTRA_PROTECTED_PATHS} entries`);
  return value.map((g, i) => {
    if (typeof g !== 'string' || g.trim() === '') throw new PermissionRulesError('invalidRules', source, `${at}[${i}]`, `must be a non-empty path glob, got ${JSON.stringify(g)}`);
    if (g.length > MAX_RULE_FIELD_CHARS) throw new PermissionRulesError('invalidRules', source, `${at}[${i}]`, `longer than ${MAX_RULE_FIELD_CHARS} characters`);
    const glob = g.trim().replace(/\\/g, '/').replace(/^\.\//, '');
    if (glob.startsWith('/') || /^[A-Za-z]:\//.test(glob) || glob.split('/').includes('..')) {
      throw new PermissionRulesError('invalidRules', source, `${at}[${i}]`, 'path globs are relative to the workspace root (no leading "/", no "..")');
    }
    return { glob, why: USER_LISTED };
  });
}
