/**
 * scripts/setup-code-server.sh run twice at once (two `npm start`s): the second waits on the
 * install's lock and then finds it done — one install, both runs print the binary — and a failed
 * download says to run again. npm is a fast stand-in (test/fixtures/fake-npm.sh) on PATH; the
 * script itself, bash and flock are real.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts', 'setup-code-server.sh');

interface Run { code: number | null; out: string; err: string }

describe('setup-code-server.sh: two setups at once, a failed download', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = makeTmpDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.copyFileSync(path.join(ROOT, 'test/fixtures/fake-npm.sh'), path.join(bin, 'npm'));
    fs.chmodSync(path.join(bin, 'npm'), 0o755);
    env = {
      ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: dir, VOX_SKIP_APT: '1', VOX_SKIP_CHROMIUM: '1',
      VOX_CODE_SERVER_DIR: path.join(dir, 'cache', 'code-server'), FAKE_NPM_LOG: path.join(dir, 'npm.log'),
    };
  });
  afterEach(() => removeTmpDir(dir));

  const run = (extra: NodeJS.ProcessEnv = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = spawn('bash', [SCRIPT], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => resolve({ code, out, err }));
    });

  it('the second of two setups started together waits for the first, then finds code-server installed', async () => {
    const [a, b] = await Promise.all([run(), run()]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const want = path.join(dir, 'cache', 'code-server', 'node_modules', '.bin', 'code-server');
    assert.equal(a.out.trim().split('\n').pop(), want);
    assert.equal(b.out.trim().split('\n').pop(), want);
    const log = fs.readFileSync(path.join(dir, 'npm.log'), 'utf8').trim().split('\n');
    assert.equal(log.filter((l) => l.startsWith('start')).length, 1, `npm install ran once, not twice in one folder:\n${log.join('\n')}`);
    assert.match(a.err + b.err, /waiting for it to finish/);
    assert.match(a.err + b.err, /already installed/);
  });

  it('a failed download exits non-zero, says to run again, and the next run installs', async () => {
    const failed = await run({ FAKE_NPM_FAIL: '1', FAKE_NPM_SECONDS: '0' });
    assert.notEqual(failed.code, 0);
    assert.match(failed.err, /npm install code-server@[\d.]+ failed/);
    assert.match(failed.err, /run it again: npm start/);
    const again = await run({ FAKE_NPM_SECONDS: '0' });
    assert.equal(again.code, 0, again.err);
  });
});
