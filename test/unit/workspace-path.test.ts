/**
 * Tests for src/engine/tools/workspace-path.ts on a real temporary directory: every escape
 * route (`..`, absolute paths, NUL, Windows separators, drive letters, symlinked files and
 * directories, dangling symlinks, symlink loops) is refused with `pathEscape`, writes into `.git`
 * are refused, and ordinary nested or not-yet-existing paths resolve to the right place.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveInWorkspace } from '../../src/engine/tools/workspace-path';
import { ToolError } from '../../src/engine/tools/types';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

async function refused(p: Promise<unknown>, code = 'pathEscape', pattern?: RegExp): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ToolError, `expected ToolError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (pattern) assert.match(e.message, pattern);
    return e;
  }
  assert.fail('expected the path to be refused');
}

describe('resolveInWorkspace', () => {
  let base: string;
  let root: string;
  let outside: string;

  beforeEach(() => {
    base = fs.realpathSync(makeTmpDir('vox-wspath-'));
    root = path.join(base, 'ws');
    outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(root, 'src', 'deep'), { recursive: true });
    fs.mkdirSync(path.join(root, '.git'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, 'src', 'deep', 'a.ts'), 'a');
    fs.writeFileSync(path.join(root, '.git', 'config'), '[core]');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  });
  afterEach(() => removeTmpDir(base));

  describe('refuses escapes', () => {
    for (const p of ['../x', '..', 'a/../../x', 'src/../../outside/secret.txt', './src/deep/../../../x']) {
      it(`relative escape ${p}`, async () => {
        await refused(resolveInWorkspace(root, p), 'pathEscape', /outside the workspace/);
      });
    }

    it('absolute paths outside the root', async () => {
      await refused(resolveInWorkspace(root, '/etc/passwd'));
      await refused(resolveInWorkspace(root, path.join(outside, 'secret.txt')));
      // A sibling whose name starts with the root's name is still outside.
      fs.mkdirSync(`${root}2`);
      await refused(resolveInWorkspace(root, `${root}2/x`));
    });

    it('NUL bytes and empty paths', async () => {
      await refused(resolveInWorkspace(root, 'src/a.ts\0.png'), 'pathEscape', /NUL/);
      await refused(resolveInWorkspace(root, ''), 'pathEscape', /empty/);
      await refused(resolveInWorkspace(root, '   '), 'pathEscape', /empty/);
    });

    it('Windows-style backslashes, drive letters and UNC paths', async () => {
      await refused(resolveInWorkspace(root, '..\\x'));
      await refused(resolveInWorkspace(root, 'src\\..\\..\\x'));
      if (process.platform !== 'win32') {
        await refused(resolveInWorkspace(root, 'C:\\Windows\\system.ini'));
        await refused(resolveInWorkspace(root, '\\\\server\\share\\x'));
      }
    });

    it('a symlinked file pointing outside', async () => {
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
      await refused(resolveInWorkspace(root, 'link.txt'), 'pathEscape', /symbolic link/);
      await refused(resolveInWorkspace(root, 'link.txt', { forWrite: true }), 'pathEscape', /symbolic link/);
    });

    it('a symlinked directory pointing outside, for read and for write of a new file', async () => {
      fs.symlinkSync(outside, path.join(root, 'out'), 'dir');
      await refused(resolveInWorkspace(root, 'out/secret.txt'));
      await refused(resolveInWorkspace(root, 'out'));
      await refused(resolveInWorkspace(root, 'out/new-file.txt', { forWrite: true }));
      await refused(resolveInWorkspace(root, 'out/new-dir/deeper/file.txt', { forWrite: true }));
    });

    it('a dangling symlink whose target would be created outside', async () => {
      fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(root, 'dangling.txt'));
      fs.symlinkSync(path.join(outside, 'no-dir'), path.join(root, 'dangling-dir'));
      await refused(resolveInWorkspace(root, 'dangling.txt', { forWrite: true }));
      await refused(resolveInWorkspace(root, 'dangling-dir/x.txt', { forWrite: true }));
    });

    it('a symlink loop', async () => {
      fs.symlinkSync(path.join(root, 'loop-b'), path.join(root, 'loop-a'));
      fs.symlinkSync(path.join(root, 'loop-a'), path.join(root, 'loop-b'));
      await refused(resolveInWorkspace(root, 'loop-a/x', { forWrite: true }), 'pathEscape', /symbolic links/);
    });

    it('writes inside .git, however spelled, but not reads', async () => {
      await refused(resolveInWorkspace(root, '.git/config', { forWrite: true }), 'pathEscape', /\.git/);
      await refused(resolveInWorkspace(root, '.git', { forWrite: true }));
      await refused(resolveInWorkspace(root, 'sub/.git/hooks/pre-commit', { forWrite: true }));
      await refused(resolveInWorkspace(root, '.GIT/config', { forWrite: true }));
      await refused(resolveInWorkspace(root, '.git\\config', { forWrite: true }));
      fs.symlinkSync(path.join(root, '.git'), path.join(root, 'gitlink'));
      await refused(resolveInWorkspace(root, 'gitlink/config', { forWrite: true }));
      const read = await resolveInWorkspace(root, '.git/config');
      assert.equal(read.relative, '.git/config');
      // A file merely named like .git is fine.
      assert.equal((await resolveInWorkspace(root, '.gitignore', { forWrite: true })).relative, '.gitignore');
    });
  });

  describe('allows', () => {
    it('nested existing files, with forward-slash relative paths', async () => {
      const r = await resolveInWorkspace(root, 'src/deep/a.ts');
      assert.equal(r.absolute, path.join(root, 'src', 'deep', 'a.ts'));
      assert.equal(r.relative, 'src/deep/a.ts');
      assert.equal(r.real, r.absolute);
      assert.equal(r.realRelative, 'src/deep/a.ts');
    });

    it('non-existing new files in new directories', async () => {
      const r = await resolveInWorkspace(root, 'new/dir/file.txt', { forWrite: true });
      assert.equal(r.absolute, path.join(root, 'new', 'dir', 'file.txt'));
      assert.equal(r.relative, 'new/dir/file.txt');
    });

    it('backslash separators, redundant segments and harmless ..', async () => {
      assert.equal((await resolveInWorkspace(root, 'src\\deep\\a.ts')).relative, 'src/deep/a.ts');
      assert.equal((await resolveInWorkspace(root, './src//deep/../deep/a.ts')).relative, 'src/deep/a.ts');
    });

    it('the root itself and absolute paths inside it', async () => {
      assert.equal((await resolveInWorkspace(root, '.')).relative, '.');
      assert.equal((await resolveInWorkspace(root, path.join(root, 'src'))).relative, 'src');
    });

    it('symlinks that stay inside, reporting the real target', async () => {
      fs.symlinkSync(path.join(root, 'src'), path.join(root, 'alias'), 'dir');
      const r = await resolveInWorkspace(root, 'alias/deep/a.ts', { forWrite: true });
      assert.equal(r.relative, 'alias/deep/a.ts');
      assert.equal(r.realRelative, 'src/deep/a.ts');
      assert.equal(r.real, path.join(root, 'src', 'deep', 'a.ts'));
    });

    it('a root given through a symlink', async () => {
      const viaLink = path.join(base, 'ws-link');
      fs.symlinkSync(root, viaLink, 'dir');
      const r = await resolveInWorkspace(viaLink, 'src/deep/a.ts');
      assert.equal(r.real, path.join(root, 'src', 'deep', 'a.ts'));
      assert.equal((await resolveInWorkspace(viaLink, path.join(viaLink, 'src'))).relative, 'src');
      await refused(resolveInWorkspace(viaLink, '../outside/secret.txt'));
    });
  });
});
