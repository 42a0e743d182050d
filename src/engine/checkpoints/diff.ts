/**
 * Comparing checkpoints and reading files out of them (SPEC §4.2).
 *
 * `diff-tree -r -z --raw --numstat -M --no-abbrev` prints every raw record (`:<modes> <shas>
 * <status>\0<path>\0`, two paths for renames and copies) and then every numstat record
 * (`<add>\t<del>\t<path>\0`, or `<add>\t<del>\t\0<src>\0<dst>\0` for renames), in the same
 * order; binary files show `-` for both counts. Plumbing (`diff-tree`) is used so user diff config
 * (external tools, textconv, prefixes) never changes the result. Gitlink entries of nested
 * repositories that were captured inside themselves are replaced by the nested repository's own
 * file-level diff, with its path prefixed.
 */
import { splitNul } from '../git/git';
import { run, runText, type RepoInfo } from './repo';
import { statusFromLetter } from './refs';
import { GITLINK_MODE } from './nested-repos';
import { CheckpointError, repoPath, type ChangeStatus, type FileDiffStat, type RepoPath } from './types';
import { joinRel, relKey } from './paths';

export interface RawDiffEntry extends RepoPath {
  status: ChangeStatus;
  srcMode: string;
  dstMode: string;
  srcSha: string;
  dstSha: string;
  from?: RepoPath;
}

/** Parses `-z --raw` records starting at token `i`; returns the entries and the next token index. */
function parseRaw(tokens: Buffer[], start: number): { entries: RawDiffEntry[]; next: number } {
  const entries: RawDiffEntry[] = [];
  let i = start;
  while (i < tokens.length && tokens[i]!.length > 0 && tokens[i]![0] === 0x3a /* ':' */) {
    const head = tokens[i]!.toString('latin1').slice(1).split(' ');
    const letter = (head[4] ?? 'X').charAt(0);
    const srcMode = head[0] ?? '';
    const dstMode = head[1] ?? '';
    const srcSha = head[2] ?? '';
    const dstSha = head[3] ?? '';
    if (letter === 'R' || letter === 'C') {
      entries.push({ ...repoPath(tokens[i + 2] ?? Buffer.alloc(0)), from: repoPath(tokens[i + 1] ?? Buffer.alloc(0)), status: statusFromLetter(letter), srcMode, dstMode, srcSha, dstSha });
      i += 3;
    } else {
      entries.push({ ...repoPath(tokens[i + 1] ?? Buffer.alloc(0)), status: statusFromLetter(letter), srcMode, dstMode, srcSha, dstSha });
      i += 2;
    }
  }
  return { entries, next: i };
}

/** Raw (status-only) diff of two tree-ish ids, without rename detection. */
export async function rawDiff(repo: RepoInfo, from: string, to: string): Promise<RawDiffEntry[]> {
  const out = await run(repo, ['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-abbrev', from, to]);
  return parseRaw(splitNul(out.stdout), 0).entries;
}

/** Per-file numstat diff of two tree-ish ids in one repository (renames detected). */
export async function numstatDiff(repo: RepoInfo, from: string, to: string): Promise<Array<FileDiffStat & { srcMode: string; dstMode: string }>> {
  const out = await run(repo, ['diff-tree', '-r', '-z', '--raw', '--numstat', '-M', '--no-abbrev', from, to]);
  const tokens = splitNul(out.stdout);
  const { entries, next } = parseRaw(tokens, 0);
  // Numstat records, keyed by destination path (paired by path, not position, to be robust).
  const counts = new Map<string, Array<{ add: string; del: string }>>();
  for (let i = next; i < tokens.length; ) {
    const tok = tokens[i]!;
    const t1 = tok.indexOf(0x09);
    const t2 = tok.indexOf(0x09, t1 + 1);
    if (t1 < 0 || t2 < 0) break;
    const rec = { add: tok.subarray(0, t1).toString('latin1'), del: tok.subarray(t1 + 1, t2).toString('latin1') };
    // A rename's record has an empty path followed by the source and destination paths.
    const dst = t2 === tok.length - 1 ? tokens[i + 2] : tok.subarray(t2 + 1);
    i += t2 === tok.length - 1 ? 3 : 1;
    if (!dst) break;
    const key = relKey(dst);
    counts.set(key, [...(counts.get(key) ?? []), rec]);
  }
  return entries.map((e) => {
    const rec = counts.get(relKey(e.raw))?.shift();
    const binary = rec?.add === '-' && rec.del === '-';
    return { ...e, additions: binary || !rec ? 0 : Number(rec.add) || 0, deletions: binary || !rec ? 0 : Number(rec.del) || 0, binary };
  });
}

/** A side of a comparison: a tree in `repo` plus its nested repositories' trees by path. */
export interface DiffSide {
  repo: RepoInfo;
  tree: string;
  nested: Map<string, { rel: RepoPath; side: () => Promise<DiffSide | null> }>;
}

/**
 * Diffs two sides recursively. A nested repository present on one side only is compared with
 * the empty tree (all its files added or deleted).
 */
export async function diffSides(from: DiffSide, to: DiffSide, emptyTreeOf: (repo: RepoInfo) => Promise<string>, prefix: RepoPath | null = null): Promise<FileDiffStat[]> {
  const nestedKeys = new Set([...from.nested.keys(), ...to.nested.keys()]);
  const own = await numstatDiff(to.repo, from.tree, to.tree);
  const out: FileDiffStat[] = [];
  for (const e of own) {
    const isGitlink = e.srcMode === GITLINK_MODE || e.dstMode === GITLINK_MODE;
    if (isGitlink && nestedKeys.has(relKey(e.raw))) continue;
    const p = joinRel(prefix, e);
    const stat: FileDiffStat = { path: p.path, raw: p.raw, additions: e.additions, deletions: e.deletions, binary: e.binary, status: e.status };
    if (e.from) {
      const f = joinRel(prefix, e.from);
      stat.from = { path: f.path, raw: f.raw };
    }
    out.push(stat);
  }
  for (const key of nestedKeys) {
    const f = from.nested.get(key);
    const t = to.nested.get(key);
    const rel = (f ?? t)!.rel;
    const fs = f ? await f.side() : null;
    const ts = t ? await t.side() : null;
    const repo = ts?.repo ?? fs?.repo;
    if (!repo) continue;
    const empty = await emptyTreeOf(repo);
    const a: DiffSide = fs && fs.repo.root === repo.root ? fs : { repo, tree: empty, nested: new Map() };
    const b: DiffSide = ts ?? { repo, tree: empty, nested: new Map() };
    out.push(...(await diffSides(a, b, emptyTreeOf, joinRel(prefix, rel))));
  }
  return out;
}

/** Entry of `ls-tree -z` output. */
interface TreeEntry { mode: string; type: string; sha: string; name: Buffer }

function parseLsTree(out: Buffer): TreeEntry[] {
  return splitNul(out).map((rec) => {
    const tab = rec.indexOf(0x09);
    const [mode = '', type = '', sha = ''] = rec.subarray(0, tab).toString('latin1').split(' ');
    return { mode, type, sha, name: Buffer.from(rec.subarray(tab + 1)) };
  });
}

/** Finds the entry at `rel` (exact bytes) under `treeish`, walking one level per git call. */
export async function lookupPath(repo: RepoInfo, treeish: string, rel: Buffer): Promise<TreeEntry | null> {
  const parts: Buffer[] = [];
  let s = 0;
  for (let i = 0; i <= rel.length; i++) {
    if (i === rel.length || rel[i] === 0x2f) {
      if (i > s) parts.push(rel.subarray(s, i));
      s = i + 1;
    }
  }
  if (!parts.length) return null;
  let tree = await runText(repo, ['rev-parse', '--verify', `${treeish}^{tree}`]);
  for (let k = 0; k < parts.length; k++) {
    const entries = parseLsTree((await run(repo, ['ls-tree', '-z', tree])).stdout);
    const hit = entries.find((e) => e.name.equals(parts[k]!));
    if (!hit) return null;
    if (k === parts.length - 1) return hit;
    if (hit.type !== 'tree') return null;
    tree = hit.sha;
  }
  return null;
}

/** Bytes of the blob at `rel` in `commit` (a symlink's target for symlinks). */
export async function readBlobAt(repo: RepoInfo, commit: string, rel: Buffer): Promise<Buffer> {
  const entry = await lookupPath(repo, commit, rel);
  if (!entry || entry.type !== 'blob') throw new CheckpointError('pathNotFound', `${rel.toString('utf8')} is not a file in ${commit}`);
  return (await run(repo, ['cat-file', 'blob', entry.sha])).stdout;
}
