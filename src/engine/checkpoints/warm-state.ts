/**
 * The warm state of a repository behind incremental captures (SPEC §4.2): its files and their
 * format, read and written here only. The capture's journal stage (`capture/journal.ts`) decides
 * what goes in; the stages before it read it. Imports nothing from `capture/`.
 *
 * After every capture, the temporary index (which then describes the captured tree exactly) is
 * kept as `<git-dir>/vox-warm-index`, with a sidecar JSON naming that tree, the commit made from
 * it, the nested repositories (with the commits they were captured at), the over-cap files that
 * were left out, a journal of changes not yet applied to the index file and the conversion set
 * (files an attribute converts, with the stat signatures they were hashed at; `conversion.ts`). Nested repositories
 * keep their own warm index in their own git dir. The next capture of the repository starts from
 * it, so git's stat data and untracked cache are warm and the change list is relative to a known
 * tree.
 *
 * The sidecar is only trusted when it parses and the index file exists; restores delete both
 * (the working tree then no longer matches), and any capture that cannot use them falls back to
 * the full snapshot, which writes them afresh.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { removeIndexFile, type RepoInfo } from './repo';
import { pathFromJson, pathToJson } from './refs';
import type { ConversionEntry } from './conversion';
import type { RepoPath, SkippedFile } from './types';

/** File name (in the repository's git dir) of the warm index. */
export const WARM_INDEX_NAME = 'vox-warm-index';
/** File name (in the repository's git dir) of the warm index's sidecar. */
export const WARM_SIDECAR_NAME = 'vox-warm-index.json';
/** Captures trusting reported `changedPaths` allowed in a row before one that looks at everything. */
export const WARM_MAX_FAST_CAPTURES = 100;
/**
 * Most entries journaled on top of the warm index before a capture applies them to it (each is
 * one file an incremental capture re-reads; applying costs an index rewrite).
 */
export const WARM_MAX_PENDING = 256;
/** Version of the sidecar format (older sidecars are ignored). */
const SIDECAR_VERSION = 4;

/** A change of the captured tree not yet applied to the warm index file (null: deleted). */
export interface PendingEntry {
  rel: RepoPath;
  entry: { mode: string; sha: string } | null;
}

/** A nested repository as the warm state remembers it. */
export interface WarmNested {
  rel: RepoPath;
  /** Commit it was last captured at (null when unknown or not captured inside). */
  commit: string | null;
  /** The repository, or null when it could not be entered (left out). */
  repo: RepoInfo | null;
  /** Its HEAD as W's gitlink records it (null: none; undefined: not known). */
  head?: string | null;
}

export interface WarmState {
  /** Tree last captured: the warm index file's entries with `pending` applied. */
  tree: string;
  /** Changes since the index file was last written (paths from this repository's root). */
  pending: PendingEntry[];
  /** The checkpoint commit made from it (its tree is `tree`; its metadata lists `nested`). */
  commit: string | null;
  /** Captures in a row that trusted reported paths. */
  fastRuns: number;
  nested: WarmNested[];
  /** Over-cap files the last capture left out (paths from this repository's root). */
  skipped: SkippedFile[];
  /** Whether the tree may hold a `.gitattributes` file, or attribute files outside it exist. */
  attributes: boolean;
  /**
   * The conversion set (`conversion.ts`): files an attribute converts, marked assume-valid in the
   * index file and checked by their stat signatures instead; their entries are W's.
   */
  conv: ConversionEntry[];
}

interface SidecarJson {
  v: number;
  tree: string;
  commit: string | null;
  fastRuns: number;
  nested: Array<{ p?: string; b?: string; commit: string | null; repo: RepoInfo | null; head?: string | null }>;
  skipped: Array<{ p?: string; b?: string; bytes: number }>;
  attributes?: boolean;
  pending: Array<{ p?: string; b?: string; mode?: string; sha?: string }>;
  conv?: Array<{ p?: string; b?: string; mode: string; sha: string; sig: string }>;
}

export function warmFiles(repo: RepoInfo): { index: string; sidecar: string } {
  return { index: path.join(repo.gitDir, WARM_INDEX_NAME), sidecar: path.join(repo.gitDir, WARM_SIDECAR_NAME) };
}

/** Forgets the warm index (after a restore, or when it cannot be trusted). */
export async function dropWarmIndex(repo: RepoInfo): Promise<void> {
  const f = warmFiles(repo);
  await fsp.rm(f.sidecar, { force: true });
  await removeIndexFile(f.index);
}

/**
 * Keeps `indexFile` (a temporary index that, with `state.pending` applied, describes
 * `state.tree`) as the warm index of `repo`; null keeps the current index file.
 */
export async function keepWarm(repo: RepoInfo, indexFile: string | null, state: WarmState): Promise<void> {
  const f = warmFiles(repo);
  try {
    await fsp.rm(f.sidecar, { force: true });
    if (indexFile) await fsp.rename(indexFile, f.index);
    const json: SidecarJson = {
      v: SIDECAR_VERSION,
      tree: state.tree,
      commit: state.commit,
      fastRuns: state.fastRuns,
      nested: state.nested.map((n) => ({ ...pathToJson(n.rel.raw), commit: n.commit, repo: n.repo, ...(n.head !== undefined ? { head: n.head } : {}) })),
      skipped: state.skipped.map((k) => ({ ...pathToJson(k.raw), bytes: k.bytes })),
      attributes: state.attributes,
      pending: state.pending.map((e) => ({ ...pathToJson(e.rel.raw), ...(e.entry ?? {}) })),
      conv: state.conv.map((e) => ({ ...pathToJson(e.raw), mode: e.mode, sha: e.sha, sig: e.sig })),
    };
    await fsp.writeFile(f.sidecar, JSON.stringify(json));
  } catch {
    await dropWarmIndex(repo);
  }
}

/** The warm state of `repo`, or null when there is none that can be trusted. */
export async function readWarm(repo: RepoInfo): Promise<WarmState | null> {
  try {
    // Synchronous: one small page-cached file, read on every capture.
    const s = JSON.parse(fs.readFileSync(warmFiles(repo).sidecar, 'utf8')) as SidecarJson;
    if (s.v !== SIDECAR_VERSION || typeof s.tree !== 'string' || !Array.isArray(s.nested) || !Array.isArray(s.skipped) || !Array.isArray(s.pending) || typeof s.fastRuns !== 'number') return null;
    return {
      tree: s.tree,
      commit: typeof s.commit === 'string' ? s.commit : null,
      fastRuns: s.fastRuns,
      nested: s.nested.map((n) => ({ rel: pathFromJson(n), commit: n.commit, repo: n.repo, ...(n.head !== undefined ? { head: n.head } : {}) })),
      skipped: s.skipped.map((k) => ({ ...pathFromJson(k), bytes: k.bytes })),
      attributes: s.attributes !== false,
      pending: s.pending.map((e) => ({ rel: pathFromJson(e), entry: typeof e.mode === 'string' && typeof e.sha === 'string' ? { mode: e.mode, sha: e.sha } : null })),
      conv: (s.conv ?? []).map((e) => ({ raw: pathFromJson(e).raw, mode: e.mode, sha: e.sha, sig: e.sig })),
    };
  } catch {
    return null;
  }
}
