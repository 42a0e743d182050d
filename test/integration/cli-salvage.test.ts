/**
 * SPEC 3.2 from the command line: `vox chat` against a loopback OpenAI-compatible server whose
 * model first refuses to use its tools, then calls one. The CLI says it retried, and its `--json`
 * result's text is the answer without the discarded refusal.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('vox CLI: false-refusal retry', function () {
  this.timeout(90_000);
  let dir: string;
  let repo: string;
  let env: NodeJS.ProcessEnv;
  let server: FakeServer;

  beforeEach(async () => {
    dir = makeTmpDir();
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'notes.md': 'alpha\n' }));
    server = await startFakeOpenAI({ responses: [] });
    env = { ...process.env, VOX_HOME: path.join(dir, 'home'), OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  });
  afterEach(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  it('prints the retry note; --json gives the answer without the refusal', async () => {
    server.push(textTurn('I cannot read files on your machine.'), toolCallTurn([{ name: 'read_file', args: { path: 'notes.md' } }]), textTurn('It says alpha.'));
    const r = await runVox(['chat', 'what', 'is', 'in', 'notes.md?', '--model', 'openai:gpt-4o-mini', '--yes', '--cwd', repo], env);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /\[vox\] retried after a refusal/);
    server.push(textTurn('I cannot read files on your machine.'), toolCallTurn([{ name: 'read_file', args: { path: 'notes.md' } }]), textTurn('Still alpha.'));
    const j = await runVox(['chat', 'again?', '--model', 'openai:gpt-4o-mini', '--json', '--yes', '--cwd', repo], env);
    assert.equal(j.code, 0, j.err);
    const lines = j.out.trim().split('\n').map((l) => JSON.parse(l) as { type?: string; kind?: string; text?: string });
    assert.ok(lines.some((l) => l.kind === 'refusalRetry'));
    assert.equal(lines.find((l) => l.type === 'result')?.text, 'Still alpha.');
  });
});
