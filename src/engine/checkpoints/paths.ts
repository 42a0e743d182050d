/**
 * Paths inside a repository as exact bytes (SPEC §4.2), shared by capture, restore and diff:
 * map keys, nested repositories' paths joined with their own, "below", absolute paths, git's C
 * quoting, and the synchronous lstat the capture uses. Imports nothing from `capture/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoPath, type RepoPath } from './types';

/** Base name of the files that can make git convert content on the way in. */
export const ATTRIBUTES_FILE = '.gitattributes';

/** Map key of a path (hex: any byte sequence, compared exactly). */
export function relKey(rel: Buffer): string {
  return rel.toString('hex');
}

/** Prefixes a nested path with its repository's path (`sub` + `a/b` → `sub/a/b`). */
export function joinRel(prefix: RepoPath | null, p: RepoPath): RepoPath {
  if (!prefix) return p;
  return repoPath(Buffer.concat([prefix.raw, Buffer.from('/'), p.raw]));
}

/** Whether `p` is strictly below the directory `prefix`. */
export function under(prefix: Buffer, p: Buffer): boolean {
  return p.length > prefix.length && p[prefix.length] === 0x2f && p.subarray(0, prefix.length).equals(prefix);
}

/** Absolute path of `rel` under `root`, as bytes (works for any file name). */
export function absBytes(root: string, rel: Buffer): Buffer {
  return Buffer.concat([Buffer.from(root.endsWith(path.sep) ? root : root + path.sep, 'utf8'), rel]);
}

/** Whether `p` names a `.gitattributes` file. */
export function isAttributesPath(p: Buffer): boolean {
  const s = p.toString('latin1');
  return s === ATTRIBUTES_FILE || s.endsWith(`/${ATTRIBUTES_FILE}`);
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

/**
 * lstat, or null when the path is not there. Synchronous on purpose: file metadata and the
 * (bounded) contents of changed files are a few page-cached syscalls of microseconds each,
 * where a chain of promise round trips through the thread pool costs milliseconds apiece.
 */
export function lstatOrNull(p: Buffer | string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}
