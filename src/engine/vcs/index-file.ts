/**
 * Reading entries of a git index file directly (no process), for the few paths a reported-mode
 * capture needs (`checkpoint-delta.ts`). Only what Vox writes itself is read: the warm index,
 * versions 2–4, stage 0. Anything else — another signature, a sparse directory entry, an
 * unmerged or skip-worktree entry, a truncated file — is `null`, and the caller asks git instead.
 *
 * Format (gitformat-index): "DIRC", version, entry count; per entry 40 bytes of stat data and
 * mode, the object id (20 or 32 bytes), 16 bits of flags (assume-valid, extended, stage, name
 * length), 16 more bits when extended (v3+), then the path: NUL-terminated and padded to a
 * multiple of 8 bytes (v2/v3), or prefix-compressed against the previous path (v4: a varint of
 * bytes to drop, then the NUL-terminated rest, no padding).
 */
import * as fsp from 'node:fs/promises';

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
export async function readIndexEntries(file: string, paths: Buffer[], hexLength: number): Promise<Map<string, IndexEntry> | null> {
  const buf = await fsp.readFile(file).catch(() => null);
  if (!buf || buf.length < 12 || buf.readUInt32BE(0) !== SIGNATURE) return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const idBytes = hexLength / 2;
  // Entries are matched on raw bytes; strings are made only for the few that match. A path
  // matches a wanted one when it equals it or continues it with '/'.
  const firstBytes = new Uint8Array(256);
  for (const p of paths) if (p.length) firstBytes[p[0]!] = 1;
  const matches = (pathBuf: Buffer, start: number, end: number): boolean => {
    if (end <= start || !firstBytes[pathBuf[start]!]) return false;
    const len = end - start;
    for (const w of paths) {
      if (len < w.length || (len > w.length && pathBuf[start + w.length] !== 0x2f)) continue;
      if (pathBuf.compare(w, 0, w.length, start, start + w.length) === 0) return true;
    }
    return false;
  };
  const out = new Map<string, IndexEntry>();
  let at = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + STAT_BYTES + idBytes + 2 > buf.length) return null;
    const mode = buf.readUInt32BE(at + 24);
    const idAt = at + STAT_BYTES;
    const flags: number = buf.readUInt16BE(at + STAT_BYTES + idBytes);
    at += STAT_BYTES + idBytes + 2;
    if (flags & FLAG_EXTENDED) {
      if (version < 3 || at + 2 > buf.length) return null;
      if (buf.readUInt16BE(at) & EXT_SKIP_WORKTREE) return null;
      at += 2;
    }
    if (flags & STAGE_MASK || (mode & 0o170000) === MODE_DIRECTORY) return null;
    let pathBuf: Buffer;
    let pStart: number;
    let pEnd: number;
    if (version === 4) {
      let drop = 0;
      let b: number;
      // Git's offset varint: each continuation adds one before shifting.
      do {
        if (at >= buf.length) return null;
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
      const short: number = flags & NAME_MASK;
      const nul = short < NAME_MASK ? at + short : buf.indexOf(0, at);
      if (nul < 0 || nul >= buf.length || buf[nul] !== 0) return null;
      pathBuf = buf;
      pStart = at;
      pEnd = nul;
      // Entry length is a multiple of 8, with at least one NUL after the path.
      at = start + Math.ceil((nul + 1 - start) / 8) * 8;
    }
    if (matches(pathBuf, pStart, pEnd)) out.set(pathBuf.toString('latin1', pStart, pEnd), { mode: mode.toString(8).padStart(6, '0'), sha: buf.toString('hex', idAt, idAt + idBytes) });
  }
  return out;
}
