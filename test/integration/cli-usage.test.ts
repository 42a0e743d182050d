/**
 * Bad usage of the built CLI (`node dist/cli.js …`, the bundle `npm run build` writes) is reported
 * one way, whichever check finds it: commander's own (an unknown option or command, a missing
 * argument, a value an option parser refuses) or a command's (a flag value out of range, options
 * that exclude each other): `vox: <message> (see \`vox <command> --help\`)` on stderr, nothing on
 * stdout, exit 2. Commander's checks run before anything opens the database.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { USAGE_EXIT_CODE } from '../../src/cli/usage-error';

const BUNDLE = path.join(REPO_ROOT, 'dist/cli.js');

describe('CLI: usage errors (built bundle)', function () {
  this.timeout(60_000);
  let home: string;
  before(function () {
    assert.ok(fs.existsSync(BUNDLE), `${BUNDLE} is missing: run npm run build first`);
  });
  beforeEach(() => (home = makeTmpDir()));
  afterEach(() => removeTmpDir(home));

  const vox = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BUNDLE, ...args], { cwd: home, env: { ...process.env, VOX_HOME: home }, encoding: 'utf8' });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  const cases: Array<{ args: string[]; message: RegExp; command: string }> = [
    // commander's checks
    { args: ['chat', '--frobnicate', 'hi'], message: /unknown option --frobnicate/, command: 'vox chat' },
    { args: ['frobnicate'], message: /unknown command 'frobnicate'/, command: 'vox' },
    { args: ['show'], message: /missing required argument 'threadId'/, command: 'vox show' },
    { args: ['history', '--limit', '0'], message: /option '--limit <n>' argument '0' is invalid\. --limit must be an integer from 1 to \d+/, command: 'vox history' },
    { args: ['context', 'x', '--mention', 'nonsense:1'], message: /argument 'nonsense:1' is invalid\. the kind must be one of file, /, command: 'vox context' },
    { args: ['mcp', 'serve', '--stdio', '--grant', 'root'], message: /--grant must be one of readOnly/, command: 'vox mcp serve' },
    // the commands' own checks
    { args: ['chat', '--mode', 'yolo', 'hi'], message: /--mode must be one of ask, autoEdits, fullAuto, got "yolo"/, command: 'vox chat' },
    { args: ['plan', 'mode', 'thread:1', 'later'], message: /the mode is plan or act, got "later"/, command: 'vox plan mode' },
    { args: ['queue', 'move', 'thread:1', 'queued:1', '0'], message: /the position must be a whole number from 1, got "0"/, command: 'vox queue move' },
    { args: ['runs', 'snooze', 'run:1', 'soon'], message: /the minutes must be a non-negative number, got "soon"/, command: 'vox runs snooze' },
    { args: ['runs', 'auto-resume', 'run:1', 'maybe'], message: /expected on or off, got "maybe"/, command: 'vox runs auto-resume' },
    { args: ['checkpoint', 'files', '0'], message: /the checkpoint ordinal must be a positive number, got 0/, command: 'vox checkpoint files' },
    { args: ['rules', 'create', 'r', '--body', 'b', '--attach', 'sometimes'], message: /--attach is always or manual, got "sometimes"/, command: 'vox rules create' },
    { args: ['model', 'fetch'], message: /vox model needs path, list or download/, command: 'vox model' },
    { args: ['mcp', 'serve'], message: /vox mcp serve needs --stdio/, command: 'vox mcp serve' },
  ];

  for (const c of cases) {
    it(`vox ${c.args.join(' ')}: exit 2, the message and \`${c.command} --help\``, () => {
      const r = vox(...c.args);
      assert.equal(r.code, USAGE_EXIT_CODE, r.err);
      assert.equal(USAGE_EXIT_CODE, 2);
      const lines = r.err.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr: ${r.err}`);
      assert.match(lines[0]!, /^vox: /);
      assert.match(lines[0]!, c.message);
      assert.ok(lines[0]!.endsWith(`(see \`${c.command} --help\`)`), lines[0]);
      assert.equal(r.out, '');
    });
  }

  it('help is not a usage error: --help exits 0 and prints the usage on stdout', () => {
    const r = vox('queue', 'move', '--help');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: vox queue move/);
  });

  it('a parse error opens nothing: no database is created', () => {
    for (const c of cases.slice(0, 3)) vox(...c.args);
    assert.ok(!fs.existsSync(path.join(home, 'vox.db')));
  });
});
