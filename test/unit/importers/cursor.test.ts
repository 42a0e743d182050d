/**
 * Cursor chats: a store.db built in the test from the documented schema (meta '0' = hex JSON with
 * latestRootBlobId; blobs = SHA-256-addressed; the root a protobuf listing 32-byte message ids in
 * field 1 and the workspace URI in field 9; message blobs JSON with `<user_query>`), written in WAL
 * mode by a writer that stays open with nothing checkpointed into the main file (as a running
 * Cursor leaves it). The import reads it read-only, never writes to it, and takes only the new
 * messages when the chat grows. Also: the protobuf reader's bounds, a store that is not Cursor's.
 */
import { strict as assert } from 'node:assert';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { VoxStore } from '../../../src/engine/store/store';
import { ImportService } from '../../../src/engine/importers/service';
import { readCursorStore } from '../../../src/engine/importers/cursor';
import { lenField, readFields, readVarint } from '../../../src/engine/importers/protobuf';
import { CURSOR_CONVERSATION, CursorWriter } from '../../support/cursor-store';
import { ImportError } from '../../../src/engine/importers/types';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';

const WORKSPACE = '/home/dev/My Project';
const conversation = CURSOR_CONVERSATION;

describe('importers: Cursor store.db', () => {
  let dir: string;
  let store: VoxStore;
  let writerDb: Database.Database | null = null;
  beforeEach(() => {
    dir = makeTmpDir('vox-cursor-');
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    writerDb?.close();
    writerDb = null;
    store.close();
    removeTmpDir(dir);
  });

  function makeStore(): { cursorDir: string; file: string; w: CursorWriter } {
    const cursorDir = path.join(dir, '.cursor');
    const chat = path.join(cursorDir, 'chats', crypto.createHash('md5').update(WORKSPACE).digest('hex'), 'agent-1');
    fs.mkdirSync(chat, { recursive: true });
    const file = path.join(chat, 'store.db');
    writerDb = new Database(file);
    return { cursorDir, file, w: new CursorWriter(writerDb, 'agent-1', WORKSPACE) };
  }

  it('imports a chat whose pages are only in the WAL of a writer still open, read-only, and the grown chat imports only its new messages', () => {
    const { cursorDir, file, w } = makeStore();
    w.add(...conversation);
    assert.ok(fs.statSync(`${file}-wal`).size > 0, 'the writes sit in the WAL');
    const mainBefore = fs.readFileSync(file);
    const walBefore = fs.readFileSync(`${file}-wal`);

    const svc = new ImportService(store);
    const scan = svc.scan({ cursorDir });
    assert.equal(scan.sessions.length, 1);
    assert.deepEqual({ title: scan.sessions[0]!.title, project: scan.sessions[0]!.project, imported: scan.sessions[0]!.imported }, { title: 'Why does the build fail?', project: WORKSPACE, imported: 'no' });
    const c = svc.import({ cursorDir }).sources[0]!;
    assert.deepEqual([c.threads, c.messages, c.toolCalls, c.toolErrors], [1, 2, 2, 1]);
    assert.equal(c.skipped.systemMessage, 1);
    assert.equal(c.skipped.contextMessage, 1);
    assert.ok(fs.readFileSync(file).equals(mainBefore) && fs.readFileSync(`${file}-wal`).equals(walBefore), 'nothing was written to Cursor’s files');

    const t = store.listThreads()[0]!;
    assert.equal(t.title, 'Why does the build fail?');
    const [run] = store.runs(t.id);
    assert.equal(run!.model, 'claude-4.5-sonnet');
    const items = store.items(run!.id);
    assert.deepEqual(items.map((i) => i.kind), ['reasoning', 'text', 'toolCall', 'toolCall', 'text']);
    assert.equal(items.find((i) => i.toolName === 'run_terminal_cmd')!.isError, true);
    assert.equal(items.find((i) => i.toolName === 'read_file')!.content, '{"name":"x"}');
    assert.equal(store.messages(t.id).at(-1)!.content, 'Let me run it.\n\ntsc is missing: install typescript.');

    // Unchanged: nothing happens. Then the chat grows (still uncheckpointed): only the new turn comes.
    const seq = store.lastSeq();
    svc.import({ cursorDir });
    assert.equal(store.lastSeq(), seq);
    w.add({ role: 'user', content: '<user_query>And now?</user_query>' }, { role: 'assistant', content: [{ type: 'text', text: 'Now it builds.' }] });
    assert.equal(svc.scan({ cursorDir }).sessions[0]!.imported, 'partial');
    const again = svc.import({ cursorDir }).sources[0]!;
    assert.deepEqual([again.threads, again.messages], [0, 2]);
    assert.deepEqual(store.messages(t.id).filter((m) => m.role === 'user').map((m) => m.content), ['Why does the build fail?', 'And now?']);
    assert.deepEqual(store.runs(t.id).map((r) => r.ordinal), [0, 1]);
  });

  it('a store without Cursor’s meta is skipped as notACursorStore; the protobuf reader refuses truncated input', () => {
    const cursorDir = path.join(dir, '.cursor');
    const chat = path.join(cursorDir, 'chats', 'abc', 'agent-x');
    fs.mkdirSync(chat, { recursive: true });
    const db = new Database(path.join(chat, 'store.db'));
    db.exec('CREATE TABLE other (x)');
    db.close();
    const scan = new ImportService(store).scan({ cursorDir });
    assert.equal(scan.sessions.length, 0);
    assert.equal(scan.sources[0]!.skipped.notACursorStore, 1);
    assert.throws(() => readCursorStore(path.join(chat, 'store.db')), (e: unknown) => e instanceof ImportError && e.code === 'notACursorStore');

    assert.deepEqual(readVarint(Uint8Array.from([0xac, 0x02]), 0), { value: 300n, next: 2 });
    const f = readFields(Uint8Array.from([...lenField(1, Uint8Array.from([1, 2, 3])), 0x10, 0x05]));
    assert.deepEqual(f.map((x) => [x.field, x.wire]), [[1, 2], [2, 0]]);
    assert.throws(() => readFields(Uint8Array.from([0x0a, 0x05, 1])), (e: unknown) => e instanceof ImportError);
    assert.throws(() => readFields(Uint8Array.from([0x08, 0xff])), (e: unknown) => e instanceof ImportError);
  });
});
