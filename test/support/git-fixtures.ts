/**
 * Real git repositories for checkpoint tests: creation (`initRepo`), byte-exact snapshots of a
 * working tree (file names as raw bytes, content, executable bit, symlink targets) and of a
 * commit's tree, and their differences. Git runs through test/support/git.ts; the user-visible
 * git state a checkpoint must never change is test/support/user-repo.ts's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitBuf } from './git';

// Re-exported for tests that still import the runner from here (checkpoint-service, cli-vcs).
export { gitBuf, gitOut } from './git';

/** `git init` with an initial commit of `files` (omit files for a repository with no commits). */
export function initRepo(dir: string, files?: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  gitBuf(dir, ['init', '-q', '-b', 'main']);
  if (files) {
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), content);
    }
    gitBuf(dir, ['add', '-A']);
    gitBuf(dir, ['commit', '-q', '-m', 'initial']);
  }
  return dir;
}

export type Entry = { kind: 'file'; content: Buffer; executable: boolean } | { kind: 'symlink'; target: Buffer };

/**
 * Byte-exact picture of a working tree: key = path relative to `root` as latin1 (one char per
 * byte, so any name round-trips), directories omitted (git does not track empty ones).
 * `skip(relLatin1)` leaves a subtree out (`.git` directories are always left out).
 */
export function treeSnapshot(root: string, skip: (rel: string) => boolean = () => false): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (absDir: Buffer, relDir: string): void => {
    for (const name of fs.readdirSync(absDir, { encoding: 'buffer' })) {
      const rel = relDir ? `${relDir}/${name.toString('latin1')}` : name.toString('latin1');
      if (name.toString('latin1') === '.git' || skip(rel)) continue;
      const abs = Buffer.concat([absDir, Buffer.from('/'), name]);
      const st = fs.lstatSync(abs);
      if (st.isSymbolicLink()) out.set(rel, { kind: 'symlink', target: fs.readlinkSync(abs, { encoding: 'buffer' }) });
      else if (st.isDirectory()) walk(abs, rel);
      else out.set(rel, { kind: 'file', content: fs.readFileSync(abs), executable: (st.mode & 0o100) !== 0 });
    }
  };
  walk(Buffer.from(root), '');
  return out;
}

/** Human-readable differences between two snapshots (empty when equal). */
export function snapshotDiff(expected: Map<string, Entry>, actual: Map<string, Entry>): string[] {
  const problems: string[] = [];
  const show = (k: string): string => JSON.stringify(Buffer.from(k, 'latin1').toString('utf8'));
  for (const [k, e] of expected) {
    const a = actual.get(k);
    if (!a) problems.push(`missing ${show(k)}`);
    else if (a.kind !== e.kind) problems.push(`${show(k)} is a ${a.kind}, expected a ${e.kind}`);
    else if (e.kind === 'file' && a.kind === 'file' && !e.content.equals(a.content)) problems.push(`${show(k)} content differs`);
    else if (e.kind === 'file' && a.kind === 'file' && e.executable !== a.executable) problems.push(`${show(k)} executable bit is ${a.executable}, expected ${e.executable}`);
    else if (e.kind === 'symlink' && a.kind === 'symlink' && !e.target.equals(a.target)) problems.push(`${show(k)} symlink target differs`);
  }
  for (const k of actual.keys()) if (!expected.has(k)) problems.push(`unexpected ${show(k)}`);
  return problems;
}

/** Path helper for names given as raw bytes. */
export function bytesPath(root: string, ...parts: Array<string | Buffer>): Buffer {
  return Buffer.concat(parts.flatMap((p, i) => [Buffer.from(i === 0 ? `${root}/` : '/'), typeof p === 'string' ? Buffer.from(p) : p]));
}

/**
 * The files of `commit`'s tree in the repository at `cwd`, in the same form as `treeSnapshot`
 * (gitlinks left out): what a checkpoint holds, to compare with a model of what it should hold.
 */
export function commitSnapshot(cwd: string, commit: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const entries = gitBuf(cwd, ['ls-tree', '-r', '-z', '--full-tree', commit])
    .toString('latin1')
    .split('\0')
    .filter(Boolean)
    .map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, type, sha] = rec.slice(0, tab).split(' ');
      return { mode: mode!, type: type!, sha: sha!, path: rec.slice(tab + 1) };
    })
    .filter((e) => e.type === 'blob');
  if (!entries.length) return out;
  // One `cat-file --batch` for every blob: `<sha> blob <size>\n<content>\n` per object.
  const batch = gitBuf(cwd, ['cat-file', '--batch'], entries.map((e) => `${e.sha}\n`).join(''));
  let at = 0;
  for (const e of entries) {
    const nl = batch.indexOf(0x0a, at);
    const size = Number(batch.subarray(at, nl).toString('latin1').split(' ')[2]);
    const content = Buffer.from(batch.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
    out.set(e.path, e.mode === '120000' ? { kind: 'symlink', target: content } : { kind: 'file', content, executable: e.mode === '100755' });
  }
  return out;
}
