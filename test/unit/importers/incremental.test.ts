/**
 * Importing what is new and nothing else: a session that grows after its import (the real CLI's
 * lines, written in two halves) imports only the new turns; a half-written last line waits for the
 * next import; a corrupt line skips that line, not the file; the size and count limits skip with
 * clear reasons; a folder given but missing is a typed error; the imported thread continues as a
 * normal Vox thread (its messages and runs in the store's shape).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VoxStore } from '../../../src/engine/store/store';
import { ImportService } from '../../../src/engine/importers/service';
import { DEFAULT_IMPORT_LIMITS, ImportError } from '../../../src/engine/importers/types';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { copyFixture, jsonlFiles } from './support';

/** The main session file of a Claude Code fixture copy. */
function mainSession(home: string): string {
  return jsonlFiles(path.join(home, 'projects')).find((f) => !path.basename(f).startsWith('agent-') && fs.statSync(f).size > 0)!;
}

describe('importers: growth, corruption and limits', () => {
  let dir: string;
  let store: VoxStore;
  beforeEach(() => {
    dir = makeTmpDir('vox-import-');
    store = VoxStore.open(path.join(dir, 'vox.db'));
  });
  afterEach(() => {
    store.close();
    removeTmpDir(dir);
  });

  for (const [fixture, sourceDir, key] of [['claude-code-2.0', 'projects', 'claudeDir'], ['codex-0.63', 'sessions', 'codexDir']] as const) {
    it(`${fixture}: an appended session imports only the new turns, and the result equals a one-shot import`, () => {
      const home = copyFixture(fixture, dir);
      const file = fixture.startsWith('claude') ? mainSession(home) : jsonlFiles(path.join(home, sourceDir))[0]!;
      const full = fs.readFileSync(file, 'utf8');
      const lines = full.split('\n').filter(Boolean);
      // Cut before the resumed prompt: the first half is what the first run wrote.
      const cut = lines.findIndex((l) => l.includes('FIXTURE-RESUME'));
      assert.ok(cut > 0);
      fs.writeFileSync(file, lines.slice(0, cut).join('\n') + '\n' + lines[cut]!.slice(0, 40)); // and half of the next line, still being written
      const svc = new ImportService(store);
      const first = svc.import({ [key]: home }).sources[0]!;
      assert.equal(first.skipped.corruptLine, undefined, 'a half-written last line is not corrupt: it waits');
      const thread = store.listThreads().find((t) => t.parentThreadId === null)!;
      assert.equal(store.messages(thread.id).filter((m) => m.role === 'user').length, 1);
      const seqAfterFirst = store.lastSeq();
      assert.ok(svc.scan({ [key]: home }).sessions.some((s) => s.imported === 'yes'));

      fs.writeFileSync(file, full); // the resumed run finished writing
      assert.ok(svc.scan({ [key]: home }).sessions.some((s) => s.imported === 'partial'));
      const second = svc.import({ [key]: home }).sources[0]!;
      assert.equal(second.threads, 0);
      assert.ok(second.messages >= 2, 'the resumed prompt and its answer');
      const users = store.messages(thread.id).filter((m) => m.role === 'user');
      assert.equal(users.length, 2);
      assert.ok(store.lastSeq() > seqAfterFirst);
      // The new turn continues the thread: its prompt's parent is the last message before it.
      const msgs = store.messages(thread.id);
      const resumed = msgs.find((m) => m.content.startsWith('FIXTURE-RESUME'))!;
      assert.ok(resumed.parentId !== null && msgs.some((m) => m.id === resumed.parentId));
      assert.deepEqual(store.runs(thread.id).map((r) => r.ordinal), [0, 1]);

      // The same file imported in one go into another store gives the same messages.
      const other = VoxStore.open(path.join(dir, 'other.db'));
      new ImportService(other).import({ [key]: home });
      const a = store.messages(thread.id).filter((m) => m.role === 'user').map((m) => [m.id, m.content]);
      const b = other.messages(thread.id).filter((m) => m.role === 'user').map((m) => [m.id, m.content]);
      other.close();
      assert.deepEqual(a, b);
    });
  }

  it('a corrupt line skips that line, not the file', () => {
    const home = copyFixture('codex-0.171', dir);
    const file = jsonlFiles(path.join(home, 'sessions'))[0]!;
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const at = lines.findIndex((l) => l.includes('FIXTURE-RESUME'));
    lines.splice(at - 1, 0, '{"timestamp":"2026-12-01T17:58:27.700Z","type":"response_item","payload":{"type":"mess', 'not json at all', '\u0000\u0001');
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const c = new ImportService(store).import({ codexDir: home }).sources[0]!;
    assert.equal(c.skipped.corruptLine, 3);
    const t = store.listThreads()[0]!;
    assert.equal(store.messages(t.id).filter((m) => m.role === 'user').length, 2, 'the turns on both sides of the corrupt lines imported');
  });

  it('files over the size limit and beyond the count limit are skipped with their reasons; a line over the line limit too', () => {
    const home = copyFixture('claude-code-2.0', dir);
    const main = mainSession(home);
    const size = fs.statSync(main).size;
    const tooSmall = new ImportService(store, { ...DEFAULT_IMPORT_LIMITS, maxFileBytes: size - 1 }).scan({ claudeDir: home });
    assert.equal(tooSmall.sessions.length, 0);
    assert.ok((tooSmall.sources[0]!.skipped.fileTooLarge ?? 0) >= 1);
    const few = new ImportService(store, { ...DEFAULT_IMPORT_LIMITS, maxFilesPerSource: 2 }).scan({ claudeDir: home });
    assert.ok((few.sources[0]!.skipped.tooManyFiles ?? 0) >= 1);
    // A line limit below the longest line: those lines are skipped, the rest imports.
    const longest = Math.max(...fs.readFileSync(main, 'utf8').split('\n').map((l) => Buffer.byteLength(l)));
    const r = new ImportService(store, { ...DEFAULT_IMPORT_LIMITS, maxLineBytes: longest - 1 }).import({ claudeDir: home }).sources[0]!;
    assert.ok((r.skipped.lineTooLong ?? 0) >= 1);
    assert.ok(r.messages > 0);
  });

  it('a folder given but missing, or a file in its place, is a typed error; absent standard locations are only reported', () => {
    const svc = new ImportService(store);
    assert.throws(() => svc.scan({ claudeDir: path.join(dir, 'nope') }), (e: unknown) => e instanceof ImportError && e.code === 'missingDir');
    fs.writeFileSync(path.join(dir, 'file'), 'x');
    assert.throws(() => svc.import({ codexDir: path.join(dir, 'file') }), (e: unknown) => e instanceof ImportError && e.code === 'notADirectory');
    assert.throws(() => svc.import({ codexDir: copyFixture('codex-0.63', dir) }, ['codex:not-there']), (e: unknown) => e instanceof ImportError && e.code === 'unknownSession');
  });

  it('imports only the ids asked for', () => {
    const dirs = { claudeDir: copyFixture('claude-code-2.1', dir), codexDir: copyFixture('codex-0.63', dir) };
    const svc = new ImportService(store);
    const scan = svc.scan(dirs);
    assert.equal(scan.sessions.length, 2);
    const codex = scan.sessions.find((s) => s.source === 'codex')!;
    svc.import(dirs, [codex.id]);
    assert.deepEqual(store.listThreads().map((t) => (store.db.prepare('SELECT source FROM threads WHERE id = ?').get(t.id) as { source: string }).source), ['codex']);
    const after = svc.scan(dirs).sessions;
    assert.equal(after.find((s) => s.source === 'codex')!.imported, 'yes');
    assert.equal(after.find((s) => s.source === 'claude-code')!.imported, 'no');
  });
});
