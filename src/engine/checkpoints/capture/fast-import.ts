/**
 * Writing a checkpoint from a known list of changes, without a full-index write-tree (SPEC §4.2).
 *
 * The incremental capture (`capture/delta.ts`) knows exactly which paths differ from the warm
 * tree W. One `fast-import` process (started early, fed when the list is ready) starts from the
 * previous tree (`from <parent>`, or `M 040000 <W> ""` to replace the root), applies the changes,
 * writes the blobs, the new trees, the commit (parent, identity, date, message) and the ref, and
 * prints the commit and root tree ids (`get-mark`, `ls`) — one process instead of `write-tree`
 * (which rewrites the whole index) + `commit-tree` + `update-ref`. File contents travel inline,
 * their ids computed here; when git might convert content (attributes, autocrlf), a
 * `hash-object -w --stdin-paths` (`startHasher`) stores them as `git add` would and fast-import
 * gets the ids. `applyToIndex` writes the same entries into an index (`update-index -z
 * --index-info`, no stat data, so the next status re-hashes those files once).
 *
 * Every path is passed C-quoted (fast-import and `--stdin-paths` both unquote), so names with
 * newlines, quotes, backslashes or non-UTF-8 bytes work. The objects go into one small pack
 * (`fastimport.unpackLimit=0`: no `unpack-objects` child, no loose file per object), which
 * `packs.ts` consolidates. A fast-import that fails leaves its crash report in the git
 * dir; it is removed here.
 */
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { GitResult } from '../../git/git';
import { run, type RepoInfo } from '../repo';
import { GITLINK_MODE } from '../nested-repos';
import { CHECKPOINT_IDENTITY, CheckpointError } from '../types';

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

/** C-style quoted form of a path (git's `unquote_c_style` reads it back byte for byte). */
export function cQuote(raw: Buffer): Buffer {
  const out: number[] = [0x22];
  for (const b of raw) {
    if (b === 0x22 || b === 0x5c) out.push(0x5c, b);
    else if (b < 0x20 || b === 0x7f) {
      const oct = b.toString(8).padStart(3, '0');
      out.push(0x5c, oct.charCodeAt(0), oct.charCodeAt(1), oct.charCodeAt(2));
    } else out.push(b);
  }
  out.push(0x22);
  return Buffer.from(out);
}

/** Git's object id of a blob with `content`, for the repository's hash (by id length). */
export function blobId(content: Buffer, hexLength: number): string {
  const algo = hexLength === 64 ? 'sha256' : 'sha1';
  return createHash(algo).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** A promise with its resolve function exposed (inputs of processes started before they are known). */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Zlib level for the blobs a capture writes (fast; `gc` recompresses when it packs them). */
const BLOB_COMPRESSION_LEVEL = '1';

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

export interface FastImportCommit {
  ref: string;
  changes: TreeChange[];
  message: string;
  timeMs: number;
  /** First parent (and, unless `baseTree` is given, the tree the changes apply to). */
  parent: string | null;
  /** Tree the changes apply to, when it is not the parent's (`empty`: none). */
  baseTree: string | 'empty' | null;
}

/** Deletions first: a file may replace a directory (or the reverse) in one change list. */
function ordered(changes: TreeChange[]): TreeChange[] {
  return [...changes.filter((c) => c.kind === 'delete'), ...changes.filter((c) => c.kind !== 'delete')];
}

function streamFor(c: FastImportCommit): Buffer {
  const secs = Math.floor(c.timeMs / 1000);
  const who = `${CHECKPOINT_IDENTITY.name} <${CHECKPOINT_IDENTITY.email}> ${secs} +0000`;
  const msg = Buffer.from(c.message, 'utf8');
  const parts: Buffer[] = [Buffer.from(`feature done\ncommit ${c.ref}\nmark :1\nauthor ${who}\ncommitter ${who}\ndata ${msg.length}\n`, 'utf8'), msg, Buffer.from('\n')];
  if (c.parent) parts.push(Buffer.from(`from ${c.parent}\n`));
  if (c.baseTree === 'empty') parts.push(Buffer.from('deleteall\n'));
  else if (c.baseTree) parts.push(Buffer.from(`M 040000 ${c.baseTree} ""\n`));
  for (const ch of ordered(c.changes)) {
    const q = cQuote(ch.raw);
    if (ch.kind === 'delete') parts.push(Buffer.from('D '), q, Buffer.from('\n'));
    else if (ch.kind === 'symlink') parts.push(Buffer.from('M 120000 inline '), q, Buffer.from(`\ndata ${ch.target.length}\n`), ch.target, Buffer.from('\n'));
    else if (ch.kind === 'file' && ch.content) parts.push(Buffer.from(`M ${ch.mode} inline `), q, Buffer.from(`\ndata ${ch.content.length}\n`), ch.content, Buffer.from('\n'));
    else parts.push(Buffer.from(`M ${changeMode(ch)} ${ch.sha} `), q, Buffer.from('\n'));
  }
  parts.push(Buffer.from('\nget-mark :1\nls :1 ""\ndone\n'));
  return Buffer.concat(parts);
}

/**
 * Starts fast-import now (it reads the repository meanwhile) for one commit described later:
 * `spec` resolves with the commit, or with null to end the stream having written nothing (then
 * the result is null). Returns the commit and root tree ids.
 */
export async function fastImportCommit(repo: RepoInfo, spec: Promise<FastImportCommit | null>, force: boolean): Promise<{ commit: string; tree: string } | null> {
  let wanted = false;
  const input = spec.then((c) => {
    wanted = c !== null;
    return c ? streamFor(c) : Buffer.from('done\n');
  });
  const args = ['fast-import', '--quiet', '--done'];
  if (force) args.push('--force');
  const startedMs = Date.now();
  let r: GitResult;
  try {
    [r] = await Promise.all([run(repo, args, { input, abortInput: 'done\n', config: { 'fastimport.unpackLimit': '0', 'pack.compression': BLOB_COMPRESSION_LEVEL, 'core.fsmonitor': 'false' } }), input]);
  } catch (err) {
    await removeCrashReports(repo, startedMs);
    throw err;
  }
  if (!wanted) return null;
  const lines = r.stdout.toString('latin1').split('\n');
  const commit = lines[0]?.trim() ?? '';
  const tree = /^040000 tree ([0-9a-f]{40,64})\t/.exec(lines[1] ?? '')?.[1] ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(commit) || !tree) throw new CheckpointError('gitFailed', `fast-import did not report the new commit and tree: ${r.stdout.toString('utf8').slice(0, 200)}`);
  return { commit, tree };
}

/** Name prefix of the report fast-import leaves in the git dir when it dies. */
const CRASH_REPORT_PREFIX = 'fast_import_crash_';
/** Slack on "written since the run started" for file systems with coarse mtimes (ms). */
const CRASH_REPORT_MTIME_SLACK_MS = 1000;

/** Removes crash reports fast-import wrote since `sinceMs` (ours; the user's repository stays clean). */
async function removeCrashReports(repo: RepoInfo, sinceMs: number): Promise<void> {
  const names = await fsp.readdir(repo.gitDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(CRASH_REPORT_PREFIX)) continue;
    const file = path.join(repo.gitDir, name);
    const st = await fsp.stat(file).catch(() => null);
    if (st && st.mtimeMs >= sinceMs - CRASH_REPORT_MTIME_SLACK_MS) await fsp.rm(file, { force: true });
  }
}

/** Applies `changes` to a (temporary) index without touching the working tree. */
export async function applyToIndex(repo: RepoInfo, index: string, changes: Promise<TreeChange[] | null>, zeroId: string): Promise<void> {
  const input = changes.then((list) => {
    const parts: Buffer[] = [];
    for (const c of ordered(list ?? [])) {
      const mode = changeMode(c);
      const head = mode === null ? `0 ${zeroId}\t` : `${mode} ${(c as { sha: string }).sha}\t`;
      parts.push(Buffer.from(head), c.raw, Buffer.from([0]));
    }
    return Buffer.concat(parts);
  });
  await Promise.all([run(repo, ['update-index', '-z', '--index-info'], { index, input }), input]);
}
