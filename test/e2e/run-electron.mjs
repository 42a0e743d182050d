// Runs the same in-extension-host suite (test/e2e/extension-host/suite.ts) in a DESKTOP VS Code
// through @vscode/test-electron (a devDependency), when one is available:
//
//   VSCODE_EXECUTABLE=/path/to/code node test/e2e/run-electron.mjs [--vsix-dir <unpacked extension>]
//   VSCODE_EXECUTABLE=/path/to/code npm run test:electron
//
// Without VSCODE_EXECUTABLE it skips (counted as one skipped check): no desktop VS Code can run
// on this machine, and runTests without an executable would download one. With it, it calls
// runTests({ vscodeExecutablePath, extensionDevelopmentPath, extensionTestsPath, launchArgs,
// extensionTestsEnv }), which starts that executable and downloads nothing; a private
// --user-data-dir and --extensions-dir keep the user's profile out of it.
//
// The extension under test is the project folder (run `npm run build` first), or with
// --vsix-dir the `extension/` folder of an unpacked VSIX (e.g. `unzip vox-0.1.0-linux-x64.vsix`),
// which tests exactly what ships. Desktop VS Code runs extensions on Electron (ABI 132 for 1.100):
// the better-sqlite3 that `npm ci` compiles for Node does not load there, which the release
// VSIXs account for by shipping the N-API @photostructure/sqlite instead; in Electron the suite
// expects the store on that driver (its "SQLite driver" test).
// Prints `N passed, N failed[, N skipped]`, writes $VOX_TEST_COUNTS_FILE when set.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSuite, REPO_ROOT } from './build-suite.mjs';

const counts = { passed: 0, failed: 0, skipped: 0 };
function finish(msg) {
  if (msg) process.stdout.write(`${msg}\n`);
  process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}\n`);
  if (process.env.VOX_TEST_COUNTS_FILE) fs.writeFileSync(process.env.VOX_TEST_COUNTS_FILE, JSON.stringify(counts));
  process.exit(counts.failed === 0 ? 0 : 1);
}

const exe = process.env.VSCODE_EXECUTABLE;
if (!exe) {
  counts.skipped = 1;
  finish(
    'run-electron: skipped: set VSCODE_EXECUTABLE to a desktop VS Code (>= 1.100) binary to run the extension-host suite in Electron.\n' +
      'On this machine use test/e2e/run-e2e.mjs (code-server) instead.',
  );
}
if (!fs.existsSync(exe)) {
  counts.failed = 1;
  finish(`run-electron: VSCODE_EXECUTABLE=${exe} does not exist`);
}

const args = process.argv.slice(2);
const vi = args.indexOf('--vsix-dir');
const extensionDevelopmentPath = vi >= 0 ? path.resolve(args[vi + 1]) : REPO_ROOT;
if (!fs.existsSync(path.join(extensionDevelopmentPath, 'dist', 'extension.js'))) {
  counts.failed = 1;
  finish(`run-electron: ${extensionDevelopmentPath}/dist/extension.js missing: npm run build`);
}
const extensionTestsPath = await buildSuite(path.join(REPO_ROOT, '.vox-sandbox', 'electron', 'suite', 'suite.js'));
const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-electron-'));
const workspace = path.join(runRoot, 'workspace');
fs.mkdirSync(workspace, { recursive: true });
fs.writeFileSync(path.join(workspace, 'README.md'), '# Vox electron test workspace\n');
const report = path.join(runRoot, 'report.json');
const launchArgs = [workspace, `--user-data-dir=${path.join(runRoot, 'user-data')}`, `--extensions-dir=${path.join(runRoot, 'extensions')}`];
const extensionTestsEnv = { VOX_E2E_REPORT: report };
const timeoutMs = Number(process.env.VOX_E2E_TIMEOUT_MS ?? 300_000);
const t0 = Date.now();

/** SIGKILLs every descendant of this process (what runTests spawned), deepest first. */
function killDescendants() {
  const ps = spawnSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' }).stdout ?? '';
  const children = new Map();
  for (const line of ps.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid) continue;
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const order = [];
  const walk = (pid) => {
    for (const c of children.get(pid) ?? []) {
      walk(c);
      order.push(c);
    }
  };
  walk(process.pid);
  for (const pid of order) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

async function viaTestElectron() {
  let te;
  try {
    te = await import('@vscode/test-electron');
  } catch (e) {
    counts.failed = 1;
    finish(`run-electron: @vscode/test-electron is not installed (a devDependency: npm ci): ${e.message}`);
  }
  process.stdout.write('run-electron: using @vscode/test-electron runTests({ vscodeExecutablePath })\n');
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => {
      process.stdout.write(`run-electron: timed out after ${timeoutMs} ms; killing VS Code\n`);
      killDescendants();
      resolve(1);
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      te.runTests({ vscodeExecutablePath: exe, extensionDevelopmentPath, extensionTestsPath, launchArgs, extensionTestsEnv }),
      timeout,
    ]);
  } catch (e) {
    return typeof e?.code === 'number' ? e.code : 1;
  } finally {
    clearTimeout(timer);
  }
}

const exitCode = await viaTestElectron();
const rep = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')) : undefined;
fs.rmSync(runRoot, { recursive: true, force: true, maxRetries: 3 });
if (!rep) {
  counts.failed = 1;
  finish(`run-electron: VS Code exited with ${exitCode} and the suite wrote no report`);
}
process.stdout.write(`Extension-host suite in Electron (exit ${exitCode}, ${((Date.now() - t0) / 1000).toFixed(1)} s):\n${rep.log.join('\n')}\n`);
counts.passed = rep.passed;
counts.failed = rep.failed + (exitCode !== 0 && rep.failed === 0 ? 1 : 0);
counts.skipped = rep.pending;
finish();
