/**
 * Snapshot of a worktree's current files as a git tree, without touching HEAD, branches, the real
 * index, the stash or the working tree (SPEC §4.2).
 *
 * The real index (`rev-parse --git-path index`, right in linked worktrees) is copied to a
 * temporary index, so git's stat cache makes the work proportional to what changed; a
 * repository with no index starts from an empty one. One walk of the working tree
 * (`ls-files -z -t -o -m -d --exclude-standard`) lists untracked, modified and deleted paths;
 * `ls-files -s` (in parallel) gives the gitlinks. Before the add:
 *   - untracked files bigger than the size cap are excluded and reported as skipped;
 *   - nested repositories are found (`nested-repos.ts`); those with no commit, or that cannot be
 *     entered, are excluded (they would make `add -A` exit 128).
 * Then `add -A --ignore-errors` (an unreadable file is reported as a warning instead of failing
 * every checkpoint) limited to the paths the walk found (`addChanged`; no second walk), or the
 * full `add -A` with `:(exclude,literal)` pathspecs; pathspecs are fed NUL-separated on stdin
 * (`--pathspec-from-file`), so any file name works, including newlines and non-UTF-8 bytes.
 * Then `write-tree`, and each nested repository is snapshotted the same way inside itself. The
 * temporary indexes stay alive (restore reuses them, with `freshIndex`) until `disposeSnapshot`.
 */
import * as fsp from 'node:fs/promises';
import { splitNul } from '../../git/git';
import { createTempIndex, removeStaleTempIndexes, run, runText, type RepoInfo, type TempIndex } from '../repo';
import { MAX_NESTED_DEPTH, absBytes, gitlinksFromStage, probeNestedRepo, type NestedProbe } from '../nested-repos';
import { repoPath, toCheckpointError, type RepoPath, type SkippedFile } from '../types';

/** lstat calls in flight at once while sizing untracked files. */
export const LSTAT_CONCURRENCY = 64;
/** Longest stderr excerpt kept in a warning. */
const WARNING_EXCERPT_CHARS = 500;

export interface SnapshotOptions {
  maxUntrackedBytes: number;
  /** Nesting depth of this repository (0 for the worktree itself). */
  depth?: number;
  /**
   * The index will drive a working-tree update (restore's `read-tree -m -u`), which needs fresh
   * stat data in every entry: run the full `add -A` instead of the one limited to changed paths.
   */
  freshIndex?: boolean;
}

export interface SnapshotNode {
  repo: RepoInfo;
  /** Path relative to the parent repository's root; null for the worktree itself. */
  rel: RepoPath | null;
  tree: string;
  index: TempIndex;
  /** Over-cap untracked files left out (paths relative to this repository). */
  skipped: SkippedFile[];
  children: SnapshotNode[];
  /** Nested repositories that could not be entered (left out, reported in `warnings`). */
  opaque: RepoPath[];
  warnings: string[];
  /** Whether the tree may hold a `.gitattributes` file (tracked or untracked). */
  attributes: boolean;
}

/** Turns paths into NUL-terminated pathspecs with the given magic, e.g. `exclude,literal`. */
export function pathspecInput(paths: Buffer[], magic: string): Buffer {
  const parts: Buffer[] = [];
  for (const p of paths) parts.push(Buffer.from(`:(${magic})`, 'utf8'), p, Buffer.from([0]));
  return Buffer.concat(parts);
}

/** Nested repositories snapshotted, committed or restored at once. */
export const NESTED_CONCURRENCY = 4;

/**
 * Like `mapLimit`, but waits for every item and then throws the first failure — so a caller can
 * clean up what the successful ones created (`onFulfilled` receives each success first).
 */
export async function settleLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>, onFulfilled: (r: R) => void = () => undefined): Promise<R[]> {
  const settled = await mapLimit(items, limit, (item) => fn(item).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error })));
  for (const r of settled) if (r.ok) onFulfilled(r.value);
  const failed = settled.find((r) => !r.ok);
  if (failed && !failed.ok) throw failed.error;
  return settled.map((r) => (r as { value: R }).value);
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Over-cap regular files among `paths` (relative to `root`). */
export async function findOversized(root: string, paths: Buffer[], maxBytes: number): Promise<SkippedFile[]> {
  const sizes = await mapLimit(paths, LSTAT_CONCURRENCY, async (p) => {
    const st = await fsp.lstat(absBytes(root, p)).catch(() => null);
    return st?.isFile() && st.size > maxBytes ? st.size : -1;
  });
  const out: SkippedFile[] = [];
  sizes.forEach((bytes, i) => {
    if (bytes >= 0) out.push({ ...repoPath(paths[i]!), bytes });
  });
  return out;
}

/** `add -A` on a temporary index, optionally limited to or excluding paths. */
export async function addAll(repo: RepoInfo, index: string, spec: { exclude?: Buffer[]; only?: Buffer[]; force?: boolean }, warnings: string[]): Promise<void> {
  if (spec.only && !spec.only.length) return;
  const args = ['add', '-A', '--ignore-errors'];
  if (spec.force) args.push('-f');
  const parts: Buffer[] = [];
  if (spec.only) parts.push(pathspecInput(spec.only, 'literal'));
  if (spec.exclude?.length) parts.push(pathspecInput(spec.exclude, 'exclude,literal'));
  const input = parts.length ? Buffer.concat(parts) : undefined;
  if (input) args.push('--pathspec-from-file=-', '--pathspec-file-nul');
  const r = await run(repo, args, { index, input, okExitCodes: [1] });
  if (r.exitCode === 1) warnings.push(`some files could not be read and were left out: ${r.stderr.trim().slice(0, WARNING_EXCERPT_CHARS)}`);
}

export async function writeTree(repo: RepoInfo, index: string): Promise<string> {
  return runText(repo, ['write-tree'], { index });
}

/** Snapshots `repo` (and, recursively, its nested repositories) into temporary indexes and trees. */
export async function snapshotRepo(repo: RepoInfo, opts: SnapshotOptions): Promise<SnapshotNode> {
  const depth = opts.depth ?? 0;
  await removeStaleTempIndexes(repo, Date.now());
  const index = await createTempIndex(repo, repo.indexPath);
  const node: SnapshotNode = { repo, rel: null, tree: '', index, skipped: [], children: [], opaque: [], warnings: [], attributes: true };
  try {
    // One walk: untracked (`?`), modified (`C`) and deleted (`R`) paths, tagged (`-t`).
    const [stage, walk] = await Promise.all([
      run(repo, ['ls-files', '-z', '-s'], { index: index.file }),
      run(repo, ['ls-files', '-z', '-t', '-o', '-m', '-d', '--exclude-standard'], { index: index.file }),
    ]);
    const candidates = gitlinksFromStage(stage.stdout);
    node.attributes = mentionsAttributes(stage.stdout) || mentionsAttributes(walk.stdout);
    const untrackedFiles: Buffer[] = [];
    const changed: Buffer[] = [...candidates, ...unmergedFromStage(stage.stdout)];
    for (const rec of splitNul(walk.stdout)) {
      const p = rec.subarray(2);
      if (!p.length) continue;
      if (rec[0] !== 0x3f) changed.push(p);
      else if (p[p.length - 1] === 0x2f) candidates.push(Buffer.from(p.subarray(0, p.length - 1)));
      else untrackedFiles.push(p);
    }
    const [skipped, probes] = await Promise.all([
      findOversized(repo.root, untrackedFiles, opts.maxUntrackedBytes),
      mapLimit(candidates, 4, (c) => probeNestedRepo(repo, c)),
    ]);
    node.skipped = skipped;
    const nested = probes.filter((p): p is NestedProbe => p !== null);
    const exclude = skipped.map((s) => s.raw);
    for (const p of nested) {
      if (!p.repo || !p.hasHead) exclude.push(p.rel.raw);
      if (!p.repo) {
        node.opaque.push(p.rel);
        node.warnings.push(`nested repository ${p.rel.path} was left out: ${p.reason ?? 'unknown reason'}`);
      }
    }
    const enter: Array<{ rel: RepoPath; repo: RepoInfo }> = [];
    for (const p of nested) {
      if (!p.repo) continue;
      if (depth + 1 > MAX_NESTED_DEPTH) {
        node.opaque.push(p.rel);
        node.warnings.push(`nested repository ${p.rel.path} is deeper than ${MAX_NESTED_DEPTH} levels and was not captured inside`);
        continue;
      }
      enter.push({ rel: p.rel, repo: p.repo });
    }
    // Nested repositories are snapshotted while this one is added (neither touches the other's
    // HEAD or index; the gitlink only reads the nested HEAD).
    const own = (async () => {
      if (opts.freshIndex) await addAll(repo, index.file, { exclude }, node.warnings);
      else await addChanged(repo, index.file, [...changed, ...candidates, ...untrackedFiles], exclude, node.warnings);
      if (exclude.length) await dropEntriesBelow(repo, index.file, stage.stdout, exclude);
      node.tree = await writeTree(repo, index.file);
    })();
    const nestedDone = settleLimit(
      enter,
      NESTED_CONCURRENCY,
      async (e) => {
        const child = await snapshotRepo(e.repo, { ...opts, depth: depth + 1 });
        child.rel = e.rel;
        return child;
      },
      (child) => node.children.push(child),
    );
    const [ownR, nestedR] = await Promise.allSettled([own, nestedDone]);
    if (ownR.status === 'rejected') throw ownR.reason;
    if (nestedR.status === 'rejected') throw nestedR.reason;
    return node;
  } catch (err) {
    await disposeSnapshot(node);
    throw toCheckpointError(err, `snapshotting ${repo.root}`);
  }
}

/** Most paths `add -A` is limited to; beyond this, pathspec matching costs more than a full walk. */
export const TARGETED_ADD_MAX_PATHS = 1000;

/**
 * `add -A` limited to `paths` (every path the walk found changed, deleted or untracked, plus
 * gitlinks, nested candidates and unmerged entries), minus `exclude`. Every other index entry is
 * stat-clean, where a full `add -A` would change nothing, so the result is the same without the
 * second walk. A path is covered with everything below it, so a tracked directory that became an
 * (untracked) file is handled as `add -A` would. Too many paths, or a pathspec git rejects (a file
 * gone since the walk, a path beyond a new symlink), fall back to the full `add -A`.
 */
async function addChanged(repo: RepoInfo, index: string, all: Buffer[], exclude: Buffer[], warnings: string[]): Promise<void> {
  const seen = new Set(exclude.map((x) => x.toString('latin1')));
  const paths = all.filter((p) => {
    const key = p.toString('latin1');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (!paths.length) return;
  const covers = (p: Buffer, x: Buffer): boolean => x.length > p.length && x[p.length] === 0x2f && x.subarray(0, p.length).equals(p);
  // An excluded path below a listed one (an over-cap file in a tracked file's new directory)
  // needs the exclude pathspecs: the full add then.
  if (paths.length <= TARGETED_ADD_MAX_PATHS && !exclude.some((x) => paths.some((p) => covers(p, x)))) {
    // Paths below an excluded one are dropped here: an exclude pathspec next to positive ones
    // makes git skip untracked nested repositories that a positive pathspec names.
    const only = paths.filter((p) => !exclude.some((x) => covers(x, p)));
    const local: string[] = [];
    try {
      if (only.length) await addAll(repo, index, { only }, local);
      warnings.push(...local);
      return;
    } catch {
      // Fall through to the full add.
    }
  }
  await addAll(repo, index, { exclude }, warnings);
}

/** Whether any NUL-terminated record ends in a `.gitattributes` path component. */
function mentionsAttributes(out: Buffer): boolean {
  for (let at = out.indexOf('.gitattributes\0'); at >= 0; at = out.indexOf('.gitattributes\0', at + 1)) {
    const before = at === 0 ? 0 : out[at - 1];
    // Preceded by a directory separator, a tab (`ls-files -s`), a space (`-t` tag) or the start.
    if (at === 0 || before === 0x2f || before === 0x09 || before === 0x20 || before === 0) return true;
  }
  return false;
}

/** Paths of unmerged (stage > 0) entries in `ls-files -s -z` output. */
function unmergedFromStage(out: Buffer): Buffer[] {
  const result: Buffer[] = [];
  for (const rec of splitNul(out)) {
    const tab = rec.indexOf(0x09);
    if (tab > 0 && rec[tab - 1] !== 0x30) result.push(rec.subarray(tab + 1));
  }
  return result;
}

/** Paths of `ls-files -s -z` output, in the index's (byte) order. */
function stagePaths(out: Buffer): Buffer[] {
  return splitNul(out).map((rec) => rec.subarray(rec.indexOf(0x09) + 1));
}

/** Index of the first element of sorted `xs` that is not less than `key`. */
function lowerBound(xs: Buffer[], key: Buffer): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Buffer.compare(xs[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * An excluded path is left out of `add -A` together with everything below it, so index entries
 * below it (a tracked directory that is now an over-cap file, or a nested repository) would stay
 * in the snapshot with stale content. They cannot exist on disk as such, so they are removed from
 * the temporary index explicitly (exact paths, no pathspec semantics).
 */
async function dropEntriesBelow(repo: RepoInfo, index: string, stage: Buffer, excluded: Buffer[]): Promise<void> {
  const paths = stagePaths(stage);
  const stale: Buffer[] = [];
  for (const x of excluded) {
    const prefix = Buffer.concat([x, Buffer.from('/')]);
    for (let i = lowerBound(paths, prefix); i < paths.length && paths[i]!.subarray(0, prefix.length).equals(prefix); i++) stale.push(paths[i]!);
  }
  if (!stale.length) return;
  const input = Buffer.concat(stale.flatMap((p) => [p, Buffer.from([0])]));
  await run(repo, ['update-index', '--force-remove', '-z', '--stdin'], { index, input });
}

/** Deletes every temporary index of a snapshot tree (safe to call twice). */
export async function disposeSnapshot(node: SnapshotNode): Promise<void> {
  for (const c of node.children) await disposeSnapshot(c);
  await node.index.dispose();
}

/** Prefixes a nested path with its repository's path (`sub` + `a/b` → `sub/a/b`). */
export function joinRel(prefix: RepoPath | null, p: RepoPath): RepoPath {
  if (!prefix) return p;
  return repoPath(Buffer.concat([prefix.raw, Buffer.from('/'), p.raw]));
}
