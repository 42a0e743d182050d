/**
 * The store with several processes on one database file, as VS Code windows and `vox` commands
 * share ~/.vox/vox.db: four processes opening a new database at the same instant all get a
 * migrated database (the schema is created once), an open waits out another writer of a new file
 * (SQLite answers busy at once there), and typed errors for databases that cannot be
 * used (a directory in its place, a read-only file or folder, a writer holding the lock).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { LATEST_SCHEMA_VERSION } from '../../src/engine/modules';
import { VoxStore } from '../../src/engine/store/store';
import { StoreError } from '../../src/engine/store/errors';
import { runVox } from '../support/cli';
import { makeReadOnly } from '../support/read-only';
import { driverEnv, forEachDriver } from '../support/drivers';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `script` in a new Node process (tsx, from the repository root); resolves with its exit code and output. */
function node(script: string, args: string[] = []): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script, ...args], { cwd: ROOT, env: { ...process.env, ...driverEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** Opens (creating and migrating) the database at argv[1] once the clock passes argv[2]: every process starts its open at the same instant. */
const OPEN_AT = `
  require('./test/support/engine-schema.ts');
  const { VoxStore } = require('./src/engine/store/store.ts');
  const [file, at] = process.argv.slice(1);
  while (Date.now() < Number(at)) {}
  try {
    const s = VoxStore.open(file);
    s.append({ type: 'thread.created', threadId: 'thread:' + process.pid, title: 'from ' + process.pid });
    s.close();
    console.log('ok');
  } catch (e) {
    console.log('failed ' + e.name + ' ' + (e.code || '') + ' ' + e.message);
    process.exitCode = 1;
  }
`;

forEachDriver('store: several processes on one database file', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('four processes opening a new database at the same instant: all succeed, the schema is created once', async () => {
    for (let round = 0; round < 3; round++) {
      const file = path.join(dir, `new-${round}.db`);
      const at = String(Date.now() + 2_500); // after every process has loaded tsx and the store
      const results = await Promise.all([1, 2, 3, 4].map(() => node(OPEN_AT, [file, at])));
      assert.deepEqual(results.map((r) => r.out.trim()), ['ok', 'ok', 'ok', 'ok'], results.map((r) => r.out + r.err).join('\n'));
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('user_version', { simple: true }), LATEST_SCHEMA_VERSION);
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM threads').get() as { n: number }).n, 4);
      db.close();
    }
  });

  const seed = (file: string) => {
    const s = VoxStore.open(file);
    s.append({ type: 'thread.created', threadId: 'thread:kept', title: 'kept thread' });
    s.close();
  };
  const storeError = (code: string, re: RegExp) => (e: unknown) => e instanceof StoreError && e.code === code && re.test(e.message);

  it('a directory where the database should be: a typed error naming it, nothing created', () => {
    const file = path.join(dir, 'vox.db');
    fs.mkdirSync(file);
    assert.throws(() => VoxStore.open(file), storeError('notAFile', new RegExp(`${file.replace(/[/.]/g, '\\$&')} is a directory`)));
    assert.deepEqual(fs.readdirSync(file), []);
  });

  it('a read-only database file: writing is refused with a typed error; threads and show still work (read-only)', async () => {
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    const file = path.join(home, 'vox.db');
    seed(file);
    const undo = makeReadOnly(file);
    try {
      assert.throws(() => VoxStore.open(file), storeError('readOnly', /cannot be written/));
      const env = { ...process.env, ...driverEnv(), VOX_HOME: home };
      const list = await runVox(['threads', '--json'], env);
      assert.equal(list.code, 0, list.err);
      assert.deepEqual((JSON.parse(list.out) as { title: string }[]).map((t) => t.title), ['kept thread']);
      assert.match(list.err, /read-only/);
      const chat = await runVox(['chat', 'hello'], env);
      assert.equal(chat.code, 1);
      assert.match(chat.err, /StoreError \(readOnly\)/);
      assert.doesNotMatch(chat.err, /SqliteError|SQLITE_/);
    } finally {
      undo();
    }
  });

  it('a read-only folder (no room for the write-ahead log): threads still lists from a read-only copy; chat is refused, typed', async () => {
    const home = path.join(dir, 'ro-home');
    fs.mkdirSync(home);
    seed(path.join(home, 'vox.db'));
    const undo = makeReadOnly(home);
    try {
      const env = { ...process.env, ...driverEnv(), VOX_HOME: home };
      const list = await runVox(['threads', '--json'], env);
      assert.equal(list.code, 0, list.err);
      assert.deepEqual((JSON.parse(list.out) as { title: string }[]).map((t) => t.title), ['kept thread']);
      const chat = await runVox(['chat', 'hello'], env);
      assert.equal(chat.code, 1);
      assert.match(chat.err, /StoreError \(readOnly\)/);
    } finally {
      undo();
    }
  });

  it('a new database another process is writing (not yet WAL): opening waits for it instead of failing at once', async () => {
    // SQLite answers SQLITE_BUSY at once, skipping its busy handler, when switching a file to WAL
    // would have to wait on another writer (it could deadlock); the CI saw this with four processes
    // opening a new database together. Here the other writer is held open on purpose.
    const file = path.join(dir, 'fresh.db');
    new Database(file).exec('CREATE TABLE other_app (x)'); // a rollback-journal database, as SQLite creates it
    const holder = spawn(process.execPath, ['-e', `
      const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
      const db = new Database(${JSON.stringify(file)});
      db.exec('BEGIN IMMEDIATE');
      db.exec('INSERT INTO other_app VALUES (1)');
      console.log('writing');
      setTimeout(() => { db.exec('COMMIT'); db.close(); }, 1500);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => holder.stdout.on('data', (d: Buffer) => d.toString().includes('writing') && resolve()));
      const s = VoxStore.open(file);
      s.append({ type: 'thread.created', threadId: 'thread:after-wait', title: 'after the wait' });
      s.close();
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM other_app').get() as { n: number }).n, 1, "the other writer's row is kept");
      assert.equal(db.pragma('user_version', { simple: true }), LATEST_SCHEMA_VERSION);
      db.close();
    } finally {
      holder.kill();
    }
  });

  it('a database another process holds locked: a typed "locked" error that names the file, no raw SQLite error', async () => {
    const home = path.join(dir, 'locked');
    fs.mkdirSync(home);
    const file = path.join(home, 'vox.db');
    seed(file);
    // Another process takes the write lock and keeps it longer than the store waits (BUSY_TIMEOUT_MS).
    const holder = spawn(process.execPath, ['-e', `
      const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
      const db = new Database(${JSON.stringify(file)});
      db.exec('BEGIN EXCLUSIVE');
      console.log('locked');
      setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, 15000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve()));
      const chat = await runVox(['chat', 'hello'], { ...process.env, ...driverEnv(), VOX_HOME: home });
      assert.equal(chat.code, 1);
      assert.match(chat.err, new RegExp(`StoreError \\(locked\\): ${file.replace(/[/.]/g, '\\$&')} is locked by another process`));
      assert.doesNotMatch(chat.err, /SqliteError|SQLITE_BUSY/);
    } finally {
      holder.kill();
    }
  });

  it('an empty VOX_HOME is the default home, not the current folder', async () => {
    const cwd = path.join(dir, 'cwd');
    fs.mkdirSync(cwd);
    const home = path.join(dir, 'user-home');
    fs.mkdirSync(home);
    const r = await runVox(['threads', '--json', '--cwd', cwd], { ...process.env, ...driverEnv(), VOX_HOME: '', HOME: home });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(fs.readdirSync(cwd), []);
    assert.ok(fs.existsSync(path.join(home, '.vox', 'vox.db')));
  });
});
