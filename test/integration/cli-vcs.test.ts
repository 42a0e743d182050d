/** `vox checkpoint …` and `vox worktree …` as real processes against a real repository, with --json. */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initRepo, gitOut } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '../..');

describe('vox CLI: checkpoints and worktrees', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  const vox = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), ...args, '--cwd', repo], { cwd: ROOT, env: { ...process.env, VOX_HOME: path.join(dir, 'home') }, encoding: 'utf8' });
    return { code: r.status, out: r.stdout, err: r.stderr, json: () => JSON.parse(r.stdout) as unknown };
  };
  before(() => {
    dir = makeTmpDir();
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'a.txt': 'one\n' }));
  });
  after(() => removeTmpDir(dir));

  it('capture, list, diff, restore, undo — JSON out, user state untouched', () => {
    const head = gitOut(repo, ['rev-parse', 'HEAD']);
    assert.equal(vox('checkpoint', 'capture', '--json').code, 0);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(repo, 'b file.txt'), 'new\n');
    const c2 = vox('checkpoint', 'capture', '--json');
    assert.equal(c2.code, 0, c2.err);
    assert.equal((c2.json() as { ordinal: number }).ordinal, 2);
    const list = vox('checkpoint', 'list', '--json').json() as { ordinal: number }[];
    assert.deepEqual(list.map((c) => c.ordinal), [1, 2]);
    const diff = vox('checkpoint', 'diff', '1', '2', '--json').json() as { path: string; status: string }[];
    assert.deepEqual(diff.map((d) => [d.path, d.status]).sort(), [['a.txt', 'modified'], ['b file.txt', 'added']]);
    const restored = vox('checkpoint', 'restore', '1', '--json');
    assert.equal(restored.code, 0, restored.err);
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\n');
    assert.ok(!fs.existsSync(path.join(repo, 'b file.txt')));
    assert.equal(vox('checkpoint', 'undo').code, 0);
    assert.equal(fs.readFileSync(path.join(repo, 'b file.txt'), 'utf8'), 'new\n');
    assert.equal(gitOut(repo, ['rev-parse', 'HEAD']), head);
  });

  it('bad input: typed errors and exit codes, nothing changed', () => {
    const before = fs.readFileSync(path.join(repo, 'a.txt'), 'utf8');
    const noOrd = vox('checkpoint', 'restore');
    assert.equal(noOrd.code, 2);
    assert.match(noOrd.err, /ordinal/);
    const unknown = vox('checkpoint', 'restore', '42');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /CheckpointError \(unknownCheckpoint\)/);
    assert.equal(vox('checkpoint', 'restore', '1', '--mode', 'everything').code, 2);
    assert.equal(vox('checkpoint', 'frobnicate').code, 2);
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), before);
  });

  it('worktree create, list, remove; outside path refused', () => {
    const created = vox('worktree', 'create', 'feature-x', '--json');
    assert.equal(created.code, 0, created.err);
    const wt = (created.json() as { path: string }).path;
    assert.ok(fs.existsSync(path.join(wt, 'a.txt')));
    assert.deepEqual((vox('worktree', 'list', '--json').json() as { path: string }[]).map((w) => w.path), [wt]);
    const outside = vox('worktree', 'remove', dir);
    assert.equal(outside.code, 1);
    assert.match(outside.err, /WorktreeError \(outsideManagedRoot\)/);
    assert.ok(fs.existsSync(dir));
    assert.equal(vox('worktree', 'remove', wt).code, 0);
    assert.ok(!fs.existsSync(wt));
  });
});
