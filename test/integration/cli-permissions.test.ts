/**
 * `vox permissions`, `vox plan` and `vox chat --mode` as real processes: the effective rules of a
 * workspace's .vox/permissions.json (a malformed file names the file, the JSON path and why, exit
 * 1), a bad --mode is a usage error (exit 2), and chat output says which rule allowed a call and
 * why a denied one did not run (its side effect does not happen).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('CLI: permissions', function () {
  this.timeout(60_000);
  let dir: string;
  let ws: string;
  let env: NodeJS.ProcessEnv;
  let server: FakeServer | undefined;

  beforeEach(() => {
    dir = makeTmpDir();
    ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, '.vox'), { recursive: true });
    env = { ...process.env, VOX_HOME: path.join(dir, 'home') };
    delete env.VOX_PERMISSION_MODE;
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    removeTmpDir(dir);
  });

  it('lists the effective rules and the mode; a malformed file is reported with file, JSON path and reason (exit 1)', async () => {
    fs.writeFileSync(path.join(ws, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'allow', command: 'npm test' }, { action: 'deny', tool: 'write', path: '.github/', reason: 'CI' }] }));
    const human = await runVox(['permissions', '--cwd', ws], env);
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /mode: Ask every time \(ask; the default\)/);
    assert.match(human.out, /allow \* command "npm test"\s+\[\.vox\/permissions\.json rules\[0\]\]/);
    assert.match(human.out, /deny write path "\.github\/" — CI/);
    const json = await runVox(['permissions', '--cwd', ws, '--json', '--mode', 'autoEdits'], env);
    const v = JSON.parse(json.out) as { mode: string; modeSource: string; rules: Array<{ origin: string }> };
    assert.deepEqual([v.mode, v.modeSource, v.rules.length], ['autoEdits', 'settings', 2]);

    fs.writeFileSync(path.join(ws, '.vox/permissions.json'), '{"rules": [{"action": "allow", "comand": "npm test"}]}');
    const bad = await runVox(['permissions', '--cwd', ws], env);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /error: \.vox\/permissions\.json: \$\.rules\[0\]\.comand: unknown key/);

    const usage = await runVox(['permissions', '--cwd', ws, '--mode', 'yolo'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.err, /--mode must be one of ask, autoEdits, fullAuto/);
  });

  it('chat says which rule allowed a call and why a denied one did not run; plan show/mode work', async () => {
    fs.writeFileSync(path.join(ws, '.vox/permissions.json'), JSON.stringify({ rules: [{ action: 'allow', command: 'echo *' }, { action: 'deny', command: 'touch *', reason: 'no new files' }] }));
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'run_command', args: { command: 'echo hi' } }]),
        toolCallTurn([{ name: 'run_command', args: { command: 'touch made.txt' } }]),
        textTurn('done'),
      ],
    });
    const chatEnv = { ...env, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
    const r = await runVox(['chat', '--cwd', ws, '--model', 'openai:gpt-test', 'go'], chatEnv);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /\[tool\] run_command · allowed by \.vox\/permissions\.json rules\[0\]: allow \* command "echo \*"/);
    assert.match(r.err, /\[tool\] run_command · not run: Denied by \.vox\/permissions\.json rules\[1\]: deny \* command "touch \*" \(no new files\)\./);
    assert.equal(fs.existsSync(path.join(ws, 'made.txt')), false);
    const threadId = /thread (\S+) · completed/.exec(r.err)![1]!;
    const mode = await runVox(['plan', 'mode', threadId, 'plan', '--cwd', ws], env);
    assert.equal(mode.code, 0, mode.err);
    const show = await runVox(['plan', 'show', threadId, '--cwd', ws, '--json'], env);
    assert.deepEqual(JSON.parse(show.out), { threadId, workMode: 'plan', plan: null });
  });

  it('lists the protected paths ($VOX_PROTECTED_PATHS adds some); chat --yes does not approve a protected write', async () => {
    const listEnv = { ...env, VOX_PROTECTED_PATHS: ['deploy/**', 'Makefile'].join(path.delimiter) };
    const human = await runVox(['permissions', '--cwd', ws], listEnv);
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /protected paths \(writes asked in every mode\):/);
    assert.match(human.out, /\.vox\/\*\* — Vox's own configuration/);
    assert.match(human.out, /deploy\/\*\* — listed in the protected paths setting \[settings\]/);
    const v = JSON.parse((await runVox(['permissions', '--cwd', ws, '--json'], listEnv)).out) as { protectedPaths: Array<{ path: string; source: string }> };
    assert.deepEqual(v.protectedPaths.filter((p) => p.source === 'settings').map((p) => p.path), ['deploy/**', 'Makefile']);

    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: '.vox/permissions.json', content: '{"rules":[{"action":"allow","tool":"*"}]}' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'Makefile', content: 'all:\n' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'ok.txt', content: 'ok' } }]),
        textTurn('done'),
      ],
    });
    const chatEnv = { ...listEnv, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
    const r = await runVox(['chat', '--cwd', ws, '--model', 'openai:gpt-test', '--mode', 'fullAuto', '--yes', 'go'], chatEnv);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /\[vox\] denied write_file: Protected path: \.vox\/permissions\.json — Vox's own configuration.*--yes does not approve protected paths/);
    assert.match(r.err, /\[vox\] denied write_file: Protected path: Makefile — listed in the protected paths setting/);
    assert.equal(fs.existsSync(path.join(ws, '.vox/permissions.json')), false);
    assert.equal(fs.existsSync(path.join(ws, 'Makefile')), false);
    assert.equal(fs.readFileSync(path.join(ws, 'ok.txt'), 'utf8'), 'ok', 'an ordinary write ran (Full auto)');
  });
});
