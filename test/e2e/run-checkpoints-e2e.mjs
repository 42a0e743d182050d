// Vox's Source Control views end to end in a real VS Code, alone: code-server 4.100.3 (VS Code
// 1.100.3) + Debian Chromium, the checks of test/e2e/ui-checkpoints.ts (agent write → Vox
// Checkpoints view in Source Control → Compare with Working Tree → Restore "Files only" → Undo)
// and of test/e2e/ui-variants.ts ("Vox: Run Prompt as Variants…" with two models → Vox Variants
// view with diff stats → Open Variant Diff → Adopt), each in its own code-server session.
//
//   node test/e2e/run-checkpoints-e2e.mjs [--dev | --extension-path DIR | --vsix F]
//                                         [--no-checkpoints] [--no-variants]
//                                         [--update-screenshot] [--verbose]
//
//   (default)   build + pack a VSIX (.vox-sandbox/e2e/vox-checkpoints-e2e.vsix), install it with
//               --install-extension, test the installed copy
//   --dev       skip packing: load the project folder as the extension (npm run build first)
//   --extension-path DIR  like --dev with another folder laid out like the project (package.json,
//               dist/, node_modules/): test a private build while others rebuild dist/
//   --vsix F    test an existing VSIX
//   --no-checkpoints / --no-variants  skip one of the two sets of checks
//   --update-screenshot   copy the README pictures to docs/screenshot-checkpoints.png and
//               docs/screenshot-variants.png (of the sets that ran)
//   --verbose   mirror code-server's log and the page console
//
// Prints `N passed, N failed[, N skipped]`; writes {"passed","failed","skipped"} to
// $VOX_TEST_COUNTS_FILE when set. Bounded by $VOX_E2E_TIMEOUT_MS (default 300000 per set of
// checks). Exit 1 on failure.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCheckpointsUi, loadHarness, loadVariantsUi } from './load-harness.mjs';

const h = await loadHarness();
const REPO_ROOT = h.REPO_ROOT;

const args = process.argv.slice(2);
const flag = (f) => args.includes(f);
const opt = (f) => {
  const i = args.indexOf(f);
  return i >= 0 ? args[i + 1] : undefined;
};
const verbose = flag('--verbose');
const counts = { passed: 0, failed: 0, skipped: 0 };
const timings = [];
const failures = [];
const tRun = Date.now();
const sets = (flag('--no-checkpoints') ? 0 : 1) + (flag('--no-variants') ? 0 : 1);
const timeoutMs = Number(process.env.VOX_E2E_TIMEOUT_MS ?? 300_000 * Math.max(1, sets));

async function timed(label, fn) {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings.push([label, Date.now() - t0]);
  }
}

function record(name, ok, detail = '') {
  if (ok === 'skip') {
    counts.skipped++;
    h.log(`SKIP ${name}${detail ? `: ${detail}` : ''}`);
    return;
  }
  if (ok) counts.passed++;
  else {
    counts.failed++;
    failures.push(`${name}${detail ? `: ${detail}` : ''}`);
  }
  h.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
}

/** Runs a check; an exception is one failure (with a screenshot when a page is given). */
async function check(name, fn, page) {
  try {
    const r = await fn();
    if (r === 'skip') record(name, 'skip');
    else record(name, true);
  } catch (e) {
    record(name, false, (e && e.message) || String(e));
    if (page) await h.screenshot(page, `e2e-FAILED-${name}`).catch(() => {});
  }
}

let finished = false;
function finish(code) {
  if (finished) return;
  finished = true;
  timings.push(['total', Date.now() - tRun]);
  process.stdout.write('\nTimings:\n' + timings.map(([l, ms]) => `  ${l.padEnd(44).slice(0, 44)} ${(ms / 1000).toFixed(1)} s`).join('\n') + '\n');
  if (failures.length) process.stdout.write('\nFailures:\n' + failures.map((f) => `  - ${f}`).join('\n') + '\n');
  const summary = `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`;
  process.stdout.write(`\n${summary}\n`);
  if (process.env.VOX_TEST_COUNTS_FILE) fs.writeFileSync(process.env.VOX_TEST_COUNTS_FILE, JSON.stringify(counts));
  process.exit(code ?? (counts.failed === 0 ? 0 : 1));
}

// A hard bound on the whole run: on expiry, kill everything and report what we have.
const watchdog = setTimeout(() => {
  record('whole run finished in time', false, `exceeded ${timeoutMs} ms`);
  void h.cleanupAll().finally(() => finish(1));
}, timeoutMs);
watchdog.unref();
h.installExitHooks();

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-e2e-cp-'));
const dirs = {
  home: path.join(runRoot, 'home'),
  userData: path.join(runRoot, 'user-data'),
  extensions: path.join(runRoot, 'extensions'),
};

try {
  const codeServerBin = await timed('code-server setup (check)', () => h.ensureCodeServer({ quiet: !verbose }));
  h.log(`code-server: ${codeServerBin}`);

  let devExtensionPath;
  if (flag('--dev') || opt('--extension-path')) {
    devExtensionPath = opt('--extension-path') ? path.resolve(opt('--extension-path')) : REPO_ROOT;
    if (!fs.existsSync(path.join(devExtensionPath, 'dist', 'extension.js'))) throw new Error(`${devExtensionPath} has no dist/extension.js: npm run build`);
    h.log(`extension under development: ${devExtensionPath}`);
  } else {
    let vsix = opt('--vsix') && path.resolve(opt('--vsix'));
    if (!vsix) {
      if (!fs.existsSync(path.join(REPO_ROOT, 'models', 'vox-demo.gguf'))) {
        await timed('demo model', () => {
          const r = spawnSync(process.execPath, ['scripts/make-demo-model.mjs'], { cwd: REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8' });
          if (r.status !== 0) throw new Error(`make-demo-model failed: ${r.stderr}`);
        });
      }
      vsix = path.join(REPO_ROOT, '.vox-sandbox', 'e2e', 'vox-checkpoints-e2e.vsix');
      await timed('build + package VSIX', () => {
        const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--out', vsix], { cwd: REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8', timeout: 240_000 });
        if (r.status !== 0) throw new Error(`package-vsix failed (exit ${r.status ?? r.signal}):\n${r.stderr?.slice(-4000)}`);
      });
    }
    h.log(`VSIX: ${vsix} (${(fs.statSync(vsix).size / 1024 / 1024).toFixed(1)} MiB)`);
    const installed = await timed('install VSIX (--install-extension)', () =>
      h.installExtension({ codeServerBin, vsix, extensionsDir: dirs.extensions, userDataDir: dirs.userData, home: dirs.home }),
    );
    h.log(`installed: ${installed}`);
  }

  const session = await timed('launch chromium', () => h.launchBrowser({ onConsole: verbose ? (l) => h.log(`page ${l}`) : undefined }));
  // The checks open their own browser context and code-server session; the session's own page
  // stays unused.
  const uiOptions = {
    codeServerBin,
    extensionsDir: dirs.extensions,
    devExtensionPath,
    browser: session.browser,
    rootDir: runRoot,
    check,
    timed,
    updateDocsScreenshot: flag('--update-screenshot'),
    verbose,
  };
  if (!flag('--no-checkpoints')) {
    const { runCheckpointChecks } = await loadCheckpointsUi();
    await timed('checkpoints UI (all)', () => runCheckpointChecks(uiOptions));
  }
  if (!flag('--no-variants')) {
    const { runVariantChecks } = await loadVariantsUi();
    await timed('variants UI (all)', () => runVariantChecks(uiOptions));
  }

  // Teardown + leak check.
  await timed('teardown', () => h.cleanupAll());
  await h.sleep(300);
  const leaked = h.processesMentioning(runRoot);
  record('no code-server process left behind', leaked.length === 0, leaked.join(' | '));
} catch (e) {
  record('source control e2e run', false, (e && e.stack) || String(e));
} finally {
  await h.cleanupAll();
  fs.rmSync(runRoot, { recursive: true, force: true, maxRetries: 3 });
}
finish();
