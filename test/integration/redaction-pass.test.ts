/**
 * A database written before the secret rule set (its text stored as it came) is redacted once,
 * in the background, at the next start: the event log, the projections and the search index
 * alike; a pass cut short goes on where it stopped; a second start has nothing left to do; while
 * another connection holds the writer lock the pass neither waits for it nor gives up: it tries
 * again later and finishes once the lock is free.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { STORE_SCHEMAS } from '../../src/engine/modules';
import { BUSY_TIMEOUT_MS } from '../../src/engine/store/database';
import { RedactionPass, REDACTION_BATCH_ROWS, startRedactionPass } from '../../src/engine/store/redaction-pass';
import { VoxStore } from '../../src/engine/store/store';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const GITHUB = 'ghp_R8kV2mQ7xW4zL9pT3nB6yH1cJ5dF0sA2gE7u';
const PLACEHOLDER = 'PLACEHOLDER-OLD-TEXT';

/** A database as an older Vox left it: threads whose messages hold `GITHUB` in every copy of their text. */
function oldDatabase(file: string, threads: number): string[] {
  const store = VoxStore.open(file, { schema: STORE_SCHEMAS });
  const ids: string[] = [];
  for (let i = 0; i < threads; i++) {
    const threadId = `thread:old-${i}`;
    store.append(
      { type: 'thread.created', threadId, title: `${PLACEHOLDER} ${i}` },
      { type: 'message.added', threadId, messageId: `msg:old-${i}`, parentId: null, role: 'user', content: `my token is ${PLACEHOLDER} (${i})`, runId: null, status: 'complete' },
    );
    ids.push(threadId);
  }
  store.close();
  // What the rule set would have caught, put back as it was stored before it existed.
  const raw = new Database(file);
  for (const [table, col] of [['events', 'payload'], ['threads', 'title'], ['messages', 'content'], ['search_fts', 'text']]) {
    raw.prepare(`UPDATE ${table} SET ${col} = replace(${col}, ?, ?)`).run(PLACEHOLDER, GITHUB);
  }
  raw.close();
  return ids;
}

function bytesHold(dir: string, needle: string): string[] {
  return fs.readdirSync(dir).filter((f) => fs.readFileSync(path.join(dir, f)).includes(needle));
}

describe('secrets: the one-time redaction of an older database', function () {
  this.timeout(60_000);
  let dir: string;
  let t: TestEngine | undefined;
  beforeEach(() => (dir = makeTmpDir('vox-redaction-pass-')));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    removeTmpDir(dir);
  });

  it('the engine redacts it in the background: the thread, its title, the event log and the search index; the notice says how many', async () => {
    const db = path.join(dir, 'store');
    fs.mkdirSync(db);
    const file = path.join(db, 'vox.db');
    const [threadId] = oldDatabase(file, 3);
    assert.ok(bytesHold(db, GITHUB).length > 0, 'the old database holds the token');
    const host = new TestHost();
    t = startTestEngine({ dir, host, config: { dbPath: file } });
    await waitFor('the redaction notice', 20_000, () => host.notices.some((n) => /Redacted \d+ stored values/.test(n.message)), 50);
    const c = t.client();
    const shown = JSON.stringify(await c.call('getThread', { threadId: threadId! }));
    assert.ok(!shown.includes(GITHUB) && shown.includes('[redacted]'), shown.slice(0, 300));
    const listed = JSON.stringify(await c.call('listThreads', {}));
    assert.ok(!listed.includes(GITHUB));
    const hits = JSON.stringify(await c.call('searchThreads', { query: GITHUB.slice(0, 12) }));
    assert.ok(!hits.includes(GITHUB), hits);
    await t.dispose();
    t = undefined;
    const raw = new Database(file);
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
    assert.deepEqual(bytesHold(db, GITHUB), [], 'no copy of the token is left in the file');
  });

  it('a pass cut short goes on where it stopped; a finished pass has nothing left', () => {
    const file = path.join(dir, 'vox.db');
    oldDatabase(file, REDACTION_BATCH_ROWS + 20);
    const store = VoxStore.open(file, { schema: STORE_SCHEMAS });
    try {
      const first = new RedactionPass(store.db, store.schema.redactable);
      const a = first.step();
      assert.equal(a.done, false);
      assert.equal(a.changed, REDACTION_BATCH_ROWS, 'one batch of the event log rewritten');
      // A new pass (the next start) continues from the saved row.
      const second = new RedactionPass(store.db, store.schema.redactable);
      let changed = a.changed;
      let steps = 0;
      for (let s = second.step(); !s.done; s = second.step()) {
        changed += s.changed;
        assert.ok(++steps < 1000, 'the pass ends');
      }
      // Per thread: two events (the title's and the message's), the title, the message, its search entry — each rewritten once.
      const n = REDACTION_BATCH_ROWS + 20;
      assert.equal(changed, n * 5);
      assert.equal(second.pending(), false);
      const again = new RedactionPass(store.db, store.schema.redactable);
      assert.equal(again.pending(), false);
      assert.deepEqual(again.step(), { done: true, changed: 0 });
      const left = store.db.prepare("SELECT count(*) AS n FROM messages WHERE content LIKE '%ghp_%'").get() as { n: number };
      assert.equal(left.n, 0);
    } finally {
      store.close();
    }
  });

  it('another connection holding the writer lock: the pass does not wait for it nor stop, and finishes once the lock is free', async () => {
    const file = path.join(dir, 'vox.db');
    oldDatabase(file, 5);
    const store = VoxStore.open(file, { schema: STORE_SCHEMAS });
    const holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE'); // another writer (a window, a vox command) in the middle of a write
    const errors: unknown[] = [];
    let done: number | undefined;
    const stop = startRedactionPass(store.db, store.schema.redactable, { onDone: (n) => (done = n), onError: (e) => errors.push(e) }, 50);
    try {
      // The pass's first tries meet the lock (it starts REDACTION_START_DELAY_MS after the call).
      await new Promise((r) => setTimeout(r, 2_600));
      assert.deepEqual(errors.map(String), [], 'the pass gave up (or waited out SQLite\'s busy timeout) on a locked database');
      assert.equal(done, undefined, 'finished while the lock was held');
      assert.equal(Number(store.db.pragma('busy_timeout')), BUSY_TIMEOUT_MS, 'the store\'s own writes keep their busy timeout');
      holder.exec('ROLLBACK');
      await waitFor('the pass to finish once the lock is free', 20_000, () => done !== undefined);
      assert.deepEqual(errors, []);
      assert.equal(done, 5 * 5);
      assert.equal((store.db.prepare("SELECT count(*) AS n FROM messages WHERE content LIKE '%ghp_%'").get() as { n: number }).n, 0);
    } finally {
      stop();
      holder.close();
      store.close();
    }
  });
});
