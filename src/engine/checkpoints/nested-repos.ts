/**
 * Nested repositories and submodules inside a worktree (SPEC §4.2).
 *
 * An outer tree can only store a gitlink (the nested HEAD), so edits inside a nested repository
 * are invisible to the outer checkpoint. Vox never renames, disables or enters-and-mutates them;
 * instead each nested repository is checkpointed by the same mechanism inside itself (its own
 * hidden refs) as part of the outer checkpoint. This module finds them:
 *   - registered submodules and embedded repositories already in the index: gitlink entries
 *     (mode 160000) of `ls-files -s`;
 *   - untracked nested repositories: `ls-files -o` prints them as one entry ending in `/` (git's
 *     own judgement of "this directory is a repository").
 * Each candidate is probed: it counts only when `rev-parse --show-toplevel` inside it names the
 * directory itself (an uninitialised submodule is an empty directory that belongs to the outer
 * repository). A nested repository with no commits cannot be added as a gitlink (`git add -A`
 * exits 128 on it), so the caller excludes it from the outer add and captures its files into its
 * own hidden ref (commit-tree needs no HEAD).
 *
 * Node can only pass UTF-8 strings as a child's cwd or argv, so a nested repository whose path is
 * not valid UTF-8 cannot be entered; it is excluded from the outer add and reported as a warning.
 */
import * as fsp from 'node:fs/promises';
import { quote } from '../../protocol/wire/quote';
import * as path from 'node:path';
import { gitRaw, type GitResult } from '../git/git';
import { canonicalPath } from '../platform/workspace-lease';
import type { RepoInfo } from './repo';
import { absBytes } from './paths';
import { repoPath, type RepoPath } from './types';

/** Deepest chain of repositories inside repositories that is followed. */
export const MAX_NESTED_DEPTH = 8;
/** Mode git gives a gitlink (submodule or embedded repository) entry. */
export const GITLINK_MODE = '160000';
/** Longest excerpt of git's complaint kept in the reason a nested repository cannot be entered. */
const PROBE_ERROR_EXCERPT_CHARS = 200;

export interface NestedProbe {
  rel: RepoPath;
  /** The nested repository, or null when it cannot be entered (see `reason`). */
  repo: RepoInfo | null;
  hasHead: boolean;
  /** The commit HEAD points at (when `hasHead`). */
  head?: string;
  reason?: string;
}

function isUtf8(b: Buffer): boolean {
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

/** Gitlink paths from `git ls-files -s -z` output. */
export function gitlinksFromStage(out: Buffer): Buffer[] {
  const result: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== 0) continue;
    const rec = out.subarray(start, i);
    start = i + 1;
    // `<mode> <sha> <stage>\t<path>`
    if (rec.subarray(0, GITLINK_MODE.length + 1).toString('latin1') !== `${GITLINK_MODE} `) continue;
    const tab = rec.indexOf(0x09);
    if (tab > 0) result.push(Buffer.from(rec.subarray(tab + 1)));
  }
  return result;
}

/**
 * Probes one candidate directory (relative to `parent.root`). Returns null when it is not the top
 * level of its own repository (nothing to do), otherwise the nested repository and whether it has
 * a commit.
 */
export async function probeNestedRepo(parent: RepoInfo, rel: Buffer): Promise<NestedProbe | null> {
  const abs = absBytes(parent.root, rel);
  const dotGit = await fsp.lstat(Buffer.concat([abs, Buffer.from(`${path.sep}.git`)])).catch(() => null);
  if (!dotGit) return null;
  if (!isUtf8(rel)) return { rel: repoPath(rel), repo: null, hasHead: false, reason: 'path is not valid UTF-8, so git cannot be run inside it' };
  const dir = abs.toString('utf8');
  // One process: top level, git dir, index path and HEAD. With no commit yet, rev-parse prints
  // the literal `HEAD` and exits 128 after the first three lines.
  let r: GitResult;
  try {
    r = await gitRaw(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index', 'HEAD'], { cwd: dir, okExitCodes: [128] });
  } catch (err) {
    return { rel: repoPath(rel), repo: null, hasHead: false, reason: `not a usable repository: ${quote((err as Error).message, PROBE_ERROR_EXCERPT_CHARS)}` };
  }
  const [top, gitDir, index, head] = r.stdout.toString('utf8').split('\n');
  if (!top || !gitDir || !index) {
    return { rel: repoPath(rel), repo: null, hasHead: false, reason: `not a usable repository: ${quote(r.stderr.trim(), PROBE_ERROR_EXCERPT_CHARS)}` };
  }
  if (canonicalPath(top) !== canonicalPath(dir)) return null;
  const repo: RepoInfo = { root: canonicalPath(top), gitDir: path.resolve(gitDir), indexPath: path.resolve(dir, index) };
  const hasHead = r.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(head ?? '');
  return { rel: repoPath(rel), repo, hasHead, ...(hasHead ? { head } : {}) };
}
