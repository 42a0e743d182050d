/**
 * `vox search` as a real process on a database whose threads the owner made through the protocol
 * (real runs against a fake model server): each hit is a readable line — the thread's short id,
 * its title — and a one-line snippet, plain when stdout is not a terminal; `--json` keeps the full
 * ids. The short id works wherever a command takes a thread id (`vox show`), and a prefix two
 * threads share is a typed error naming both.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { seedThreads, SEED_ANSWERS } from '../support/mcp-fixtures';
import { openaiHost } from '../support/scripted';
import { startTestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

/** The built CLI (`npm run build`), run on a terminal of its own through script(1). */
const BUNDLE = path.join(REPO_ROOT, 'dist/cli.js');
const TTY_COLUMNS = 60;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const TWIN_A = 'thread:abcd1234-0000-4000-8000-000000000001';
const TWIN_B = 'thread:abcd1299-0000-4000-8000-000000000002';

describe('vox search: readable hits and short thread ids (real process)', function () {
  this.timeout(90_000);
  let dir: string;
  let home: string;
  let ws: string;
  let server: FakeServer;
  let threads: string[];
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = makeTmpDir();
    home = path.join(dir, 'home');
    fs.mkdirSync(home);
    ws = initRepo(path.join(dir, 'ws'), { 'README.md': '# ws\n' });
    server = await startFakeOpenAI({ responses: SEED_ANSWERS.map((a) => textTurn(a)) });
    const t = startTestEngine({ dir: home, workspaceRoot: ws, host: openaiHost(server), config: { demoModelPath: '/nonexistent.gguf' } });
    threads = await seedThreads(t.client());
    await t.client().call('createThread', { threadId: TWIN_A, title: 'twin one' });
    await t.client().call('createThread', { threadId: TWIN_B, title: 'twin two' });
    await t.dispose();
    env = { PATH: process.env.PATH ?? '', HOME: dir, VOX_HOME: home };
  });
  after(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  it('prints each message hit as short id, title and a plain one-line snippet; --json keeps full ids', async () => {
    const r = await runVox(['search', 'cookie', '--cwd', ws], env);
    assert.equal(r.code, 0, r.err);
    const short = threads[0]!.split(':').pop()!.slice(0, 8);
    const lines = r.out.trimEnd().split('\n');
    const head = lines.findIndex((l, i) => i > lines.indexOf('Messages:') && l.includes(short));
    assert.ok(head >= 0, `a message hit with the short id ${short}:\n${r.out}`);
    assert.ok(!r.out.includes(threads[0]!), 'the full id is not printed');
    assert.match(lines[head]!, new RegExp(`^\\s*${short}\\s+Why does login fail after a minute\\?`));
    assert.match(lines[head + 1]!, /^\s+.*the cookie expires too early\./);
    assert.ok(!r.out.includes('\u001b') && !/[»«]/.test(r.out), 'no escape codes or markers when stdout is not a terminal');

    const j = await runVox(['search', 'cookie', '--json', '--cwd', ws], env);
    const parsed = JSON.parse(j.out) as { messages: { threadId: string }[] };
    assert.deepEqual(parsed.messages.map((m) => m.threadId), [threads[0]]);
  });

  it('on a terminal (the built CLI under script(1)) the match is bold and each line fits the terminal width', function () {
    if (!fs.existsSync(BUNDLE)) this.skip(); // needs `npm run build`
    const cmd = `stty cols ${TTY_COLUMNS}; ${quote(process.execPath)} ${quote(BUNDLE)} search cookie --cwd ${quote(ws)}`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.ok(r.stdout.includes('\u001b[1mcookie\u001b[22m'), JSON.stringify(r.stdout));
    // eslint-disable-next-line no-control-regex
    const visible = r.stdout.replace(/\u001b\[[0-9;]*m/g, '').split(/\r?\n/);
    assert.ok(visible.every((l) => l.length <= TTY_COLUMNS), JSON.stringify(visible));
  });

  it('a short id works where a thread id is taken; a shared prefix is a typed error naming both threads', async () => {
    const short = threads[1]!.split(':').pop()!.slice(0, 8);
    const shown = await runVox(['show', short, '--cwd', ws], env);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /Rename done: parseConfig is now loadConfig\./);

    const twin = await runVox(['show', 'abcd12', '--cwd', ws], env);
    assert.equal(twin.code, 1, twin.out);
    assert.match(twin.err, /StoreError \(ambiguousId\): abcd12 names 2 threads: .*abcd1234 \(twin one\)/);
    assert.match(twin.err, /abcd1299 \(twin two\)/);
    const one = await runVox(['show', 'abcd1299', '--json', '--cwd', ws], env);
    assert.equal(one.code, 0, one.err);
    assert.equal((JSON.parse(one.out) as { thread: { id: string } }).thread.id, TWIN_B);
  });
});
