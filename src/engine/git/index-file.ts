/**
 * Reading entries of a git index file directly (no process), for the few paths a reported-mode
 * capture needs (`checkpoints/capture/find-changes.ts`). Only what Vox writes itself is read: the
 * warm index, versions 2–4, stage 0. Anything else — another signature, a sparse directory
 * entry, an unmerged or skip-worktree entry, a truncated file — is `null`, and the caller asks
 * git instead.
 *
 * Format (gitformat-index): "DIRC", version, entry count; per entry 40 bytes of stat data and
 * mode, the object id (20 or 32 bytes), 16 bits of flags (assume-valid, extended, stage, name
 * length), 16 more bits when extended (v3+), then the path: NUL-terminated and padded to a
 * multiple of 8 bytes (v2/v3), or prefix-compressed against the previous path (v4: a varint of
 * bytes to drop, then the NUL-terminated rest, no padding).
 */
import * as fs from 'node:fs';

/** One stage-0 entry. */
export interface IndexEntry {
  mode: string;
  sha: string;
}

const SIGNATURE = 0x44495243; // "DIRC"
const STAT_BYTES = 40;
const FLAG_EXTENDED = 0x4000;
const STAGE_MASK = 0x3000;
const NAME_MASK = 0x0fff;
const EXT_SKIP_WORKTREE = 0x4000;
const MODE_DIRECTORY = 0o040000;

/**
 * Entries of the index at `file` whose path is in `paths` or below one of them (keys: paths as
 * latin1 strings). `hexLength` is the repository's object id length (40 or 64). Null when the
 * file cannot be read here (see the header).
 */
/** Index files whose parsed entries are kept in memory. */
const INDEX_CACHE_MAX = 8;

interface CachedIndex {
  /** Identity of the file the entries were read from (inode, size, mtime). */
  id: string;
  entries: Map<string, IndexEntry>;
  /** Paths in byte order (latin1 strings compare like bytes), for prefix lookups. */
  sorted: string[];
}

const cache = new Map<string, CachedIndex>();

function identity(file: string): string | null {
  try {
    const st = fs.statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * Entries of the index at `file` whose path is in `paths` or below one of them (keys: paths as
 * latin1 strings). `hexLength` is the repository's object id length (40 or 64). Null when the
 * file cannot be read here (see the header). The whole file is parsed once and kept in memory
 * until the file changes (its identity is checked on every call).
 */
export async function readIndexEntries(file: string, paths: Buffer[], hexLength: number): Promise<Map<string, IndexEntry> | null> {
  const id = identity(file);
  if (!id) return null;
  let c = cache.get(file);
  if (!c || c.id !== id) {
    cache.delete(file);
    let buf: Buffer;
    try {
      // Synchronous on purpose: a page-cached index of a few MB reads in milliseconds, where
      // the promise API's chunked reads take several times longer.
      buf = fs.readFileSync(file);
    } catch {
      return null;
    }
    const entries = parseIndexEntries(buf, null, hexLength);
    if (!entries) return null;
    if (cache.size >= INDEX_CACHE_MAX) cache.clear();
    c = { id, entries, sorted: [...entries.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)) };
    cache.set(file, c);
  }
  const out = new Map<string, IndexEntry>();
  for (const p of paths) {
    const key = p.toString('latin1');
    const hit = c.entries.get(key);
    if (hit) out.set(key, hit);
    const prefix = `${key}/`;
    for (let i = lowerBound(c.sorted, prefix); i < c.sorted.length && c.sorted[i]!.startsWith(prefix); i++) out.set(c.sorted[i]!, c.entries.get(c.sorted[i]!)!);
  }
  return out;
}

/**
 * Tells the cache that the index file at `file` was replaced by one with the same entries (a
 * status refresh rewrites stat data and extensions only), if the cache held the file whose
 * identity was `previousId`.
 */
export function indexReplacedSameEntries(file: string, previousId: string | null): void {
  const c = cache.get(file);
  const id = identity(file);
  if (c && previousId && c.id === previousId && id) c.id = id;
}

/** The identity `indexReplacedSameEntries` compares (null when the file is missing). */
export function indexIdentity(file: string): string | null {
  return identity(file);
}

function lowerBound(xs: string[], key: string): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `readIndexEntries` on the bytes of an index file, without a cache; `paths` null: every entry. */
export function parseIndexEntries(buf: Buffer, paths: Buffer[] | null, hexLength: number): Map<string, IndexEntry> | null {
  if (buf.length < 12 || buf.readUInt32BE(0) !== SIGNATURE) return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const idBytes = hexLength / 2;
  const fixed = STAT_BYTES + idBytes;
  // Entries are matched on raw bytes; strings are made only for the few that match. A path
  // matches a wanted one when it equals it or continues it with '/'.
  const firstBytes = new Uint8Array(256);
  if (paths) {
    for (const p of paths) if (p.length) firstBytes[p[0]!] = 1;
  } else {
    firstBytes.fill(1);
  }
  const out = new Map<string, IndexEntry>();
  const len = buf.length;
  let at = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + fixed + 2 > len) return null;
    const flags = (buf[at + fixed]! << 8) | buf[at + fixed + 1]!;
    at += fixed + 2;
    if (flags & FLAG_EXTENDED) {
      if (version < 3 || at + 2 > len) return null;
      if (((buf[at]! << 8) | buf[at + 1]!) & EXT_SKIP_WORKTREE) return null;
      at += 2;
    }
    if (flags & STAGE_MASK) return null;
    let pathBuf: Buffer = buf;
    let pStart = at;
    let pEnd: number;
    if (version === 4) {
      let drop = 0;
      let b: number;
      // Git's offset varint: each continuation adds one before shifting.
      do {
        if (at >= len) return null;
        b = buf[at++]!;
        drop = (drop << 7) | (b & 0x7f);
        if (b & 0x80) drop++;
      } while (b & 0x80);
      const nul = buf.indexOf(0, at);
      if (nul < 0 || drop > prev.length) return null;
      pathBuf = Buffer.concat([prev.subarray(0, prev.length - drop), buf.subarray(at, nul)]);
      prev = pathBuf;
      pStart = 0;
      pEnd = pathBuf.length;
      at = nul + 1;
    } else {
      // The name length is in the flags unless it is 0xFFF or more (then: up to the NUL).
      const short = flags & NAME_MASK;
      pEnd = short < NAME_MASK ? at + short : buf.indexOf(0, at);
      if (pEnd < 0 || pEnd >= len || buf[pEnd] !== 0) return null;
      // Entry length is a multiple of 8, with at least one NUL after the path.
      at = start + (((pEnd + 1 - start + 7) >> 3) << 3);
    }
    if (pEnd > pStart && firstBytes[pathBuf[pStart]!] && (!paths || matches(pathBuf, pStart, pEnd, paths))) {
      const mode = buf.readUInt32BE(start + 24);
      // A sparse directory entry stands for files this reader cannot see.
      if ((mode & 0o170000) === MODE_DIRECTORY) return null;
      out.set(pathBuf.toString('latin1', pStart, pEnd), { mode: mode.toString(8).padStart(6, '0'), sha: buf.toString('hex', start + STAT_BYTES, start + STAT_BYTES + idBytes) });
    }
  }
  return out;
}

function matches(pathBuf: Buffer, start: number, end: number, paths: Buffer[]): boolean {
  const n = end - start;
  for (const w of paths) {
    if (n < w.length || (n > w.length && pathBuf[start + w.length] !== 0x2f)) continue;
    if (pathBuf.compare(w, 0, w.length, start, start + w.length) === 0) return true;
  }
  return false;
}
