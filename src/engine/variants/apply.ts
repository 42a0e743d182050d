/**
 * Applying a variant's patch to the MAIN workspace's working tree — and refusing, with nothing
 * changed, when it does not fit.
 *
 * `git apply` runs without `--index`/`--cached`/`--3way`/`--reject`: only working-tree files are
 * written, the user's index, HEAD, branch and stash stay as they are, and nothing is ever merged
 * with conflict markers or half-applied. First `git apply --check` tests the whole patch against
 * the working tree as it is now (so the user's uncommitted edits count): a hunk whose context the
 * user changed, a new file whose path already exists (tracked, untracked or ignored), a deletion
 * of a file the user modified — each fails the check, and the adoption is refused as a typed
 * `conflict`. The conflicting files are then named exactly by checking each file of the patch on
 * its own (`--include=<that path>`), up to MAX_CONFLICT_PROBES files; beyond that they are read
 * from git's messages. Edits to other parts of a file the user also edited apply cleanly (git
 * matches context, with offsets, never fuzz) and keep the user's edits.
 *
 * `git apply` itself is all-or-nothing for patch failures, so a change slipping in between the
 * check and the apply still refuses rather than half-applies. Whitespace handling is pinned
 * (`--whitespace=nowarn`) so a user's `apply.whitespace=error` cannot refuse a variant's
 * trailing spaces.
 */
import { gitRaw } from '../git/git';
import { MAX_CONFLICT_FILES_IN_MESSAGE, MAX_CONFLICT_PROBES, VARIANT_GIT_TIMEOUT_MS, VariantError, type VariantFileStat } from './types';

const APPLY_ARGS = ['apply', '--whitespace=nowarn', '-p1'];
/** Exit codes of a `git apply` that ran but refused the patch (1) or could not read it (128). */
const APPLY_REFUSED_EXIT_CODES = [1, 128];

/** Escapes a path so `git apply --include` (wildmatch) matches exactly it. */
function exactPattern(p: string): string {
  return p.replace(/[*?[\]\\]/g, '\\$&');
}

async function applyCheck(repoRoot: string, patch: Buffer, extra: string[] = []): Promise<{ ok: boolean; stderr: string }> {
  const r = await gitRaw([...APPLY_ARGS, '--check', ...extra, '-'], { cwd: repoRoot, input: patch, okExitCodes: APPLY_REFUSED_EXIT_CODES, timeoutMs: VARIANT_GIT_TIMEOUT_MS });
  return { ok: r.exitCode === 0, stderr: r.stderr };
}

/** The known paths git's `error:` lines mention (longest match first, so `a/b.txt` beats `b.txt`). */
export function pathsNamedIn(stderr: string, known: readonly string[]): string[] {
  const byLength = [...known].sort((a, b) => b.length - a.length);
  const found = new Set<string>();
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('error: ')) continue;
    const hit = byLength.find((p) => line.includes(` ${p}:`) || line.includes(`'${p}'`) || line.endsWith(` ${p}`));
    if (hit) found.add(hit);
  }
  return [...found].sort();
}

/** Names the files of `patch` that do not apply to the working tree on their own. */
async function conflictingFiles(repoRoot: string, patch: Buffer, files: readonly VariantFileStat[], stderr: string): Promise<string[]> {
  const probed = files.slice(0, MAX_CONFLICT_PROBES);
  const out: string[] = [];
  for (const f of probed) {
    const r = await applyCheck(repoRoot, patch, [`--include=${exactPattern(f.path)}`]);
    if (!r.ok) out.push(f.path);
  }
  if (files.length > probed.length) {
    const rest = files.slice(probed.length).map((f) => f.path);
    out.push(...pathsNamedIn(stderr, rest));
  }
  return out;
}

function conflictMessage(files: string[], variantLabel: string): string {
  if (files.length === 0) return `${variantLabel} does not apply to the workspace as it is now; nothing was changed`;
  const shown = files.slice(0, MAX_CONFLICT_FILES_IN_MESSAGE).join(', ');
  const more = files.length > MAX_CONFLICT_FILES_IN_MESSAGE ? ` and ${files.length - MAX_CONFLICT_FILES_IN_MESSAGE} more` : '';
  return `${variantLabel} conflicts with the workspace in ${shown}${more} (local changes or files already there); nothing was changed — commit, stash or revert those edits, or discard the variant`;
}

/**
 * Applies `patch` to the working tree of `repoRoot` (its top level), or throws
 * `VariantError('conflict')` naming the files and leaves every file as it was.
 */
export async function applyToWorkspace(opts: { repoRoot: string; patch: Buffer; files: readonly VariantFileStat[]; label: string; index: number }): Promise<void> {
  if (opts.patch.length === 0) return;
  const check = await applyCheck(opts.repoRoot, opts.patch);
  if (!check.ok) {
    const files = await conflictingFiles(opts.repoRoot, opts.patch, opts.files, check.stderr);
    throw new VariantError('conflict', conflictMessage(files, opts.label), { files, index: opts.index, gitOutput: check.stderr.trim() });
  }
  const r = await gitRaw([...APPLY_ARGS, '-'], { cwd: opts.repoRoot, input: opts.patch, okExitCodes: APPLY_REFUSED_EXIT_CODES, timeoutMs: VARIANT_GIT_TIMEOUT_MS });
  if (r.exitCode !== 0) {
    // The workspace changed between the check and the apply; git applied nothing.
    const files = pathsNamedIn(r.stderr, opts.files.map((f) => f.path));
    throw new VariantError('conflict', conflictMessage(files, opts.label), { files, index: opts.index, gitOutput: r.stderr.trim() });
  }
}
