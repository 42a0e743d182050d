/** The cross-process lock file behind workspace leases: exclusive, stale locks taken over, live ones waited for (typed timeout), half-written ones respected. */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireFileLock, LockError, LOCK_WRITE_GRACE_MS } from '../../src/engine/platform/file-lock';
import { processStartMs } from '../../src/engine/platform/process-identity';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('file lock (cross-process)', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = makeTmpDir();
    file = path.join(dir, 'x.lock');
  });
  afterEach(() => removeTmpDir(dir));

  it('is exclusive: a second acquire waits until the first releases', async () => {
    const release = await acquireFileLock(file);
    let second = false;
    const p = acquireFileLock(file).then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(second, false);
    release();
    (await p)();
    assert.equal(fs.existsSync(file), false);
  });

  it('takes over a lock whose owner is gone, and one whose pid now belongs to another process', async () => {
    fs.writeFileSync(file, JSON.stringify({ pid: 2 ** 22 + 4321, startedAtMs: 1, since: 1 }));
    (await acquireFileLock(file, { timeoutMs: 1_000 }))();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(file, JSON.stringify({ pid: other.pid, startedAtMs: 1_000, since: 1 })); // the pid is alive, but it is not the owner
      (await acquireFileLock(file, { timeoutMs: 1_000 }))();
    } finally {
      other.kill();
    }
  });

  it('waits for a live owner and gives up with a typed error naming the file', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 50));
      const started = processStartMs(other.pid!);
      fs.writeFileSync(file, JSON.stringify({ pid: other.pid, startedAtMs: typeof started === 'number' ? started : null, since: Date.now() }));
      await assert.rejects(acquireFileLock(file, { timeoutMs: 300 }), (e: unknown) => e instanceof LockError && e.domain === 'platform' && e.code === 'locked' && e.message.includes(file));
      assert.ok(fs.existsSync(file), 'the live lock was left alone');
    } finally {
      other.kill();
    }
  });

  it('a lock file that does not name its owner yet is respected for a grace period, then taken over', async () => {
    fs.writeFileSync(file, '');
    await assert.rejects(acquireFileLock(file, { timeoutMs: 200 }), LockError);
    const old = (Date.now() - LOCK_WRITE_GRACE_MS - 1_000) / 1000;
    fs.utimesSync(file, old, old);
    (await acquireFileLock(file, { timeoutMs: 1_000 }))();
  });
});
