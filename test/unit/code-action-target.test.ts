/**
 * Apply to File's target (src/extension/code-actions/target.ts): a path inside a workspace folder
 * resolves (existing or new, relative or absolute); `..`, an absolute path elsewhere, a symbolic
 * link to outside, a folder and no workspace are refused with typed CodeActionErrors. Real files.
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
});
