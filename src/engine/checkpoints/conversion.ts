/**
 * Git's content conversions, kept out of checkpoints (SPEC §4.2: a checkpoint gives back exactly
 * the bytes that were on disk). Git converts a file's bytes on the way into the index (`add`,
 * `status`, `hash-object`) and on the way out (checkout) when `core.autocrlf` is on or an
 * attribute asks for it (`text`, `eol`, `crlf`, `ident`, `filter`, `working-tree-encoding`).
 * Checkpoints store and restore raw bytes instead:
 *   - every git call of the store runs with `core.autocrlf=false` (`repo.ts`), so without
 *     attributes git's own view of a file is its raw bytes and the stat cache stays exact;
 *   - the user's real index holds git's converted blobs, so a full snapshot re-hashes raw
 *     (`hashRaw`: `hash-object -w --no-filters`) every file that the user's `core.autocrlf`
 *     could have converted, and every file an attribute converts (`convertingPaths`, one
 *     `check-attr`);
 *   - files an attribute converts are the "conversion set": git would compare them by their
 *     converted bytes (missing a CRLF→LF change, or failing on an invalid encoding), so their
 *     warm-index entries are marked assume-valid (`markAssumeValid`: git never looks at them)
 *     and the store checks them itself, by a stat signature (`statSignature`) kept in the warm
 *     state beside their blob ids.
 * Also here: the config the capture depends on (`repoSettings`) and whether attribute files
 * outside the tree exist (`externalAttributes`). Imports nothing from `capture/`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import { splitNul } from '../git/git';
import { run, type RepoInfo } from './repo';
import { cQuote, relKey } from './paths';
import { CheckpointError } from './types';

/** Zlib level for the blobs a capture writes (fast; `gc` recompresses when it packs them). */
export const BLOB_COMPRESSION_LEVEL = '1';
/** The attributes that make git convert content (anything but "unspecified" counts). */
export const CONVERSION_ATTRIBUTES = ['text', 'eol', 'crlf', 'ident', 'filter', 'working-tree-encoding'] as const;
/**
 * A file modified less than this long before its stat signature is taken may change again
 * within the same timestamp tick (1–2 s on coarse file systems): its signature is left empty,
 * so the next capture hashes it again.
 */
export const RACY_SIGNATURE_MS = 2_000;
/** The system-wide attributes file git reads (besides `$(prefix)/etc/gitattributes`). */
const SYSTEM_ATTRIBUTES_FILE = '/etc/gitattributes';

export interface RepoSettings {
  fileMode: boolean;
  /** The user's `core.autocrlf` (git's view of content Vox must not inherit). */
  autocrlf: boolean;
  /** `core.symlinks`: false writes a symlink's target as a plain file (as git does). */
  symlinks: boolean;
  /** Attribute files outside the tree that may exist (checked for existence on every use). */
  attributeFiles: string[];
}

const settingsCache = new Map<string, Promise<RepoSettings>>();

const isFalse = (v: string | undefined): boolean => v !== undefined && ['false', 'no', 'off', '0'].includes(v.toLowerCase());

/** The config a capture or restore depends on (read once per git dir and process). */
export function repoSettings(repo: RepoInfo): Promise<RepoSettings> {
  let p = settingsCache.get(repo.gitDir);
  if (!p) {
    p = (async () => {
      // The user's autocrlf: ask without the override every store call carries.
      const cfg = await run(repo, ['config', '-z', '--get-regexp', '^core\\.(filemode|autocrlf|attributesfile|symlinks)$'], { okExitCodes: [1], config: { 'core.autocrlf': null } });
      const values = new Map<string, string>();
      for (const rec of splitNul(cfg.stdout)) {
        const s = rec.toString('utf8');
        const nl = s.indexOf('\n');
        values.set((nl < 0 ? s : s.slice(0, nl)).toLowerCase(), nl < 0 ? 'true' : s.slice(nl + 1));
      }
      const xdg = process.env.XDG_CONFIG_HOME || nodePath.join(os.homedir(), '.config');
      const globalAttrs = values.get('core.attributesfile')?.replace(/^~(?=\/)/, os.homedir()) ?? nodePath.join(xdg, 'git', 'attributes');
      const crlf = values.get('core.autocrlf') ?? 'false';
      return {
        fileMode: !isFalse(values.get('core.filemode') ?? 'true'),
        autocrlf: !isFalse(crlf),
        symlinks: !isFalse(values.get('core.symlinks') ?? 'true'),
        attributeFiles: [nodePath.join(commonDir(repo.gitDir), 'info', 'attributes'), nodePath.resolve(repo.root, globalAttrs), SYSTEM_ATTRIBUTES_FILE],
      };
    })();
    settingsCache.set(repo.gitDir, p);
    p.catch(() => settingsCache.delete(repo.gitDir));
  }
  return p;
}

/** The common git dir of `gitDir` (a linked worktree's names it in `commondir`, relative to itself). */
function commonDir(gitDir: string): string {
  try {
    return nodePath.resolve(gitDir, fs.readFileSync(nodePath.join(gitDir, 'commondir'), 'utf8').trim());
  } catch {
    return gitDir;
  }
}

/** Whether an attribute file outside the tree (info/attributes, the global or system one) exists. */
export function externalAttributes(settings: RepoSettings): boolean {
  return settings.attributeFiles.some((f) => fs.existsSync(f));
}

/** The paths (by `relKey`) among `paths` whose content an attribute converts (one `check-attr`). */
export async function convertingPaths(repo: RepoInfo, paths: Buffer[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (!paths.length) return out;
  const input = Buffer.concat(paths.flatMap((p) => [p, Buffer.from([0])]));
  const r = await run(repo, ['check-attr', '-z', '--stdin', ...CONVERSION_ATTRIBUTES], { input });
  const tokens = splitNul(r.stdout);
  // `<path>\0<attribute>\0<value>\0` per path and attribute.
  for (let i = 0; i + 2 < tokens.length; i += 3) {
    // `unset` (`-text`, `-crlf`, `-ident`, …) converts nothing; any other value may.
    const value = tokens[i + 2]!.toString('latin1');
    if (value !== 'unspecified' && value !== 'unset') out.add(relKey(tokens[i]!));
  }
  return out;
}

/**
 * The stat signature of a regular file (what a later capture compares to know it is unchanged),
 * '' when the file is missing, not a regular file, or modified too recently to be trusted.
 */
export function statSignature(abs: Buffer, nowMs: number): string {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(abs, { bigint: true });
  } catch {
    return '';
  }
  if (!st.isFile()) return '';
  if (nowMs - Number(st.mtimeMs) < RACY_SIGNATURE_MS || nowMs - Number(st.ctimeMs) < RACY_SIGNATURE_MS) return '';
  return `${st.mtimeNs}:${st.ctimeNs}:${st.size}:${st.ino}:${st.mode}:${st.dev}`;
}

/** Stores the raw bytes of regular files as blobs (no filters, no eol conversion); ids in order. */
export async function hashRaw(repo: RepoInfo, paths: Buffer[]): Promise<string[]> {
  if (!paths.length) return [];
  const input = Buffer.concat(paths.flatMap((p) => [cQuote(p), Buffer.from('\n')]));
  const r = await run(repo, ['hash-object', '-w', '--no-filters', '--stdin-paths'], { input, config: { 'core.looseCompression': BLOB_COMPRESSION_LEVEL } });
  const out = r.stdout.toString('latin1').split('\n').filter(Boolean);
  if (out.length !== paths.length) throw new CheckpointError('gitFailed', `hash-object returned ${out.length} ids for ${paths.length} files`);
  return out;
}

/** Marks index entries assume-valid, so git never reads (and converts) those files. */
export async function markAssumeValid(repo: RepoInfo, index: string, paths: Buffer[]): Promise<void> {
  if (!paths.length) return;
  const input = Buffer.concat(paths.flatMap((p) => [p, Buffer.from([0])]));
  await run(repo, ['update-index', '-z', '--assume-unchanged', '--stdin'], { index, input });
}

/** A file of the conversion set as the warm state keeps it: W's entry and its stat signature. */
export interface ConversionEntry {
  raw: Buffer;
  mode: string;
  sha: string;
  /** `statSignature` when its blob was taken ('' = hash it again next time). */
  sig: string;
}

/**
 * What a full walk must hash raw itself: `convert`, the regular files an attribute converts
 * (the conversion set), and `rehash`, every other regular file of the index when the user's
 * `core.autocrlf` may have converted the blob the real index holds. `files`: the index's regular
 * files and the walk's untracked ones, minus what the walk leaves out.
 */
export async function conversionsOfWalk(repo: RepoInfo, settings: RepoSettings, attributes: boolean, indexFiles: Buffer[], untracked: Buffer[]): Promise<{ convert: Buffer[]; rehash: Buffer[] }> {
  const isFile = (p: Buffer): boolean => {
    try {
      return fs.lstatSync(Buffer.concat([Buffer.from(`${repo.root}/`), p])).isFile();
    } catch {
      return false;
    }
  };
  const converting = attributes ? await convertingPaths(repo, [...indexFiles, ...untracked]) : new Set<string>();
  const convert = [...indexFiles, ...untracked].filter((p) => converting.has(relKey(p)) && isFile(p));
  const rehash = settings.autocrlf ? indexFiles.filter((p) => !converting.has(relKey(p)) && isFile(p)) : [];
  return { convert, rehash };
}

/** Entries of the conversion set whose file is not as its signature says (status mode looks at them). */
export function changedConversions(root: string, conv: ConversionEntry[], nowMs: number): ConversionEntry[] {
  const prefix = Buffer.from(`${root}/`);
  return conv.filter((e) => !e.sig || statSignature(Buffer.concat([prefix, e.raw]), nowMs) !== e.sig);
}
