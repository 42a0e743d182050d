/**
 * bench/checkpoints.ts, the repository and the changes: a seeded generator (so every run with the
 * same options builds the same bytes) of FILES files of ~MB megabytes in nested directories, mostly
 * text source of log-normal sizes, some binaries, ignored build output and dependencies present on
 * disk, and a nested repository with two commits, committed and packed as a clone is; then the
 * workload: 8 tracked files modified and 2 untracked files added, rewritten with fresh content
 * before every timed run (`dirty`) and put back (`undirty`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { seededBytes, seededRandom } from '../../test/support/random';
import { git } from './measure';

/** How big a repository to generate. */
export interface RepoSize {
  /** Files on disk (tracked + ignored + nested repository). */
  files: number;
  /** Their total bytes, in MB (10^6 bytes). */
  mb: number;
}

/** Smallest repository the generator accepts (it needs a few directories of every kind). */
export const MIN_FILES = 200;
/** Seed of the generator's PRNG: the same options always produce the same repository. */
export const SEED = 0x5eed_c0de;

/** Tracked files modified before every timed run. */
export const MODIFIED_FILES = 8;
/** Untracked files added before every timed run. */
export const ADDED_FILES = 2;
/** Size of each added untracked file (bytes). */
const ADDED_FILE_BYTES = 3_000;
/** Modified files are picked among text files at least this big … */
const EDIT_MIN_BYTES = 1_000;
/** … and at most this big (typical source files, not the giants). */
const EDIT_MAX_BYTES = 64_000;

/** Share of the files that belong to the nested repository. */
const NESTED_FILE_SHARE = 0.005;
/** Fewest files in the nested repository. */
const NESTED_MIN_FILES = 5;
/** Share of the files under the ignored `node_modules/`. */
const NODE_MODULES_FILE_SHARE = 0.03;
/** Files per package directory in `node_modules/`. */
const NODE_MODULES_FILES_PER_PACKAGE = 20;
/** Share of the files in the ignored `dist/` build output. */
const DIST_FILE_SHARE = 0.01;
/** Ignored `*.log` files (under `logs/` and at the root). */
const LOG_FILES = 10;
/** Share of the tracked files that are binaries (random bytes: images, fonts, blobs). */
const BINARY_FILE_SHARE = 0.02;
/** Share of all bytes that are binaries (binaries are bigger than the average file). */
const BINARY_BYTE_SHARE = 0.15;
/** Spread (σ of the log) of text file sizes: a log-normal, like real source trees. */
const TEXT_SIZE_SIGMA = 1.0;
/** Largest generated text file (bytes), after scaling. */
const TEXT_MAX_BYTES = 512 * 1024;
/** Smallest generated file (bytes). */
export const FILE_MIN_BYTES = 64;
/** Average tracked files per source directory (files are spread at random). */
const FILES_PER_DIR = 20;
/** Distinct lines the text generator draws from (each file is a random sequence of them). */
const LINE_POOL_SIZE = 8_192;
/** Wait after the initial commit so no index entry is "racily clean" (git's mtime granularity is 1 s). */
export const RACY_SETTLE_MS = 1_100;

// ---------------------------------------------------------------------------------------------
// Repository generator
// ---------------------------------------------------------------------------------------------

/** Tokens of the generated "source" lines. */
const WORDS = (
  'const let var function return if else for while switch case break continue import export from default class ' +
  'interface type extends implements new this await async yield try catch finally throw null undefined true false ' +
  'string number boolean void Promise Map Set Array Record readonly private public static'
).split(' ');
/** File name stems, also used in identifiers. */
const STEMS = 'index util model view store service client server config parser router handler schema types helpers worker cache queue stream render layout state session token logger metrics format'.split(' ');
/** Text file extensions (TypeScript weighted up). */
const TEXT_EXTS = ['.ts', '.ts', '.ts', '.tsx', '.js', '.json', '.md', '.css', '.py', '.go'];
/** Binary file extensions (the content is random bytes). */
const BINARY_EXTS = ['.png', '.jpg', '.woff2', '.bin', '.wasm'];

interface GenFile {
  rel: string;
  bytes: number;
  binary: boolean;
}

export interface Generated {
  root: string;
  nestedRel: string;
  /** Tracked text files by path (candidates for the modifications). */
  tracked: GenFile[];
  /** Source directories (candidates for the added files). */
  dirs: string[];
  counts: { tracked: number; binaries: number; ignored: number; nested: number; totalFiles: number; totalBytes: number; trackedBytes: number };
}

function makeLinePool(rand: () => number): string[] {
  const ident = (): string => {
    const w = STEMS[Math.floor(rand() * STEMS.length)]!;
    return rand() < 0.5 ? w : w + (WORDS[Math.floor(rand() * WORDS.length)]!.replace(/^./, (c) => c.toUpperCase()));
  };
  const pool: string[] = [];
  for (let i = 0; i < LINE_POOL_SIZE; i++) {
    const indent = ' '.repeat(2 * Math.floor(rand() * 5));
    const n = 2 + Math.floor(rand() * 10);
    const toks: string[] = [];
    for (let k = 0; k < n; k++) {
      const r = rand();
      toks.push(r < 0.45 ? WORDS[Math.floor(rand() * WORDS.length)]! : r < 0.85 ? ident() : r < 0.95 ? String(Math.floor(rand() * 10_000)) : `'${ident()}'`);
    }
    const end = ['', ';', ' {', ' }', ',', ')'][Math.floor(rand() * 6)]!;
    pool.push(`${indent}${toks.join(' ')}${end}\n`);
  }
  return pool;
}

function makeText(rand: () => number, pool: string[], size: number, header: string): string {
  const parts = [header];
  let len = header.length;
  while (len < size) {
    const line = pool[Math.floor(rand() * pool.length)]!;
    parts.push(line);
    len += line.length;
  }
  return parts.join('');
}

/** Box–Muller standard normal. */
function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

export async function generateRepo(root: string, opts: RepoSize): Promise<Generated> {
  const rand = seededRandom(SEED);
  const pool = makeLinePool(rand);
  const totalBytesTarget = opts.mb * 1e6;
  const N = opts.files;

  const nestedN = Math.max(NESTED_MIN_FILES, Math.round(N * NESTED_FILE_SHARE));
  const nodeModulesN = Math.round(N * NODE_MODULES_FILE_SHARE);
  const distN = Math.round(N * DIST_FILE_SHARE);
  const rootFiles = ['.gitignore', 'package.json', 'README.md'];
  const trackedN = N - nestedN - nodeModulesN - distN - LOG_FILES - rootFiles.length;
  const binaryN = Math.max(1, Math.round(trackedN * BINARY_FILE_SHARE));
  const textN = N - binaryN - rootFiles.length;

  // Text sizes: log-normal, scaled so text + binaries hit the byte target.
  const binaryBytes = totalBytesTarget * BINARY_BYTE_SHARE;
  const textBytes = totalBytesTarget - binaryBytes;
  const rawText = Array.from({ length: textN }, () => Math.exp(TEXT_SIZE_SIGMA * normal(rand)));
  const textScale = textBytes / rawText.reduce((a, b) => a + b, 0);
  const textSizes = rawText.map((x) => Math.min(TEXT_MAX_BYTES, Math.max(FILE_MIN_BYTES, Math.round(x * textScale))));
  const rawBin = Array.from({ length: binaryN }, () => 0.3 + 1.4 * rand());
  const binScale = binaryBytes / rawBin.reduce((a, b) => a + b, 0);
  const binSizes = rawBin.map((x) => Math.max(FILE_MIN_BYTES, Math.round(x * binScale)));
  let textI = 0;
  const nextTextSize = (): number => textSizes[textI++]!;

  // Source directories: src/area-*/feat-*/part-*, files spread at random.
  const srcTextN = trackedN - binaryN;
  const dirCount = Math.max(4, Math.ceil(trackedN / FILES_PER_DIR));
  const fan = Math.ceil(Math.cbrt(dirCount));
  const dirs = Array.from({ length: dirCount }, (_, i) => `src/area-${Math.floor(i / (fan * fan))}/feat-${Math.floor(i / fan) % fan}/part-${i % fan}`);

  const files: GenFile[] = [];
  const seen = new Set<string>();
  const uniqueName = (dir: string, ext: string): string => {
    for (let k = 0; ; k++) {
      const stem = STEMS[Math.floor(rand() * STEMS.length)]!;
      const rel = `${dir}/${stem}${k ? `-${k}` : ''}${ext}`;
      if (!seen.has(rel)) {
        seen.add(rel);
        return rel;
      }
    }
  };
  for (let i = 0; i < srcTextN; i++) {
    const dir = dirs[Math.floor(rand() * dirs.length)]!;
    files.push({ rel: uniqueName(dir, TEXT_EXTS[Math.floor(rand() * TEXT_EXTS.length)]!), bytes: nextTextSize(), binary: false });
  }
  for (let i = 0; i < binaryN; i++) {
    const dir = rand() < 0.5 ? `assets/set-${i % 16}` : dirs[Math.floor(rand() * dirs.length)]!;
    files.push({ rel: uniqueName(dir, BINARY_EXTS[Math.floor(rand() * BINARY_EXTS.length)]!), bytes: binSizes[i]!, binary: true });
  }
  const tracked = files.filter((f) => !f.binary);
  const ignored: GenFile[] = [];
  for (let i = 0; i < nodeModulesN; i++) ignored.push({ rel: `node_modules/pkg-${Math.floor(i / NODE_MODULES_FILES_PER_PACKAGE)}/lib/file-${i % NODE_MODULES_FILES_PER_PACKAGE}.js`, bytes: nextTextSize(), binary: false });
  for (let i = 0; i < distN; i++) ignored.push({ rel: `dist/chunk-${i}.js`, bytes: nextTextSize(), binary: false });
  for (let i = 0; i < LOG_FILES; i++) ignored.push({ rel: i === 0 ? 'build.log' : `logs/run-${i}.log`, bytes: nextTextSize(), binary: false });
  const nestedRel = 'vendor/nested-lib';
  const nested: GenFile[] = [];
  for (let i = 0; i < nestedN; i++) nested.push({ rel: `${nestedRel}/src/part-${i % 4}/file-${i}.ts`, bytes: nextTextSize(), binary: false });

  // Write everything.
  const made = new Set<string>();
  let totalBytes = 0;
  let trackedBytes = 0;
  const write = (f: GenFile, isTracked: boolean): void => {
    const abs = path.join(root, f.rel);
    const dir = path.dirname(abs);
    if (!made.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    const data = f.binary ? seededBytes(rand, f.bytes) : makeText(rand, pool, f.bytes, `// ${f.rel} (generated by bench/checkpoints.ts)\n`);
    fs.writeFileSync(abs, data);
    const n = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    totalBytes += n;
    if (isTracked) trackedBytes += n;
  };
  fs.mkdirSync(root, { recursive: true });
  const gitignore = '# build output and dependencies\ndist/\nbuild/\ncoverage/\nnode_modules/\n*.log\n.cache/\n';
  fs.writeFileSync(path.join(root, '.gitignore'), gitignore);
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'bench-repo', version: '1.0.0', private: true }, null, 2) + '\n');
  fs.writeFileSync(path.join(root, 'README.md'), '# bench-repo\n\nGenerated by bench/checkpoints.ts.\n');
  for (const f of files) write(f, true);
  for (const f of ignored) write(f, false);

  // The nested repository: its own .git with two commits; the outer repository records a gitlink.
  for (const f of nested) write(f, false);
  const nestedRoot = path.join(root, nestedRel);
  await git(nestedRoot, ['init', '-q', '-b', 'main']);
  await git(nestedRoot, ['config', 'gc.auto', '0']);
  const half = nested.slice(0, Math.ceil(nested.length / 2)).map((f) => path.relative(nestedRel, f.rel));
  await git(nestedRoot, ['add', '--', ...half]);
  await git(nestedRoot, ['commit', '-q', '-m', 'nested: first half']);
  await git(nestedRoot, ['add', '-A']);
  await git(nestedRoot, ['commit', '-q', '-m', 'nested: the rest']);

  await git(root, ['init', '-q', '-b', 'main']);
  await git(root, ['config', 'gc.auto', '0']);
  await git(root, ['-c', 'advice.addEmbeddedRepo=false', 'add', '-A']);
  await git(root, ['commit', '-q', '-m', 'generated repository']);
  // Packed, as a clone is (a repository of 20,000 loose objects is not what users have).
  await git(root, ['repack', '-a', '-d', '-q']);

  return {
    root,
    nestedRel,
    tracked,
    dirs,
    counts: { tracked: files.length + rootFiles.length, binaries: binaryN, ignored: ignored.length, nested: nested.length, totalFiles: files.length + rootFiles.length + ignored.length + nested.length, totalBytes, trackedBytes },
  };
}

// ---------------------------------------------------------------------------------------------
// The 10 changes
// ---------------------------------------------------------------------------------------------

export interface Workload {
  root: string;
  edits: Array<{ rel: string; original: Buffer }>;
  added: string[];
  /** Every changed path, as an agent's edit tools would report them. */
  paths: string[];
  seq: number;
}

export function pickWorkload(gen: Generated): Workload {
  const rand = seededRandom(SEED ^ 0x10);
  const candidates = gen.tracked.filter((f) => f.bytes >= EDIT_MIN_BYTES && f.bytes <= EDIT_MAX_BYTES);
  const edits: Workload['edits'] = [];
  const usedDirs = new Set<string>();
  for (let tries = 0; edits.length < MODIFIED_FILES && tries < 100_000; tries++) {
    const f = candidates[Math.floor(rand() * candidates.length)];
    if (!f || usedDirs.has(path.posix.dirname(f.rel))) continue;
    usedDirs.add(path.posix.dirname(f.rel));
    edits.push({ rel: f.rel, original: fs.readFileSync(path.join(gen.root, f.rel)) });
  }
  if (edits.length < MODIFIED_FILES) throw new Error('not enough candidate files to modify');
  const added: string[] = [];
  for (let i = 0; added.length < ADDED_FILES; i++) {
    const dir = gen.dirs[Math.floor(rand() * gen.dirs.length)]!;
    if (fs.existsSync(path.join(gen.root, dir))) added.push(`${dir}/vox-bench-added-${i}.ts`);
  }
  return { root: gen.root, edits, added, paths: [...edits.map((e) => e.rel), ...added], seq: 0 };
}

/** Writes the 10 changes with content no earlier run used. */
export function dirty(w: Workload): void {
  const tag = ++w.seq;
  for (const e of w.edits) {
    const mid = e.original.indexOf(0x0a, e.original.length >> 1) + 1;
    fs.writeFileSync(path.join(w.root, e.rel), Buffer.concat([e.original.subarray(0, mid), Buffer.from(`// vox-bench edit ${tag}\n`), e.original.subarray(mid)]));
  }
  for (const rel of w.added) {
    const rand = seededRandom(SEED + tag);
    const lines: string[] = [`// ${rel}: vox-bench added file, run ${tag}\n`];
    while (lines.join('').length < ADDED_FILE_BYTES) lines.push(`export const value${lines.length}_${tag} = ${Math.floor(rand() * 1e9)};\n`);
    fs.writeFileSync(path.join(w.root, rel), lines.join(''));
  }
}

/** Puts the worktree back to HEAD's content (modified files rewritten, added files removed). */
export function undirty(w: Workload): void {
  for (const e of w.edits) fs.writeFileSync(path.join(w.root, e.rel), e.original);
  for (const rel of w.added) fs.rmSync(path.join(w.root, rel), { force: true });
}
