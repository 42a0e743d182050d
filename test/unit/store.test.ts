import { strict as assert } from 'node:assert';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { VoxStore } from '../../src/engine/store/store';
import { StoreError } from '../../src/engine/store/errors';
import { LATEST_SCHEMA_VERSION } from '../../src/engine/modules';
import { chooseDriver, resetDriverChoice, type DriverName, type SqlDriver } from '../../src/engine/store/driver';
import { forEachDriver } from '../support/drivers';
import type { StoredEvent } from '../../src/protocol/events';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

forEachDriver('store: opening and migrations', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => removeTmpDir(dir));

  it('creates a WAL database at the latest schema version, and reopening is a no-op', () => {
    const file = path.join(dir, 'sub', 'vox.db');
    const s = VoxStore.open(file);
    assert.equal(s.db.pragma('user_version'), LATEST_SCHEMA_VERSION);
    assert.equal(s.db.pragma('journal_mode'), 'wal');
    s.append({ type: 'thread.created', threadId: 't1', title: 'one' });
    s.close();
    const again = VoxStore.open(file);
    assert.deepEqual(again.listThreads().map((t) => t.id), ['t1']);
    again.close();
  });

  it('refuses a file that is not SQLite and leaves it byte for byte intact', () => {
    const file = path.join(dir, 'notes.db');
    fs.writeFileSync(file, 'these are my notes, not a database\n'.repeat(100));
    const before = sha(file);
    assert.throws(() => VoxStore.open(file), (e: unknown) => e instanceof StoreError && e.code === 'notSqlite');
    assert.equal(sha(file), before);
    assert.ok(!fs.existsSync(file + '-wal'));
  });

  it('refuses a database from a newer Vox without modifying it', () => {
    const file = path.join(dir, 'new.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE future (x)');
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 7}`);
    raw.close();
    const before = sha(file);
    assert.throws(() => VoxStore.open(file), (e: unknown) => e instanceof StoreError && e.code === 'newerVersion' && /newer/.test(e.message));
    assert.equal(sha(file), before);
  });

  it('reports a corrupt database with a typed error and leaves it untouched', () => {
    const file = path.join(dir, 'corrupt.db');
    const s = VoxStore.open(file);
    for (let i = 0; i < 200; i++) s.append({ type: 'thread.created', threadId: `t${i}`, title: 'x'.repeat(200) });
    s.db.pragma('wal_checkpoint(TRUNCATE)');
    s.close();
    const buf = fs.readFileSync(file);
    // Keep the header, scribble over the page after it.
    buf.fill(0xa5, 4096 + 16, 4096 * 3);
    fs.writeFileSync(file, buf);
    const before = sha(file);
    assert.throws(() => VoxStore.open(file), (e: unknown) => e instanceof StoreError && (e.code === 'corrupt' || e.code === 'notSqlite'));
    assert.equal(sha(file), before);
  });


  it('readonly open of a missing file is notFound and creates nothing', () => {
    const file = path.join(dir, 'missing.db');
    assert.throws(() => VoxStore.open(file, { readonly: true }), (e: unknown) => e instanceof StoreError && e.code === 'notFound');
    assert.ok(!fs.existsSync(file));
  });
});

forEachDriver('store: event log and projections', () => {
  let dir: string;
  let s: VoxStore;
  beforeEach(() => {
    dir = makeTmpDir();
    s = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    s.close();
    removeTmpDir(dir);
  });

  function seedRun() {
    s.append(
      { type: 'thread.created', threadId: 't', title: 'T' },
      { type: 'message.added', threadId: 't', messageId: 'm1', parentId: null, role: 'user', content: 'hi', runId: null, status: 'complete' },
      { type: 'run.started', threadId: 't', runId: 'r0', ordinal: 0, provider: 'local', model: 'demo', ownerPid: process.pid, userMessageId: 'm1' },
    );
  }

  it('projects threads, a message tree, runs and items, with sequence numbers in order', () => {
    seedRun();
    s.append(
      { type: 'item.started', threadId: 't', runId: 'r0', itemId: 'i0', ordinal: 0, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"a"}' },
      { type: 'item.completed', threadId: 't', runId: 'r0', itemId: 'i0', status: 'completed', content: 'A', isError: false },
      { type: 'message.added', threadId: 't', messageId: 'm2', parentId: 'm1', role: 'assistant', content: 'hello', runId: 'r0', status: 'complete' },
      { type: 'message.added', threadId: 't', messageId: 'm3', parentId: 'm1', role: 'assistant', content: 'branch', runId: 'r0', status: 'complete' },
      { type: 'run.ended', threadId: 't', runId: 'r0', status: 'completed', error: null, usage: { inputTokens: 3, outputTokens: 5 } },
    );
    const seqs = s.eventsAfter(0).map((e) => e.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.equal(seqs.length, 8);
    assert.deepEqual(s.activePath('t').map((m) => m.id), ['m1', 'm3']);
    assert.deepEqual(s.activePath('t', 'm2').map((m) => m.id), ['m1', 'm2']);
    const [run] = s.runs('t');
    assert.equal(run!.status, 'completed');
    assert.equal(run!.outputTokens, 5);
    assert.deepEqual(s.items('r0').map((i) => [i.toolName, i.status, i.content]), [['read_file', 'completed', 'A']]);
    assert.equal(s.nextRunOrdinal('t'), 1);
    assert.equal(s.getThread('t').lastSeq, s.lastSeq());
  });

  it('a failing event rolls back the whole batch (nothing half-written)', () => {
    s.append({ type: 'thread.created', threadId: 't', title: 'T' });
    const before = s.lastSeq();
    assert.throws(() =>
      s.append(
        { type: 'thread.renamed', threadId: 't', title: 'new' },
        { type: 'thread.created', threadId: 't', title: 'dup' },
      ),
    (e: unknown) => e instanceof StoreError && e.code === 'conflict');
    assert.equal(s.lastSeq(), before);
    assert.equal(s.getThread('t').title, 'T');
    assert.throws(() => s.append({ type: 'thread.renamed', threadId: 'nope', title: 'x' }), (e: unknown) => e instanceof StoreError && e.code === 'notFound');
  });

  it('subscribe replays from a seq and then delivers live events, none lost or doubled', () => {
    s.append({ type: 'thread.created', threadId: 'a', title: 'A' });
    const mid = s.lastSeq();
    s.append({ type: 'thread.created', threadId: 'b', title: 'B' });
    const seen: StoredEvent[] = [];
    const sub = s.subscribe(mid, (evs) => seen.push(...evs));
    seen.unshift(...sub.replay);
    s.append({ type: 'thread.created', threadId: 'c', title: 'C' });
    sub.unsubscribe();
    s.append({ type: 'thread.created', threadId: 'd', title: 'D' });
    assert.deepEqual(seen.map((e) => (e.type === 'thread.created' ? e.threadId : '')), ['b', 'c']);
  });

  it('a throwing listener is dropped and never breaks the writer', () => {
    s.subscribe(0, () => {
      throw new Error('boom');
    });
    const ok: number[] = [];
    s.subscribe(0, (evs) => ok.push(...evs.map((e) => e.seq)));
    s.append({ type: 'thread.created', threadId: 'a', title: 'A' });
    s.append({ type: 'thread.created', threadId: 'b', title: 'B' });
    assert.equal(ok.length, 2);
  });

  it('recovers runs whose owner died: interrupted, partial text kept as a message', () => {
    seedRun();
    s.persistChunk({ turnId: 'r0', seq: 1, kind: 'text', data: 'Hel' });
    s.persistChunk({ turnId: 'r0', seq: 2, kind: 'reasoning', data: 'hmm' });
    s.persistChunk({ turnId: 'r0', seq: 3, kind: 'text', data: 'lo' });
    s.db.prepare('UPDATE runs SET owner_pid = 999999999').run();
    assert.deepEqual(s.recoverInterrupted(), ['r0']);
    assert.equal(s.runs('t')[0]!.status, 'interrupted');
    const last = s.activePath('t').at(-1)!;
    assert.equal(last.content, 'Hello');
    assert.equal(last.status, 'interrupted');
    assert.deepEqual(s.recoverInterrupted(), []);
  });

  it('does not interrupt runs owned by a live process', () => {
    seedRun();
    s.db.prepare('UPDATE runs SET owner_pid = ?').run(process.ppid);
    assert.deepEqual(s.recoverInterrupted(), []);
    assert.equal(s.runs('t')[0]!.status, 'running');
  });
});

describe('store: choosing a SQLite driver', () => {
  const abiError = () => new Error("The module 'better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115.");
  const fake = (name: DriverName): SqlDriver => ({ name, open: () => assert.fail('not opened here') });

  it('uses better-sqlite3 where it loads', () => {
    const c = chooseDriver((n) => fake(n), {});
    assert.equal(c.driver.name, 'better-sqlite3');
  });

  it('falls back to the N-API driver when better-sqlite3 fails to load with an ABI error, and says why', () => {
    const c = chooseDriver((n) => (n === 'better-sqlite3' ? (() => { throw abiError(); })() : fake(n)), {});
    assert.equal(c.driver.name, 'photostructure');
    assert.match(c.reason, /better-sqlite3 does not load here: .*NODE_MODULE_VERSION 115/);
  });

  it('falls back when better-sqlite3 is absent (a release VSIX), and the reason is one line (no require stack)', () => {
    const missing = Object.assign(new Error("Cannot find module 'better-sqlite3'\nRequire stack:\n- /ext/dist/extension.js\n- /vscode/out/extHost.js"), { code: 'MODULE_NOT_FOUND' });
    const c = chooseDriver((n) => (n === 'better-sqlite3' ? (() => { throw missing; })() : fake(n)), {});
    assert.equal(c.driver.name, 'photostructure');
    assert.equal(c.reason, "photostructure (better-sqlite3 does not load here: Cannot find module 'better-sqlite3')");
  });

  it('VOX_SQLITE_DRIVER forces a driver (even past a working better-sqlite3); a bad value or an unloadable forced driver is a typed error', () => {
    assert.equal(chooseDriver((n) => fake(n), { VOX_SQLITE_DRIVER: 'photostructure' }).driver.name, 'photostructure');
    assert.throws(() => chooseDriver((n) => fake(n), { VOX_SQLITE_DRIVER: 'sqlite4' }), (e: unknown) => e instanceof StoreError && e.code === 'nativeModule' && /sqlite4 is not a SQLite driver/.test(e.message));
    assert.throws(
      () => chooseDriver((n) => (n === 'better-sqlite3' ? (() => { throw abiError(); })() : fake(n)), { VOX_SQLITE_DRIVER: 'better-sqlite3' }),
      (e: unknown) => e instanceof StoreError && e.code === 'nativeModule' && /forced|VOX_SQLITE_DRIVER=better-sqlite3/.test(e.message),
    );
  });

  it('when no driver loads: a typed nativeModule error naming the runtime and each failure', () => {
    assert.throws(
      () => chooseDriver(() => { throw new Error('was compiled against a different Node.js version'); }, {}),
      (e: unknown) => e instanceof StoreError && e.code === 'nativeModule' && /ABI \d+/.test(e.message) && /different Node\.js version/.test(e.message),
    );
  });
});

describe('store: one file, both drivers', () => {
  let dir: string;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(() => {
    delete process.env.VOX_SQLITE_DRIVER;
    resetDriverChoice();
    removeTmpDir(dir);
  });
  const openWith = (driver: DriverName, file: string) => {
    process.env.VOX_SQLITE_DRIVER = driver;
    resetDriverChoice();
    const s = VoxStore.open(file);
    assert.equal(s.db.driver, driver);
    return s;
  };

  for (const [first, second] of [['better-sqlite3', 'photostructure'], ['photostructure', 'better-sqlite3']] as const) {
    it(`a database written by ${first} is read and extended by ${second}, and back, losing nothing`, () => {
      const file = path.join(dir, 'shared.db');
      const a = openWith(first, file);
      a.append({ type: 'thread.created', threadId: 't1', title: `by ${first}` }, { type: 'message.added', threadId: 't1', messageId: 'm1', parentId: null, role: 'user', content: 'héllo 😀', runId: null, status: 'complete' });
      a.close();
      const b = openWith(second, file);
      assert.deepEqual(b.activePath('t1').map((m) => m.content), ['héllo 😀']);
      b.append({ type: 'thread.created', threadId: 't2', title: `by ${second}` });
      const seqs = b.eventsAfter(0).map((e) => e.seq);
      b.close();
      const c = openWith(first, file);
      assert.deepEqual(c.listThreads().map((t) => t.title).sort(), [`by ${first}`, `by ${second}`].sort());
      assert.deepEqual(c.eventsAfter(0).map((e) => e.seq), seqs);
      assert.equal(c.db.pragma('journal_mode'), 'wal');
      c.close();
    });
  }
});
