/**
 * One database for VS Code and the CLI ($VOX_HOME/vox.db, store/home-database.ts): the one-time
 * move of a database an older Vox kept in VS Code's globalStorage, on each SQLite driver, with
 * real files and separate processes — the write-ahead log of a killed writer arrives, two
 * processes moving at once end with one database and every thread, a crashed move is finished,
 * two databases are never clobbered — and a real `vox threads` on the same VOX_HOME sees the
 * threads the extension's side wrote.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../src/engine/store/store';
import { runVox } from '../support/cli';
import { driverEnv, forEachDriver } from '../support/drivers';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '../..');

function node(script: string, args: string[]): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script, ...args], { cwd: ROOT, env: { ...process.env, ...driverEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code, signal) => resolve({ code, signal, out, err }));
  });
}

/** Writes threads into argv[1] and is killed before it closes: its last writes are only in the write-ahead log. */
const WRITE_AND_DIE = `
  require('./test/support/engine-schema.ts');
  const { VoxStore } = require('./src/engine/store/store.ts');
  const [file, ...ids] = process.argv.slice(1);
  const s = VoxStore.open(file);
  for (const id of ids) s.append({ type: 'thread.created', threadId: id, title: 'old ' + id });
  process.kill(process.pid, 'SIGKILL');
`;

/** What a VS Code window does at start: move argv[2] in and open argv[1], at the instant argv[3], then add thread argv[4]. */
const MOVE_AND_OPEN = `
  require('./test/support/engine-schema.ts');
  const { VoxStore } = require('./src/engine/store/store.ts');
  const { withHomeDatabase } = require('./src/engine/store/home-database.ts');
  const [dbPath, legacy, at, id] = process.argv.slice(1);
  while (Date.now() < Number(at)) {}
  const { value: s, moves } = withHomeDatabase({ dbPath, legacyFiles: [legacy] }, (p) => VoxStore.open(p));
  s.append({ type: 'thread.created', threadId: id, title: 'new ' + id });
  s.close();
  console.log(JSON.stringify(moves));
`;

function threadIds(file: string): string[] {
  const s = VoxStore.open(file);
  try {
    return s.listThreads().map((t) => t.id).sort();
  } finally {
    s.close();
  }
}

const sha = (f: string): string => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

forEachDriver('one database for VS Code and the CLI: the move from globalStorage', () => {
  let dir: string;
  let legacy: string;
  let dbPath: string;
  beforeEach(() => {
    dir = makeTmpDir();
    legacy = path.join(dir, 'globalStorage', 'vox.vox', 'vox.db');
    dbPath = path.join(dir, 'vox-home', 'vox.db');
    fs.mkdirSync(path.dirname(legacy), { recursive: true });
  });
  afterEach(() => removeTmpDir(dir));

  async function seedLegacy(ids: string[]): Promise<void> {
    const r = await node(WRITE_AND_DIE, [legacy, ...ids]);
    assert.equal(r.signal, 'SIGKILL', r.err);
    assert.ok(fs.statSync(`${legacy}-wal`).size > 0, 'the killed writer left its threads in the write-ahead log');
  }

  it('moves the old database with its write-ahead log: every thread arrives, the old file is kept aside', async () => {
    await seedLegacy(['thread:a', 'thread:b', 'thread:c']);
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:new']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual((JSON.parse(r.out) as { outcome: string }[]).map((m) => m.outcome), ['moved']);
    assert.deepEqual(threadIds(dbPath), ['thread:a', 'thread:b', 'thread:c', 'thread:new']);
    assert.ok(!fs.existsSync(legacy) && !fs.existsSync(`${legacy}-wal`), 'the old database is no longer where VS Code would open it');
    assert.deepEqual(threadIds(`${legacy}.moved-to-vox-home`), ['thread:a', 'thread:b', 'thread:c'], 'the old file is kept, whole');
  });

  it('two windows starting at once: one moves, both open the one database, no thread is lost', async () => {
    await seedLegacy(['thread:a', 'thread:b', 'thread:c']);
    const at = String(Date.now() + 2_500); // after both processes have loaded tsx and the store
    const [one, two] = await Promise.all([node(MOVE_AND_OPEN, [dbPath, legacy, at, 'thread:w1']), node(MOVE_AND_OPEN, [dbPath, legacy, at, 'thread:w2'])]);
    assert.equal(one.code, 0, one.err);
    assert.equal(two.code, 0, two.err);
    const outcomes = [...JSON.parse(one.out), ...JSON.parse(two.out)].map((m: { outcome: string }) => m.outcome);
    assert.deepEqual(outcomes, ['moved'], 'exactly one process moved the database; the other found nothing to move');
    assert.deepEqual(threadIds(dbPath), ['thread:a', 'thread:b', 'thread:c', 'thread:w1', 'thread:w2']);
    assert.deepEqual(fs.readdirSync(path.dirname(dbPath)).filter((n) => n.endsWith('.db')), ['vox.db']);
  });

  it('a move that crashed while copying (a half-written copy, a lock of a dead process) is done again from the start', async () => {
    await seedLegacy(['thread:a', 'thread:b']);
    fs.mkdirSync(path.dirname(dbPath), { recursive: true });
    fs.writeFileSync(`${dbPath}.moving-999999`, fs.readFileSync(legacy).subarray(0, 100));
    fs.writeFileSync(`${dbPath}.lock`, JSON.stringify({ pid: 999_999, startedAtMs: 1, since: Date.now() }));
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:new']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(threadIds(dbPath), ['thread:a', 'thread:b', 'thread:new']);
    assert.deepEqual(fs.readdirSync(path.dirname(dbPath)).filter((n) => n.includes('moving') || n.endsWith('.lock')), [], 'the half-written copy and the stale lock are gone');
  });

  it('a move that crashed after the copy (both files whole) sets the old one aside without duplicating a thread', async () => {
    await seedLegacy(['thread:a', 'thread:b']);
    const first = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:new']);
    assert.equal(first.code, 0, first.err);
    fs.renameSync(`${legacy}.moved-to-vox-home`, legacy); // the state just before the old file was set aside
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:again']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual((JSON.parse(r.out) as { outcome: string }[]).map((m) => m.outcome), ['leftoverSetAside']);
    assert.deepEqual(threadIds(dbPath), ['thread:a', 'thread:again', 'thread:b', 'thread:new']);
    assert.ok(!fs.existsSync(legacy));
  });

  it('both databases with their own threads: neither is changed, the shared one is used, the outcome names the old one', async () => {
    await seedLegacy(['thread:old']);
    const shared = VoxStore.open(dbPath);
    shared.append({ type: 'thread.created', threadId: 'thread:cli', title: 'from the CLI' });
    shared.close();
    const before = sha(legacy);
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:new']);
    assert.equal(r.code, 0, r.err);
    const [m] = JSON.parse(r.out) as { outcome: string; message: string }[];
    assert.equal(m!.outcome, 'keptBoth');
    assert.match(m!.message, /1 thread\(s\) that are not in/);
    assert.ok(m!.message.includes(legacy), m!.message);
    assert.equal(sha(legacy), before, 'the old database is byte-for-byte as it was');
    assert.deepEqual(threadIds(dbPath), ['thread:cli', 'thread:new']);
  });

  it('a shared database the CLI created but never used (no threads) gives way to the old one, and is kept aside', async () => {
    await seedLegacy(['thread:old']);
    VoxStore.open(dbPath).close();
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:new']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual((JSON.parse(r.out) as { outcome: string }[]).map((m) => m.outcome), ['replacedEmpty']);
    assert.deepEqual(threadIds(dbPath), ['thread:new', 'thread:old']);
    assert.equal(fs.readdirSync(path.dirname(dbPath)).filter((n) => n.startsWith('vox.db.empty-before-move-')).length, 1);
  });

  it('the real `vox threads --json` on the same VOX_HOME lists the threads the VS Code side moved in and wrote', async () => {
    await seedLegacy(['thread:old']);
    const r = await node(MOVE_AND_OPEN, [dbPath, legacy, '0', 'thread:window']);
    assert.equal(r.code, 0, r.err);
    const cli = await runVox(['threads', '--json'], { ...process.env, ...driverEnv(), VOX_HOME: path.dirname(dbPath) });
    assert.equal(cli.code, 0, cli.err);
    const listed = (JSON.parse(cli.out) as { id: string }[] | { threads: { id: string }[] });
    const ids = (Array.isArray(listed) ? listed : listed.threads).map((t) => t.id).sort();
    assert.deepEqual(ids, ['thread:old', 'thread:window']);
  });
});
