/**
 * What changed since the warm tree W, for an incremental capture (`capture/delta.ts`):
 *   - `scanStatus`: one `git status --porcelain=v2 -z -uall` on a copy of the warm index, with
 *     git's untracked cache on (directories whose mtime did not change are not read again) and
 *     optional locks allowed (refreshed stat data and the cache go back into the copy). Gitlinks
 *     are ignored (nested repositories are captured inside themselves);
 *   - `scanReported`: the reported paths looked up in the warm index file directly
 *     (`index-file.ts`, no process) and, for those not in W, one `check-ignore` — no walk.
 * `toChanges` turns the result into tree changes: files are read here and stored by fast-import
 * (`inline`) with their ids computed here when no attribute or `core.autocrlf` can make git
 * convert content (`noConversion`); otherwise `hash-object` stores them, as `git add` would.
 *
 * Anything unusual throws `FallBack` (the full snapshot then decides).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import { splitNul } from '../../git/git';
import { run, type RepoInfo } from '../repo';
import { relKey } from '../diff';
import { GITLINK_MODE, absBytes } from '../nested-repos';
import { blobId, changeMode, startHasher, type TreeChange } from './fast-import';
import { readIndexEntries } from '../../git/index-file';
import type { WarmState } from './warm';
import { repoPath, type SkippedFile } from '../types';

/** Largest file stored inline (read into memory here); bigger ones go through `hash-object`. */
export const INLINE_MAX_BYTES = 8 * 1024 * 1024;
/** Most bytes one capture reads inline (beyond this, `hash-object` reads the files itself). */
export const INLINE_TOTAL_MAX_BYTES = 64 * 1024 * 1024;
/** Base name of the files that can make git convert content on the way in. */
const ATTRIBUTES_FILE = '.gitattributes';

/**
 * File metadata and the (bounded) contents of changed files are read synchronously: a few
 * page-cached syscalls of microseconds each, where a chain of promise round trips through the
 * thread pool costs milliseconds apiece.
 */
export function lstatOrNull(p: Buffer | string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** Thrown to say "take the full snapshot instead". */
export class FallBack extends Error {}

/** A path that may have changed since W, with its entry in W (null: not in W). */
export interface Candidate {
  raw: Buffer;
  before: { mode: string; sha: string } | null;
  /** Entries of W below this path (it was a directory there). */
  below?: Array<{ raw: Buffer; mode: string; sha: string }>;
  /** Ignored and not in W: only the entries below it change (they are deleted). */
  ignored?: boolean;
}

export interface Scan {
  candidates: Candidate[];
  skipped: SkippedFile[];
  /** HEAD's commit as the status saw it (status mode; null: no commit yet). */
  head?: string | null;
}

export function under(prefix: Buffer, p: Buffer): boolean {
  return p.length > prefix.length && p[prefix.length] === 0x2f && p.subarray(0, prefix.length).equals(prefix);
}

export function isAttributesPath(p: Buffer): boolean {
  const s = p.toString('latin1');
  return s === ATTRIBUTES_FILE || s.endsWith(`/${ATTRIBUTES_FILE}`);
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
function noConversion(warm: WarmState, settings: RepoSettings, candidates: Candidate[]): boolean {
  if (warm.attributes || settings.autocrlf || candidates.some((c) => isAttributesPath(c.raw))) return false;
  return !settings.attributeFiles.some((f) => fs.existsSync(f));
}

/** Status mode: what differs between the working tree and W, per `git status` on the copy. */
export async function scanStatus(repo: RepoInfo, index: string, warm: WarmState, maxBytes: number): Promise<Scan> {
  const r = await run(repo, ['status', '--porcelain=v2', '-z', '--branch', '--no-ahead-behind', '--untracked-files=all', '--ignore-submodules=all', '--no-renames', '--ignored=no'], {
    index,
    config: { 'core.untrackedCache': 'true', 'status.showUntrackedFiles': 'all', 'core.fsmonitor': 'false', 'status.renames': 'false' },
    env: { GIT_OPTIONAL_LOCKS: '1' },
  });
  const known = new Set(warm.nested.map((n) => relKey(n.rel.raw)));
  const candidates: Candidate[] = [];
  let untracked: Buffer[] = [];
  let head: string | null = null;
  for (const rec of splitNul(r.stdout)) {
    const kind = rec[0];
    if (kind === 0x23 /* # */) {
      // `# branch.oid <commit> | (initial)`
      const m = /^# branch\.oid ([0-9a-f]{40,64})$/.exec(rec.toString('latin1'));
      if (m) head = m[1]!;
    } else if (kind === 0x31 /* 1 */) {
      // `1 XY sub mH mI mW hH hI path`; only the worktree side (Y) matters here.
      let at = 0;
      for (let i = 0; i < 8; i++) at = rec.indexOf(0x20, at) + 1;
      const f = rec.subarray(0, at - 1).toString('latin1').split(' ');
      if (f[1]?.[1] === '.' || f[4] === GITLINK_MODE) continue;
      candidates.push({ raw: Buffer.from(rec.subarray(at)), before: { mode: f[4]!, sha: f[7]! } });
    } else if (kind === 0x3f /* ? */) {
      const p = Buffer.from(rec.subarray(2));
      if (p[p.length - 1] === 0x2f) {
        // A directory git sees as a repository: fine if it is one we know.
        if (!known.has(relKey(p.subarray(0, p.length - 1)))) throw new FallBack('a new nested repository');
        continue;
      }
      untracked.push(p);
    } else if (kind === 0x75 /* u */ || kind === 0x32 /* 2 */) {
      throw new FallBack('unmerged or renamed entry');
    }
  }
  // The index file is W0; the journal turns it into W (entries the status compared to W0).
  const pending = new Map(warm.pending.filter((e) => !known.has(relKey(e.rel.raw))).map((e) => [relKey(e.rel.raw), e.entry]));
  for (const c of candidates) {
    const key = relKey(c.raw);
    if (pending.has(key)) {
      c.before = pending.get(key)!;
      pending.delete(key);
    }
  }
  const plainUntracked: Buffer[] = [];
  for (const p of untracked) {
    const key = relKey(p);
    if (pending.has(key)) {
      candidates.push({ raw: p, before: pending.get(key)! });
      pending.delete(key);
    } else plainUntracked.push(p);
  }
  // Journaled paths the status did not mention are as in W0, which may differ from W.
  for (const e of warm.pending) if (pending.has(relKey(e.rel.raw))) candidates.push({ raw: e.rel.raw, before: e.entry });
  untracked = plainUntracked;
  const skipped: SkippedFile[] = [];
  const sizes = untracked.map((p) => {
    const st = lstatOrNull(absBytes(repo.root, p));
    return st?.isFile() ? st.size : -1;
  });
  untracked.forEach((p, i) => {
    if (sizes[i]! > maxBytes) skipped.push({ ...repoPath(p), bytes: sizes[i]! });
    else candidates.push({ raw: p, before: null });
  });
  return { candidates, skipped, head };
}

/** Reported mode: the reported paths with their entries in W (the warm index read directly). */
export async function scanReported(repo: RepoInfo, warmIndex: string, paths: Buffer[], maxBytes: number, warm: WarmState): Promise<Scan> {
  if (!paths.length) return { candidates: [], skipped: [] };
  const entries = await readIndexEntries(warmIndex, paths, warm.tree.length);
  if (!entries) throw new FallBack('the warm index cannot be read directly');
  // The index file is W0; the journal turns it into W.
  for (const e of warm.pending) {
    const key = e.rel.raw.toString('latin1');
    if (e.entry) entries.set(key, e.entry);
    else entries.delete(key);
  }
  // Paths not in W are part of the checkpoint unless ignored (as with `add -A`): ask git now,
  // while the rest is looked at here.
  const notInW = paths.filter((p) => !entries.has(p.toString('latin1')));
  const ignoredP = notInW.length
    ? run(repo, ['check-ignore', '--no-index', '-z', '--stdin'], { input: Buffer.concat(notInW.flatMap((p) => [p, Buffer.from([0])])), okExitCodes: [1] }).then((r) => new Set(splitNul(r.stdout).map((p) => relKey(p))))
    : Promise.resolve(new Set<string>());
  ignoredP.catch(() => undefined);
  const candidates: Candidate[] = [];
  const unknown: Candidate[] = [];
  for (const p of paths) {
    const key = p.toString('latin1');
    const entry = entries.get(key);
    const below = [...entries].filter(([k]) => k.startsWith(`${key}/`)).map(([k, e]) => ({ raw: Buffer.from(k, 'latin1'), ...e }));
    const st = lstatOrNull(absBytes(repo.root, p));
    if (st?.isDirectory()) throw new FallBack('a reported path is a directory');
    if (st?.isFile() && !entry && st.size > maxBytes) throw new FallBack('a reported untracked file is over the size cap');
    const c: Candidate = { raw: p, before: entry ?? null, below };
    if (st && !entry) unknown.push(c);
    else candidates.push(c);
  }
  if (unknown.length) {
    const ignored = await ignoredP;
    for (const c of unknown) {
      if (!ignored.has(relKey(c.raw))) candidates.push(c);
      else if (c.below?.length) candidates.push({ ...c, ignored: true });
    }
  }
  return { candidates, skipped: [] };
}

/** Turns candidates into tree changes (reading or hashing files); drops those that match W. */
export async function toChanges(repo: RepoInfo, warm: WarmState, candidates: Candidate[], maxBytes: number): Promise<{ changes: TreeChange[]; before: Map<string, Candidate['before']> }> {
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
