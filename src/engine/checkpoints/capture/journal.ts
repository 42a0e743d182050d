/**
 * Capture stage 5, the journal: what the repository's warm state (`warm-state.ts`) says after a
 * capture, so the next one is incremental from the tree just captured (SPEC §4.2).
 *
 * After an incremental capture the changes are journaled in the sidecar instead of being written
 * into the warm index file (an index rewrite costs as much as reading it): the file stays W0 and
 * the journal turns it into W. Once the journal holds WARM_MAX_PENDING entries, a capture applies
 * it (`applyJournal`: `update-index -z --index-info` on the copy, no stat data, so the next status
 * re-hashes those files once, except the conversion set's, marked assume-valid again; started
 * early, alongside fast-import) and starts a new one. Status
 * mode keeps its copy (refreshed stat data, untracked cache) as the new index file; reported mode
 * read the index file in place and keeps it, unless it applied the journal to a copy.
 *
 * After a full snapshot (`recordSnapshot`) its temporary indexes become the warm indexes of the
 * repository and of every nested one, with empty journals.
 */
import { indexReplacedSameEntries } from '../../git/index-file';
import { run, type RepoInfo } from '../repo';
import { isAttributesPath, relKey } from '../paths';
import { GITLINK_MODE } from '../nested-repos';
import { WARM_MAX_PENDING, keepWarm, type PendingEntry, type WarmNested, type WarmState } from '../warm-state';
import { markAssumeValid, type ConversionEntry } from '../conversion';
import { repoPath, type RepoPath, type SkippedFile } from '../types';
import { changeMode, type TreeChange } from './write-objects';
import { ordered } from './commit';

/** Whether this capture applies the journal to the index file (and starts a new one). */
export function journalIsFull(warm: WarmState): boolean {
  return warm.pending.length >= WARM_MAX_PENDING;
}

/** The journal after `changes` (later entries win; gitlinks of nested repositories included). */
export function journalAfter(pending: PendingEntry[], changes: TreeChange[]): PendingEntry[] {
  const byKey = new Map(pending.map((e) => [relKey(e.rel.raw), e]));
  for (const c of changes) {
    const mode = changeMode(c);
    byKey.set(relKey(c.raw), { rel: repoPath(c.raw), entry: mode === null ? null : { mode, sha: (c as { sha: string }).sha } });
  }
  return [...byKey.values()];
}

/** Journal entries as index changes (to apply them to the index file: only mode and id are used). */
function asChanges(pending: PendingEntry[]): TreeChange[] {
  return pending.map((e): TreeChange => {
    if (!e.entry) return { kind: 'delete', raw: e.rel.raw };
    const { mode, sha } = e.entry;
    if (mode === '120000') return { kind: 'symlink', raw: e.rel.raw, target: Buffer.alloc(0), sha };
    if (mode === GITLINK_MODE) return { kind: 'gitlink', raw: e.rel.raw, sha };
    return { kind: 'file', raw: e.rel.raw, mode: mode === '100755' ? '100755' : '100644', sha };
  });
}

/**
 * Applies the journal plus this capture's `changes` to the index copy `index` (without touching
 * the working tree), once `after` resolves (the status, which writes the copy too). `changes`
 * resolving null applies nothing. `hexLength`: the repository's object id length.
 */
export function applyJournal(repo: RepoInfo, index: string, pending: PendingEntry[], changes: Promise<TreeChange[] | null>, after: Promise<void>, hexLength: number, conv: Promise<ConversionEntry[]>): Promise<void> {
  const zeroId = '0'.repeat(hexLength);
  const entries = changes.then((c) => ordered(c ? asChanges(journalAfter(pending, c)) : []));
  const input = entries.then((list) => {
    const parts: Buffer[] = [];
    for (const e of list) {
      const mode = changeMode(e);
      const head = mode === null ? `0 ${zeroId}\t` : `${mode} ${(e as { sha: string }).sha}\t`;
      parts.push(Buffer.from(head), e.raw, Buffer.from([0]));
    }
    return Buffer.concat(parts);
  });
  return after.then(async () => {
    await Promise.all([run(repo, ['update-index', '-z', '--index-info'], { index, input }), input]);
    // Fresh entries carry no flag: the conversion set's stay out of git's sight.
    const keys = new Set((await conv).map((e) => relKey(e.raw)));
    await markAssumeValid(repo, index, (await entries).filter((e) => e.kind === 'file' && keys.has(relKey(e.raw))).map((e) => e.raw));
  });
}

/** An incremental capture of one repository, as the journal records it. */
export interface IncrementalRecord {
  warm: WarmState;
  /** The index file to keep (a copy: status mode, or the journal applied), or null to keep the current one. */
  copy: string | null;
  /** Whether the journal was applied to `copy`. */
  flushed: boolean;
  /** Identity of the warm index file before the capture (`indexIdentity`). */
  warmIndexId: string | null;
  warmIndex: string;
  written: { commit: string; tree: string };
  changes: TreeChange[];
  /** Whether the capture trusted reported paths. */
  fast: boolean;
  nested: WarmNested[];
  /** Over-cap files left out, nested ones included (the commit's metadata). */
  skipped: SkippedFile[];
  /** The conversion set's new entries of the paths looked at (null: left it). */
  conv: Map<string, ConversionEntry | null>;
}

/** The conversion set after a capture's `updates`. */
export function conversionsAfter(conv: ConversionEntry[], updates: Map<string, ConversionEntry | null>): ConversionEntry[] {
  if (!updates.size) return conv;
  const byKey = new Map(conv.map((e) => [relKey(e.raw), e]));
  for (const [k, e] of updates) {
    if (e) byKey.set(k, e);
    else byKey.delete(k);
  }
  return [...byKey.values()];
}

/** Writes the warm state after an incremental capture. */
export async function recordIncremental(repo: RepoInfo, r: IncrementalRecord): Promise<void> {
  const attributes = r.warm.attributes || r.changes.some((c) => isAttributesPath(c.raw));
  const pending = r.flushed ? [] : journalAfter(r.warm.pending, r.changes);
  const state: WarmState = { tree: r.written.tree, pending, commit: r.written.commit, fastRuns: r.fast ? r.warm.fastRuns + 1 : 0, nested: r.nested, skipped: r.skipped, attributes, conv: conversionsAfter(r.warm.conv, r.conv) };
  await keepWarm(repo, r.copy, state);
  // A status refresh leaves the entries as they were: the parsed copy stays good.
  if (r.copy && !r.flushed) indexReplacedSameEntries(r.warmIndex, r.warmIndexId);
}

/** A full snapshot of one repository as the journal needs it (nested ones in `children`). */
export interface SnapshotRecord {
  repo: RepoInfo;
  rel: RepoPath | null;
  head: string | null;
  tree: string;
  index: { file: string };
  skipped: SkippedFile[];
  children: SnapshotRecord[];
  opaque: RepoPath[];
  attributes: boolean;
  conv: ConversionEntry[];
}

/**
 * Keeps a full snapshot's indexes (this repository's and every nested one's) as warm indexes.
 * `commit`: the checkpoint made from it (null: none, a warm-up); `nestedCommits` by `relKey`.
 */
export async function recordSnapshot(node: SnapshotRecord, commit: string | null, nestedCommits: Map<string, string>, skipped: SkippedFile[], fastRuns: number): Promise<void> {
  const nested: WarmNested[] = [
    ...node.children.map((c) => ({ rel: c.rel!, commit: nestedCommits.get(relKey(c.rel!.raw)) ?? null, repo: c.repo, head: c.head })),
    ...node.opaque.map((rel) => ({ rel, commit: null, repo: null })),
  ];
  await keepWarm(node.repo, node.index.file, { tree: node.tree, pending: [], commit, fastRuns, nested, skipped, attributes: node.attributes, conv: node.conv });
  for (const c of node.children) await recordSnapshot(c, nestedCommits.get(relKey(c.rel!.raw)) ?? null, new Map(), c.skipped, 0);
}
