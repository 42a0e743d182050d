/**
 * Events another process appends to the shared database reach this process's subscribers (the
 * chat's thread list, an open thread), as VS Code and a `vox chat` in a terminal share one
 * ~/.vox/vox.db (src/engine/store/event-tail.ts): in sequence order, none twice, interleaved with
 * local appends without a gap, and a subscription made after they arrived replays them once.
 * The other writer is a separate Node process (or, where no poll may run in between, a second
 * connection in this one); both drivers.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { StoredEvent } from '../../src/protocol/events';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { VoxStore } from '../../src/engine/store/store';
import { driverEnv, forEachDriver } from '../support/drivers';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');

/** Appends, from another process, a thread with `n` messages to the database at argv[1]. */
const WRITER = `
  require('./test/support/engine-schema.ts');
  const { VoxStore } = require('./src/engine/store/store.ts');
  const [file, thread, n] = process.argv.slice(1);
  const s = VoxStore.open(file);
  s.append({ type: 'thread.created', threadId: thread, title: 'From the terminal' });
  for (let i = 0; i < Number(n); i++) {
    s.append({ type: 'message.added', threadId: thread, messageId: 'm:' + thread + ':' + i, parentId: null, role: 'user', content: 'line ' + i, runId: null, status: 'complete' });
  }
  s.close();
`;

function writer(file: string, thread: string, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', WRITER, file, thread, String(n)], { cwd: ROOT, env: { ...process.env, ...driverEnv() }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the writer exited ${code}: ${err}`))));
  });
}

const seqs = (evs: StoredEvent[]): number[] => evs.map((e) => e.seq);
const isAscendingUnique = (xs: number[]): boolean => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

forEachDriver('store: events another process appends reach this process\'s subscribers', () => {
  let dir: string;
  let store: VoxStore;
  beforeEach(() => {
    dir = makeTmpDir();
    store = VoxStore.open(path.join(dir, 'vox.db'), { schema: STORE_SCHEMAS });
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  it('a thread list watcher and a thread subscriber get another process\'s events, in order, none twice', async () => {
    store.append({ type: 'thread.created', threadId: 'thread:local', title: 'In the window' });
    const all: StoredEvent[] = [];
    const one: StoredEvent[] = [];
    const w = store.subscribe(store.lastSeq(), (evs) => all.push(...evs));
    const t = store.subscribeThread('thread:cli', 0, (evs) => one.push(...evs));
    assert.equal(t.replay.length, 0);
    await writer(store.db.name, 'thread:cli', 5);
    await waitFor('the other process\'s six events', 10_000, () => all.length >= 6);
    await waitFor('the thread subscriber\'s six events', 10_000, () => one.length >= 6);
    assert.deepEqual(all.map((e) => e.type), ['thread.created', ...Array(5).fill('message.added')]);
    assert.deepEqual(one.map((e) => e.threadId), Array(6).fill('thread:cli'));
    assert.ok(isAscendingUnique(seqs(all)));
    // The thread list reads what the other process projected.
    assert.deepEqual(store.listThreads().map((r) => r.title).sort(), ['From the terminal', 'In the window']);
    w.unsubscribe();
    t.unsubscribe();
  });

  it('a local append right after another connection\'s writes delivers theirs first, without a gap (no poll in between)', () => {
    const all: StoredEvent[] = [];
    const w = store.subscribe(store.lastSeq(), (evs) => all.push(...evs));
    // A second connection (as another process has), all synchronous: no poll can run in between.
    const other = VoxStore.open(store.db.name, { schema: STORE_SCHEMAS });
    other.append({ type: 'thread.created', threadId: 'thread:cli', title: 'From the terminal' });
    other.append({ type: 'thread.renamed', threadId: 'thread:cli', title: 'Renamed in the terminal' });
    other.close();
    store.append({ type: 'thread.created', threadId: 'thread:local', title: 'In the window' });
    assert.deepEqual(all.map((e) => `${e.type} ${e.threadId}`), ['thread.created thread:cli', 'thread.renamed thread:cli', 'thread.created thread:local']);
    assert.deepEqual(seqs(all), seqs(store.eventsAfter(0)), 'every event of the log, each once, in order');
    w.unsubscribe();
  });

  it('a subscription made after another process wrote replays those events once; the earlier subscriber gets them once too', async () => {
    const early: StoredEvent[] = [];
    const w = store.subscribe(store.lastSeq(), (evs) => early.push(...evs));
    await writer(store.db.name, 'thread:cli', 2);
    const late: StoredEvent[] = [];
    const t = store.subscribeThread('thread:cli', 0, (evs) => late.push(...evs));
    assert.equal(t.replay.length, 3, 'the replay holds the other process\'s three events');
    await writer(store.db.name, 'thread:cli2', 1);
    await waitFor('the second writer\'s events', 10_000, () => early.length >= 5);
    assert.deepEqual(late, [], 'the late subscriber got its replayed events again');
    assert.ok(isAscendingUnique(seqs(early)));
    assert.equal(early.length, 5);
    w.unsubscribe();
    t.unsubscribe();
  });

  it('a closed store stops its poll: no error from a timer, nothing delivered', async () => {
    const w = store.subscribe(store.lastSeq(), () => {});
    w.unsubscribe();
    const other = VoxStore.open(store.db.name, { schema: STORE_SCHEMAS });
    const got: StoredEvent[] = [];
    other.subscribe(other.lastSeq(), (evs) => got.push(...evs));
    other.close(); // must not throw later from a timer on a closed database
    store.append({ type: 'thread.created', threadId: 'thread:x', title: 'x' });
    await new Promise((r) => setTimeout(r, 1_200));
    assert.deepEqual(got, []);
  });
});
