/**
 * The context capability from the command line, as separate `vox` processes against a loopback
 * OpenAI-compatible server: `vox context` prints the estimate (and exits 1 when it does not fit),
 * `vox chat --mention` sends what it names (a missing file is a warning in the prompt), a reply cut
 * at the output-token limit prints the notice with how to continue, and an overflowing prompt is
 * refused before anything is sent unless `--allow-overflow`.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('vox CLI: context meter, mentions, output limit', function () {
  this.timeout(90_000);
  let dir: string;
  let repo: string;
  let env: NodeJS.ProcessEnv;
  let server: FakeServer;

  beforeEach(async () => {
    dir = makeTmpDir();
    repo = fs.realpathSync(initRepo(path.join(dir, 'repo'), { 'notes.md': 'The meter counts tokens.\n' }));
    server = await startFakeOpenAI({ responses: [] });
    env = { ...process.env, VOX_HOME: path.join(dir, 'home'), OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  });
  afterEach(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  it('vox context prints the estimate with its mentions; --json carries the numbers', async () => {
    const r = await runVox(['context', 'Explain', 'the', 'context', 'meter.', '--model', 'openai:gpt-4o', '--mention', 'file:notes.md', '--mention', 'file:gone.md', '--cwd', repo], env);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^[\d.]+k? tokens \/ 128k \(\d+%\) · openai:gpt-4o · counted with o200k_base$/m);
    assert.match(r.out, /@file notes\.md · \d+ tokens/);
    assert.match(r.out, /@file gone\.md · 0 tokens · WARNING: File not found: gone\.md/);
    const j = await runVox(['context', 'Explain', 'the', 'context', 'meter.', '--model', 'openai:gpt-4o', '--json', '--cwd', repo], env);
    const e = JSON.parse(j.out) as { parts: { prompt: number }; window: number; fits: boolean };
    assert.deepEqual([e.parts.prompt, e.window, e.fits], [5, 128_000, true]);
    const bad = await runVox(['context', 'x', '--mention', 'nonsense:1', '--cwd', repo], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /option '--mention <spec>' argument 'nonsense:1' is invalid\. the kind must be one of .* \(see `vox context --help`\)/);
  });

  it('vox chat --mention sends the file; a reply at the output limit prints the notice and how to continue', async () => {
    server.push(textTurn(['The notes say the meter ', 'counts'], { stopReason: 'length' }));
    const r = await runVox(['chat', 'what', 'do', 'the', 'notes', 'say?', '--model', 'openai:gpt-4o-mini', '--mention', 'file:notes.md', '--cwd', repo], env);
    assert.equal(r.code, 0, r.err);
    const sent = server.requests[0]!.body.messages.at(-1).content as string;
    assert.match(sent, /The meter counts tokens\./);
    assert.match(r.err, /\[vox\] Stopped at the output-token limit: the reply is cut short\. Continue with: vox chat --thread \S+ "Continue exactly where you stopped\."/);
    server.push(textTurn('fine'));
    const j = await runVox(['chat', 'again', '--model', 'openai:gpt-4o-mini', '--json', '--cwd', repo], env);
    const result = j.out.trim().split('\n').map((l) => JSON.parse(l) as { type?: string; stopReason?: string }).find((x) => x.type === 'result');
    assert.equal(result?.stopReason, 'end');
  });

  it('a prompt over the window is refused before anything is sent; --allow-overflow sends it', async () => {
    const words = Array.from({ length: 9000 }, (_, i) => `word${i}`).join(' ');
    fs.writeFileSync(path.join(repo, 'big.txt'), words.slice(0, 39_000));
    const r = await runVox(['chat', 'summarise', '--model', 'openai:gpt-4', '--mention', 'file:big.txt', '--cwd', repo], env);
    assert.equal(r.code, 1);
    assert.match(r.err, /^vox: this prompt needs about [\d.]+k tokens, more than openai:gpt-4's context window of 8\.2k/);
    assert.equal(server.requests.length, 0);
    server.push(textTurn('summary'));
    const ok = await runVox(['chat', 'summarise', '--model', 'openai:gpt-4', '--mention', 'file:big.txt', '--allow-overflow', '--cwd', repo], env);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(server.requests.length, 1);
  });
});
