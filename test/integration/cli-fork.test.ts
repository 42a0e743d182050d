/**
 * `vox thread fork` and `vox thread app-state` (real processes, fake OpenAI server, one
 * database): a thread made by `vox chat`, with an MCP App recorded on a tool call item of its run
 * (the events the runner writes for an app, appended to the real store); its state saved by
 * `vox thread app-state` (JSON and stdin), 16 KiB + 1 byte refused (exit 1, McpAppError);
 * `vox thread fork --json` copies the thread with the state, `--at` the first prompt copies that prompt only (its run's answer lies after it),
 * an unknown thread exits 1 with a typed error.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { VoxStore } from '../../src/engine/store/store';
import { mcpAppsOfThread } from '../../src/engine/mcp-apps/reads';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { CLI_ENTRY, REPO_ROOT, runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** `vox …` with `input` on stdin. */
function runVoxWithStdin(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

describe('vox thread fork / app-state (real processes, fake OpenAI)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: FakeServer;
  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await server?.close();
    removeTmpDir(dir);
  });

  it('saves an app state, refuses oversize, forks with the state, and refuses an unknown thread', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('Here is the widget.')] });
    const home = path.join(dir, 'home');
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test', VOX_MODEL: 'openai:gpt-a' };
    const made = await runVox(['chat', '--cwd', dir, 'show the widget'], env);
    assert.equal(made.code, 0, made.err);
    const dbPath = path.join(home, 'vox.db');
    const db = VoxStore.open(dbPath);
    const threadId = db.listThreads()[0]!.id;
    const run = db.runs(threadId)[0]!;
    const itemId = 'item:cli-widget';
    db.append(
      { type: 'item.started', threadId, runId: run.id, itemId, ordinal: 50, kind: 'toolCall', toolName: 'mcp__w__show', arguments: '{}' },
      { type: 'item.completed', threadId, runId: run.id, itemId, status: 'completed', content: 'shown', isError: false, app: { uri: 'ui://w/app', html: '<p>w</p>', server: 'w', title: 'W' } },
    );
    db.close();

    const saved = await runVox(['thread', 'app-state', threadId, itemId, '{"zoom":3}', '--json', '--cwd', dir], env);
    assert.equal(saved.code, 0, saved.err);
    assert.deepEqual(JSON.parse(saved.out), { bytes: 10, max: 16384 });
    const tooBig = await runVoxWithStdin(['thread', 'app-state', threadId, itemId, '-', '--cwd', dir], env, 'x'.repeat(16 * 1024 + 1));
    assert.equal(tooBig.code, 1);
    assert.match(tooBig.err, /McpAppError \(stateTooLarge\): the MCP App's state is 16385 bytes of UTF-8; an app may keep at most 16384 bytes/);
    const viaStdin = await runVoxWithStdin(['thread', 'app-state', threadId, itemId, '-', '--cwd', dir], env, '{"zoom":4,"city":"Åre"}');
    assert.equal(viaStdin.code, 0, viaStdin.err);
    assert.match(viaStdin.out, /^saved 24 of 16384 bytes/);

    const fork = await runVox(['thread', 'fork', threadId, '--json', '--cwd', dir], env);
    assert.equal(fork.code, 0, fork.err);
    const f = JSON.parse(fork.out) as { threadId: string; title: string; messages: number; runs: number; appStates: number };
    assert.deepEqual([f.title, f.messages, f.runs, f.appStates], ['Fork of show the widget', 2, 1, 1]);
    const first = VoxStore.open(dbPath, { readonly: true });
    assert.deepEqual(mcpAppsOfThread(first.db, f.threadId).map((a) => [a.uri, a.state]), [['ui://w/app', '{"zoom":4,"city":"Åre"}']]);
    const firstMessage = first.activePath(threadId)[0]!.id;
    first.close();

    const at = await runVox(['thread', 'fork', threadId, '--at', firstMessage, '--cwd', dir], env);
    assert.equal(at.code, 0, at.err);
    assert.match(at.out, /\tFork of show the widget\n1 messages, 0 runs, 0 MCP App states copied/);
    const none = await runVox(['thread', 'fork', 'thread:none', '--json', '--cwd', dir], env);
    assert.equal(none.code, 1);
    assert.match(none.err, /RunError \(unknownThread\): thread thread:none does not exist/);
  });
});
