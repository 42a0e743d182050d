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
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSuite, REPO_ROOT } from './build-suite.mjs';
import { loadHarness } from './load-harness.mjs';
import { createRun, parseArgs } from './runner.mjs';

const h = await loadHarness();

const { flag, opt } = parseArgs();
const verbose = flag('--verbose');
const chatOnly = flag('--chat-only');
const run = createRun(h, { timeoutMs: Number(process.env.VOX_E2E_TIMEOUT_MS ?? 600_000), verbose });
const { timed, record, check } = run;

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-e2e-run-'));
const dirs = {
  home: path.join(runRoot, 'home'),
  userData: path.join(runRoot, 'user-data'),
  extensions: path.join(runRoot, 'extensions'),
  workspace: path.join(runRoot, 'workspace'),
};
const report = path.join(runRoot, 'ext-host-report.json');

await run.main(runRoot, 'e2e run', async () => {
  // ---- Setup
  const codeServerBin = await run.ensureCodeServer();

  let extensionDir = REPO_ROOT;
  if (!flag('--dev')) {
    const vsix = opt('--vsix') && path.resolve(opt('--vsix'));
    extensionDir = await run.installVsix({ codeServerBin, dirs, vsix, out: 'vox-e2e.vsix' });
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
  const session = await run.launchBrowser();

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
        const panel = page.locator('.part.panel');
        // The palette sometimes loses the Enter while it is still filtering (seen once in CI:
        // the extension active, no panel): showing the logs is idempotent, so run it again.
        for (let attempt = 1; ; attempt++) {
          await h.runCommand(page, 'Vox: Show Logs');
          const shown = await panel.waitFor({ state: 'visible', timeout: 8_000 }).then(() => true, () => false);
          if (shown) break;
          if (attempt === 3) throw new Error('the Output panel did not open after "Vox: Show Logs" (3 attempts)');
          h.log(`"Vox: Show Logs" opened no panel (attempt ${attempt}); again`);
        }
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

  // ---- 5.–7. Chat, checkpoints and variants UI: each set in its own code-server session (fresh
  // profile), after the first one is gone.
  const uiOptions = {
    codeServerBin,
    extensionsDir: dirs.extensions,
    devExtensionPath: flag('--dev') ? extensionDir : undefined,
    browser: session.browser,
    rootDir: runRoot,
    updateDocsScreenshot: flag('--update-screenshot'),
  };

  // ---- 5. Chat UI
  if (!flag('--no-ui') && !flag('--no-chat')) {
    await timed('stop first code-server', () => server.stop());
    await run.runUiSet('chat', uiOptions);
  }

  // ---- 6. Checkpoints in the Source Control view: agent edit → checkpoint → compare, restore, undo.
  if (!flag('--no-ui') && !flag('--no-checkpoints')) {
    if (flag('--no-chat')) await timed('stop first code-server', () => server.stop());
    await run.runUiSet('checkpoints', uiOptions);
  }

  // ---- 7. Variants in the Source Control view: two models → Vox Variants → diff → adopt.
  if (!flag('--no-ui') && !flag('--no-variants')) {
    await server.stop(); // no-op when a section above already stopped it
    await run.runUiSet('variants', uiOptions);
  }
  // ---- 4. Teardown + leak check: run.main, after this.
});
