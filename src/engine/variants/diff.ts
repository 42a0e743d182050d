/**
 * What a variant changed: its worktree against the commit it started from, INCLUDING untracked
 * new files and deletions, as per-file stats and as a binary-safe patch.
 *
 * The worktree's real index is never written. A temporary index (a copy of the real one, so
 * git's stat cache keeps `add -A` proportional to what changed) is filled with `git add -A`
 * under `GIT_INDEX_FILE`, then `git diff --cached <base>` reads it: untracked files show up as
 * added, removed files as deleted, ignored files (build output, node_modules) stay out. Commits
 * the agent may have made inside the worktree are included too, since the diff is against the
 * base commit, not the worktree's HEAD. `.env*` files we provisioned into the worktree and that
 * are still byte-identical to the main repository's copies are left out: they are not a change.
 *
 * Renames are reported as delete + add (`--no-renames`), which keeps stats and the patch simple
 * and applies the same way. Diff output is pinned against user configuration: fixed `a/`/`b/`
 * prefixes, no colour, no external diff or textconv, not relative.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitRaw, splitNul } from '../git/git';
import { EMPTY_STATS, VARIANT_GIT_TIMEOUT_MS, type FileChangeStatus, type VariantFileStat, type VariantStats } from './types';

/** Diff options that make the output independent of the user's git configuration. */
const PINNED_DIFF_ARGS = ['--no-renames', '--no-ext-diff', '--no-textconv', '--no-color', '--no-relative', '--src-prefix=a/', '--dst-prefix=b/'];
/** git's "no file on this side" mode in `--raw` output. */
const ABSENT_MODE = '000000';
/** Largest provisioned `.env*` file compared byte for byte (bigger ones count as changed). */
const MAX_ENV_COMPARE_BYTES = 1024 * 1024;

const RAW_STATUS: Record<string, FileChangeStatus> = { A: 'added', D: 'deleted', M: 'modified', T: 'typeChanged' };

export interface SnapshotOptions {
  /** The variant's worktree. */
  worktree: string;
  /** Main repository root (to compare provisioned `.env*` files against). */
  repoRoot: string;
  /** Commit the variant started from. */
  base: string;
  /** `.env*` paths (relative, `/`) copied into the worktree at creation. */
  provisionedEnv: readonly string[];
  /** Also produce the `--binary` patch. */
  withPatch: boolean;
  /** The worktree's real index file, when already known (saves a `git rev-parse`). */
  indexPath?: string;
}

/** The absolute path of the worktree's real index (`<common>/worktrees/<id>/index`). */
export function worktreeIndexPath(worktree: string): Promise<string> {
  return git(['rev-parse', '--path-format=absolute', '--git-path', 'index'], { cwd: worktree, timeoutMs: VARIANT_GIT_TIMEOUT_MS });
}

export interface VariantSnapshot {
  stats: VariantStats;
  /** Present when `withPatch` was asked for. */
  patch?: Buffer;
}

function sameFileBytes(a: string, b: string): boolean {
  try {
    const sa = fs.lstatSync(a);
    const sb = fs.lstatSync(b);
    if (!sa.isFile() || !sb.isFile() || sa.size !== sb.size || sa.size > MAX_ENV_COMPARE_BYTES) return false;
    return fs.readFileSync(a).equals(fs.readFileSync(b));
  } catch {
    return false;
  }
}

/** Parses `git diff --raw --numstat -z` output (with `--no-renames`) into per-file stats. */
export function parseRawNumstat(out: Buffer): VariantStats {
  const fields = splitNul(out);
  const byPath = new Map<string, VariantFileStat>();
  const entry = (p: string): VariantFileStat => {
    let e = byPath.get(p);
    if (!e) {
      e = { path: p, status: 'modified', additions: 0, deletions: 0, binary: false, oldMode: null, newMode: null };
      byPath.set(p, e);
    }
    return e;
  };
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!.toString('utf8');
    if (f === '') continue;
    if (f.startsWith(':')) {
      // `:<old mode> <new mode> <old sha> <new sha> <status>` then the path as its own field.
      const [oldMode, newMode, , , letter] = f.slice(1).split(' ');
      const p = fields[++i]?.toString('utf8');
      if (p === undefined) break;
      const e = entry(p);
      e.status = RAW_STATUS[(letter ?? 'M').charAt(0)] ?? 'modified';
      e.oldMode = oldMode && oldMode !== ABSENT_MODE ? oldMode : null;
      e.newMode = newMode && newMode !== ABSENT_MODE ? newMode : null;
      continue;
    }
    // `<added>\t<deleted>\t<path>`; `-\t-\t` marks a binary file.
    const t1 = f.indexOf('\t');
    const t2 = t1 < 0 ? -1 : f.indexOf('\t', t1 + 1);
    if (t2 < 0) continue;
    const add = f.slice(0, t1);
    const del = f.slice(t1 + 1, t2);
    const e = entry(f.slice(t2 + 1));
    e.binary = add === '-' && del === '-';
    e.additions = e.binary ? 0 : Number.parseInt(add, 10) || 0;
    e.deletions = e.binary ? 0 : Number.parseInt(del, 10) || 0;
  }
  const files = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (files.length === 0) return { ...EMPTY_STATS, files: [] };
  return { files, additions: files.reduce((n, f) => n + f.additions, 0), deletions: files.reduce((n, f) => n + f.deletions, 0) };
}

/**
 * Stages the worktree into a temporary index and runs `fn` with the environment that points git
 * at it; the temporary index is deleted afterwards whatever happens.
 */
async function withTemporaryIndex<T>(opts: SnapshotOptions, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const cwd = opts.worktree;
  const realIndex = opts.indexPath ?? (await worktreeIndexPath(cwd));
  const tmpIndex = `${realIndex}.vox-variant-${process.pid}-${randomUUID()}`;
  try {
    try {
      fs.copyFileSync(realIndex, tmpIndex);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // no index yet: start empty
    }
    const env = { GIT_INDEX_FILE: tmpIndex };
    await gitRaw(['add', '-A', '--', '.'], { cwd, env, timeoutMs: VARIANT_GIT_TIMEOUT_MS });
    const unchangedEnv = opts.provisionedEnv.filter((rel) =>
      sameFileBytes(path.join(cwd, ...rel.split('/')), path.join(opts.repoRoot, ...rel.split('/'))),
    );
    if (unchangedEnv.length > 0) {
      await gitRaw(['rm', '--cached', '-q', '--ignore-unmatch', '--', ...unchangedEnv], {
        cwd,
        env: { ...env, GIT_LITERAL_PATHSPECS: '1' },
        timeoutMs: VARIANT_GIT_TIMEOUT_MS,
      });
    }
    return await fn(env);
  } finally {
    for (const f of [tmpIndex, `${tmpIndex}.lock`]) fs.rmSync(f, { force: true });
  }
}

/** Stats (and optionally the patch) of the variant's worktree against its base; see the header. */
export async function snapshotVariant(opts: SnapshotOptions): Promise<VariantSnapshot> {
  return withTemporaryIndex(opts, async (env) => {
    const common = { cwd: opts.worktree, env, timeoutMs: VARIANT_GIT_TIMEOUT_MS };
    const numstat = await gitRaw(['diff', '--cached', ...PINNED_DIFF_ARGS, '--raw', '--numstat', '-z', opts.base, '--'], common);
    const stats = parseRawNumstat(numstat.stdout);
    if (!opts.withPatch) return { stats };
    const patch = stats.files.length === 0 ? Buffer.alloc(0) : (await gitRaw(['diff', '--cached', ...PINNED_DIFF_ARGS, '--binary', opts.base, '--'], common)).stdout;
    return { stats, patch };
  });
}

/** True when two stats describe the same changes (used to skip redundant change events). */
export function sameStats(a: VariantStats, b: VariantStats): boolean {
  if (a.additions !== b.additions || a.deletions !== b.deletions || a.files.length !== b.files.length) return false;
  return a.files.every((f, i) => {
    const g = b.files[i]!;
    return f.path === g.path && f.status === g.status && f.additions === g.additions && f.deletions === g.deletions && f.binary === g.binary && f.oldMode === g.oldMode && f.newMode === g.newMode;
  });
}
