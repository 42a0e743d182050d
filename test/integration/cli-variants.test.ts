/** `vox variants run` as a real process: two variants in worktrees, waited for, reported as JSON, discarded; bad input typed. */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { runVox } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { userRepoState } from '../support/user-repo';



describe('vox CLI: variants', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  let server: FakeServer;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    dir = makeTmpDir();
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'a.txt': 'one\n' }));
    // Whatever order the two variants' requests arrive in, each ends with a text answer.
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: 'v.txt', content: 'variant\n' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'v.txt', content: 'variant\n' } }]),
        textTurn('done'), textTurn('done'), textTurn('done'),
      ],
    });
    env = { ...process.env, VOX_HOME: path.join(dir, 'home'), OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
  });
  afterEach(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  it('runs two variants, prints both as JSON, and --discard removes their worktrees; the user\'s repository is untouched', async () => {
    const before = userRepoState(repo);
    const r = await runVox(['variants', 'run', '--model', 'openai:gpt-test', '--model', 'openai:gpt-test', '--yes', '--discard', '--json', '--cwd', repo, 'write v.txt'], env);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { pool: { variants: { status: string; worktreePath: string }[] }; discarded: boolean };
    assert.deepEqual(out.pool.variants.map((v) => v.status), ['completed', 'completed']);
    assert.equal(out.discarded, true);
    for (const v of out.pool.variants) assert.equal(fs.existsSync(v.worktreePath), false);
    assert.equal(fs.existsSync(path.join(repo, 'v.txt')), false, 'nothing adopted');
    assert.deepEqual(userRepoState(repo), before);
  });

  it('bad input: no model is a typed VariantError (exit 1); a non-numeric --adopt is a usage error (exit 2)', async () => {
    const none = await runVox(['variants', 'run', '--cwd', repo, 'do it'], env);
    assert.equal(none.code, 1);
    assert.match(none.err, /VariantError \(invalidModels\)/);
    const bad = await runVox(['variants', 'run', '--model', 'openai:gpt-test', '--adopt', 'x', '--cwd', repo, 'do it'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--adopt takes a variant index/);
    assert.deepEqual(fs.readdirSync(repo).filter((f) => f !== '.git'), ['a.txt']);
  });
});
