/**
 * Provider keys never leave where they belong: a server that echoes the key back in its error
 * does not get it into the database, the protocol, the host's log or stderr; child processes —
 * `run_command` shells, the git process helper, git itself — get an environment without it; and
 * Vox's git plumbing runs none of the user's hooks. The key is searched for as bytes in every
 * file the engine wrote and in every child's environment.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { helperPid } from '../../src/engine/platform/process-spawner';
import { forgetSecrets } from '../../src/engine/platform/secrets';
import { runVox } from '../support/cli';
import { httpError, startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

const KEY = 'sk-test-Zq9X7mB2vK4wLp8RtY3nHc6JdF1gS5aE';

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

describe('secrets stay out of storage, logs and child processes', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    forgetSecrets();
    removeTmpDir(dir);
  });

  it('a key the server echoes back in a 401 is redacted from the run, the events, the wire error and the log', async () => {
    server = await startFakeOpenAI({ responses: [httpError(401, { message: `Incorrect API key provided: ${KEY}. Authorization: Bearer ${KEY}` })] });
    const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: KEY }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    t = startTestEngine({ dir, host });
    const c = t.client();
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'hi' });
    await waitFor('the run to fail', 20_000, async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'failed', 20);
    const run = (await c.call('getThread', { threadId })).runs[0]!;
    assert.match(run.error ?? '', /Incorrect API key provided: \[redacted\]/);
    assert.ok(!JSON.stringify(await c.call('getThread', { threadId })).includes(KEY));
    await t.dispose();
    t = undefined;
    assert.deepEqual(filesContaining(dir, KEY), [], 'the key is in no file the engine wrote (database, WAL)');
    assert.ok(!JSON.stringify(host.notices).includes(KEY));
  });

  it('the CLI: a key from the environment echoed in an error never reaches stderr or the database', async () => {
    server = await startFakeOpenAI({ responses: [httpError(401, { message: `bad key ${KEY}` })] });
    const home = path.join(dir, 'home');
    const r = await runVox(['chat', '--model', 'openai:gpt-test', '--cwd', dir, 'hi'], { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: KEY });
    assert.equal(r.code, 1);
    assert.ok(!r.err.includes(KEY) && !r.out.includes(KEY), r.err);
    assert.deepEqual(filesContaining(home, KEY), []);
  });

  it('run_command shells, the git helper and git get no provider key; the user\'s git hooks do not run for checkpoints', async () => {
    const repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'a.txt': 'a\n' }));
    // Hooks that would record their environment if git ran them.
    const hooks = path.join(repo, '.git', 'hooks');
    for (const h of ['post-index-change', 'reference-transaction', 'post-checkout']) {
      fs.writeFileSync(path.join(hooks, h), `#!/bin/sh\nenv > "${path.join(dir, `hook-${h}.env`)}"\n`, { mode: 0o755 });
    }
    server = await startFakeOpenAI({
      responses: [toolCallTurn([{ name: 'run_command', args: { command: `env > "${path.join(dir, 'shell.env')}"; echo written` } }]), textTurn('done')],
    });
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = KEY; // as the CLI runs: the key in the engine's own environment
    // The git process helper is started on demand: make the next git call start a new one, with the key in our environment.
    const old = helperPid();
    if (old !== undefined) {
      process.kill(old, 'SIGKILL');
      await waitFor('the old helper to exit', 5_000, () => {
        try {
          process.kill(old, 0);
          return false;
        } catch {
          return true;
        }
      }, 20);
    }
    try {
      const host = new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: KEY }, providerSettings: { openaiBaseUrl: server.baseUrl }, approval: { execute: 'auto' } });
      t = startTestEngine({ dir, workspaceRoot: repo, host });
      const c = t.client();
      const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'print the env' });
      await waitFor('the run to end', 30_000, async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === runId)?.status === 'completed', 20);
      await c.call('captureCheckpoint', { threadId });
      await c.call('restoreCheckpoint', { threadId, ordinal: 1, mode: 'files' });
      const shell = fs.readFileSync(path.join(dir, 'shell.env'), 'utf8');
      assert.ok(shell.includes('PATH='), 'the shell got the user\'s environment');
      assert.ok(!shell.includes(KEY) && !/OPENAI_API_KEY/.test(shell), 'the shell got no provider key');
      const pid = helperPid();
      assert.ok(pid !== undefined && pid !== old, 'git ran through a helper started while the key was in the environment');
      if (process.platform === 'linux') assert.ok(!fs.readFileSync(`/proc/${pid}/environ`).includes(KEY), 'the git process helper has no provider key');
      assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('hook-')), [], 'no user hook ran for Vox\'s plumbing');
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });
});
