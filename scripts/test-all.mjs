// Runs every test suite Vox has and prints one closing line `N passed, N failed` summing them.
// Order: install code-server + Debian chromium if missing, build the bundles, generate the demo
// model, type-check, lint, the mocha suites (unit, integration, webview; then the per-platform
// VSIXs), then the e2e suite in code-server (three passes, one per way the store's SQLite driver
// is chosen) and the desktop VS Code suite (skipped without VSCODE_EXECUTABLE). A failing check
// counts as one failure; the run continues so the summary is complete. Exit 1 when anything failed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
let passed = 0;
let failed = 0;
let skipped = 0;
/** What failed, by suite, printed again just above the closing line (CI shows only the tail). */
const failures = [];

function run(label, cmd, args, env = {}) {
  const t0 = Date.now();
  process.stdout.write(`\n=== ${label}: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  const ok = r.status === 0;
  if (!ok) failures.push(`${label}: exit ${r.status ?? r.signal}`);
  process.stdout.write(`=== ${label}: ${ok ? 'ok' : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  return ok;
}

function check(label, cmd, args) {
  if (run(label, cmd, args)) passed++;
  else failed++;
}

function mochaSuite(label, globs) {
  const countsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vox-counts-')), 'counts.json');
  // --exit: a leaked handle (test/support/leak-report.ts names leaked child processes) must not hang CI after the last test.
  const ok = run(label, 'npx', ['mocha', '--exit', '--reporter', './scripts/mocha-count-reporter.cjs', ...globs], { VOX_TEST_COUNTS_FILE: countsFile });
  if (!fs.existsSync(countsFile)) {
    failed++; // mocha crashed before reporting
    return;
  }
  const c = JSON.parse(fs.readFileSync(countsFile, 'utf8'));
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
  for (const f of c.failures ?? []) failures.push(`${label}: ${f}`);
  if (!ok && c.failed === 0) failed++;
}

/** A non-mocha suite that writes its own counts to $VOX_TEST_COUNTS_FILE. */
function countedSuite(label, cmd, args) {
  const countsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vox-counts-')), 'counts.json');
  const ok = run(label, cmd, args, { VOX_TEST_COUNTS_FILE: countsFile });
  if (!fs.existsSync(countsFile)) {
    failed++;
    return;
  }
  const c = JSON.parse(fs.readFileSync(countsFile, 'utf8'));
  passed += c.passed ?? 0;
  failed += c.failed ?? 0;
  skipped += c.skipped ?? 0;
  for (const f of c.failures ?? []) failures.push(`${label}: ${f}`);
  if (!ok && !c.failed) failed++;
}

// Chromium (webview and e2e tests) and code-server (e2e): idempotent, seconds when installed.
const setupOk = process.env.VOX_SKIP_E2E === '1' || run('code-server + chromium setup', 'bash', ['scripts/setup-code-server.sh']);
if (!setupOk) failed++;
check('build', 'node', ['esbuild.mjs']);
check('demo model', 'node', ['scripts/make-demo-model.mjs']);
check('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
check('typecheck webview', 'npx', ['tsc', '-p', 'webview/tsconfig.json', '--noEmit']);
check('lint', 'npx', ['eslint', 'src', 'test', 'bench', 'scripts', 'webview/src']);
mochaSuite('unit + integration + webview', ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/webview/**/*.test.ts']);
// The per-platform VSIXs: linux-x64, darwin-arm64 and win32-x64 (all six with
// VOX_PACKAGE_ALL_TARGETS=1); node-llama-cpp's platform packages are fetched from the npm
// registry once and cached (about 30 s, most of it vsce zipping).
mochaSuite('packaging (per-platform VSIXs)', ['test/packaging/**/*.test.ts']);

// End to end in a real VS Code (code-server) driven by headless Chromium. The setup step is
// idempotent (seconds when already installed) so `npm test` works on a fresh clone.
if (process.env.VOX_SKIP_E2E === '1') {
  process.stdout.write('\n=== e2e: skipped (VOX_SKIP_E2E=1)\n');
} else if (setupOk) {
  // Three passes (better-sqlite3; the N-API fallback with better-sqlite3 unloadable; the release
  // VSIX), counted together in the suite's counts file.
  countedSuite('e2e (code-server + chromium, 3 passes)', 'node', ['test/e2e/run-e2e.mjs']);
}
countedSuite('desktop VS Code (@vscode/test-electron)', 'node', ['test/e2e/run-electron.mjs']);

if (failures.length > 0) process.stdout.write(`\nWhat failed:\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed === 0 ? 0 : 1);
