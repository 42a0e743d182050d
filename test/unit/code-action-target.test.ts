/**
 * Apply to File's target (src/extension/code-actions/target.ts): a path inside a workspace folder
 * resolves (existing or new, relative or absolute); `..`, an absolute path elsewhere, a symbolic
 * link to outside (dangling or not), a file inside a `.git` directory, a folder and no workspace
 * are refused with typed CodeActionErrors whose message says why. Real files.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CodeActionError, resolveWorkspaceTarget } from '../../src/extension/code-actions/target';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('Apply to File: the target stays inside the workspace', () => {
  let dir: string;
  let ws: string;
  let other: string;
  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
    ws = path.join(dir, 'ws');
    other = path.join(dir, 'other');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(ws, 'src/app.ts'), 'old\n');
    fs.writeFileSync(path.join(other, 'secret.txt'), 'x');
  });
  afterEach(() => removeTmpDir(dir));

  const refused = (roots: string[], p: string, code: string) =>
    assert.throws(() => resolveWorkspaceTarget(roots, p), (e: unknown) => e instanceof CodeActionError && e.code === code && e.domain === 'codeAction');

  it('resolves existing and new files, relative or absolute, in any workspace folder', () => {
    assert.deepEqual(resolveWorkspaceTarget([ws], 'src/app.ts'), { root: ws, abs: path.join(ws, 'src/app.ts'), rel: 'src/app.ts', exists: true });
    const fresh = resolveWorkspaceTarget([ws], './src/new/dir/file.py');
    assert.deepEqual([fresh.rel, fresh.exists], ['src/new/dir/file.py', false]);
    assert.equal(resolveWorkspaceTarget([ws], path.join(ws, 'src/app.ts')).rel, 'src/app.ts');
    const second = resolveWorkspaceTarget([ws, other], path.join(other, 'secret.txt'));
    assert.deepEqual([second.root, second.rel], [other, 'secret.txt']);
  });

  it('refuses .., absolute paths elsewhere, links to outside, folders, empty paths and no workspace', () => {
    refused([ws], '../other/secret.txt', 'outsideWorkspace');
    refused([ws], 'src/../../other/secret.txt', 'outsideWorkspace');
    refused([ws], path.join(other, 'secret.txt'), 'outsideWorkspace');
    refused([ws], '/etc/passwd', 'outsideWorkspace');
    fs.symlinkSync(other, path.join(ws, 'link'));
    refused([ws], 'link/secret.txt', 'outsideWorkspace');
    refused([ws], 'link/new-file.txt', 'outsideWorkspace');
    refused([ws], 'src', 'notAFile');
    refused([ws], '.', 'outsideWorkspace');
    refused([ws], '   ', 'invalidPath');
    refused([], 'src/app.ts', 'noWorkspace');
  });

  it('refuses a dangling symlink whose target is outside, and a symlink inside pointing out, saying why', () => {
    // A link to a file that does not exist (yet) outside: writing through it would create that file.
    fs.symlinkSync(path.join(other, 'not-yet.txt'), path.join(ws, 'dangling'));
    refused([ws], 'dangling', 'outsideWorkspace');
    assert.throws(() => resolveWorkspaceTarget([ws], 'dangling'), /symbolic link.*outside the workspace/);
    // The same through a relative link, and through a link in a subfolder to a missing folder outside.
    fs.symlinkSync('../../other/missing/deeper.txt', path.join(ws, 'src/rel-dangling'));
    refused([ws], 'src/rel-dangling', 'outsideWorkspace');
    fs.symlinkSync(path.join(other, 'no-dir'), path.join(ws, 'src/dir-link'));
    refused([ws], 'src/dir-link/new.txt', 'outsideWorkspace');
    // A link inside pointing at an existing file outside.
    fs.symlinkSync(path.join(other, 'secret.txt'), path.join(ws, 'src/out.txt'));
    refused([ws], 'src/out.txt', 'outsideWorkspace');
    // A dangling link whose target is inside resolves to that target; a link loop is refused.
    fs.symlinkSync('app-new.ts', path.join(ws, 'src/in-link'));
    assert.deepEqual(resolveWorkspaceTarget([ws], 'src/in-link'), { root: ws, abs: path.join(ws, 'src/app-new.ts'), rel: 'src/app-new.ts', exists: false });
    fs.symlinkSync('loop-b', path.join(ws, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(ws, 'loop-b'));
    refused([ws], 'loop-a', 'invalidPath');
    assert.ok(!fs.existsSync(path.join(other, 'not-yet.txt')));
  });

  it('refuses .git/hooks/pre-commit and anything else inside a .git directory, saying why', () => {
    fs.mkdirSync(path.join(ws, '.git/hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.git/hooks/pre-commit.sample'), '#!/bin/sh\n');
    for (const p of ['.git/hooks/pre-commit', '.git/config', path.join(ws, '.git/hooks/pre-commit'), 'src/../.git/hooks/post-checkout', '.GIT/hooks/pre-push', 'vendor/lib/.git/hooks/pre-commit']) {
      refused([ws], p, 'protectedPath');
      assert.throws(() => resolveWorkspaceTarget([ws], p), /inside a \.git folder/);
    }
    // Through a link whose real place is the git directory.
    fs.symlinkSync(path.join(ws, '.git/hooks'), path.join(ws, 'hooks'));
    refused([ws], 'hooks/pre-commit', 'protectedPath');
    // A name that merely contains .git is fine.
    assert.equal(resolveWorkspaceTarget([ws], 'src/.gitignore').rel, 'src/.gitignore');
    assert.equal(resolveWorkspaceTarget([ws], 'my.git/file').rel, 'my.git/file');
  });
});
