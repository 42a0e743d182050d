// Vox end to end in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) + Debian Chromium.
//
//   node test/e2e/run-e2e.mjs [--dev] [--vsix path] [--no-ui] [--no-host] [--no-chat] [--chat-only]
//                             [--no-checkpoints] [--no-variants] [--update-screenshot] [--verbose]
//
//   (default)   build + pack the VSIX, install it with --install-extension, test the installed copy
//   --dev       skip packing: load the project folder as the extension (npm run build first)
//   --vsix F    test an existing VSIX
//   --no-chat   skip the chat UI checks (5.)
//   --chat-only only the chat UI checks (skip 1.–3.)
//   --no-checkpoints / --no-variants  skip the checkpoints (6.) / variants (7.) UI checks
//   --update-screenshot  copy the README pictures to docs/screenshot-{chat,checkpoints,variants}.png
//               (else test-results/ only)
//   --verbose   mirror code-server's log and the page console
//
// Checks:
//   1. the in-extension-host mocha suite (test/e2e/extension-host/suite.ts), opened through
//      `/?payload=[["extensionDevelopmentPath",…],["extensionTestsPath",…]]`; each mocha test
//      counts as one check; the exit code arrives through window.codeAutomationExit;
//   2. UI: open the workbench on a sample git workspace, run "Vox: Show Logs" from the command
//      palette, see the Vox output channel; screenshot test-results/e2e-show-logs.png;
//   3. UI: open the Vox chat view (a webview) and see it render (blank-webview retry included);
//      screenshot test-results/e2e-chat-view.png;
//   4. no code-server process is left behind (checked at the very end);
//   5. chat UI (test/e2e/ui-chat.ts), in a second code-server session with a fresh profile and a
//      scripted OpenAI-compatible server: demo model streaming, API key + model picker, tool call
//      approval writing a file, Stop mid-stream, editor tab mid-stream, hide/show mid-stream
//      compared byte for byte with the stored message; one named check each; screenshots in
//      test-results/.
//   6. checkpoints in Source Control (test/e2e/ui-checkpoints.ts), own code-server session;
//   7. variants in Source Control (test/e2e/ui-variants.ts), own code-server session: "Vox: Run
//      Prompt as Variants…" with two scripted models writing different text, the Vox Variants
//      view with both completed and their diff stats, Open Variant Diff, Adopt (exactly that
//      variant's text in the workspace, HEAD/branch/index unchanged, worktrees removed).
// Prints `N passed, N failed[, N skipped]`; writes {"passed","failed","skipped"} to
// $VOX_TEST_COUNTS_FILE when set. Bounded by $VOX_E2E_TIMEOUT_MS (default 600000). Exit 1 on failure.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSuite, REPO_ROOT } from './build-suite.mjs';
import { loadChatUi, loadCheckpointsUi, loadHarness, loadVariantsUi } from './load-harness.mjs';

const h = await loadHarness();

const args = process.argv.slice(2);
const flag = (f) => args.includes(f);
const opt = (f) => {
  const i = args.indexOf(f);
  return i >= 0 ? args[i + 1] : undefined;
};
const verbose = flag('--verbose');
const chatOnly = flag('--chat-only');
const counts = { passed: 0, failed: 0, skipped: 0 };
const timings = [];
const failures = [];
const tRun = Date.now();

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

function finish(code) {
  timings.push(['total', Date.now() - tRun]);
  process.stdout.write('\nTimings:\n' + timings.map(([l, ms]) => `  ${l.padEnd(34)} ${(ms / 1000).toFixed(1)} s`).join('\n') + '\n');
  if (failures.length) process.stdout.write('\nFailures:\n' + failures.map((f) => `  - ${f}`).join('\n') + '\n');
  const summary = `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`;
  process.stdout.write(`\n${summary}\n`);
  if (process.env.VOX_TEST_COUNTS_FILE) fs.writeFileSync(process.env.VOX_TEST_COUNTS_FILE, JSON.stringify(counts));
  process.exit(code ?? (counts.failed === 0 ? 0 : 1));
}

// A hard bound on the whole run: on expiry, kill everything and report what we have.
const watchdog = setTimeout(() => {
  record('whole run finished in time', false, `exceeded ${process.env.VOX_E2E_TIMEOUT_MS ?? 600000} ms`);
  void h.cleanupAll().finally(() => finish(1));
}, Number(process.env.VOX_E2E_TIMEOUT_MS ?? 600_000));
watchdog.unref();
h.installExitHooks();

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-e2e-run-'));
const dirs = {
  home: path.join(runRoot, 'home'),
  userData: path.join(runRoot, 'user-data'),
  extensions: path.join(runRoot, 'extensions'),
  workspace: path.join(runRoot, 'workspace'),
};
const report = path.join(runRoot, 'ext-host-report.json');

try {
  // ---- Setup
  const codeServerBin = await timed('code-server setup (check)', () => h.ensureCodeServer({ quiet: !verbose }));
  h.log(`code-server: ${codeServerBin}`);

  let extensionDir = REPO_ROOT;
  if (!flag('--dev')) {
    let vsix = opt('--vsix') && path.resolve(opt('--vsix'));
    if (!vsix) {
      if (!fs.existsSync(path.join(REPO_ROOT, 'models', 'vox-demo.gguf'))) {
        await timed('demo model', () => {
          const r = spawnSync(process.execPath, ['scripts/make-demo-model.mjs'], { cwd: REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8' });
          if (r.status !== 0) throw new Error(`make-demo-model failed: ${r.stderr}`);
        });
      }
      vsix = path.join(REPO_ROOT, '.vox-sandbox', 'e2e', 'vox-e2e.vsix');
      await timed('build + package VSIX', () => {
        const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--out', vsix], { cwd: REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`package-vsix failed:\n${r.stderr?.slice(-4000)}`);
      });
    }
    h.log(`VSIX: ${vsix} (${(fs.statSync(vsix).size / 1024 / 1024).toFixed(1)} MiB)`);
    extensionDir = await timed('install VSIX (--install-extension)', () =>
      h.installExtension({ codeServerBin, vsix, extensionsDir: dirs.extensions, userDataDir: dirs.userData, home: dirs.home }),
    );
    h.log(`installed: ${extensionDir}`);
  } else if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js'))) {
    throw new Error('--dev needs a build: npm run build');
  }
  const suiteJs = await timed('bundle extension-host suite', () => buildSuite(path.join(REPO_ROOT, '.vox-sandbox', 'e2e', 'suite', 'suite.js')));
  h.createSampleWorkspace(dirs.workspace);

  const server = await timed('start code-server (to /healthz)', () =>
    h.startCodeServer({
      codeServerBin,
      workspace: dirs.workspace,
      home: dirs.home,
      userDataDir: dirs.userData,
      extensionsDir: dirs.extensions,
      env: { VOX_E2E_REPORT: report },
      verbose,
    }),
  );
  h.log(`code-server at ${server.url} (pid ${server.pid})`);
  const session = await timed('launch chromium', () => h.launchBrowser({ onConsole: verbose ? (l) => h.log(`page ${l}`) : undefined }));

  // ---- 1. In-extension-host suite
  if (!flag('--no-host') && !chatOnly) {
    const ctx = await session.browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await ctx.newPage();
    try {
      const r = await timed('extension-host suite', () =>
        h.runExtensionHostTests(page, server, { extensionDevelopmentPath: extensionDir, extensionTestsPath: suiteJs, folder: dirs.workspace, timeoutMs: 240_000 }),
      );
      const rep = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')) : undefined;
      if (!rep) record('extension-host suite wrote its report', false, `no ${report}; exit code ${r.exitCode}`);
      else {
        process.stdout.write(`\nExtension-host suite (exit ${r.exitCode}, ${(r.durationMs / 1000).toFixed(1)} s):\n${rep.log.join('\n')}\n`);
        for (const t of rep.tests) {
          if (t.state === 'pending') record(`[host] ${t.title}`, 'skip');
          else record(`[host] ${t.title}`, t.state === 'passed', t.error ? t.error.split('\n')[0] : '');
        }
        if (!rep.finished) record('extension-host suite finished', false, 'report not finished (host crashed?)');
        if (r.exitCode !== 0 && rep.failed === 0) record('extension-host exit code', false, `exit ${r.exitCode} with no failed test`);
      }
    } catch (e) {
      record('extension-host suite', false, e.message);
      await h.screenshot(page, 'e2e-FAILED-extension-host').catch(() => {});
    } finally {
      await ctx.close().catch(() => {});
    }
  }

  // ---- 2 + 3. UI smoke
  if (!flag('--no-ui') && !chatOnly) {
    const page = session.page;
    let ready = false;
    await check('workbench opens on the sample workspace', async () => {
      // --dev: the window loads the project folder as an extension under development.
      const payload = flag('--dev') ? [['extensionDevelopmentPath', server.remoteUri(extensionDir)]] : undefined;
      await timed('open workbench', () => h.openWorkbench(page, server.workbenchUrl({ folder: dirs.workspace, payload })));
      // The explorer shows the workspace's files.
      await page.getByRole('treeitem', { name: 'README.md' }).first().waitFor({ timeout: 30_000 });
      ready = true;
    }, page);

    await check('"Vox: Show Logs" shows the Vox output channel', async () => {
      if (!ready) throw new Error('workbench not ready');
      await timed('UI: Vox: Show Logs', async () => {
        await h.runCommand(page, 'Vox: Show Logs');
        const panel = page.locator('.part.panel');
        await panel.waitFor({ state: 'visible', timeout: 15_000 });
        // The Output view shows the "Vox" channel: its picker selects "Vox" and the text holds
        // the extension's log ("Vox activated in … ms").
        await h.waitFor('the Vox channel in the Output panel', 20_000, async () => {
          const selected = await panel
            .locator('select.monaco-select-box')
            .evaluateAll((els) => els.map((el) => el.options[el.selectedIndex]?.text ?? ''))
            .catch(() => []);
          // Monaco renders spaces as U+00A0.
          const text = (await panel.locator('.view-lines').allInnerTexts().catch(() => [])).join('\n').replace(/\u00a0/g, ' ');
          return selected.includes('Vox') && /Vox activated/.test(text);
        });
      });
      h.log(`screenshot: ${await h.screenshot(page, 'e2e-show-logs')}`);
    }, page);

    const pkg = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
    const webviewView = Object.values(pkg.contributes?.views ?? {}).flat().find((v) => v.type === 'webview');
    await check('the Vox chat view (webview) renders', async () => {
      if (!webviewView) return 'skip';
      if (!ready) throw new Error('workbench not ready');
      await timed('UI: chat webview', async () => {
        await h.runCommand(page, `${pkg.displayName ?? 'Vox'}: Focus on ${webviewView.name} View`).catch(async () => {
          // Older/newer titles: click the activity bar entry instead.
          await page.locator(`.activitybar .action-item a[aria-label^="${pkg.displayName ?? 'Vox'}"]`).first().click({ timeout: 10_000 });
        });
        const wv = await h.waitForWebview(page, `extensionId=${pkg.publisher}.${pkg.name}`, { timeoutMs: 20_000, retries: 2 });
        const text = await wv.content.evaluate('document.body.innerText');
        h.log(`chat view text: ${JSON.stringify(String(text).slice(0, 160))}`);
      });
      h.log(`screenshot: ${await h.screenshot(page, 'e2e-chat-view')}`);
    }, page);
  }

  // ---- 5. Chat UI: its own code-server session (fresh profile), after the first one is gone.
  if (!flag('--no-ui') && !flag('--no-chat')) {
    await timed('stop first code-server', () => server.stop());
    const { runChatUiChecks } = await loadChatUi();
    await timed('chat UI (all)', () =>
      runChatUiChecks({
        codeServerBin,
        extensionsDir: dirs.extensions,
        devExtensionPath: flag('--dev') ? extensionDir : undefined,
        browser: session.browser,
        rootDir: runRoot,
        check,
        timed,
        updateDocsScreenshot: flag('--update-screenshot'),
        verbose,
      }),
    );
  }

  // ---- 6. Checkpoints in the Source Control view: agent edit → checkpoint → compare, restore, undo.
  if (!flag('--no-ui') && !flag('--no-checkpoints')) {
    if (flag('--no-chat')) await timed('stop first code-server', () => server.stop());
    const { runCheckpointChecks } = await loadCheckpointsUi();
    await timed('checkpoints UI (all)', () =>
      runCheckpointChecks({
        codeServerBin,
        extensionsDir: dirs.extensions,
        devExtensionPath: flag('--dev') ? extensionDir : undefined,
        browser: session.browser,
        rootDir: runRoot,
        check,
        timed,
        updateDocsScreenshot: flag('--update-screenshot'),
        verbose,
      }),
    );
  }

  // ---- 7. Variants in the Source Control view: two models → Vox Variants → diff → adopt.
  if (!flag('--no-ui') && !flag('--no-variants')) {
    await server.stop(); // no-op when a section above already stopped it
    const { runVariantChecks } = await loadVariantsUi();
    await timed('variants UI (all)', () =>
      runVariantChecks({
        codeServerBin,
        extensionsDir: dirs.extensions,
        devExtensionPath: flag('--dev') ? extensionDir : undefined,
        browser: session.browser,
        rootDir: runRoot,
        check,
        timed,
        updateDocsScreenshot: flag('--update-screenshot'),
        verbose,
      }),
    );
  }

  // ---- 4. Teardown + leak check
  await timed('teardown', () => h.cleanupAll());
  await h.sleep(300);
  const leaked = h.processesMentioning(runRoot);
  record('no code-server process left behind', leaked.length === 0, leaked.join(' | '));
} catch (e) {
  record('e2e run', false, (e && e.stack) || String(e));
} finally {
  await h.cleanupAll();
  fs.rmSync(runRoot, { recursive: true, force: true, maxRetries: 3 });
}
finish();
