/**
 * Tests for src/engine/tools/confined-fs.ts in both of its ways (directories held open and entered
 * through /proc/self/fd on Linux; components reached by path and verified elsewhere, forced here
 * with `setDescriptorPaths(false)`): what `openInWorkspace` returns for files, directories,
 * missing and special entries; a component that became a symlink after resolution is a change
 * (never followed); `writeInWorkspace` writes atomically, creates parents, keeps modes, leaves no
 * temporary file and refuses directories and special files.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DirCursor, PathChanged, openInWorkspace, setDescriptorPaths, writeInWorkspace } from '../../src/engine/tools/confined-fs';
import { ToolError } from '../../src/engine/tools/types';
import { resolveInWorkspace } from '../../src/engine/tools/workspace-path';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const modes: Array<[string, boolean]> = [
  ...(process.platform === 'linux' ? [['descriptor paths', true] as [string, boolean]] : []),
  ['path and verify', false],
];

for (const [mode, descriptors] of modes) {
  describe(`confined-fs (${mode})`, () => {
    let base: string;
    let root: string;
    let outside: string;
    let previous: boolean;

    beforeEach(() => {
      previous = setDescriptorPaths(descriptors);
      base = fs.realpathSync(makeTmpDir('vox-confined-'));
      root = path.join(base, 'ws');
      outside = path.join(base, 'out');
      fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
      fs.mkdirSync(outside);
      fs.writeFileSync(path.join(root, 'sub', 'a.txt'), 'inside');
      fs.writeFileSync(path.join(outside, 'a.txt'), 'OUTSIDE');
    });
    afterEach(() => {
      setDescriptorPaths(previous);
      removeTmpDir(base);
    });

    it('opens files, directories and symlinks that stay inside, and says what is missing or special', async () => {
      const file = await openInWorkspace(root, 'sub/a.txt');
      assert.equal(file.entry.kind, 'file');
      if (file.entry.kind === 'file') {
        assert.equal((await file.entry.handle.readFile()).toString(), 'inside');
        await file.entry.handle.close();
      }
      fs.symlinkSync('sub', path.join(root, 'alias'));
      const viaAlias = await openInWorkspace(root, 'alias/a.txt');
      assert.equal(viaAlias.resolved.realRelative, 'sub/a.txt');
      if (viaAlias.entry.kind === 'file') await viaAlias.entry.handle.close();
      const dir = await openInWorkspace(root, 'sub');
      assert.equal(dir.entry.kind, 'directory');
      if (dir.entry.kind === 'directory') {
        assert.deepEqual((await dir.entry.dir.entries()).map((d) => d.name), ['a.txt']);
        await dir.entry.dir.close();
      }
      assert.equal((await openInWorkspace(root, 'sub/none.txt')).entry.kind, 'missing');
      assert.equal((await openInWorkspace(root, 'sub/a.txt/deeper')).entry.kind, 'missing');
      execFileSync('mkfifo', [path.join(root, 'sub', 'pipe')]);
      const special = await openInWorkspace(root, 'sub/pipe');
      assert.equal(special.entry.kind, 'special');
      if (special.entry.kind === 'special') assert.ok(special.entry.stat.isFIFO());
    });

    it('a directory replaced by a symlink after resolution is a change, never followed', async () => {
      const resolved = await resolveInWorkspace(root, 'sub/a.txt');
      fs.renameSync(path.join(root, 'sub'), path.join(root, 'parked'));
      fs.symlinkSync(outside, path.join(root, 'sub'));
      const cursor = await DirCursor.open(resolved.realRoot);
      try {
        await assert.rejects(cursor.at(['sub']), PathChanged);
        await assert.rejects(cursor.at(['sub'], true), PathChanged);
        const top = await cursor.at([]);
        await assert.rejects(top.open('sub'), PathChanged);
      } finally {
        await cursor.close();
      }
      // The tools' entry points refuse the path (the resolver sees the symlink out).
      await assert.rejects(openInWorkspace(root, 'sub/a.txt'), (e: unknown) => e instanceof ToolError && e.code === 'pathEscape');
      await assert.rejects(writeInWorkspace(root, 'sub/new.txt', 'x'), (e: unknown) => e instanceof ToolError && e.code === 'pathEscape');
      assert.deepEqual(fs.readdirSync(outside), ['a.txt']);
    });

    it('writes atomically: parents created, mode kept, symlinks inside written through, no temporary file left', async () => {
      const created = await writeInWorkspace(root, 'new/dir/x.txt', 'héllo');
      assert.equal(created.existed, false);
      assert.equal(fs.readFileSync(path.join(root, 'new/dir/x.txt'), 'utf8'), 'héllo');
      fs.chmodSync(path.join(root, 'sub', 'a.txt'), 0o751);
      const before = fs.statSync(path.join(root, 'sub', 'a.txt')).ino;
      assert.equal((await writeInWorkspace(root, 'sub/a.txt', 'new')).existed, true);
      const st = fs.statSync(path.join(root, 'sub', 'a.txt'));
      assert.notEqual(st.ino, before);
      assert.equal(st.mode & 0o777, 0o751);
      fs.symlinkSync('sub/a.txt', path.join(root, 'link.txt'));
      assert.equal((await writeInWorkspace(root, 'link.txt', 'through')).resolved.realRelative, 'sub/a.txt');
      assert.ok(fs.lstatSync(path.join(root, 'link.txt')).isSymbolicLink());
      assert.equal(fs.readFileSync(path.join(root, 'sub', 'a.txt'), 'utf8'), 'through');
      assert.deepEqual(fs.readdirSync(path.join(root, 'sub')), ['a.txt']);
      assert.deepEqual(fs.readdirSync(path.join(root, 'new/dir')), ['x.txt']);
    });

    it('refuses to write over a directory or a FIFO, or into a path through a file', async () => {
      await assert.rejects(writeInWorkspace(root, 'sub', 'x'), (e: unknown) => e instanceof ToolError && e.code === 'io' && /directory/.test(e.message));
      execFileSync('mkfifo', [path.join(root, 'pipe')]);
      await assert.rejects(writeInWorkspace(root, 'pipe', 'x'), (e: unknown) => e instanceof ToolError && /pipe is a FIFO/.test(e.message));
      assert.ok(fs.lstatSync(path.join(root, 'pipe')).isFIFO());
      await assert.rejects(writeInWorkspace(root, 'sub/a.txt/x', 'x'), (e: unknown) => e instanceof ToolError && e.code === 'io');
      assert.deepEqual(fs.readdirSync(root).sort(), ['pipe', 'sub']);
    });
  });
}
