/**
 * The `vox` CLI as a user meets it: help on every level without touching the database, a closed
 * pipe (`vox threads | head -1`) is a quiet end, "nothing to undo" is a plain typed message, and
 * `--json` carries no Buffer dumps.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI_ENTRY, REPO_ROOT, runVox } from '../support/cli';
import { initRepo } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('vox CLI: help, pipes, messages', function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = makeTmpDir();
    env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
  });
  afterEach(() => removeTmpDir(dir));

  it('--help works for commands and subcommands, exits 0, and creates no database', async () => {
    for (const args of [['--help'], ['chat', '--help'], ['checkpoint', '--help'], ['checkpoint', 'restore', '--help'], ['variants', 'run', '--help'], ['help', 'worktree']]) {
      const r = await runVox(args, env);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
      assert.match(r.out, /Usage: vox/, args.join(' '));
      assert.doesNotMatch(r.err, /unknown option/);
    }
    assert.equal(fs.existsSync(path.join(dir, 'home')), false, 'help created nothing');
  });

  it('a reader that closes the pipe early (`vox threads | head -1`) ends the command quietly', async () => {
    fs.mkdirSync(env.VOX_HOME!, { recursive: true });
    for (let i = 0; i < 3; i++) assert.equal((await runVox(['checkpoint', 'capture', '--thread', `t${i}`, '--cwd', initRepo(path.join(dir, `r${i}`), { 'a.txt': 'a' })], env)).code, 0);
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'threads'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy(); // the reader is gone before the first line is written
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => resolve({ code, err }));
    });
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /EPIPE|Error|at /);
  });

  it('undo with nothing to undo says so in one line (exit 1), not the usage; --json has no Buffer dumps', async () => {
    const repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'a.txt': 'one\n' }));
    const undo = await runVox(['checkpoint', 'undo', '--cwd', repo], env);
    assert.equal(undo.code, 1);
    assert.match(undo.err, /^vox: CheckpointError \(unknownCheckpoint\): there is no restore point to undo\n$/);
    fs.writeFileSync(path.join(repo, 'n\u00e4me with space.txt'), 'x');
    const cap = await runVox(['checkpoint', 'capture', '--json', '--cwd', repo], env);
    assert.equal(cap.code, 0, cap.err);
    assert.doesNotMatch(cap.out, /"type":\s*"Buffer"|"raw"/);
    assert.deepEqual((JSON.parse(cap.out) as { changed: { path: string }[] }).changed.map((c) => c.path), ['n\u00e4me with space.txt']);
  });
});
