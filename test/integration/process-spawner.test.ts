/**
 * Git through the process helper (src/engine/platform/process-spawner.ts, used by `gitRaw`): the same
 * results and typed errors as a direct `execFile` — bytes in and out, exit codes, input given
 * later, timeouts, cancellation, a missing binary — under concurrency; an idle helper never keeps
 * a process alive; a helper that dies fails the runs in flight and the next run starts a new one;
 * and when its caller exits, a fast-import still waiting for input ends cleanly (no crash report,
 * no temporary pack).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitError, gitRaw } from '../../src/engine/git/git';
import { helperPid, spawnViaHelper } from '../../src/engine/platform/process-spawner';
import { gitOut } from '../support/git';
import { initRepo } from '../support/git-fixtures';
import { waitFor } from '../support/wait';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

async function gitError(p: Promise<unknown>): Promise<GitError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GitError, String(err));
    return err;
  }
  assert.fail('expected a GitError');
}

for (const mode of ['helper', 'direct'] as const) {
  describe(`git processes (${mode})`, function () {
    this.timeout(60_000);
    let tmp: string;
    let repo: string;
    const saved = process.env.VOX_SPAWN_DIRECT;
    before(() => {
      if (mode === 'direct') process.env.VOX_SPAWN_DIRECT = '1';
      else delete process.env.VOX_SPAWN_DIRECT;
      tmp = makeTmpDir('vox-spawn-');
      repo = initRepo(path.join(tmp, 'r'), { 'a.txt': 'a\n' });
    });
    after(() => {
      if (saved === undefined) delete process.env.VOX_SPAWN_DIRECT;
      else process.env.VOX_SPAWN_DIRECT = saved;
      removeTmpDir(tmp);
    });

    it('passes every byte value in and out, and reports exit codes and stderr', async () => {
      const sha = (await gitRaw(['hash-object', '-w', '--stdin'], { cwd: repo, input: ALL_BYTES })).stdout.toString().trim();
      const back = await gitRaw(['cat-file', 'blob', sha], { cwd: repo });
      assert.ok(back.stdout.equals(ALL_BYTES));
      const quiet = await gitRaw(['diff', '--quiet', 'HEAD'], { cwd: repo, okExitCodes: [1] });
      assert.equal(quiet.exitCode, 0);
      fs.writeFileSync(path.join(repo, 'a.txt'), 'changed\n');
      assert.equal((await gitRaw(['diff', '--quiet', 'HEAD'], { cwd: repo, okExitCodes: [1] })).exitCode, 1);
      fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
      const e = await gitError(gitRaw(['rev-parse', '--verify', 'no-such-ref'], { cwd: repo }));
      assert.equal(e.code, 'failed');
      assert.match(e.details.stderr ?? '', /Needed a single revision/);
      assert.equal((await gitError(gitRaw(['status'], { cwd: tmp }))).code, 'notARepository');
    });

    it('takes input that arrives later, and is killed when that input fails', async () => {
      let feed!: (b: Buffer) => void;
      const input = new Promise<Buffer>((r) => (feed = r));
      const p = gitRaw(['hash-object', '--stdin'], { cwd: repo, input });
      setTimeout(() => feed(Buffer.from('later\n')), 50);
      assert.equal((await p).stdout.toString().trim(), gitOut(repo, ['hash-object', '--stdin'], 'later\n'));
      const failing = Promise.reject(new Error('no input after all'));
      failing.catch(() => undefined);
      const e = await gitError(gitRaw(['hash-object', '--stdin'], { cwd: repo, input: failing }));
      assert.ok(['timeout', 'cancelled', 'failed'].includes(e.code), e.code);
    });

    it('times out, and is cancelled by an abort signal, with typed errors', async () => {
      const never = new Promise<Buffer>(() => undefined);
      const t = await gitError(gitRaw(['hash-object', '--stdin'], { cwd: repo, input: never, timeoutMs: 300 }));
      assert.equal(t.code, 'timeout');
      const ac = new AbortController();
      const p = gitRaw(['hash-object', '--stdin'], { cwd: repo, input: never, signal: ac.signal });
      setTimeout(() => ac.abort(), 50);
      assert.equal((await gitError(p)).code, 'cancelled');
      const pre = new AbortController();
      pre.abort();
      assert.equal((await gitError(gitRaw(['status'], { cwd: repo, signal: pre.signal }))).code, 'cancelled');
    });

    it('runs 40 calls at once, each with its own answer', async () => {
      const inputs = Array.from({ length: 40 }, (_, i) => `content ${i}\n`);
      const got = await Promise.all(inputs.map((s) => gitRaw(['hash-object', '--stdin'], { cwd: repo, input: s })));
      const want = inputs.map((s) => gitOut(repo, ['hash-object', '--stdin'], s));
      assert.deepEqual(got.map((r) => r.stdout.toString().trim()), want);
    });
  });
}

describe('the process helper itself', function () {
  this.timeout(60_000);
  let tmp: string;
  before(() => {
    delete process.env.VOX_SPAWN_DIRECT;
    tmp = makeTmpDir('vox-helper-');
  });
  after(() => removeTmpDir(tmp));

  it('reports a missing program as ENOENT', async () => {
    const err = await new Promise<{ code: unknown } | null>((resolve) => spawnViaHelper('vox-no-such-program', [], { cwd: tmp, env: process.env, maxBuffer: 1024, timeout: 5000 }, Buffer.alloc(0), (e) => resolve(e)));
    assert.equal(err?.code, 'ENOENT');
  });

  it('fails the runs in flight when it dies, and the next run starts a new helper', async () => {
    const repo = initRepo(path.join(tmp, 'crash'), { 'a.txt': 'a\n' });
    await gitRaw(['status'], { cwd: repo });
    const pid = helperPid();
    assert.ok(pid, 'a helper is running');
    const pending = gitRaw(['hash-object', '--stdin'], { cwd: repo, input: new Promise<Buffer>(() => undefined) });
    await new Promise((r) => setTimeout(r, 100));
    process.kill(pid, 'SIGKILL');
    const e = await gitError(pending);
    assert.equal(e.code, 'failed');
    assert.match(e.message, /helper/);
    assert.equal((await gitRaw(['rev-parse', '--is-inside-work-tree'], { cwd: repo })).stdout.toString().trim(), 'true');
    assert.notEqual(helperPid(), pid);
  });

  it('never keeps its caller alive, and ends a fast-import left waiting cleanly when the caller exits', async () => {
    const repo = initRepo(path.join(tmp, 'exit'), { 'a.txt': 'a\n' });
    // A separate Node process: one git call (the process must then exit by itself), and a
    // fast-import started with input that never comes, then an exit.
    const script = `
      const { gitRaw } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'src', 'engine', 'git', 'git.ts'))});
      const { helperPid } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'src', 'engine', 'platform', 'process-spawner.ts'))});
      (async () => {
        await gitRaw(['status'], { cwd: ${JSON.stringify(repo)} });
        console.log('helper ' + helperPid());
        if (process.argv[2] === 'fast-import') {
          gitRaw(['fast-import', '--quiet', '--done'], { cwd: ${JSON.stringify(repo)}, input: new Promise(() => {}), abortInput: 'done\\n' }).catch(() => {});
          setTimeout(() => process.exit(0), 300);
        }
      })();
    `;
    const started = Date.now();
    const idle = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8', timeout: 30_000 });
    assert.equal(idle.status, 0, idle.stderr);
    assert.ok(Date.now() - started < 20_000, 'exited by itself');
    const fi = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script, 'fast-import'], { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8', timeout: 30_000 });
    assert.equal(fi.status, 0, fi.stderr);
    const helper = Number(/helper (\d+)/.exec(fi.stdout)?.[1]);
    await waitFor('the helper to exit', 10_000, () => !isAlive(helper), 100).catch(() => undefined);
    assert.ok(!isAlive(helper), 'the helper exited after its caller');
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).filter((n) => n.startsWith('fast_import_crash')), []);
    assert.deepEqual(fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.startsWith('tmp_')), []);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
