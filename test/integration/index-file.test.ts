/**
 * The direct index reader (src/engine/git/index-file.ts) against real git: every index version it
 * accepts gives exactly what `git ls-files -s` says; what it does not handle is refused (null),
 * never misread.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readIndexEntries } from '../../src/engine/git/index-file';
import { gitBuf } from '../support/git';
import { initRepo } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** `ls-files -s` as a map path(latin1) → mode/sha, limited like the reader is. */
function lsFiles(repo: string, wanted: string[]): Map<string, { mode: string; sha: string }> {
  const out = new Map<string, { mode: string; sha: string }>();
  for (const rec of gitBuf(repo, ['ls-files', '-s', '-z']).toString('latin1').split('\0').filter(Boolean)) {
    const tab = rec.indexOf('\t');
    const [mode, sha] = rec.slice(0, tab).split(' ');
    const p = rec.slice(tab + 1);
    if (wanted.some((w) => p === w || p.startsWith(`${w}/`))) out.set(p, { mode: mode!, sha: sha! });
  }
  return out;
}

describe('index file reader', () => {
  let tmp: string;
  before(() => {
    tmp = makeTmpDir('vox-index-file-');
  });
  after(() => removeTmpDir(tmp));

  const wanted = ['ita.txt', 'dir', 'exec.sh', 'link', 'name with spaces', 'nope', 'long', 'long-dir', Buffer.from([0x6e, 0xe9]).toString('latin1'), 'sub'];
  const keys = wanted.map((w) => Buffer.from(w, 'latin1'));

  function makeRepo(name: string): string {
    const repo = initRepo(path.join(tmp, name), { 'dir/a.txt': 'a\n', 'dir/deep/b.txt': 'b\n', 'exec.sh': '#!/bin/sh\n', 'name with spaces': 's\n', 'zz.txt': 'z\n' });
    fs.symlinkSync('dir/a.txt', path.join(repo, 'link'));
    fs.chmodSync(path.join(repo, 'exec.sh'), 0o755);
    fs.writeFileSync(path.join(repo, 'long'), 'x');
    const deep = path.join(repo, 'long-dir', 'p'.repeat(200), 'q'.repeat(200), 'r'.repeat(200));
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(path.join(deep, 'f'), 'long path\n');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), Buffer.from([0x6e, 0xe9])]), 'latin1 name\n');
    initRepo(path.join(repo, 'sub'), { 's.txt': 's\n' });
    gitBuf(repo, ['add', '-A']);
    return repo;
  }

  for (const version of [2, 3, 4]) {
    it(`reads index version ${version} exactly as git ls-files -s (modes, symlinks, gitlinks, long and non-UTF-8 paths)`, async () => {
      const repo = makeRepo(`v${version}`);
      gitBuf(repo, ['update-index', '--index-version', String(version)]);
      // An intent-to-add entry carries extended flags (they make git write version 3 at least).
      if (version === 3) {
        fs.writeFileSync(path.join(repo, 'ita.txt'), 'later\n');
        gitBuf(repo, ['add', '-N', 'ita.txt']);
      }
      assert.equal(fs.readFileSync(path.join(repo, '.git', 'index')).readUInt32BE(4), version, 'the index has the version under test');
      const got = await readIndexEntries(path.join(repo, '.git', 'index'), keys, 40);
      assert.ok(got, 'readable');
      assert.deepEqual([...got.entries()].sort(), [...lsFiles(repo, wanted).entries()].sort());
      assert.equal(got.get('exec.sh')?.mode, '100755');
      assert.equal(got.get('link')?.mode, '120000');
      assert.equal(got.get('sub')?.mode, '160000');
      assert.ok(got.has('dir/deep/b.txt'), 'entries below a wanted directory');
      assert.ok(!got.has('zz.txt'));
    });
  }

  it('refuses (null) what it does not handle: skip-worktree, unmerged entries, garbage, truncation, a missing file', async () => {
    const repo = makeRepo('refuse');
    const index = path.join(repo, '.git', 'index');
    gitBuf(repo, ['update-index', '--skip-worktree', 'zz.txt']);
    assert.equal(await readIndexEntries(index, keys, 40), null, 'skip-worktree');
    gitBuf(repo, ['update-index', '--no-skip-worktree', 'zz.txt']);
    assert.ok(await readIndexEntries(index, keys, 40));
    const sha = gitBuf(repo, ['hash-object', '-w', '--stdin'], 'x\n').toString().trim();
    gitBuf(repo, ['update-index', '--index-info'], `100644 ${sha} 2\tconflict.txt\n`);
    assert.equal(await readIndexEntries(index, keys, 40), null, 'unmerged');
    const good = fs.readFileSync(index);
    fs.writeFileSync(index, good.subarray(0, good.length / 2));
    assert.equal(await readIndexEntries(index, keys, 40), null, 'truncated');
    fs.writeFileSync(index, Buffer.from('not an index at all'));
    assert.equal(await readIndexEntries(index, keys, 40), null, 'garbage');
    assert.equal(await readIndexEntries(path.join(repo, 'no-such-index'), keys, 40), null, 'missing');
  });
});
