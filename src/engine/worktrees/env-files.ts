/**
 * Provisions a new worktree with the source repository's untracked `.env*` files (SPEC §4.1).
 *
 * `.env` files are normally ignored, so they are found with both `git ls-files -o -i
 * --exclude-standard -z` (untracked and ignored) and `git ls-files -o --exclude-standard -z`
 * (untracked, not ignored). A file qualifies when its basename is `.env` or starts with `.env.`,
 * at any depth; nested paths are kept. `.env.production*` is skipped unless opted in.
 *
 * Copying never trusts the filesystem: each relative path is rejected if it has `..`, an empty or
 * NUL segment, or lies under a dependency/metadata directory; every directory on the way, in the
 * source and in the target, must be a real directory (symlinks are never followed); the source
 * must be a regular file (opened with O_NOFOLLOW and re-checked with fstat); the target is created
 * with O_EXCL, so an existing file — or a symlink planted where the file would go — is never
 * overwritten. Every file is reported as copied or skipped with a reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitRaw, splitNul } from '../git/git';
import { WorktreeError } from './paths';

/** Largest `.env*` file copied (bytes); anything bigger is not a dotenv file and is skipped. */
export const MAX_ENV_FILE_BYTES = 1024 * 1024;
/** Directories whose contents are never provisioned: dependencies, VCS metadata, Vox's own trees. */
export const ENV_SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', '.vox', 'node_modules', 'bower_components', '.venv', 'venv', '__pycache__']);
/** Pathspecs that narrow git's output to `.env` / `.env.*` at any depth (re-checked by basename). */
const ENV_PATHSPECS = [':(glob)**/.env', ':(glob)**/.env.*'];
/** `O_NOFOLLOW` where the platform has it (0 on Windows, where lstat checks carry the load). */
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

export type EnvSkipReason =
  | 'production' // `.env.production*` and includeProduction was not set
  | 'exists' // the target already has something at that path: never overwritten
  | 'unsafePath' // `..`, empty segment, absolute, or not valid UTF-8
  | 'excludedDirectory' // under node_modules, .git, .vox, …
  | 'symlink' // the file or a directory on its way is a symbolic link (source or target)
  | 'notRegularFile' // a FIFO, socket, device or directory
  | 'tooLarge' // bigger than MAX_ENV_FILE_BYTES
  | 'vanished' // listed by git but gone before it could be read
  | 'error'; // any other I/O failure (message attached)

export interface EnvCopyReport {
  /** Relative paths (with `/`) copied into the target. */
  copied: string[];
  skipped: Array<{ path: string; reason: EnvSkipReason; message?: string }>;
}

export interface EnvCopyOptions {
  /** Also copy `.env.production*` (off by default: production secrets stay where they are). */
  includeProduction?: boolean;
}

/** True for a basename `.env` or `.env.<anything>`. */
export function isEnvFileName(base: string): boolean {
  return base === '.env' || base.startsWith('.env.');
}

/** True for a basename `.env.production` or `.env.production<anything>`. */
export function isProductionEnvFileName(base: string): boolean {
  return base.startsWith('.env.production');
}

/** Untracked (ignored or not) `.env*` paths of the work tree at `root`, relative, `/`-separated, sorted. */
export async function listUntrackedEnvFiles(root: string): Promise<Array<{ path: string; valid: boolean }>> {
  const runs = await Promise.all([
    gitRaw(['ls-files', '-o', '-i', '--exclude-standard', '-z', '--', ...ENV_PATHSPECS], { cwd: root }),
    gitRaw(['ls-files', '-o', '--exclude-standard', '-z', '--', ...ENV_PATHSPECS], { cwd: root }),
  ]);
  const seen = new Map<string, boolean>();
  for (const r of runs) {
    for (const raw of splitNul(r.stdout)) {
      if (raw.length === 0) continue;
      const text = raw.toString('utf8');
      // A name that does not survive a UTF-8 round trip cannot be addressed through Node paths.
      const valid = Buffer.from(text, 'utf8').equals(raw);
      if (text.endsWith('/')) continue; // a nested repository or worktree shown as a directory
      if (!isEnvFileName(path.posix.basename(text))) continue;
      seen.set(text, valid);
    }
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, valid]) => ({ path: p, valid }));
}

type Check = { ok: true } | { ok: false; reason: EnvSkipReason; message?: string };

/** Each directory of `segs` (all but the last) under `root` must be a real directory or absent. */
function checkDirectories(root: string, dirs: string[], createMissing: boolean): Check {
  let cur = root;
  for (const seg of dirs) {
    cur = path.join(cur, seg);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(cur);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (!st) {
      if (!createMissing) return { ok: false, reason: 'vanished' };
      fs.mkdirSync(cur); // one level at a time: never through a link planted meanwhile (EEXIST)
      continue;
    }
    if (st.isSymbolicLink()) return { ok: false, reason: 'symlink', message: `${cur} is a symbolic link` };
    if (!st.isDirectory()) return { ok: false, reason: 'notRegularFile', message: `${cur} is not a directory` };
  }
  return { ok: true };
}

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

function copyOne(sourceRoot: string, targetRoot: string, rel: string): Check {
  const segs = rel.split('/');
  const dirs = segs.slice(0, -1);
  const src = path.join(sourceRoot, ...segs);
  const dst = path.join(targetRoot, ...segs);

  const srcDirs = checkDirectories(sourceRoot, dirs, false);
  if (!srcDirs.ok) return srcDirs;
  let srcStat: fs.Stats;
  try {
    srcStat = fs.lstatSync(src);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, reason: 'vanished' };
    throw e;
  }
  if (srcStat.isSymbolicLink()) return { ok: false, reason: 'symlink', message: `${rel} is a symbolic link` };
  if (!srcStat.isFile()) return { ok: false, reason: 'notRegularFile' };
  if (srcStat.size > MAX_ENV_FILE_BYTES) return { ok: false, reason: 'tooLarge', message: `${srcStat.size} bytes` };
  if (!isInside(sourceRoot, fs.realpathSync.native(src))) return { ok: false, reason: 'symlink', message: `${rel} resolves outside the source tree` };

  // Cheap pre-check so an existing file is reported as `exists` without creating its directories.
  try {
    fs.lstatSync(dst);
    return { ok: false, reason: 'exists' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
  }
  const dstDirs = checkDirectories(targetRoot, dirs, true);
  if (!dstDirs.ok) return dstDirs;
  if (!isInside(targetRoot, path.join(fs.realpathSync.native(path.dirname(dst)), path.basename(dst)))) {
    return { ok: false, reason: 'symlink', message: `${rel} resolves outside the target tree` };
  }

  const inFd = fs.openSync(src, fs.constants.O_RDONLY | O_NOFOLLOW);
  try {
    const st = fs.fstatSync(inFd);
    if (!st.isFile()) return { ok: false, reason: 'notRegularFile' };
    if (st.size > MAX_ENV_FILE_BYTES) return { ok: false, reason: 'tooLarge', message: `${st.size} bytes` };
    const data = fs.readFileSync(inFd);
    let outFd: number;
    try {
      // O_EXCL: fails on any existing entry, including a (dangling) symlink; never follows one.
      outFd = fs.openSync(dst, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | O_NOFOLLOW, st.mode & 0o777);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { ok: false, reason: 'exists' };
      throw e;
    }
    try {
      fs.writeFileSync(outFd, data);
    } finally {
      fs.closeSync(outFd);
    }
  } finally {
    fs.closeSync(inFd);
  }
  return { ok: true };
}

/** Why a git-reported relative path is not acceptable at all, or undefined. */
function relPathProblem(rel: string): EnvSkipReason | undefined {
  if (rel.length === 0 || rel.startsWith('/') || rel.includes('\0') || rel.includes('\\')) return 'unsafePath';
  const segs = rel.split('/');
  if (segs.some((s) => s === '' || s === '.' || s === '..')) return 'unsafePath';
  if (segs.slice(0, -1).some((s) => ENV_SKIPPED_DIRECTORIES.has(s))) return 'excludedDirectory';
  return undefined;
}

/**
 * Copies the untracked `.env*` files of `sourceRoot` into `targetRoot` (both work tree roots).
 * Throws `envCopyRefused` only when the roots themselves are unusable; per-file problems are
 * reported in `skipped` and never stop the other files.
 */
export async function copyUntrackedEnvFiles(sourceRoot: string, targetRoot: string, opts: EnvCopyOptions = {}): Promise<EnvCopyReport> {
  const source = fs.realpathSync.native(sourceRoot);
  const target = fs.realpathSync.native(targetRoot);
  if (!fs.lstatSync(source).isDirectory() || !fs.lstatSync(target).isDirectory()) {
    throw new WorktreeError('envCopyRefused', 'source and target of the .env copy must both be directories', { path: targetRoot });
  }
  if (source === target || isInside(target, source)) {
    throw new WorktreeError('envCopyRefused', `refusing to copy .env files from ${source} into ${target}: the target must not be the source or contain it`, { path: targetRoot });
  }
  const report: EnvCopyReport = { copied: [], skipped: [] };
  for (const { path: rel, valid } of await listUntrackedEnvFiles(source)) {
    const problem = valid ? relPathProblem(rel) : 'unsafePath';
    if (problem) {
      report.skipped.push({ path: rel, reason: problem });
      continue;
    }
    if (!opts.includeProduction && isProductionEnvFileName(path.posix.basename(rel))) {
      report.skipped.push({ path: rel, reason: 'production' });
      continue;
    }
    try {
      const r = copyOne(source, target, rel);
      if (r.ok) report.copied.push(rel);
      else report.skipped.push(r.message ? { path: rel, reason: r.reason, message: r.message } : { path: rel, reason: r.reason });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') report.skipped.push({ path: rel, reason: 'symlink', message: (e as Error).message });
      else if (code === 'EEXIST') report.skipped.push({ path: rel, reason: 'exists' });
      else report.skipped.push({ path: rel, reason: 'error', message: (e as Error).message });
    }
  }
  return report;
}
