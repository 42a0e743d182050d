/**
 * A full disk mid-turn, on a real tmpfs mounted for the test (root only; skipped with the reason
 * elsewhere). The disk fills while the fake model server streams a write_file call, so the
 * checkpoint before the write is the first thing to hit it:
 *   - the engine: the write waits for the user with the reason "the checkpoint failed: the disk
 *     is full"; denied, the file is untouched and the run ends `failed`, `platform/diskFull`,
 *     "the disk is full"; approved (after space came back), the write runs;
 *   - a lock file taken on the full disk is not left behind empty (it held every later capture);
 *   - `vox chat`, the workspace on the full disk: the choice is refused (no terminal; `--yes` does
 *     not answer it), the command prints the typed error, exits 1, the write never ran;
 *   - `vox chat` with the database on the full disk too: the typed error, no stack trace, exit 1;
 *     the run is recorded `failed` (from the store's disk reserve, not left running); other
 *     commands on the full disk print the typed error;
 *   - an answer larger than the disk reserve, streamed once the disk is full: the run is still
 *     recorded `failed` "the disk is full", with as much of the answer as fits and a note saying
 *     the rest was not saved (never left `running` for the next start to call a reload).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UpdateOf } from '../../src/protocol/updates';
import { VoxStore } from '../../src/engine/store/store';
import { acquireFileLock } from '../../src/engine/platform/file-lock';
import { DiskFullError } from '../../src/engine/platform/disk-full';
import { DRIVER_ENV, DRIVER_NAMES } from '../../src/engine/store/driver';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { heldGate, openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { runVox } from '../support/cli';
import { until } from '../support/wait';
import { randomBytes } from 'node:crypto';
import { DISK_RESERVE_BYTES } from '../../src/engine/store/disk-reserve';

/** The tmpfs's size: room for a repository and a fresh database, small enough to fill at once. */
const TMPFS_SIZE = '16m';
/** The write the model asks for (bytes): more than a full disk takes. */
const BIG_WRITE_BYTES = 256 * 1024;
const ORIGINAL = 'original content\n';
/** A stack trace's frame line, as Node prints one. */
const STACK_FRAME = /^\s+at .+\(.+:\d+:\d+\)$/m;

/** Mounts a tmpfs of TMPFS_SIZE on `dir`; the reason it cannot, or null when mounted. */
function mountTmpfs(dir: string): string | null {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? null : `mount -t tmpfs failed: ${(r.stderr || r.error?.message || '').trim()}`;
}

function unmount(dir: string): void {
  spawnSync('umount', ['-l', dir]);
}

/** Writes `file` until the disk has no byte left (the write that hits ENOSPC ends it). */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) {
      try {
        fs.writeSync(fd, block);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        break;
      }
    }
    // The last bytes: a smaller write may still fit.
    for (const n of [4096, 512, 1]) {
      try {
        for (;;) fs.writeSync(fd, block.subarray(0, n));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** A write_file of a big file, streamed only once the test filled the disk (the hold's release). */
function bigWriteTurn(held: Promise<unknown>, onReached: () => void) {
  return toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'x'.repeat(BIG_WRITE_BYTES) } }], { holds: [{ afterEvents: 0, release: held, onReached }] });
}

/** A first `vox chat` in the workspace, completed: the store, its reserve and the repository's warm state exist, the background work of a first start is done. */
async function warmUp(ws: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await runVox(['chat', 'hello', '--model', 'openai:gpt-test', '--cwd', ws], env);
  assert.equal(r.code, 0, r.err);
}

/** The thread `vox chat` reported on its last line. */
function threadOf(stderr: string): string {
  const m = /\[vox\] thread (\S+) · /.exec(stderr);
  assert.ok(m, stderr);
  return m[1]!;
}

describe('a full disk mid-turn', function () {
  // Each `vox` process starts through tsx: seconds apiece on a loaded machine.
  this.timeout(240_000);
  let base: string;
  let mnt: string;
  let mounted = false;
  let server: FakeServer | undefined;
  let t: TestEngine | undefined;

  before(function () {
    base = makeTmpDir('vox-diskfull-');
    mnt = path.join(base, 'disk');
    fs.mkdirSync(mnt);
    const why = mountTmpfs(mnt);
    if (why) {
      removeTmpDir(base);
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    mounted = true;
  });
  after(() => {
    if (mounted) unmount(mnt);
    if (base) removeTmpDir(base);
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    server = undefined;
    // Each test starts on an empty disk.
    for (const e of fs.existsSync(mnt) ? fs.readdirSync(mnt) : []) fs.rmSync(path.join(mnt, e), { recursive: true, force: true });
  });

  /** An engine acting in a repository on the tmpfs (the database beside it, off the tmpfs). */
  async function engineOnFullDisk(then: 'deny' | 'approve') {
    const ws = initRepo(path.join(mnt, 'ws'), { 'a.txt': ORIGINAL });
    const filler = path.join(mnt, 'filler');
    const gate = heldGate();
    server = await startFakeOpenAI({ responses: [textTurn('hello'), bigWriteTurn(gate.held, () => (fillDisk(filler), gate.release())), textTurn('done')] });
    const dbDir = path.join(base, `db-${then}`);
    fs.mkdirSync(dbDir, { recursive: true });
    // Writes run without asking: the only question is the failed checkpoint's.
    t = startTestEngine({ dir: dbDir, workspaceRoot: ws, host: openaiHost(server, { write: 'auto', execute: 'auto' }) });
    const c = t.client();
    const asked: UpdateOf<'approvalRequested'>[] = [];
    c.on('approvalRequested', (u) => asked.push(u));
    const ended: UpdateOf<'turnEnded'>[] = [];
    c.on('turnEnded', (u) => ended.push(u));
    // A first turn leaves the repository's warm state and ends: no background git work is left to
    // free space on the full disk (its temporary files) while the checkpoint runs.
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'hello' });
    await c.call('subscribeTurn', { turnId: first.runId!, afterSeq: 0, maxDelayMs: 0 });
    await until(() => ended.length === 1, { what: 'the first turn to end', timeoutMs: 30_000 });
    assert.equal(ended.pop()!.status, 'completed');
    const sent = await c.call('sendPrompt', { threadId: first.threadId, prompt: 'write a.txt' });
    await c.call('subscribeTurn', { turnId: sent.runId!, afterSeq: 0, maxDelayMs: 0 });
    return { ws, filler, c, asked, ended, sent };
  }

  it('the checkpoint before a write fails: the write waits for the user; denied, it never runs and the run ends failed "the disk is full"', async function () {
    const { ws, c, asked, ended, sent } = await engineOnFullDisk('deny');
    await until(() => asked.length > 0 || ended.length > 0, { what: 'the failed checkpoint to ask the user', timeoutMs: 30_000, detail: () => JSON.stringify(t?.host.notices) });
    assert.equal(ended.length, 0, `the turn ended without asking: ${JSON.stringify(ended)}`);
    assert.equal(asked[0]!.toolName, 'write_file');
    assert.equal(asked[0]!.safeguard, 'the checkpoint failed: the disk is full');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), ORIGINAL, 'the write waits');
    await c.call('respondToApproval', { callId: asked[0]!.callId, decision: 'denied' });
    await until(() => ended.length > 0, { what: 'the run to end', timeoutMs: 30_000 });
    assert.equal(ended[0]!.status, 'failed');
    assert.equal(ended[0]!.error, 'the disk is full');
    assert.deepEqual(ended[0]!.failure, { domain: 'platform', code: 'diskFull' });
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), ORIGINAL, 'the write never ran');
    const run = (await c.call('getThread', { threadId: sent.threadId })).runs.find((r) => r.id === sent.runId)!;
    assert.equal(run.status, 'failed');
    assert.equal(run.error, 'the disk is full');
  });

  it('the user chooses to go on (space came back): the write runs without its checkpoint', async function () {
    const { ws, filler, c, asked, ended } = await engineOnFullDisk('approve');
    await until(() => asked.length > 0 || ended.length > 0, { what: 'the failed checkpoint to ask the user', timeoutMs: 30_000, detail: () => JSON.stringify(t?.host.notices) });
    assert.equal(asked[0]?.safeguard, 'the checkpoint failed: the disk is full');
    fs.rmSync(filler);
    await c.call('respondToApproval', { callId: asked[0]!.callId, decision: 'approved' });
    await until(() => ended.length > 0, { what: 'the run to end', timeoutMs: 30_000 });
    assert.equal(ended[0]!.status, 'completed', ended[0]!.error);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8').length, BIG_WRITE_BYTES);
  });

  it('a lock taken on the full disk fails with platform/diskFull and leaves no lock file behind (the next taker does not wait for it)', async function () {
    fillDisk(path.join(mnt, 'filler'));
    const lock = path.join(mnt, 'x.lock');
    await assert.rejects(acquireFileLock(lock, { timeoutMs: 1000 }), (e: unknown) => e instanceof DiskFullError && e.code === 'diskFull');
    assert.equal(fs.existsSync(lock), false, 'no empty lock left behind');
    fs.rmSync(path.join(mnt, 'filler'));
    const release = await acquireFileLock(lock, { timeoutMs: 1000 });
    release();
  });

  it('vox chat, its workspace on the full disk: the choice is refused without a terminal, the write never runs, the typed error, exit 1', async function () {
    const home = path.join(base, 'home-off-disk');
    fs.mkdirSync(home, { recursive: true });
    const ws = initRepo(path.join(mnt, 'ws'), { 'a.txt': ORIGINAL });
    const gate = heldGate();
    server = await startFakeOpenAI({ responses: [textTurn('hello'), bigWriteTurn(gate.held, () => (fillDisk(path.join(mnt, 'filler')), gate.release())), textTurn('done')] });
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    await warmUp(ws, env);
    // --yes approves tool calls, not going on without a checkpoint.
    const chat = await runVox(['chat', 'write a.txt', '--model', 'openai:gpt-test', '--cwd', ws, '--yes'], env);
    assert.equal(chat.code, 1, `stdout: ${chat.out}\nstderr: ${chat.err}`);
    assert.match(chat.err, /not run: write_file — the checkpoint failed: the disk is full \(no terminal to ask\)/, chat.err);
    assert.match(chat.err, /^vox: PlatformError \(diskFull\): the disk is full$/m, chat.err);
    assert.doesNotMatch(chat.err, STACK_FRAME, chat.err);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), ORIGINAL, 'the write never ran');
    const threadId = threadOf(chat.err);
    const store = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    try {
      const run = store.runs(threadId).at(-1)!;
      assert.equal(run.status, 'failed');
      assert.equal(run.error, 'the disk is full');
    } finally {
      store.close();
    }
  });

  // SQLITE_FULL as each driver reports it.
  for (const driver of DRIVER_NAMES) it(`vox chat with its database and workspace on the full disk [${driver}]: typed error, no stack trace, exit 1, the run recorded failed`, async function () {
    const home = path.join(mnt, 'home');
    fs.mkdirSync(home);
    const ws = initRepo(path.join(mnt, 'ws'), { 'a.txt': ORIGINAL });
    const filler = path.join(mnt, 'filler');
    const gate = heldGate();
    server = await startFakeOpenAI({ responses: [textTurn('hello'), bigWriteTurn(gate.held, () => (fillDisk(filler), gate.release())), textTurn('done')] });
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', [DRIVER_ENV]: driver };
    await warmUp(ws, env);
    const chat = await runVox(['chat', 'write a.txt', '--model', 'openai:gpt-test', '--cwd', ws, '--mode', 'fullAuto'], env);
    assert.equal(chat.code, 1, `stdout: ${chat.out}\nstderr: ${chat.err}`);
    assert.match(chat.err, /^vox: PlatformError \(diskFull\): the disk is full$/m, chat.err);
    assert.doesNotMatch(chat.err, STACK_FRAME, chat.err);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), ORIGINAL, 'the write never ran');

    // Other commands on the still-full disk: the typed error, never a stack.
    const again = await runVox(['chat', 'once more', '--model', 'openai:gpt-test', '--cwd', ws], env);
    assert.equal(again.code, 1, again.err);
    assert.match(again.err, /^vox: PlatformError \(diskFull\): the disk is full/m, again.err);
    assert.doesNotMatch(again.err, STACK_FRAME, again.err);
    const list = await runVox(['threads', '--json'], env);
    assert.doesNotMatch(list.err, STACK_FRAME, list.err);
    if (list.code !== 0) assert.match(list.err, /^vox: PlatformError \(diskFull\): the disk is full/m, list.err);

    // Space back: the run was recorded failed with the typed code, not left running for the next start.
    fs.rmSync(filler);
    const store = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    try {
      const run = store.runs(threadOf(chat.err)).at(-1);
      assert.equal(run!.status, 'failed', `chat: ${chat.err}\nagain: ${again.err}\nthreads: ${list.err}`);
      assert.equal(run!.error, 'the disk is full');
      const ended = store.eventsAfter(0).find((e) => e.type === 'run.ended' && e.runId === run!.id);
      assert.deepEqual(ended && 'failure' in ended ? ended.failure : null, { domain: 'platform', code: 'diskFull' });
    } finally {
      store.close();
    }
  });
  it('an answer larger than the disk reserve, on a full disk: the run is recorded failed with the start of the answer and a note', async function () {
    const home = path.join(mnt, 'home');
    fs.mkdirSync(home);
    const ws = initRepo(path.join(mnt, 'ws'), { 'a.txt': ORIGINAL });
    const filler = path.join(mnt, 'filler');
    // Words that never repeat (the repetition guard would stop a repeated answer first), 6× the
    // reserve: more than the room left (PAD_BYTES and the reserve), so the answer's own write fills the disk.
    const PAD_BYTES = 2 * DISK_RESERVE_BYTES;
    const words: string[] = [];
    for (let n = 0; n < 6 * DISK_RESERVE_BYTES; ) {
      const w = `${randomBytes(6).toString('hex')} `;
      words.push(w);
      n += w.length;
    }
    const chunks: string[] = [];
    for (let i = 0; i < words.length; i += 400) chunks.push(words.slice(i, i + 400).join(''));
    const gate = heldGate();
    server = await startFakeOpenAI({ responses: [textTurn('hello'), textTurn(chunks, { holds: [{ afterEvents: 0, release: gate.held, onReached: () => leaveRoom() }] })] });
    const pad = path.join(mnt, 'pad');
    const leaveRoom = () => {
      fs.writeFileSync(pad, Buffer.alloc(PAD_BYTES));
      fillDisk(filler);
      fs.rmSync(pad);
      gate.release();
    };
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    await warmUp(ws, env);
    const chat = await runVox(['chat', 'say a lot', '--model', 'openai:gpt-test', '--cwd', ws], env);
    assert.equal(chat.code, 1, `stdout: ${chat.out.slice(0, 200)}\nstderr: ${chat.err}`);
    assert.match(chat.err, /^vox: PlatformError \(diskFull\): the disk is full$/m, chat.err);
    assert.doesNotMatch(chat.err, STACK_FRAME, chat.err);
    fs.rmSync(filler);
    const store = VoxStore.open(path.join(home, 'vox.db'), { readonly: true });
    try {
      const threadId = threadOf(chat.err);
      const run = store.runs(threadId).at(-1)!;
      assert.deepEqual([run.status, run.error], ['failed', 'the disk is full']);
      const answer = store.messages(threadId).at(-1)!;
      assert.equal(answer.role, 'assistant');
      assert.ok(answer.content.startsWith(chunks[0]!.slice(0, 1000)), 'the answer starts as it streamed');
      assert.match(answer.content, /the rest of this answer was not saved: the disk is full/);
    } finally {
      store.close();
    }
  });
});
