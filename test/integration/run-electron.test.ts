/**
 * test/e2e/run-electron.mjs (`npm run test:electron`): skipped without VSCODE_EXECUTABLE; with
 * it, @vscode/test-electron's runTests starts exactly that executable (here a stand-in script
 * that plays VS Code: it records its arguments and writes the suite's report), downloads
 * nothing, and the report's counts become the closing line.
 */
import { spawnSync } from 'node:child_process';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '..', '..');
const RUNNER = path.join(ROOT, 'test', 'e2e', 'run-electron.mjs');

describe('run-electron (desktop VS Code through @vscode/test-electron)', function () {
  this.timeout(60_000);
  let tmp: string;
  beforeEach(() => (tmp = makeTmpDir('vox-run-electron-')));
  afterEach(() => removeTmpDir(tmp));

  function runElectron(env: Record<string, string | undefined>, args: string[] = []) {
    const countsFile = path.join(tmp, 'counts.json');
    const childEnv: NodeJS.ProcessEnv = { ...process.env, VOX_TEST_COUNTS_FILE: countsFile, ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
    const r = spawnSync(process.execPath, [RUNNER, ...args], { cwd: ROOT, encoding: 'utf8', env: childEnv, timeout: 50_000 });
    return { ...r, counts: fs.existsSync(countsFile) ? JSON.parse(fs.readFileSync(countsFile, 'utf8')) : undefined };
  }

  it('skips, counted as one skipped check, without VSCODE_EXECUTABLE', () => {
    const r = runElectron({ VSCODE_EXECUTABLE: undefined });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /skipped: set VSCODE_EXECUTABLE/);
    assert.match(r.stdout, /^0 passed, 0 failed, 1 skipped$/m);
    assert.deepEqual(r.counts, { passed: 0, failed: 0, skipped: 1 });
  });

  it('runs the given executable through runTests({ vscodeExecutablePath }) and counts its report', () => {
    // An unpacked extension folder stands in for the build (--vsix-dir).
    const ext = path.join(tmp, 'extension');
    fs.mkdirSync(path.join(ext, 'dist'), { recursive: true });
    fs.writeFileSync(path.join(ext, 'dist', 'extension.js'), 'exports.activate = () => ({});\n');
    const argvFile = path.join(tmp, 'argv.json');
    const fake = path.join(tmp, 'code');
    fs.writeFileSync(
      fake,
      `#!${process.execPath}
const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));
fs.writeFileSync(process.env.VOX_E2E_REPORT, JSON.stringify({ passed: 2, failed: 0, pending: 1, finished: true, tests: [], log: ['  ✓ one', '  ✓ two', '  - three (skipped)'] }));
`,
      { mode: 0o755 },
    );
    // Any download would have to go through this proxy, which refuses every connection.
    const r = runElectron({ VSCODE_EXECUTABLE: fake, HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' }, ['--vsix-dir', ext]);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /using @vscode\/test-electron runTests/);
    assert.match(r.stdout, /^2 passed, 0 failed, 1 skipped$/m);
    assert.deepEqual(r.counts, { passed: 2, failed: 0, skipped: 1 });
    const argv: string[] = JSON.parse(fs.readFileSync(argvFile, 'utf8'));
    assert.ok(argv.includes(`--extensionDevelopmentPath=${ext}`), argv.join(' '));
    assert.ok(argv.some((a) => a.startsWith('--extensionTestsPath=') && a.endsWith('suite.js')), argv.join(' '));
    for (const a of ['--disable-updates', '--skip-welcome', '--disable-workspace-trust']) assert.ok(argv.includes(a), `runTests passes ${a}`);
    assert.ok(argv.some((a) => a.startsWith('--user-data-dir=')) && argv.some((a) => a.startsWith('--extensions-dir=')), 'a private profile');
  });

  it('fails when VSCODE_EXECUTABLE names no file', () => {
    const r = runElectron({ VSCODE_EXECUTABLE: path.join(tmp, 'missing') });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^0 passed, 1 failed$/m);
  });
});
