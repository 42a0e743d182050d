/**
 * Checkpoints with two processes on one repository (VS Code and the `vox` CLI, or two windows):
 * two restores at the same moment run one after the other, so the working tree ends equal to
 * one checkpoint or the other — never a mix of both; the user's repository state is untouched.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { initRepo } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';

/** Files each checkpoint writes: enough that two unserialised restores interleave. */
const FILES = 400;

describe('checkpoints: two processes on one repository', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    dir = makeTmpDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`d${i % 20}/f${i}.txt`] = 'base\n';
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), files));
    env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
  });
  afterEach(() => removeTmpDir(dir));

  const writeAll = (text: string) => {
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(repo, `d${i % 20}`, `f${i}.txt`), text);
  };
  const contents = () => new Set(Array.from({ length: FILES }, (_, i) => fs.readFileSync(path.join(repo, `d${i % 20}`, `f${i}.txt`), 'utf8')));

  it('two restores at once from two processes: the tree is one checkpoint or the other, never mixed', async () => {
    const before = userRepoState(repo);
    writeAll('version A\n');
    assert.equal((await runVox(['checkpoint', 'capture', '--cwd', repo], env)).code, 0);
    writeAll('version B\n');
    assert.equal((await runVox(['checkpoint', 'capture', '--cwd', repo], env)).code, 0);
    for (let round = 0; round < 3; round++) {
      writeAll(`working ${round}\n`);
      const [a, b] = await Promise.all([
        runVox(['checkpoint', 'restore', '1', '--cwd', repo], env),
        runVox(['checkpoint', 'restore', '2', '--cwd', repo], env),
      ]);
      assert.equal(a.code, 0, a.err);
      assert.equal(b.code, 0, b.err);
      const seen = contents();
      assert.equal(seen.size, 1, `round ${round}: the tree mixes ${[...seen].map((s) => JSON.stringify(s)).join(' and ')}`);
      assert.ok(seen.has('version A\n') || seen.has('version B\n'));
    }
    assert.deepEqual(userRepoState(repo), before);
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('vox-lease-')), [], 'no lock left behind');
  });
});
