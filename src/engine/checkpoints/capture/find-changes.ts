/**
 * Capture stage 1, find what changed (SPEC §4.2: a cost proportional to what changed). Three
 * ways, each returning a change list:
 *   - status mode (`findStatusChanges`, an incremental capture without `changedPaths`): one
 *     `git status --porcelain=v2 -z -uall` on a copy of the warm index, with git's untracked
 *     cache on (directories whose mtime did not change are not read again) and optional locks
 *     allowed (refreshed stat data and the cache go back into the copy); the journal's paths are
 *     compared too. Gitlinks are ignored (nested repositories are captured inside themselves);
 *   - reported mode (`findReportedChanges`, `changedPaths` from the agent's own edit tools; the
 *     caller guarantees nothing else changed): the reported paths looked up in the warm index
 *     file directly (`git/index-file.ts`, no process) and, for those not in W, one
 *     `check-ignore` — no walk at all. `normalizeReported` decides first whether the paths can be
 *     trusted;
 *   - the full walk (`walkWorktree`, a full snapshot): one `ls-files -z -t -o -m -d
 *     --exclude-standard` (untracked, modified and deleted paths) with `ls-files -s` alongside
 *     (gitlinks, unmerged entries) on a copy of the real index, untracked files over the size cap
 *     left out, nested repositories probed (`nested-repos.ts`): those with no commit or that
 *     cannot be entered are left out of the outer add.
 * Also here: whether a known nested repository is still the same one (`stillNested`), and which
 * over-cap files stay left out in reported mode (`stillSkipped`).
 *
 * Anything unusual in an incremental capture throws `FallBack` (the full snapshot then decides).
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { splitNul } from '../../git/git';
import { readIndexEntries } from '../../git/index-file';
import { canonicalPath } from '../../platform/workspace-lease';
import { run, type RepoInfo } from '../repo';
import { absBytes, lstatOrNull, relKey, under } from '../paths';
import { mapLimit } from '../concurrency';
import { GITLINK_MODE, MAX_NESTED_DEPTH, gitlinksFromStage, probeNestedRepo, type NestedProbe } from '../nested-repos';
import { mentionsAttributes, regularFilesOfStage, unmergedFromStage, untagStage } from '../index-listing';
import { changedConversions, conversionsOfWalk, convertingPaths, externalAttributes, repoSettings } from '../conversion';
import type { WarmState } from '../warm-state';
import { repoPath, type RepoPath, type SkippedFile } from '../types';

/** lstat calls in flight at once while sizing untracked files. */
export const LSTAT_CONCURRENCY = 64;
/** Candidate directories probed for a nested repository at once (one git process each). */
const NESTED_PROBE_CONCURRENCY = 4;

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
  /** In the conversion set (`conversion.ts`): hashed raw with a fresh stat signature. */
  convert?: boolean;
}

/** What changed since W (status or reported mode). */
export interface ChangeScan {
  candidates: Candidate[];
  /** Untracked files over the size cap, left out (status mode). */
  skipped: SkippedFile[];
  /** HEAD's commit as the status saw it (status mode; null: no commit yet). */
  head?: string | null;
}

/** Metadata reads here are synchronous (see `lstatOrNull`). */
function readTextOr(p: Buffer, fallback: string): string {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return fallback;
  }
}

/**
 * Normalises reported paths to bytes relative to `root`; null when one cannot be trusted (outside
 * the worktree, a `.git` segment, or below a directory holding a `.git` that is not a known
 * nested repository — one may have appeared since the last capture).
 */
export async function normalizeReported(root: string, paths: Array<string | Buffer>, nested: Buffer[]): Promise<Buffer[] | null> {
  const out: Buffer[] = [];
  const checkedDirs = new Map<string, boolean>();
  for (const p of paths) {
    let rel: Buffer;
    if (typeof p === 'string') {
      // Canonicalise the directory only: the last component may itself be a symlink.
      const abs = nodePath.isAbsolute(p) ? nodePath.join(canonicalPath(nodePath.dirname(p)), nodePath.basename(p)) : nodePath.resolve(root, p);
      const r = nodePath.relative(root, abs);
      if (!r || r === '..' || r.startsWith(`..${nodePath.sep}`) || nodePath.isAbsolute(r)) return null;
      rel = Buffer.from(r.split(nodePath.sep).join('/'), 'utf8');
    } else {
      rel = Buffer.from(p);
    }
    const segs = rel.toString('latin1').split('/');
    if (segs.some((x) => x === '' || x === '.' || x === '..' || x === '.git') || rel.includes(0)) return null;
    if (!nested.some((n) => n.equals(rel) || under(n, rel))) {
      for (let i = rel.indexOf(0x2f); i >= 0; i = rel.indexOf(0x2f, i + 1)) {
        const key = relKey(rel.subarray(0, i));
        if (!checkedDirs.has(key)) checkedDirs.set(key, lstatOrNull(absBytes(root, Buffer.concat([rel.subarray(0, i), Buffer.from('/.git')]))) !== null);
        if (checkedDirs.get(key)) return null;
      }
    }
    out.push(rel);
  }
  return out;
}

/** Whether `rel` still holds the nested repository `known` (its `.git` leads to the same git dir). */
export async function stillNested(parent: RepoInfo, rel: Buffer, known: RepoInfo): Promise<boolean> {
  const dir = absBytes(parent.root, rel);
  if (!lstatOrNull(dir)?.isDirectory()) return false;
  const dotGit = Buffer.concat([dir, Buffer.from('/.git')]);
  const st = lstatOrNull(dotGit);
  let gitDir: string;
  if (st?.isDirectory()) {
    gitDir = dotGit.toString('utf8');
  } else if (st?.isFile()) {
    // A gitfile (submodule or linked worktree): `gitdir: <path>`, relative to the directory.
    const m = /^gitdir: (.+)$/m.exec(readTextOr(dotGit, ''));
    if (!m) return false;
    gitDir = nodePath.resolve(dir.toString('utf8'), m[1]!.trim());
  } else {
    return false;
  }
  return canonicalPath(gitDir) === canonicalPath(known.gitDir);
}

/** Status mode: what differs between the working tree and W, per `git status` on the copy. */
export async function findStatusChanges(repo: RepoInfo, index: string, warm: WarmState, maxBytes: number): Promise<ChangeScan> {
  const r = await run(repo, ['status', '--porcelain=v2', '-z', '--branch', '--no-ahead-behind', '--untracked-files=all', '--ignore-submodules=all', '--no-renames', '--ignored=no'], {
    index,
    config: { 'core.untrackedCache': 'true', 'status.showUntrackedFiles': 'all', 'core.fsmonitor': 'false', 'status.renames': 'false' },
    env: { GIT_OPTIONAL_LOCKS: '1' },
  });
  const known = new Set(warm.nested.map((n) => relKey(n.rel.raw)));
  const candidates: Candidate[] = [];
  const untracked: Buffer[] = [];
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
  // A file that is not in W (untracked there, or taken out by the journal) and is over the cap:
  // tracked by the user (captured whatever its size) or untracked (left out)? The real index says.
  const big = new Map<string, number>();
  for (const c of [...candidates.filter((x) => x.before === null).map((x) => x.raw), ...plainUntracked]) {
    const st = lstatOrNull(absBytes(repo.root, c));
    if (st?.isFile() && st.size > maxBytes) big.set(relKey(c), st.size);
  }
  const tracked = big.size ? await readIndexEntries(repo.indexPath, [...big.keys()].map((k) => Buffer.from(k, 'hex')), warm.tree.length) : new Map<string, unknown>();
  if (!tracked) throw new FallBack('the real index cannot be read directly');
  const leftOut = (p: Buffer): boolean => big.has(relKey(p)) && !tracked.has(p.toString('latin1'));
  const skipped: SkippedFile[] = [];
  const fresh: Candidate[] = [];
  for (const c of candidates.splice(0)) {
    if (c.before === null && leftOut(c.raw)) skipped.push({ ...repoPath(c.raw), bytes: big.get(relKey(c.raw))! });
    else candidates.push(c);
  }
  for (const p of plainUntracked) {
    if (leftOut(p)) skipped.push({ ...repoPath(p), bytes: big.get(relKey(p))! });
    else fresh.push({ raw: p, before: null });
  }
  candidates.push(...fresh);
  await markConversions(repo, warm, candidates, fresh, true);
  return { candidates, skipped, head };
}

/**
 * Marks the candidates of the conversion set (`convert`) — the set's own entries, and the new
 * files among `fresh` an attribute converts (one `check-attr`, only when the repository has
 * attributes). `scan` (status mode): the set's files whose stat signature changed are
 * candidates too (git never looks at them: they are assume-valid in the index).
 */
async function markConversions(repo: RepoInfo, warm: WarmState, candidates: Candidate[], fresh: Candidate[], scan: boolean): Promise<void> {
  const inSet = new Map(warm.conv.map((e) => [relKey(e.raw), e]));
  for (const c of candidates) if (inSet.has(relKey(c.raw))) c.convert = true;
  if (scan && warm.conv.length) {
    const have = new Set(candidates.map((c) => relKey(c.raw)));
    for (const e of changedConversions(repo.root, warm.conv, Date.now())) if (!have.has(relKey(e.raw))) candidates.push({ raw: e.raw, before: { mode: e.mode, sha: e.sha }, convert: true });
  }
  if (warm.attributes && fresh.length) {
    const converting = await convertingPaths(repo, fresh.map((c) => c.raw));
    for (const c of fresh) if (converting.has(relKey(c.raw))) c.convert = true;
  }
}

/** Reported mode: the reported paths with their entries in W (the warm index read directly). */
export async function findReportedChanges(repo: RepoInfo, warmIndex: string, paths: Buffer[], maxBytes: number, warm: WarmState): Promise<ChangeScan> {
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
  const fresh: Candidate[] = [];
  if (unknown.length) {
    const ignored = await ignoredP;
    for (const c of unknown) {
      if (!ignored.has(relKey(c.raw))) fresh.push(c);
      else if (c.below?.length) candidates.push({ ...c, ignored: true });
    }
  }
  candidates.push(...fresh);
  await markConversions(repo, warm, candidates, fresh, false);
  return { candidates, skipped: [] };
}

/**
 * Reported mode: the over-cap files W left out that still are — not reported now, and not inside
 * a nested repository captured again (that one reports its own).
 */
export function stillSkipped(skipped: SkippedFile[], reported: Buffer[], recaptured: Buffer[]): SkippedFile[] {
  return skipped.filter((k) => !reported.some((r) => r.equals(k.raw) || under(r, k.raw)) && !recaptured.some((n) => under(n, k.raw)));
}

/** What the full walk found in one repository (its index a copy of the real one). */
export interface Walk {
  /** `ls-files -s -z` output of that index (the add drops its stale entries below excluded paths). */
  stage: Buffer;
  /** Every path to add: modified, deleted and untracked ones, gitlinks, nested candidates, unmerged entries. */
  paths: Buffer[];
  /** Paths left out of the add: over-cap untracked files, nested repositories with no commit or that cannot be entered. */
  exclude: Buffer[];
  /** Over-cap untracked files left out. */
  skipped: SkippedFile[];
  /** Nested repositories to snapshot inside themselves. */
  enter: Array<{ rel: RepoPath; repo: RepoInfo; head: string | null }>;
  /** Nested repositories that cannot be entered (or are too deep), left out. */
  opaque: RepoPath[];
  warnings: string[];
  /** Whether the tree may hold a `.gitattributes` file (tracked or untracked), or attribute files outside it exist. */
  attributes: boolean;
  /** Regular files an attribute converts (`conversion.ts`): hashed raw, never added by git. */
  convert: Buffer[];
  /** Other regular files of the index to re-hash raw (the user's `core.autocrlf` may have converted their blobs). */
  rehash: Buffer[];
}

/** The full walk of `repo` against the index `index` (depth: nesting depth of `repo`). */
export async function walkWorktree(repo: RepoInfo, index: string, opts: { maxUntrackedBytes: number; depth: number }): Promise<Walk> {
  // One walk: untracked (`?`), modified (`C`) and deleted (`R`) paths, tagged (`-t`); the
  // staged entries with their flags alongside (`-v`: assume-unchanged in lower case).
  const walkArgs = ['ls-files', '-z', '-t', '-o', '-m', '-d', '--exclude-standard'];
  const [tagged, firstWalk, settings] = await Promise.all([run(repo, ['ls-files', '-z', '-s', '-v'], { index }), run(repo, walkArgs, { index }), repoSettings(repo)]);
  const { stage, flagged } = untagStage(tagged.stdout);
  let walk = firstWalk;
  if (flagged.length) {
    // Files the user marked assume-unchanged or skip-worktree are invisible to git as they are on
    // disk: the copy gets fresh entries for them (no flags, no stat data), and the walk runs again.
    await run(repo, ['update-index', '-z', '--index-info'], { index, input: Buffer.concat(flagged.flatMap((r) => [r, Buffer.from([0])])) });
    walk = await run(repo, walkArgs, { index });
  }
  const candidates = gitlinksFromStage(stage);
  const attributes = mentionsAttributes(stage) || mentionsAttributes(walk.stdout) || externalAttributes(settings);
  const untrackedFiles: Buffer[] = [];
  const changed: Buffer[] = [...candidates, ...unmergedFromStage(stage)];
  for (const rec of splitNul(walk.stdout)) {
    const p = rec.subarray(2);
    if (!p.length) continue;
    if (rec[0] !== 0x3f) changed.push(p);
    else if (p[p.length - 1] === 0x2f) candidates.push(Buffer.from(p.subarray(0, p.length - 1)));
    else untrackedFiles.push(p);
  }
  const [skipped, probes, conversions] = await Promise.all([
    findOversized(repo.root, untrackedFiles, opts.maxUntrackedBytes),
    mapLimit(candidates, NESTED_PROBE_CONCURRENCY, (c) => probeNestedRepo(repo, c)),
    conversionsOfWalk(repo, settings, attributes, regularFilesOfStage(stage), untrackedFiles),
  ]);
  const nested = probes.filter((p): p is NestedProbe => p !== null);
  const exclude = skipped.map((s) => s.raw);
  const opaque: RepoPath[] = [];
  const warnings: string[] = [];
  for (const p of nested) {
    if (!p.repo || !p.hasHead) exclude.push(p.rel.raw);
    if (!p.repo) {
      opaque.push(p.rel);
      warnings.push(`nested repository ${p.rel.path} was left out: ${p.reason ?? 'unknown reason'}`);
    }
  }
  const enter: Walk['enter'] = [];
  for (const p of nested) {
    if (!p.repo) continue;
    if (opts.depth + 1 > MAX_NESTED_DEPTH) {
      opaque.push(p.rel);
      warnings.push(`nested repository ${p.rel.path} is deeper than ${MAX_NESTED_DEPTH} levels and was not captured inside`);
      continue;
    }
    enter.push({ rel: p.rel, repo: p.repo, head: p.hasHead ? (p.head ?? null) : null });
  }
  // What the outer add leaves out (nested repositories without a commit) is not hashed raw either.
  const outside = (p: Buffer): boolean => exclude.some((x) => x.equals(p) || under(x, p)) || candidates.some((n) => under(n, p));
  const convert = conversions.convert.filter((p) => !outside(p));
  const added = new Set([...changed, ...untrackedFiles].map((p) => relKey(p)));
  const rehash = conversions.rehash.filter((p) => !outside(p) && !added.has(relKey(p)));
  return { stage, paths: [...changed, ...candidates, ...untrackedFiles], exclude, skipped, enter, opaque, warnings, attributes, convert, rehash };
}

/** Over-cap regular files among `paths` (relative to `root`). */
export async function findOversized(root: string, paths: Buffer[], maxBytes: number): Promise<SkippedFile[]> {
  const sizes = await mapLimit(paths, LSTAT_CONCURRENCY, async (p) => {
    const st = await fs.promises.lstat(absBytes(root, p)).catch(() => null);
    return st?.isFile() && st.size > maxBytes ? st.size : -1;
  });
  const out: SkippedFile[] = [];
  sizes.forEach((bytes, i) => {
    if (bytes >= 0) out.push({ ...repoPath(paths[i]!), bytes });
  });
  return out;
}
