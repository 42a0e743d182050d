/**
 * `vox rules …`, `vox system-prompt` and `vox chat` with rules, as real processes against a real
 * temp workspace (and the scripted OpenAI server for chat): create, list, show, disable/enable,
 * preview, a broken file (exit 1), typed errors for bad names, and chat sending the block.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('CLI: rules and the system prompt', function () {
  this.timeout(90_000);
  let dir: string;
  let ws: string;
  let env: NodeJS.ProcessEnv;
  let server: FakeServer | undefined;

  beforeEach(() => {
    dir = makeTmpDir();
    ws = path.join(dir, 'my-shop');
    fs.mkdirSync(ws, { recursive: true });
    env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  it('create, list, show, disable, enable, preview; bad names are typed errors', async () => {
    const created = await runVox(['rules', 'create', 'style', '--body', 'Use tabs in $workspace_root.', '--description', 'House style', '--path', 'src/**', '--cwd', ws, '--json'], env);
    assert.equal(created.code, 0, created.err);
    assert.equal(JSON.parse(created.out).source, '.vox/rules/style.md');
    assert.ok(fs.existsSync(path.join(ws, '.vox/rules/style.md')));
    const list = await runVox(['rules', 'list', '--cwd', ws], env);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^style {2}\[workspace, manual\] {2}\.vox\/rules\/style\.md\n {2}House style\n {2}paths: src\/\*\*$/m);
    const show = await runVox(['rules', 'show', 'style', '--cwd', ws], env);
    assert.match(show.out, /Use tabs in my-shop\./);
    const off = await runVox(['rules', 'disable', 'style', '--cwd', ws, '--json'], env);
    assert.equal(JSON.parse(off.out).enabled, false);
    assert.match((await runVox(['rules', 'list', '--cwd', ws], env)).out, /\[workspace, manual, disabled\]/);
    assert.equal(JSON.parse((await runVox(['rules', 'enable', 'style', '--cwd', ws, '--json'], env)).out).enabled, true);
    const preview = await runVox(['rules', 'preview', 'fix', 'it', '@style', 'and', '@ghost', '--cwd', ws, '--json'], env);
    const p = JSON.parse(preview.out) as { prompt: string; rules: string[]; block: string; warnings: string[] };
    assert.deepEqual([p.prompt, p.rules, p.warnings], ['fix it and @ghost', ['style'], ['@ghost is neither a rule nor a known mention']]);
    assert.match(p.block, /<rule name="style">\nUse tabs in my-shop\.\n<\/rule>/);
    const bad = await runVox(['rules', 'create', 'a.b', '--body', 'x', '--cwd', ws], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^vox: RuleError \(invalidName\): "a\.b" is not a rule name/m);
    const reserved = await runVox(['rules', 'create', 'web', '--body', 'x', '--cwd', ws], env);
    assert.match(reserved.err, /RuleError \(reservedName\)/);
    const usage = await runVox(['rules', 'create', 'x', '--body', 'x', '--attach', 'often', '--cwd', ws], env);
    assert.equal(usage.code, 2);
    fs.writeFileSync(path.join(ws, '.vox/rules/broken.md'), '---\nattach: sometimes\n---\nx');
    const broken = await runVox(['rules', 'list', '--cwd', ws], env);
    assert.equal(broken.code, 1);
    assert.match(broken.out, /error: \.vox\/rules\/broken\.md:2: attach must be "always" or "manual"/);
    assert.match(broken.out, /^style /m, 'the other rules are still listed');
  });

  it('vox system-prompt resolves $variables; vox chat sends the <user_rules> block and prints warnings', async () => {
    fs.mkdirSync(path.join(ws, '.vox/rules'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'AGENTS.md'), 'Agents: run the tests on $user_platform.');
    fs.writeFileSync(path.join(ws, '.vox/rules/terse.md'), '---\nattach: manual\n---\nBe terse.');
    const sp = await runVox(['system-prompt', '--cwd', ws, '--json'], env);
    assert.equal(sp.code, 0, sp.err);
    const v = JSON.parse(sp.out) as { systemPrompt: string; rulesBlock: string; rules: string[] };
    assert.match(v.systemPrompt, /^You are Vox/);
    assert.deepEqual(v.rules, ['agents-md']);
    assert.match(v.rulesBlock, new RegExp(`Agents: run the tests on ${process.platform}/${process.arch}\\.`));
    server = await startFakeOpenAI({ responses: [textTurn('ok')] });
    const chat = await runVox(['chat', '@rule:terse', 'hello', '@nobody', '--model', 'openai:gpt-4o-mini', '--cwd', ws], { ...env, OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: server.baseUrl });
    assert.equal(chat.code, 0, chat.err);
    assert.match(chat.err, /warning: @nobody is neither a rule nor a known mention/);
    assert.match(chat.err, /rules: agents-md, terse/);
    const sent = server.requests[0]!.body.messages.at(-1).content as string;
    assert.match(sent, /^hello @nobody\n\n<user_rules>\n[\s\S]*<rule name="agents-md">[\s\S]*<rule name="terse">\nBe terse\.\n<\/rule>\n<\/user_rules>$/);
  });
});
