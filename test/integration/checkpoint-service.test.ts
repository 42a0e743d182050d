/**
 * Checkpoints in the agent loop: automatic capture before a mutating tool and at turn end,
 * restore in the three modes (files / thread / both), undo, prune, and a workspace that is not
 * a git repository (reported, agent unaffected). Real engine (its services, to watch the
 * checkpoint store from inside the loop), real git, fake OpenAI server.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assembleEngine, type Engine } from '../../src/engine/engine';
import type { EngineServices } from '../../src/engine/services';
import type { HostNotice } from '../../src/engine/host';
import { TestHost } from '../support/test-engine';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo, gitOut } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('checkpoints in the agent loop', function () {
  this.timeout(60_000);
  let dir: string;
  let ws: string;
  let server: FakeServer;
  let engine: Engine;
  let s: EngineServices;
  let notices: HostNotice[];

  async function setup(repo: boolean, responses: Parameters<typeof startFakeOpenAI>[0]['responses']) {
    dir = makeTmpDir();
    ws = path.join(dir, 'ws');
    if (repo) initRepo(ws, { 'a.txt': 'original\n', '.gitignore': 'build/\n' });
    else {
      fs.mkdirSync(ws);
      fs.writeFileSync(path.join(ws, 'a.txt'), 'original\n');
    }
    ws = fs.realpathSync(ws);
    server = await startFakeOpenAI({ responses });
    const host = new TestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, approval: { write: 'auto', execute: 'auto' } });
    ({ engine, services: s } = assembleEngine({ dbPath: path.join(dir, 'vox.db'), workspaceRoot: ws, demoModelPath: '/none.gguf' }, host));
    notices = host.notices;
  }
  afterEach(async () => {
    await engine?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  const turn = async (o: { prompt: string; threadId?: string }) => s.runs.start({ ...o, model: await s.providers.resolve('openai:gpt-test') }).done;

  it('captures before write_file and at turn end; restore both brings files and conversation back; undo returns', async () => {
    await setup(true, [
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'changed by agent\n' } }]),
      textTurn('done'),
      textTurn('second answer'),
    ]);
    fs.mkdirSync(path.join(ws, 'build'));
    fs.writeFileSync(path.join(ws, 'build', 'out.bin'), 'ignored output');
    const head0 = gitOut(ws, ['rev-parse', 'HEAD']);
    const r = await turn({ prompt: 'change a' });
    assert.equal(r.status, 'completed', r.error ?? '');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'changed by agent\n');
    const rows = s.store.checkpoints(r.threadId);
    assert.deepEqual(rows.map((c) => [c.ordinal, c.trigger, c.toolName]), [[1, 'tool', 'write_file'], [2, 'turnEnd', null]]);
    assert.equal(rows[1]!.changedCount, 1);
    assert.equal(rows[0]!.rewindTo, null, 'a tool checkpoint of the first run rewinds to before its prompt');

    const out = await s.checkpoints.restore(r.threadId, 1, 'both');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'original\n');
    assert.equal(fs.readFileSync(path.join(ws, 'build', 'out.bin'), 'utf8'), 'ignored output', 'ignored files untouched');
    assert.deepEqual(s.store.activePath(r.threadId), [], 'conversation rewound to before the prompt');
    assert.equal(s.store.runs(r.threadId).length, 1, 'the run (and its cost) stays recorded');
    assert.equal(gitOut(ws, ['rev-parse', 'HEAD']), head0);
    assert.equal(gitOut(ws, ['status', '--porcelain']), '', 'index and tree back to the committed state');

    // A new prompt continues from the rewind point: a new branch of the tree.
    const r2 = await turn({ threadId: r.threadId, prompt: 'again' });
    const path2 = s.store.activePath(r.threadId);
    assert.deepEqual(path2.map((m) => m.content), ['again', 'second answer']);
    assert.equal(path2[0]!.parentId, null);
    assert.equal(s.store.messages(r.threadId).length, 4, 'the old branch is still stored');
    assert.equal(r2.status, 'completed');

    await s.checkpoints.undo(out.files!.restorePoint);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'changed by agent\n');
  });

  it('restore files only keeps the conversation; thread only keeps the files', async () => {
    await setup(true, [toolCallTurn([{ name: 'write_file', args: { path: 'new.txt', content: 'n\n' } }]), textTurn('ok')]);
    const r = await turn({ prompt: 'add new' });
    const before = s.store.activePath(r.threadId).length;
    await s.checkpoints.restore(r.threadId, 1, 'files');
    assert.ok(!fs.existsSync(path.join(ws, 'new.txt')));
    assert.equal(s.store.activePath(r.threadId).length, before);
    await s.checkpoints.restore(r.threadId, 2, 'thread');
    assert.ok(!fs.existsSync(path.join(ws, 'new.txt')), 'thread-only restore leaves files alone');
    assert.equal(s.store.activePath(r.threadId).length, before, 'turn-end checkpoint rewinds to the turn end');
    await assert.rejects(s.checkpoints.restore(r.threadId, 99, 'thread'), (e: { code?: string }) => e.code === 'unknownCheckpoint');
  });

  it('prune deletes checkpoint refs and their rows, and reports reclaimable bytes', async () => {
    await setup(true, [toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'x'.repeat(50_000) } }]), textTurn('ok')]);
    const r = await turn({ prompt: 'big' });
    assert.equal(s.store.checkpoints(r.threadId).length, 2);
    const p = await s.checkpoints.prune({ keepLast: 0, gcAuto: false });
    assert.equal(p.deletedRefs.length, 2);
    assert.equal(s.store.checkpoints(r.threadId).length, 0);
    assert.ok(p.reclaimableBytes >= 0);
  });

  it('a workspace that is not a git repository: checkpoints off (reported once), the agent still works', async () => {
    await setup(false, [toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'edited\n' } }]), textTurn('ok')]);
    const r = await turn({ prompt: 'edit' });
    assert.equal(r.status, 'completed');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'edited\n');
    assert.deepEqual(s.store.checkpoints(r.threadId), []);
    assert.equal(notices.filter((n) => /not a git repository/.test(n.message)).length, 1);
  });

  it('between edit tools, captures look only at the paths the tools reported; a shell command, a user save or the turn end make them look at everything', async () => {
    await setup(true, [
      toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'one\n' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'b.txt', content: 'two\n' } }]),
      toolCallTurn([{ name: 'run_command', args: { command: 'echo three > c.txt' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'd.txt', content: 'four\n' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'e.txt', content: 'five\n' } }]),
      textTurn('done'),
    ]);
    const seen: Array<{ trigger: string; changedPaths?: Array<string | Buffer>; fast: boolean; incremental: boolean; tree: string }> = [];
    const git = s.checkpoints.git;
    const original = git.captureCheckpoint.bind(git);
    git.captureCheckpoint = async (opts) => {
      const r = await original(opts);
      seen.push({ trigger: opts.trigger.kind, ...(opts.changedPaths ? { changedPaths: opts.changedPaths } : {}), fast: r.fast, incremental: r.incremental, tree: r.tree });
      return r;
    };
    // A user save between the 4th and the 5th tool: that capture must look at everything.
    let saves = 0;
    const orig = s.checkpoints.afterMutatingTool.bind(s.checkpoints);
    s.checkpoints.afterMutatingTool = (info) => {
      orig(info);
      if (info.changedPaths?.includes('d.txt')) {
        fs.writeFileSync(path.join(ws, 'user.txt'), 'saved by the user\n');
        s.checkpoints.noteExternalChange();
        saves++;
      }
    };
    const r = await turn({ prompt: 'edit things' });
    assert.equal(r.status, 'completed', r.error ?? '');
    assert.equal(saves, 1);
    assert.deepEqual(
      seen.map((s) => `${s.trigger} ${s.changedPaths ? `reported[${s.changedPaths.join(',')}]` : 'whole tree'} fast=${s.fast}`),
      [
        'tool whole tree fast=false', // the first capture: nothing reported yet
        'tool reported[a.txt] fast=true', // before b.txt: only write_file ran since
        'tool reported[b.txt] fast=true', // before the shell command
        'tool whole tree fast=false', // before d.txt: a shell command ran since
        'tool whole tree fast=false', // before e.txt: the user saved a file
        'turnEnd whole tree fast=false',
      ],
    );
    // The warm state was prepared when the turn started (or by the first capture): every later
    // capture is incremental.
    assert.deepEqual(seen.slice(1).map((x) => x.incremental), [true, true, true, true, true]);
    // Every checkpoint holds what was on disk at its time (the reported ones included).
    const cps = await s.checkpoints.list(r.threadId);
    const files = (c: { commit: string }) => gitOut(ws, ['ls-tree', '--name-only', c.commit]).split('\n').filter((f) => f !== '.gitignore').join(' ');
    assert.deepEqual(cps.map(files), ['a.txt', 'a.txt', 'a.txt b.txt', 'a.txt b.txt c.txt', 'a.txt b.txt c.txt d.txt user.txt', 'a.txt b.txt c.txt d.txt e.txt user.txt']);
  });

  it('prepares the warm state when a turn starts and after a restore, so those checkpoints are incremental', async () => {
    await setup(true, [toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'changed\n' } }]), textTurn('done')]);
    const kinds: boolean[] = [];
    const git = s.checkpoints.git;
    const original = git.captureCheckpoint.bind(git);
    git.captureCheckpoint = async (opts) => {
      const r = await original(opts);
      kinds.push(r.incremental);
      return r;
    };
    await s.checkpoints.prepare();
    assert.equal(await git.prepareWarm(ws), false, 'already prepared');
    const r = await turn({ prompt: 'change a' });
    assert.equal(r.status, 'completed', r.error ?? '');
    assert.deepEqual(kinds, [true, true], 'the turn\'s first checkpoint did not pay for a full snapshot');
    await s.checkpoints.restore(r.threadId, 1, 'files');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'original\n');
    await s.checkpoints.settle();
    const after = await s.checkpoints.capture(r.threadId, { trigger: 'manual' });
    assert.equal(after.incremental, true, 'warm state rebuilt after the restore');
    assert.equal(gitOut(ws, ['show', `${after.commit}:a.txt`]), 'original');
    assert.equal(gitOut(ws, ['status', '--porcelain']), '', 'the user\'s index and status untouched');
  });
});
