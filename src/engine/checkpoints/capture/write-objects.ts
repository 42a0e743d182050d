/**
 * Capture stage 2, write the objects: the blobs of what changed (SPEC §4.2).
 *   - Incremental (`writeChangedObjects`): the change list becomes tree changes. Files are read
 *     here and travel inline to fast-import (`commit.ts`), their ids computed here, when no
 *     attribute or `core.autocrlf` can make git convert content; otherwise one `hash-object -w
 *     --stdin-paths` (`startHasher`) stores them as `git add` would and only their ids go on.
 *     Entries that end up equal to W are dropped.
 *   - Full snapshot (`addWalked`): `add -A --ignore-errors` on the temporary index (an unreadable
 *     file is a warning, not a failed checkpoint), limited to the paths the walk found
 *     (`addChanged`; no second walk) or the full `add -A` with `:(exclude,literal)` pathspecs.
 *     Pathspecs are fed NUL-separated on stdin (`--pathspec-from-file`), so any file name works,
 *     including newlines and non-UTF-8 bytes. Index entries left below an excluded path are
 *     removed from the temporary index.
 *
 * Anything unusual in an incremental capture throws `FallBack` (the full snapshot then decides).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import { splitNul } from '../../git/git';
import { run, type RepoInfo } from '../repo';
import { absBytes, cQuote, isAttributesPath, lstatOrNull, relKey } from '../paths';
import { deferred } from '../concurrency';
import { GITLINK_MODE } from '../nested-repos';
import type { WarmState } from '../warm-state';
import { CheckpointError } from '../types';
import { FallBack, type Candidate, type Walk } from './find-changes';

/** Largest file stored inline (read into memory here); bigger ones go through `hash-object`. */
export const INLINE_MAX_BYTES = 8 * 1024 * 1024;
/** Most bytes one capture reads inline (beyond this, `hash-object` reads the files itself). */
export const INLINE_TOTAL_MAX_BYTES = 64 * 1024 * 1024;
/** Zlib level for the blobs a capture writes (fast; `gc` recompresses when it packs them). */
export const BLOB_COMPRESSION_LEVEL = '1';
/** Most paths `add -A` is limited to; beyond this, pathspec matching costs more than a full walk. */
export const TARGETED_ADD_MAX_PATHS = 1000;
/** Longest stderr excerpt kept in a warning. */
const WARNING_EXCERPT_CHARS = 500;

/** One change to apply to a tree and its index. */
export type TreeChange =
  | { kind: 'file'; raw: Buffer; mode: '100644' | '100755'; sha: string; /** Bytes to store inline (else the blob `sha` exists). */ content?: Buffer }
  | { kind: 'symlink'; raw: Buffer; target: Buffer; sha: string }
  | { kind: 'gitlink'; raw: Buffer; sha: string }
  | { kind: 'delete'; raw: Buffer };

/** Mode string of a change as git records it (null for a deletion). */
export function changeMode(c: TreeChange): string | null {
  if (c.kind === 'file') return c.mode;
  if (c.kind === 'symlink') return '120000';
  if (c.kind === 'gitlink') return GITLINK_MODE;
  return null;
}

/** Git's object id of a blob with `content`, for the repository's hash (by id length). */
export function blobId(content: Buffer, hexLength: number): string {
  const algo = hexLength === 64 ? 'sha256' : 'sha1';
  return createHash(algo).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * A `hash-object -w --stdin-paths` process started now, fed later: `hash(paths)` once, or
 * `cancel()` (it then exits having written nothing). Returns blob ids in the order of `paths`.
 */
export function startHasher(repo: RepoInfo): { hash(paths: Buffer[]): Promise<string[]>; cancel(): void } {
  const input = deferred<Buffer>();
  const proc = run(repo, ['hash-object', '-w', '--stdin-paths'], { input: input.promise, config: { 'core.looseCompression': BLOB_COMPRESSION_LEVEL } });
  proc.catch(() => undefined);
  let fed = false;
  return {
    async hash(paths: Buffer[]): Promise<string[]> {
      fed = true;
      input.resolve(Buffer.concat(paths.flatMap((p) => [cQuote(p), Buffer.from('\n')])));
      const out = (await proc).stdout.toString('latin1').split('\n').filter(Boolean);
      if (out.length !== paths.length) throw new CheckpointError('gitFailed', `hash-object returned ${out.length} ids for ${paths.length} files`);
      return out;
    },
    cancel(): void {
      if (!fed) input.resolve(Buffer.alloc(0));
      fed = true;
    },
  };
}

interface RepoSettings {
  fileMode: boolean;
  autocrlf: boolean;
  /** Attribute files outside the tree that may exist (checked for existence on every use). */
  attributeFiles: string[];
}

const settingsCache = new Map<string, Promise<RepoSettings>>();

/** The config an incremental capture depends on (read once per git dir and process). */
function repoSettings(repo: RepoInfo): Promise<RepoSettings> {
  let p = settingsCache.get(repo.gitDir);
  if (!p) {
    p = (async () => {
      const [cfg, info] = await Promise.all([
        run(repo, ['config', '-z', '--get-regexp', '^core\\.(filemode|autocrlf|attributesfile)$'], { okExitCodes: [1] }),
        run(repo, ['rev-parse', '--git-path', 'info/attributes']),
      ]);
      const values = new Map<string, string>();
      for (const rec of splitNul(cfg.stdout)) {
        const s = rec.toString('utf8');
        const nl = s.indexOf('\n');
        values.set((nl < 0 ? s : s.slice(0, nl)).toLowerCase(), nl < 0 ? 'true' : s.slice(nl + 1));
      }
      const xdg = process.env.XDG_CONFIG_HOME || nodePath.join(os.homedir(), '.config');
      const globalAttrs = values.get('core.attributesfile')?.replace(/^~(?=\/)/, os.homedir()) ?? nodePath.join(xdg, 'git', 'attributes');
      const crlf = (values.get('core.autocrlf') ?? 'false').toLowerCase();
      return {
        fileMode: !['false', 'no', 'off', '0'].includes((values.get('core.filemode') ?? 'true').toLowerCase()),
        autocrlf: crlf !== 'false' && crlf !== 'no' && crlf !== 'off' && crlf !== '0',
        attributeFiles: [nodePath.resolve(repo.root, info.stdout.toString('utf8').trim()), nodePath.resolve(repo.root, globalAttrs)],
      };
    })();
    settingsCache.set(repo.gitDir, p);
    p.catch(() => settingsCache.delete(repo.gitDir));
  }
  return p;
}

/** Whether git would store every file's bytes unchanged (no attributes, no autocrlf). */
function noConversion(warm: Pick<WarmState, 'attributes'>, settings: RepoSettings, candidates: Candidate[]): boolean {
  if (warm.attributes || settings.autocrlf || candidates.some((c) => isAttributesPath(c.raw))) return false;
  return !settings.attributeFiles.some((f) => fs.existsSync(f));
}

/** The tree changes W→new, blobs written or to be sent inline, and W's entries of the changed paths. */
export interface ChangedObjects {
  changes: TreeChange[];
  /** W's entry of every path looked at (by `relKey`; null: not in W). */
  before: Map<string, Candidate['before']>;
}

/** Turns candidates into tree changes (reading or hashing files); drops those that match W. */
export async function writeChangedObjects(repo: RepoInfo, warm: Pick<WarmState, 'tree' | 'attributes'>, candidates: Candidate[], maxBytes: number): Promise<ChangedObjects> {
  const settings = await repoSettings(repo);
  const hexLength = warm.tree.length;
  const changes: TreeChange[] = [];
  const before = new Map<string, Candidate['before']>();
  const files: Array<{ c: Candidate; mode: '100644' | '100755'; size: number }> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    for (const b of c.below ?? []) {
      if (seen.has(relKey(b.raw))) continue;
      seen.add(relKey(b.raw));
      before.set(relKey(b.raw), { mode: b.mode, sha: b.sha });
      changes.push({ kind: 'delete', raw: b.raw });
    }
    const key = relKey(c.raw);
    if (seen.has(key) || c.ignored) continue;
    seen.add(key);
    before.set(key, c.before);
    const st = lstatOrNull(absBytes(repo.root, c.raw));
    if (!st || st.isDirectory()) {
      if (c.before) changes.push({ kind: 'delete', raw: c.raw });
    } else if (st.isSymbolicLink()) {
      const target = fs.readlinkSync(absBytes(repo.root, c.raw), { encoding: 'buffer' });
      changes.push({ kind: 'symlink', raw: c.raw, target, sha: blobId(target, hexLength) });
    } else if (st.isFile()) {
      // Over the cap and in W: tracked by the user (captured whatever its size) or an untracked
      // file that grew (to be left out). Only the real index can tell: the full snapshot decides.
      if (c.before && st.size > maxBytes) throw new FallBack('a file in the warm index is now over the size cap');
      const exec = settings.fileMode ? (st.mode & 0o100) !== 0 : c.before?.mode === '100755';
      files.push({ c, mode: exec ? '100755' : '100644', size: st.size });
    } else {
      throw new FallBack('a special file (fifo, socket or device)');
    }
  }
  if (files.length) {
    const total = files.reduce((n, f) => n + f.size, 0);
    if (total <= INLINE_TOTAL_MAX_BYTES && files.every((f) => f.size <= INLINE_MAX_BYTES) && noConversion(warm, settings, candidates)) {
      const contents = files.map((f) => fs.readFileSync(absBytes(repo.root, f.c.raw)));
      files.forEach((f, i) => changes.push({ kind: 'file', raw: f.c.raw, mode: f.mode, sha: blobId(contents[i]!, hexLength), content: contents[i]! }));
    } else {
      const shas = await startHasher(repo).hash(files.map((f) => f.c.raw));
      files.forEach((f, i) => changes.push({ kind: 'file', raw: f.c.raw, mode: f.mode, sha: shas[i]! }));
    }
  }
  // Entries that ended up equal to W (same mode and content) are not changes.
  const effective = changes.filter((ch) => {
    const b = before.get(relKey(ch.raw));
    if (ch.kind === 'delete') return b !== null;
    return !(b && b.mode === changeMode(ch) && b.sha === (ch as { sha: string }).sha);
  });
  return { changes: effective, before };
}

/** Turns paths into NUL-terminated pathspecs with the given magic, e.g. `exclude,literal`. */
export function pathspecInput(paths: Buffer[], magic: string): Buffer {
  const parts: Buffer[] = [];
  for (const p of paths) parts.push(Buffer.from(`:(${magic})`, 'utf8'), p, Buffer.from([0]));
  return Buffer.concat(parts);
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

/**
 * Full snapshot: adds what the walk found to the temporary index `index` (every entry of it then
 * describes the working tree). `freshIndex`: the index will drive a working-tree update
 * (restore's `read-tree -m -u`), which needs fresh stat data in every entry, so the full `add -A`
 * runs instead of the one limited to changed paths. Unreadable files are reported in `warnings`.
 */
export async function addWalked(repo: RepoInfo, index: string, walk: Pick<Walk, 'paths' | 'exclude' | 'stage'>, freshIndex: boolean, warnings: string[]): Promise<void> {
  if (freshIndex) await addAll(repo, index, { exclude: walk.exclude }, warnings);
  else await addChanged(repo, index, walk.paths, walk.exclude, warnings);
  if (walk.exclude.length) await dropEntriesBelow(repo, index, walk.stage, walk.exclude);
}

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
