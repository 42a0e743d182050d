/**
 * Writing a checkpoint's files into a working tree (SPEC §4.2; `restore.ts` decides what): the
 * blobs' raw bytes, never git's checkout, so no smudge filter, eol conversion, `ident` expansion
 * or working-tree encoding touches them and no checkout hook runs.
 *
 *   readBlobs     one `cat-file --batch-check` for the sizes: a missing object fails here, before
 *                 anything is written. The contents are read as they are written, by one
 *                 `cat-file --batch` per batch of at most RESTORE_BATCH_MAX_BYTES; a blob over
 *                 RESTORE_INLINE_MAX_BYTES is not read into memory but unpacked to a temporary
 *                 file in the git dir by `unpack-file`.
 *   applyChanges  makes each changed path what the target says: removals first (deepest first;
 *                 directories they leave empty are removed, as git does), then writes (parents
 *                 first): regular files with their executable bit (created with 0666/0777 and the
 *                 umask, as git does), symlinks (a plain file holding the target when
 *                 `core.symlinks` is off), gitlinks as empty directories. A path is always
 *                 unlinked before it is created (O_EXCL), and every parent directory is checked
 *                 with lstat, so nothing is ever written through a symlink or outside the tree.
 *                 Paths with an empty, `.`, `..` or `.git` component are refused.
 * Applying the reverse of a change list puts the paths back (the restore's rollback).
 * `restoreFaults` lets tests make a write fail half-way.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as nodePath from 'node:path';
import { run, type RepoInfo } from './repo';
import { absBytes } from './paths';
import type { RawDiffEntry } from './diff';
import { GITLINK_MODE } from './nested-repos';
import { CheckpointError } from './types';

/** Largest blob read into memory by a restore; bigger ones are unpacked to a file by git. */
export const RESTORE_INLINE_MAX_BYTES = 8 * 1024 * 1024;
/** Most blob bytes one `cat-file --batch` returns. */
export const RESTORE_BATCH_MAX_BYTES = 64 * 1024 * 1024;
/** Chunk size when copying an unpacked big blob into place. */
const COPY_CHUNK_BYTES = 1024 * 1024;
/** Mode of a symlink entry. */
const SYMLINK_MODE = '120000';

/** Test seam: called before each path is written; a throw simulates a write failing half-way. */
export const restoreFaults: { beforeWrite: ((rel: Buffer) => void) | null } = { beforeWrite: null };

export interface EntryState {
  mode: string;
  sha: string;
}

/** One path and what it is before and after (null: absent). */
export interface PathChange {
  raw: Buffer;
  from: EntryState | null;
  to: EntryState | null;
}

const present = (mode: string, sha: string): EntryState | null => (/^0+$/.test(mode) ? null : { mode, sha });

/** The change list of a raw diff (what each path is before and after). */
export const changesOf = (entries: RawDiffEntry[]): PathChange[] => entries.map((e) => ({ raw: e.raw, from: present(e.srcMode, e.srcSha), to: present(e.dstMode, e.dstSha) }));

/** The blobs a change list needs: their sizes (checked to exist) and, batch by batch, contents. */
export interface Blobs {
  sizes: Map<string, number>;
  /** Contents of the blobs read so far (the current batch), by id. */
  small: Map<string, Buffer>;
}

/**
 * The blobs the `to` sides of `changes` need: one `cat-file --batch-check`, so a missing object
 * fails here, before anything is written; their contents are read batch by batch as they are
 * written (`fetchBatch`), so at most RESTORE_BATCH_MAX_BYTES are in memory at once.
 */
export async function readBlobs(repo: RepoInfo, changes: PathChange[]): Promise<Blobs> {
  const wanted = [...new Set(changes.flatMap((c) => (c.to && c.to.mode !== GITLINK_MODE ? [c.to.sha] : [])))];
  const blobs: Blobs = { sizes: new Map(), small: new Map() };
  if (!wanted.length) return blobs;
  const check = await run(repo, ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { input: `${wanted.join('\n')}\n` });
  for (const line of check.stdout.toString('latin1').split('\n').filter(Boolean)) {
    const [sha = '', type, size] = line.split(' ');
    if (type !== 'blob') throw new CheckpointError('gitFailed', `object ${sha} is missing from ${repo.root} (nothing was changed)`);
    blobs.sizes.set(sha, Number(size));
  }
  return blobs;
}

/**
 * Makes `blobs.small` hold the contents of `shas` (small blobs, at most RESTORE_BATCH_MAX_BYTES in
 * all) and nothing else, reading those it does not hold yet.
 */
async function fetchBatch(repo: RepoInfo, blobs: Blobs, wanted: string[]): Promise<void> {
  const keep = new Set(wanted);
  for (const sha of [...blobs.small.keys()]) if (!keep.has(sha)) blobs.small.delete(sha);
  const shas = wanted.filter((sha) => !blobs.small.has(sha));
  if (!shas.length) return;
  const out = (await run(repo, ['cat-file', '--batch'], { input: `${shas.join('\n')}\n` })).stdout;
  // `<sha> blob <size>\n<content>\n` per object.
  let at = 0;
  for (const sha of shas) {
    const nl = out.indexOf(0x0a, at);
    const [got = '', type, sizeText] = out.subarray(at, nl).toString('latin1').split(' ');
    if (got !== sha || type !== 'blob') throw new CheckpointError('gitFailed', `object ${sha} could not be read from ${repo.root}`);
    const size = Number(sizeText);
    blobs.small.set(sha, out.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
  }
}

/** The writes of a change list in the order they are made (parents first). */
function writesOf(changes: PathChange[]): PathChange[] {
  return changes.filter((x) => x.to).sort((a, b) => Buffer.compare(a.raw, b.raw));
}

/** The small blobs a batch of writes reads into memory. */
function smallOf(batch: PathChange[], blobs: Blobs): string[] {
  return [...new Set(batch.flatMap((c) => (c.to!.mode !== GITLINK_MODE && (blobs.sizes.get(c.to!.sha) ?? 0) <= RESTORE_INLINE_MAX_BYTES ? [c.to!.sha] : [])))];
}

/** Reads the first batch of `changes`' blobs ahead of time (the restore does it while its restore point is written). */
export async function prefetchBlobs(repo: RepoInfo, changes: PathChange[], blobs: Blobs): Promise<void> {
  await fetchBatch(repo, blobs, smallOf(batchesOf(writesOf(changes), blobs)[0]!, blobs));
}

/** Splits writes into runs whose small blobs add up to at most RESTORE_BATCH_MAX_BYTES. */
function batchesOf(writes: PathChange[], blobs: Blobs): PathChange[][] {
  const out: PathChange[][] = [[]];
  let bytes = 0;
  for (const w of writes) {
    const size = w.to!.mode === GITLINK_MODE ? 0 : (blobs.sizes.get(w.to!.sha) ?? 0);
    const inline = size <= RESTORE_INLINE_MAX_BYTES ? size : 0;
    if (bytes + inline > RESTORE_BATCH_MAX_BYTES && out.at(-1)!.length) {
      out.push([]);
      bytes = 0;
    }
    out.at(-1)!.push(w);
    bytes += inline;
  }
  return out;
}

/** Throws unless every component of `rel` is a plain name (see the header). */
function checkPath(rel: Buffer): void {
  for (const seg of rel.toString('latin1').split('/')) {
    if (seg === '' || seg === '.' || seg === '..' || seg.toLowerCase() === '.git') throw new CheckpointError('conflict', `refusing to write ${JSON.stringify(rel.toString('utf8'))}: not a plain path inside the tree`);
  }
}

function lstatOrNull(p: Buffer): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** Removes a directory that holds nothing but (empty) directories; a conflict otherwise. */
function removeEmptyTree(dir: Buffer, rel: Buffer): void {
  for (const name of fs.readdirSync(dir, { encoding: 'buffer' })) {
    const child = Buffer.concat([dir, Buffer.from('/'), name]);
    if (!lstatOrNull(child)?.isDirectory()) throw new CheckpointError('conflict', `${rel.toString('utf8')} is a directory that still holds files`);
    removeEmptyTree(child, rel);
  }
  fs.rmdirSync(dir);
}

/** Removes the directory `p` if it is empty (a populated one, or one that is gone, stays as it is). */
function removeIfEmpty(p: Buffer): void {
  try {
    fs.rmdirSync(p);
  } catch {
    // Not empty, or not there.
  }
}

/** Makes every ancestor of `rel` a real directory (never following a symlink). */
function ensureParents(root: string, rel: Buffer): void {
  for (let i = rel.indexOf(0x2f); i >= 0; i = rel.indexOf(0x2f, i + 1)) {
    const dir = absBytes(root, rel.subarray(0, i));
    const st = lstatOrNull(dir);
    if (!st) fs.mkdirSync(dir);
    else if (!st.isDirectory()) throw new CheckpointError('conflict', `${rel.subarray(0, i).toString('utf8')} is not a directory`);
  }
}

/** Copies an unpacked big blob into a newly created file. */
async function copyInto(tmp: string, dest: Buffer, mode: number): Promise<void> {
  const out = await fsp.open(dest, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    const src = await fsp.open(tmp, 'r');
    try {
      const buf = Buffer.alloc(COPY_CHUNK_BYTES);
      for (;;) {
        const { bytesRead } = await src.read(buf, 0, buf.length, null);
        if (!bytesRead) break;
        await out.write(buf, 0, bytesRead);
      }
    } finally {
      await src.close();
    }
  } finally {
    await out.close();
  }
}

/** Writes one blob at `p` (nothing stands there now). */
async function writeBlob(repo: RepoInfo, p: Buffer, to: EntryState, blobs: Blobs, symlinks: boolean): Promise<void> {
  const isLink = to.mode === SYMLINK_MODE;
  if (isLink && symlinks) {
    fs.symlinkSync(blobs.small.get(to.sha)!, p);
    return;
  }
  const mode = to.mode === '100755' ? 0o777 : 0o666;
  if ((blobs.sizes.get(to.sha) ?? 0) > RESTORE_INLINE_MAX_BYTES) {
    // `unpack-file` writes the raw blob (no filters) to a temporary file in its working
    // directory: run it in the git dir, so nothing ever appears in the working tree.
    const name = (await run({ ...repo, root: repo.gitDir }, ['unpack-file', to.sha])).stdout.toString('utf8').trim();
    const tmp = nodePath.join(repo.gitDir, name);
    try {
      await copyInto(tmp, p, mode);
    } finally {
      await fsp.rm(tmp, { force: true });
    }
    return;
  }
  const fd = fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    const data = blobs.small.get(to.sha)!;
    for (let off = 0; off < data.length; ) off += fs.writeSync(fd, data, off, data.length - off);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes every path of `changes` what its `to` says (see the header). */
export async function applyChanges(repo: RepoInfo, changes: PathChange[], blobs: Blobs, opts: { symlinks: boolean }): Promise<void> {
  for (const c of changes) checkPath(c.raw);
  const root = repo.root;
  // 1. Removals, deepest first; then the directories they emptied.
  const emptied = new Map<string, Buffer>();
  const realDirs = new Map<string, boolean>();
  const underRealDirs = (rel: Buffer): boolean => {
    for (let i = rel.indexOf(0x2f); i >= 0; i = rel.indexOf(0x2f, i + 1)) {
      const key = rel.subarray(0, i).toString('hex');
      if (!realDirs.has(key)) realDirs.set(key, lstatOrNull(absBytes(root, rel.subarray(0, i)))?.isDirectory() ?? false);
      if (!realDirs.get(key)) return false;
    }
    return true;
  };
  for (const c of changes.filter((x) => !x.to).sort((a, b) => Buffer.compare(b.raw, a.raw))) {
    // Below something that is not a real directory, the path is not there (never unlink through a symlink).
    if (!underRealDirs(c.raw)) continue;
    const p = absBytes(root, c.raw);
    const st = lstatOrNull(p);
    if (st && !st.isDirectory()) fs.unlinkSync(p);
    else if (st && c.from?.mode === GITLINK_MODE) removeIfEmpty(p);
    for (let i = c.raw.lastIndexOf(0x2f); i > 0; i = c.raw.lastIndexOf(0x2f, i - 1)) emptied.set(c.raw.subarray(0, i).toString('hex'), c.raw.subarray(0, i));
  }
  for (const dir of [...emptied.values()].sort((a, b) => Buffer.compare(b, a))) removeIfEmpty(absBytes(root, dir));
  // 2. Writes, parents first, a batch of blobs at a time.
  for (const batch of batchesOf(writesOf(changes), blobs)) {
    await fetchBatch(repo, blobs, smallOf(batch, blobs));
    for (const c of batch) await writeOne(repo, c, blobs, opts.symlinks);
  }
  blobs.small.clear();
}

/** Writes one changed path (its parents are made real directories; whatever stands there goes). */
async function writeOne(repo: RepoInfo, c: PathChange, blobs: Blobs, symlinks: boolean): Promise<void> {
  restoreFaults.beforeWrite?.(c.raw);
  ensureParents(repo.root, c.raw);
  const p = absBytes(repo.root, c.raw);
  const st = lstatOrNull(p);
  if (c.to!.mode === GITLINK_MODE) {
    // A nested repository the outer tree records but that is not here: its (empty) directory.
    if (!st) fs.mkdirSync(p);
    return;
  }
  if (st?.isDirectory()) removeEmptyTree(p, c.raw);
  else if (st) fs.unlinkSync(p);
  await writeBlob(repo, p, c.to!, blobs, symlinks);
}
