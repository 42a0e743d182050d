/**
 * `npm start`'s script (scripts/start-vscode.mjs) answers `--help` and a mistyped option before it
 * does anything: it prints its usage (or the unknown option) and exits, installing, building and
 * starting nothing.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'start-vscode.mjs');
/** Far above the half second the script needs to print its usage; a script that starts code-server instead is stopped here. */
const ANSWER_TIMEOUT_MS = 20_000;

function run(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: ANSWER_TIMEOUT_MS, killSignal: 'SIGKILL' });
}

describe('npm start: the start script\'s options', () => {
  it('--help prints the usage with every option and exits 0 without starting anything', () => {
    const r = run('--help');
    assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''}: ${r.stderr}`);
    for (const o of ['--port', '--no-wait', '--stop', '--reset', '--no-package']) assert.match(r.stdout, new RegExp(`${o}\\b`));
    assert.match(r.stdout, /^Usage: /m);
    assert.doesNotMatch(r.stdout, /\[start-vscode\]/, 'nothing was started');
  });

  it('-h is --help', () => {
    const r = run('-h');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Usage: /m);
  });

  it('an unknown option or a --port without a number is refused with exit 2 and the usage hint', () => {
    for (const args of [['--prot', '9000'], ['--port'], ['--port', 'eighty']]) {
      const r = run(...args);
      assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status} ${r.signal ?? ''}`);
      assert.match(r.stderr, /start-vscode: .+\n.*--help/s, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
    }
  });
});
