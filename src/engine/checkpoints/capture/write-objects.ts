/**
 * Capture stage 2, write the objects: the blobs of what changed (SPEC §4.2).
 * Every blob is a file's raw bytes, whatever git's conversions say (`conversion.ts`).
 *   - Incremental (`writeChangedObjects`): the change list becomes tree changes. Files are read
 *     here and travel inline to fast-import (`commit.ts`), their ids computed here; big ones go
 *     through one `hash-object -w --no-filters --stdin-paths` (`startHasher`) and only their ids
 *     go on. Entries that end up equal to W are dropped; a changed `.gitattributes` falls back.
 *   - Full snapshot (`addWalked`): `add -A --ignore-errors` on the temporary index (an unreadable
 *     file is a warning, not a failed checkpoint; git runs with `core.autocrlf=false`), limited
 *     to the paths the walk found (`addChanged`; no second walk) or the full `add -A` with
 *     `:(exclude,literal)` pathspecs. Pathspecs are fed NUL-separated on stdin
 *     (`--pathspec-from-file`), so any file name works, including newlines and non-UTF-8 bytes.
 *     Index entries left below an excluded path are removed from the temporary index. Files an
 *     attribute converts, and (when the user's `core.autocrlf` is on) every other file the real
 *     index holds, are hashed raw instead (`addRaw`).
 *
 * Anything unusual in an incremental capture throws `FallBack` (the full snapshot then decides).
 */
import { createHash } from 'node:crypto';
import { quote } from '../../../protocol/wire/quote';
import * as fs from 'node:fs';
import { splitNul } from '../../git/git';
import { run, type RepoInfo } from '../repo';
import { absBytes, cQuote, isAttributesPath, lstatOrNull, relKey } from '../paths';
import { deferred } from '../concurrency';
import { GITLINK_MODE } from '../nested-repos';
import { BLOB_COMPRESSION_LEVEL, hashRaw, markAssumeValid, repoSettings, statSignature, type ConversionEntry } from '../conversion';
import type { WarmState } from '../warm-state';
import { CheckpointError } from '../types';
import { FallBack, type Candidate, type Walk } from './find-changes';

export { BLOB_COMPRESSION_LEVEL } from '../conversion';

/** Largest file stored inline (read into memory here); bigger ones go through `hash-object`. */
export const INLINE_MAX_BYTES = 8 * 1024 * 1024;
/** Most bytes one capture reads inline (beyond this, `hash-object` reads the files itself). */
export const INLINE_TOTAL_MAX_BYTES = 64 * 1024 * 1024;
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
 * A `hash-object -w --no-filters --stdin-paths` process started now, fed later: `hash(paths)`
 * once, or `cancel()` (it then exits having written nothing). Returns raw-byte blob ids in the
 * order of `paths`.
 */
export function startHasher(repo: RepoInfo): { hash(paths: Buffer[]): Promise<string[]>; cancel(): void } {
  const input = deferred<Buffer>();
  const proc = run(repo, ['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: input.promise, config: { 'core.looseCompression': BLOB_COMPRESSION_LEVEL } });
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

/** The tree changes W→new, blobs written or to be sent inline, and W's entries of the changed paths. */
export interface ChangedObjects {
  changes: TreeChange[];
  /** W's entry of every path looked at (by `relKey`; null: not in W). */
  before: Map<string, Candidate['before']>;
  /** The conversion set's new entries for the paths looked at (by `relKey`; null: left it). */
  conv: Map<string, ConversionEntry | null>;
}

/**
 * Turns candidates into tree changes (reading or hashing the raw bytes of files); drops those
 * that match W. Candidates of the conversion set (`convert`) get a new stat signature, taken
 * before their bytes are read.
 */
export async function writeChangedObjects(repo: RepoInfo, warm: Pick<WarmState, 'tree'>, candidates: Candidate[], maxBytes: number, nowMs = Date.now()): Promise<ChangedObjects> {
  const settings = await repoSettings(repo);
  const hexLength = warm.tree.length;
  const changes: TreeChange[] = [];
  const before = new Map<string, Candidate['before']>();
  const conv = new Map<string, ConversionEntry | null>();
  const files: Array<{ c: Candidate; mode: '100644' | '100755'; size: number; sig: string }> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    for (const b of c.below ?? []) {
      if (seen.has(relKey(b.raw))) continue;
      seen.add(relKey(b.raw));
      before.set(relKey(b.raw), { mode: b.mode, sha: b.sha });
      changes.push({ kind: 'delete', raw: b.raw });
      conv.set(relKey(b.raw), null);
    }
    const key = relKey(c.raw);
    if (seen.has(key) || c.ignored) continue;
    seen.add(key);
    before.set(key, c.before);
    const abs = absBytes(repo.root, c.raw);
    const sig = c.convert ? statSignature(abs, nowMs) : '';
    const st = lstatOrNull(abs);
    if (!st || st.isDirectory()) {
      if (c.before) changes.push({ kind: 'delete', raw: c.raw });
    } else if (st.isSymbolicLink()) {
      const target = fs.readlinkSync(abs, { encoding: 'buffer' });
      changes.push({ kind: 'symlink', raw: c.raw, target, sha: blobId(target, hexLength) });
    } else if (st.isFile()) {
      // Over the cap and in W: tracked by the user (captured whatever its size) or an untracked
      // file that grew (to be left out). Only the real index can tell: the full snapshot decides.
      if (c.before && st.size > maxBytes) throw new FallBack('a file in the warm index is now over the size cap');
      const exec = settings.fileMode ? (st.mode & 0o100) !== 0 : c.before?.mode === '100755';
      files.push({ c, mode: exec ? '100755' : '100644', size: st.size, sig });
    } else {
      throw new FallBack('a special file (fifo, socket or device)');
    }
    if (c.convert && !(st?.isFile() ?? false)) conv.set(key, null);
  }
  if (files.length) {
    // Raw bytes either way: ids computed here from the bytes read here, or `hash-object --no-filters`.
    const total = files.reduce((n, f) => n + f.size, 0);
    let shas: string[];
    const contents: Array<Buffer | undefined> = [];
    if (total <= INLINE_TOTAL_MAX_BYTES && files.every((f) => f.size <= INLINE_MAX_BYTES)) {
      for (const f of files) contents.push(fs.readFileSync(absBytes(repo.root, f.c.raw)));
      shas = contents.map((b) => blobId(b!, hexLength));
    } else {
      shas = await startHasher(repo).hash(files.map((f) => f.c.raw));
    }
    files.forEach((f, i) => {
      changes.push({ kind: 'file', raw: f.c.raw, mode: f.mode, sha: shas[i]!, ...(contents[i] ? { content: contents[i] } : {}) });
      if (f.c.convert) conv.set(relKey(f.c.raw), { raw: f.c.raw, mode: f.mode, sha: shas[i]!, sig: f.sig });
    });
  }
  // Entries that ended up equal to W (same mode and content) are not changes.
  const effective = changes.filter((ch) => {
    const b = before.get(relKey(ch.raw));
    if (ch.kind === 'delete') return b !== null;
    return !(b && b.mode === changeMode(ch) && b.sha === (ch as { sha: string }).sha);
  });
  // A changed attributes file changes which files git converts: the full snapshot decides.
  if (effective.some((ch) => isAttributesPath(ch.raw))) throw new FallBack('a .gitattributes file changed');
  return { changes: effective, before, conv };
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
  if (r.exitCode === 1) warnings.push(`some files could not be read and were left out: ${quote(r.stderr.trim(), WARNING_EXCERPT_CHARS)}`);
}

/**
 * Full snapshot: adds what the walk found to the temporary index `index` (every entry of it then
 * describes the working tree): `add -A` of the changed paths except the conversion set, then
 * the raw bytes of the files git may have converted (`addRaw`). Unreadable files are reported in
 * `warnings`. Returns the conversion set's entries.
 */
export async function addWalked(repo: RepoInfo, index: string, walk: Pick<Walk, 'paths' | 'exclude' | 'stage' | 'convert' | 'rehash'>, warnings: string[]): Promise<ConversionEntry[]> {
  const convert = new Set(walk.convert.map((p) => relKey(p)));
  // Git never adds a file of the conversion set (it would store its converted bytes, or fail).
  const paths = convert.size ? walk.paths.filter((p) => !convert.has(relKey(p))) : walk.paths;
  await addChanged(repo, index, paths, walk.exclude, convert.size ? walk.paths.filter((p) => convert.has(relKey(p))) : [], warnings);
  if (walk.exclude.length) await dropEntriesBelow(repo, index, walk.stage, walk.exclude);
  return addRaw(repo, index, walk);
}

/**
 * The raw bytes of `walk.convert` and `walk.rehash` into the index (`hash-object -w
 * --no-filters`, `update-index --index-info`); the conversion set is then marked assume-valid,
 * with the stat signatures taken before its files were read.
 */
async function addRaw(repo: RepoInfo, index: string, walk: Pick<Walk, 'stage' | 'convert' | 'rehash'>): Promise<ConversionEntry[]> {
  const all = [...walk.convert, ...walk.rehash];
  if (!all.length) return [];
  const settings = await repoSettings(repo);
  const nowMs = Date.now();
  const sigs = walk.convert.map((p) => statSignature(absBytes(repo.root, p), nowMs));
  const staged = new Map<string, { mode: string; sha: string }>();
  for (const rec of splitNul(walk.stage)) {
    const tab = rec.indexOf(0x09);
    const [mode = '', sha = ''] = rec.subarray(0, tab).toString('latin1').split(' ');
    staged.set(relKey(rec.subarray(tab + 1)), { mode, sha });
  }
  const shas = await hashRaw(repo, all);
  const lines: Buffer[] = [];
  const conv: ConversionEntry[] = [];
  all.forEach((p, i) => {
    const st = lstatOrNull(absBytes(repo.root, p));
    const old = staged.get(relKey(p));
    const exec = settings.fileMode ? ((st?.mode ?? 0) & 0o100) !== 0 : old?.mode === '100755';
    const mode = exec ? '100755' : '100644';
    const isConv = i < walk.convert.length;
    if (isConv) conv.push({ raw: p, mode, sha: shas[i]!, sig: sigs[i]! });
    // The conversion set is always written (git's add may have refreshed it); the rest only when it differs.
    if (isConv || !old || old.sha !== shas[i] || old.mode !== mode) lines.push(Buffer.from(`${mode} ${shas[i]}\t`), p, Buffer.from([0]));
  });
  if (lines.length) await run(repo, ['update-index', '-z', '--index-info'], { index, input: Buffer.concat(lines) });
  await markAssumeValid(repo, index, walk.convert);
  return conv;
}

/**
 * `add -A` limited to `paths` (every path the walk found changed, deleted or untracked, plus
 * gitlinks, nested candidates and unmerged entries), minus `exclude` (and, in the full add, minus
 * `rawOnly`: changed files of the conversion set, hashed raw afterwards). Every other index entry is
 * stat-clean, where a full `add -A` would change nothing, so the result is the same without the
 * second walk. A path is covered with everything below it, so a tracked directory that became an
 * (untracked) file is handled as `add -A` would. Too many paths, or a pathspec git rejects (a file
 * gone since the walk, a path beyond a new symlink), fall back to the full `add -A`.
 */
async function addChanged(repo: RepoInfo, index: string, all: Buffer[], exclude: Buffer[], rawOnly: Buffer[], warnings: string[]): Promise<void> {
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
  await addAll(repo, index, { exclude: [...exclude, ...rawOnly] }, warnings);
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
