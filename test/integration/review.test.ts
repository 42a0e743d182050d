/**
 * Reviewing the agent's edits through the protocol, on a real git
 * repository, a real engine and the real OpenAI provider talking to a fake server: the preview
 * of a waiting write_file/apply_edit is exactly what the tool then writes; after the turn, the
 * changed files and their hunks, per-hunk undo byte for byte (CRLF, no final newline), binary
 * files refused, every undo itself undoable; restore previews; readable restore points; empty
 * turn-end checkpoints left out of the list; a deleted thread's checkpoint refs found and pruned.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import type { UpdateOf } from '../../src/protocol/updates';
import type { CommandResult } from '../../src/protocol/commands/index';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeRepo, makeSandbox, userState, writeFile, type Sandbox } from '../support/worktree-fixtures';
import { until } from '../support/wait';
import { assertRejectsCode } from '../support/assert-code';

const A_LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const A_BASE = `${A_LINES.join('\n')}\n`;
const A_AGENT = A_BASE.replace('line 3\n', 'line 3 by the agent\n').replace('line 18\n', 'line 18 by the agent\nand one more\n');
/** CRLF, no newline at the end. */
const C_BASE = 'alpha\r\nbeta\r\ngamma';
const C_AGENT = 'alpha\r\nBETA\r\ngamma';

describe('review: previews, per-hunk keep/undo, restore previews and labels', function () {
  this.timeout(40_000);
  let sb: Sandbox;
  let repo: string;
  let server: FakeServer;
  let t: TestEngine;
  let c: EngineClient;

  async function start(responses: FakeResponse[], approval?: unknown): Promise<void> {
    server = await startFakeOpenAI({ responses });
    t = startTestEngine({ dir: path.join(sb.dir, 'state'), workspaceRoot: repo, host: openaiHost(server, approval) });
    c = t.client();
  }
  const read = (rel: string): Buffer => fs.readFileSync(path.join(repo, rel));
  const idle = () => until(async () => (await c.call('listRuns', {})).runs.length === 0, { what: 'the engine to get there' });

  beforeEach(() => {
    sb = makeSandbox();
    fs.mkdirSync(path.join(sb.dir, 'state'));
    repo = makeRepo(sb, 'proj', { files: { 'a.txt': A_BASE, 'c.txt': C_BASE, 'img.bin': 'placeholder\n' } });
  });
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    sb.cleanup();
  });

  it('the preview of a waiting write_file and apply_edit is exactly what the tool then writes', async () => {
    await start([
      toolCallTurn([{ name: 'apply_edit', args: { path: 'c.txt', oldText: 'beta\ngamma', newText: 'BETA\ngamma' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: A_AGENT } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'src/new.ts', content: 'export const x = 1;\n' } }]),
      toolCallTurn([{ name: 'read_file', args: { path: 'a.txt' } }]),
      textTurn('done'),
    ]);
    const previews: CommandResult<'previewToolCall'>[] = [];
    c.on('approvalRequested', (u: UpdateOf<'approvalRequested'>) => {
      void (async () => {
        const p = await c.call('previewToolCall', { callId: u.callId });
        previews.push(p);
        // Nothing was written by the preview.
        assert.equal(p.beforeBase64 === null ? fs.existsSync(path.join(repo, p.path)) : read(p.path).equals(Buffer.from(p.beforeBase64, 'base64')), p.beforeBase64 !== null);
        await c.call('respondToApproval', { callId: u.callId, decision: 'approved' });
      })();
    });
    await c.call('sendPrompt', { threadId: null, prompt: 'edit' });
    await until(() => previews.length === 3, { what: 'the engine to get there' });
    await idle();
    assert.deepEqual(previews.map((p) => [p.toolName, p.path]), [['apply_edit', 'c.txt'], ['write_file', 'a.txt'], ['write_file', path.join('src', 'new.ts')]]);
    assert.equal(Buffer.from(previews[0]!.beforeBase64!, 'base64').toString('latin1'), C_BASE);
    assert.equal(Buffer.from(previews[0]!.afterBase64, 'base64').toString('latin1'), C_AGENT, 'apply_edit keeps CRLF and the missing final newline');
    assert.equal(previews[2]!.beforeBase64, null, 'a new file has no before');
    for (const p of previews) assert.ok(read(p.path).equals(Buffer.from(p.afterBase64, 'base64')), `${p.path}: the tool wrote what the preview showed`);
    await assertRejectsCode(c.call('previewToolCall', { callId: 'call_gone' }), 'review/unknownCall', ClientError);
  });

  it('a command or a failing edit has no preview (typed errors)', async () => {
    await start([
      toolCallTurn([{ name: 'run_command', args: { command: 'true' } }]),
      toolCallTurn([{ name: 'apply_edit', args: { path: 'a.txt', oldText: 'no such text', newText: 'x' } }]),
      textTurn('ok'),
    ]);
    const errors: string[] = [];
    c.on('approvalRequested', (u: UpdateOf<'approvalRequested'>) => {
      void c.call('previewToolCall', { callId: u.callId }).catch((e: ClientError) => errors.push(`${e.domain}/${e.code}: ${e.message}`)).finally(() => c.call('respondToApproval', { callId: u.callId, decision: 'denied' }));
    });
    await c.call('sendPrompt', { threadId: null, prompt: 'edit' });
    await until(() => errors.length === 2, { what: 'the engine to get there' });
    assert.match(errors[0]!, /^review\/notAnEdit: run_command does not edit a file/);
    assert.match(errors[1]!, /^review\/cannotPreview: No preview: oldText was not found in a\.txt/);
    await idle();
  });

  it('after the turn: files and hunks; per-hunk undo is byte-exact (CRLF, no final newline), binary refused, and every undo is undoable', async () => {
    const BIN = '\u0000\u0001binary\u0000';
    await start(
      [
        toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: A_AGENT } }]),
        toolCallTurn([{ name: 'apply_edit', args: { path: 'c.txt', oldText: 'beta', newText: 'BETA' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'img.bin', content: BIN } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'made.txt', content: 'made by the agent\n' } }]),
        textTurn('done'),
      ],
      { write: 'auto' },
    );
    const before = userState(repo);
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'edit' });
    await idle();
    const changes = await c.call('listTurnChanges', { threadId });
    assert.deepEqual(changes.files.map((f) => [f.path, f.status, f.kept]).sort(), [['a.txt', 'modified', false], ['c.txt', 'modified', false], ['img.bin', 'modified', false], ['made.txt', 'added', false]]);

    const hunksA = await c.call('listFileHunks', { threadId, path: 'a.txt' });
    assert.deepEqual(hunksA.hunks.map((h) => [h.removed, h.added]), [['line 3\n', 'line 3 by the agent\n'], ['line 18\n', 'line 18 by the agent\nand one more\n']]);
    // Undo the first hunk only: line 3 is back, the second hunk stays.
    const u1 = await c.call('undoHunk', { threadId, path: 'a.txt', hunkIndex: 0 });
    assert.equal(u1.remaining, 1);
    assert.equal(read('a.txt').toString('latin1'), A_BASE.replace('line 18\n', 'line 18 by the agent\nand one more\n'));
    // CRLF without a final newline: exact.
    const hunksC = await c.call('listFileHunks', { threadId, path: 'c.txt' });
    assert.deepEqual(hunksC.hunks.map((h) => [h.removed, h.added]), [['beta\r\n', 'BETA\r\n']]);
    await c.call('undoHunk', { threadId, path: 'c.txt', hunkIndex: 0 });
    assert.ok(read('c.txt').equals(Buffer.from(C_BASE, 'latin1')), JSON.stringify(read('c.txt').toString('latin1')));
    // Binary: no hunks, a hunk undo is refused and changes nothing; the whole file can be undone.
    const hunksBin = await c.call('listFileHunks', { threadId, path: 'img.bin' });
    assert.equal(hunksBin.binary, true);
    await assertRejectsCode(c.call('undoHunk', { threadId, path: 'img.bin', hunkIndex: 0 }), 'review/binaryFile', ClientError);
    assert.equal(read('img.bin').toString('utf8'), BIN);
    await assertRejectsCode(c.call('undoHunk', { threadId, path: 'a.txt', hunkIndex: 5 }), 'review/unknownHunk', ClientError);
    // A file the turn created: undoing it removes it.
    const uMade = await c.call('undoFile', { threadId, path: 'made.txt' });
    assert.equal(fs.existsSync(path.join(repo, 'made.txt')), false);

    // Each undo is undoable: the restore point of the file undo brings made.txt back, the hunk's brings line 3's edit back.
    await c.call('undoRestore', { restorePoint: uMade.restorePoint });
    assert.equal(read('made.txt').toString('utf8'), 'made by the agent\n');
    await c.call('undoRestore', { restorePoint: u1.restorePoint });
    assert.ok(read('a.txt').equals(Buffer.from(A_AGENT, 'latin1')), 'the hunk undo was undone exactly');
    // Restore points read as what they were made before; undone ones are hidden (all: true shows them).
    const { restorePoints } = await c.call('listRestorePoints', {});
    const labels = restorePoints.map((p) => p.label);
    assert.ok(!restorePoints.some((p) => p.ref === uMade.restorePoint || p.ref === u1.restorePoint), `undone points are hidden: ${labels.join(' | ')}`);
    assert.ok(labels.includes('before undoing hunk 1 of c.txt'), labels.join(' | '));
    assert.ok(labels.some((l) => /^before undoing the restore of \d{4}-\d\d-\d\d \d\d:\d\d UTC — \d+ files?$/.test(l)), labels.join(' | '));
    const all = (await c.call('listRestorePoints', { all: true })).restorePoints;
    assert.equal(all.find((p) => p.ref === u1.restorePoint)?.label, 'before undoing hunk 1 of a.txt');
    assert.equal(all.find((p) => p.ref === u1.restorePoint)?.undone, true);

    // Keep: a file marked reviewed stays listed as kept; unknown files are typed errors.
    await c.call('keepFile', { threadId, path: 'a.txt' });
    assert.equal((await c.call('listTurnChanges', { threadId })).files.find((f) => f.path === 'a.txt')?.kept, true);
    await assertRejectsCode(c.call('keepFile', { threadId, path: 'nope.txt' }), 'review/unknownFile', ClientError);
    await assertRejectsCode(c.call('listTurnChanges', { threadId: (await c.call('createThread', { title: 'idle' })).threadId }), 'review/noTurn', ClientError);
    const after = userState(repo);
    assert.ok(before.head, 'the repository has a commit');
    assert.deepEqual({ head: after.head, branch: after.branch, index: after.index }, { head: before.head, branch: before.branch, index: before.index }, 'HEAD, branch and index never move');
  });

  it('a deleted thread\'s checkpoint refs are listed as orphaned and pruned by thread', async () => {
    await start([textTurn('unused')]);
    const { threadId } = await c.call('createThread', { title: 'to be deleted' });
    const { threadId: kept } = await c.call('createThread', { title: 'kept' });
    await c.call('captureCheckpoint', { threadId });
    writeFile(repo, 'a.txt', 'changed\n');
    await c.call('captureCheckpoint', { threadId });
    await c.call('captureCheckpoint', { threadId: kept });
    assert.deepEqual((await c.call('listOrphanedCheckpoints', {})).threads, []);
    await c.call('deleteThread', { threadId });
    assert.deepEqual((await c.call('listOrphanedCheckpoints', {})).threads, [{ threadId, refs: 2 }]);
    const pruned = await c.call('pruneCheckpoints', { threadId });
    assert.equal(pruned.deletedRefs.length, 2);
    assert.deepEqual((await c.call('listOrphanedCheckpoints', {})).threads, []);
    assert.equal((await c.call('listCheckpoints', { threadId: kept })).checkpoints.length, 1, 'the live thread keeps its checkpoint');
  });

  it('restore preview names what a restore deletes, overwrites and brings back; readable labels; empty turn-ends are not listed', async () => {
    await start([textTurn('nothing to do'), textTurn('still nothing')]);
    const { threadId } = await c.call('createThread', { title: 'Fix the parser' });
    const cp = await c.call('captureCheckpoint', { threadId });
    writeFile(repo, 'a.txt', 'changed\n');
    writeFile(repo, 'created-later.txt', 'new\n');
    fs.rmSync(path.join(repo, 'c.txt'));
    const preview = await c.call('previewRestore', { threadId, ordinal: cp.ordinal });
    assert.deepEqual(preview.deleted.map((p) => p.path), ['created-later.txt']);
    assert.deepEqual(preview.overwritten.map((p) => p.path), ['a.txt']);
    assert.deepEqual(preview.recreated.map((p) => p.path), ['c.txt']);
    assert.equal(fs.existsSync(path.join(repo, 'created-later.txt')), true, 'a preview changes nothing');
    await c.call('restoreCheckpoint', { threadId, ordinal: cp.ordinal, mode: 'files' });
    assert.equal(fs.existsSync(path.join(repo, 'created-later.txt')), false);
    const { restorePoints } = await c.call('listRestorePoints', {});
    assert.equal(restorePoints[0]!.label, `before restoring #${cp.ordinal} of "Fix the parser" — 3 files`);

    // Two turns that change nothing: their turn-end checkpoints exist but add no rows.
    await c.call('sendPrompt', { threadId, prompt: 'hello' });
    await idle();
    const listed = await c.call('listCheckpoints', { threadId });
    const everything = await c.call('listCheckpoints', { threadId, includeEmpty: true });
    assert.ok(everything.checkpoints.some((r) => r.trigger === 'turnEnd' && r.changedCount === 0), JSON.stringify(everything.checkpoints));
    assert.deepEqual(listed.checkpoints.map((r) => r.ordinal), [cp.ordinal]);
  });
});
