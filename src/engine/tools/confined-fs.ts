/**
 * Opening workspace files without a gap between the confinement check and the use. Owns
 * `WorkspaceDir` (an open directory of the workspace whose entries are reached without following
 * symlinks), `DirCursor` (a chain of them from the root, reused between neighbouring paths),
 * `openInWorkspace` (resolve, then open what the path names) and `writeInWorkspace` (the atomic
 * write every write tool uses), and the rule that no tool opens a FIFO, socket or device.
 *
 * `resolveInWorkspace` (./workspace-path.ts) proves a path's real location is inside; a swapper
 * could then replace a directory of that path with a symlink before the path is used. So the
 * resolved real path, which has no symlink in it, is opened one component at a time from the
 * root, refusing any component that is now a symlink:
 * - on Linux each directory is held open and the next name is reached through
 *   `/proc/self/fd/<fd>/<name>` with O_NOFOLLOW (openat(2) semantics: the name is looked up in
 *   that very directory, whatever its path has become); the temporary file and the rename of an
 *   atomic write happen inside the held directory too, so nothing is ever created outside;
 * - elsewhere (macOS, Windows) components are reached by path and each step is verified after
 *   the fact (the directory's realpath is unchanged; the opened file is the inode now at its
 *   path), which keeps file contents confined; a name seen during a swap, or an empty temporary
 *   file or directory created through a swapped directory, cannot be ruled out there.
 * Files are opened with O_NONBLOCK after an lstat says they are regular, and the descriptor's
 * fstat must be that same regular file: a FIFO, socket or device is never opened. An entry that
 * changed mid-open is retried (CONFINED_OPEN_ATTEMPTS) and then refused as `pathEscape`.
 */
import { constants as C, existsSync, promises as fs, type Dirent, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { ToolError } from './types';
import { resolveInWorkspace, type ResolvedPath } from './workspace-path';

/** Times a path is resolved and opened again after it changed mid-open, before it is refused. */
export const CONFINED_OPEN_ATTEMPTS = 3;
/** Random bytes in a temporary file's name; enough that concurrent writers never collide. */
const TEMP_NAME_RANDOM_BYTES = 6;
/** Characters of the target's name kept in its temporary file's name (NAME_MAX is 255 bytes). */
const TEMP_NAME_BASE_CHARS = 100;

const O_NOFOLLOW = C.O_NOFOLLOW ?? 0;
const O_NONBLOCK = C.O_NONBLOCK ?? 0;
const O_DIRECTORY = C.O_DIRECTORY ?? 0;

/** Whether directories are held open and entered through /proc/self/fd (Linux). */
let descriptorPaths = process.platform === 'linux' && existsSync('/proc/self/fd');

/** For tests: use the path-and-verify way even where /proc/self/fd exists. Returns the previous setting. */
export function setDescriptorPaths(enabled: boolean): boolean {
  const was = descriptorPaths;
  descriptorPaths = enabled && process.platform === 'linux';
  return was;
}

/** An entry changed between two steps of an open (e.g. a directory became a symlink): the open is retried. */
export class PathChanged extends Error {
  override readonly name = 'PathChanged';
}

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

/** "a FIFO (named pipe)", "a socket", … for messages. */
export function fileKind(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'a special file';
}

/** The message every tool gives for a FIFO, socket or device. */
export function specialFileMessage(rel: string, st: Stats): string {
  return `${rel} is ${fileKind(st)}, not a regular file; tools never open FIFOs, sockets or devices.`;
}

/** What a name in a directory turned out to be; a `file` or `directory` is open and the caller closes it. */
export type Entry =
  | { kind: 'file'; handle: FileHandle; stat: Stats }
  | { kind: 'directory'; dir: WorkspaceDir }
  | { kind: 'special'; stat: Stats }
  | { kind: 'missing' };

const sameFile = (a: Stats, b: Stats): boolean => a.dev === b.dev && a.ino === b.ino;

/** An open directory of the workspace; its entries are reached without following symlinks. */
export class WorkspaceDir {
  private constructor(
    /** Real workspace-relative path, forward slashes; `.` for the root. */
    readonly rel: string,
    private readonly abs: string,
    /** Held open on Linux; undefined where entries are reached by path. */
    private readonly handle: FileHandle | undefined,
  ) {}

  static async openRoot(realRoot: string): Promise<WorkspaceDir> {
    if (!descriptorPaths) return new WorkspaceDir('.', realRoot, undefined);
    try {
      return new WorkspaceDir('.', realRoot, await fs.open(realRoot, C.O_RDONLY | O_DIRECTORY));
    } catch (e) {
      throw new ToolError('io', `Workspace root ${realRoot} is not accessible: ${(e as Error).message}`);
    }
  }

  /** How the OS reaches `name` in this directory. */
  private at(name: string): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.abs, name);
  }

  childRel(name: string): string {
    return this.rel === '.' ? name : `${this.rel}/${name}`;
  }

  /** Path-and-verify mode: the directory must still be where it was, with no symlink on the way. */
  private async verify(): Promise<void> {
    if (this.handle) return;
    const now = await fs.realpath(this.abs).catch(() => undefined);
    if (now !== this.abs) throw new PathChanged(`${this.rel} moved`);
  }

  async entries(): Promise<Dirent[]> {
    const list = await fs.readdir(this.handle ? `/proc/self/fd/${this.handle.fd}` : this.abs, { withFileTypes: true });
    await this.verify();
    return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The entry's own metadata (a symlink is not followed); undefined when there is none. */
  async lstat(name: string): Promise<Stats | undefined> {
    try {
      return await fs.lstat(this.at(name));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return undefined;
      throw e;
    }
  }

  /** Opens what `name` is: a regular file or a directory (open), or says it is special or missing. A symlink is a change. */
  async open(name: string): Promise<Entry> {
    const st = await this.lstat(name);
    if (st === undefined) return { kind: 'missing' };
    if (st.isSymbolicLink()) throw new PathChanged(`${this.childRel(name)} is a symbolic link now`);
    if (st.isDirectory()) return { kind: 'directory', dir: await this.subdir(name) };
    if (!st.isFile()) return { kind: 'special', stat: st };
    let handle: FileHandle;
    try {
      handle = await fs.open(this.at(name), C.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENXIO') throw new PathChanged(`${this.childRel(name)} changed`);
      throw e;
    }
    try {
      const opened = await handle.stat();
      if (!opened.isFile() || !sameFile(opened, st)) throw new PathChanged(`${this.childRel(name)} was replaced`);
      if (!this.handle) {
        await this.verify();
        const now = await this.lstat(name);
        if (now === undefined || !sameFile(now, opened)) throw new PathChanged(`${this.childRel(name)} was replaced`);
      }
      return { kind: 'file', handle, stat: opened };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /** The subdirectory `name`; a symlink there is a change (PathChanged), a missing one ENOENT, a file ENOTDIR. */
  async subdir(name: string): Promise<WorkspaceDir> {
    const rel = this.childRel(name);
    const notDirectory = (): Error => Object.assign(new Error(`${rel} is not a directory`), { code: 'ENOTDIR' });
    if (!this.handle) {
      const st = await fs.lstat(this.at(name));
      if (st.isSymbolicLink()) throw new PathChanged(`${rel} is a symbolic link now`);
      if (!st.isDirectory()) throw notDirectory();
      await this.verify();
      return new WorkspaceDir(rel, this.at(name), undefined);
    }
    try {
      return new WorkspaceDir(rel, path.join(this.abs, name), await fs.open(this.at(name), C.O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ELOOP') throw new PathChanged(`${rel} is a symbolic link now`);
      if (code !== 'ENOTDIR') throw e;
      // Only a name that stays a file (or a special file) is "not a directory"; anything else changed under us.
      const now = await this.lstat(name);
      if (now === undefined || now.isSymbolicLink() || now.isDirectory()) throw new PathChanged(`${rel} changed`);
      throw notDirectory();
    }
  }

  /** The subdirectory `name`, created (mode 0777 less the umask) when missing. */
  async subdirOrCreate(name: string): Promise<WorkspaceDir> {
    try {
      await fs.mkdir(this.at(name));
      await this.verify();
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') throw e;
    }
    try {
      return await this.subdir(name);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new PathChanged(`${this.childRel(name)} vanished`); // it existed a moment ago
      throw e;
    }
  }

  /** Creates `name` exclusively for writing (never through a symlink). */
  async createExclusive(name: string, mode: number): Promise<FileHandle> {
    const handle = await fs.open(this.at(name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | O_NOFOLLOW, mode);
    try {
      await this.verify();
    } catch (e) {
      await handle.close();
      await fs.rm(this.at(name), { force: true }).catch(() => undefined); // best effort: created through a swapped directory
      throw e;
    }
    return handle;
  }

  async rename(from: string, to: string): Promise<void> {
    await fs.rename(this.at(from), this.at(to));
  }

  async remove(name: string): Promise<void> {
    await fs.rm(this.at(name), { force: true });
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
  }
}

/** A chain of open directories from the workspace root; `at` reuses the prefix it shares with the last chain. */
export class DirCursor {
  private readonly names: string[] = [];
  private readonly dirs: WorkspaceDir[];

  private constructor(root: WorkspaceDir) {
    this.dirs = [root];
  }

  static async open(realRoot: string): Promise<DirCursor> {
    return new DirCursor(await WorkspaceDir.openRoot(realRoot));
  }

  /**
   * The directory at real components `comps` below the root (missing ones created with `create`).
   * Throws PathChanged when a component is a symlink or no directory now, ENOENT when one is missing.
   */
  async at(comps: readonly string[], create = false): Promise<WorkspaceDir> {
    let keep = 0;
    while (keep < this.names.length && keep < comps.length && this.names[keep] === comps[keep]) keep++;
    while (this.names.length > keep) {
      this.names.pop();
      await this.dirs.pop()!.close();
    }
    for (let i = keep; i < comps.length; i++) {
      const parent = this.dirs[this.dirs.length - 1]!;
      const next = create ? await parent.subdirOrCreate(comps[i]!) : await parent.subdir(comps[i]!);
      this.names.push(comps[i]!);
      this.dirs.push(next);
    }
    return this.dirs[this.dirs.length - 1]!;
  }

  async close(): Promise<void> {
    for (const d of this.dirs.splice(0).reverse()) await d.close();
    this.names.length = 0;
  }
}

/** Real components of a resolved path (`[]` for the root). */
export function components(realRelative: string): string[] {
  return realRelative === '.' ? [] : realRelative.split('/');
}

/** Runs `attempt` until it does not report a change, then refuses the path as `pathEscape`. */
async function retrying<T>(userPath: string, attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof PathChanged)) throw e;
      if (i >= CONFINED_OPEN_ATTEMPTS) {
        throw new ToolError(
          'pathEscape',
          `Path ${JSON.stringify(userPath)} is refused: it kept changing while it was being opened ` +
            '(a directory or file on the way was replaced, e.g. by a symbolic link).',
        );
      }
    }
  }
}

function ioError(rel: string, e: unknown): ToolError {
  return e instanceof ToolError ? e : new ToolError('io', `Cannot access ${rel}: ${(e as Error).message}`);
}

/** Resolves `userPath` and opens what it names, race-free. The caller closes an open file or directory. */
export async function openInWorkspace(root: string, userPath: string): Promise<{ resolved: ResolvedPath; entry: Entry }> {
  return retrying(userPath, async () => {
    const resolved = await resolveInWorkspace(root, userPath);
    const comps = components(resolved.realRelative);
    if (comps.length === 0) return { resolved, entry: { kind: 'directory', dir: await WorkspaceDir.openRoot(resolved.realRoot) } };
    const cursor = await DirCursor.open(resolved.realRoot);
    try {
      const parent = await cursor.at(comps.slice(0, -1));
      return { resolved, entry: await parent.open(comps[comps.length - 1]!) };
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return { resolved, entry: { kind: 'missing' } as Entry };
      if (e instanceof PathChanged) throw e;
      throw ioError(resolved.relative, e);
    } finally {
      await cursor.close();
    }
  });
}

function tempName(name: string): string {
  return `.${name.slice(0, TEMP_NAME_BASE_CHARS)}.vox-${process.pid}-${randomBytes(TEMP_NAME_RANDOM_BYTES).toString('hex')}.tmp`;
}

/**
 * Writes `data` to the workspace file `userPath` atomically: a temporary file created in the target's
 * own (held) directory, then renamed over the target, so readers never see a half-written file and
 * nothing is created outside. Parent directories are created; an existing file keeps its permission
 * bits; a symlink inside the workspace is written through. Refuses directories and special files.
 */
export async function writeInWorkspace(root: string, userPath: string, data: string | Uint8Array): Promise<{ resolved: ResolvedPath; existed: boolean }> {
  return retrying(userPath, async () => {
    const resolved = await resolveInWorkspace(root, userPath, { forWrite: true });
    const comps = components(resolved.realRelative);
    const name = comps.pop();
    if (name === undefined) throw new ToolError('invalidArguments', 'A file path is needed, not the workspace root.');
    const shown = path.basename(resolved.realRelative);
    const cursor = await DirCursor.open(resolved.realRoot);
    try {
      let dir: WorkspaceDir;
      try {
        dir = await cursor.at(comps, true);
      } catch (e) {
        if (e instanceof PathChanged) throw e;
        throw new ToolError('io', `Cannot create directory for ${shown}: ${(e as Error).message}`);
      }
      const st = await dir.lstat(name);
      if (st?.isSymbolicLink()) throw new PathChanged(`${resolved.realRelative} is a symbolic link now`);
      if (st?.isDirectory()) throw new ToolError('io', `Cannot write ${shown}: it is a directory.`);
      if (st && !st.isFile()) throw new ToolError('io', `Cannot write ${shown}: ${specialFileMessage(resolved.realRelative, st)}`);
      const mode = st ? st.mode & 0o7777 : undefined;
      const temp = tempName(name);
      try {
        const fh = await dir.createExclusive(temp, mode ?? 0o666);
        try {
          await fh.writeFile(data);
          await fh.sync();
          if (mode !== undefined) await fh.chmod(mode); // open() applies the umask; restore the exact bits
        } finally {
          await fh.close();
        }
        await dir.rename(temp, name);
      } catch (e) {
        await dir.remove(temp).catch(() => undefined);
        if (e instanceof PathChanged) throw e;
        throw new ToolError('io', `Cannot write ${shown}: ${(e as Error).message}`);
      }
      return { resolved, existed: st !== undefined };
    } finally {
      await cursor.close();
    }
  });
}
