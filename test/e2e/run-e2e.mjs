// Vox end to end in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) + Debian Chromium.
//
//   node test/e2e/run-e2e.mjs [--dev] [--vsix path] [--release-vsix path] [--no-ui] [--no-host]
//                             [--no-chat] [--chat-only] [--run-control-only] [--no-checkpoints]
//                             [--no-variants] [--no-connect] [--connect-only] [--no-fallback]
//                             [--fallback-only] [--set NAME[,NAME]] [--update-screenshot]
//                             [--verbose]
//
//   (default)   build + pack the test VSIX and the release VSIX, install each with
//               --install-extension, test the installed copies (three passes, below)
//   --dev       skip packing: load the project folder as the extension (npm run build first);
//               the release-VSIX pass is skipped
//   --vsix F    test an existing test VSIX (packed with --with-better-sqlite3) in passes 1 and 2
//   --release-vsix F  test an existing release VSIX in pass 3 (default: pack this machine's)
//   --no-chat   skip the chat UI checks (5., and 8. with them)
//   --chat-only only the chat UI checks (skip 1.–3.)
//   --run-control-only  pass 1 only, and of it only the run-control checks (8.) with the two chat
//               checks they build on (the view; API key and model)
//   --no-checkpoints / --no-variants / --no-connect  skip the checkpoints (6.) / variants (7.) /
//               connect (9.) UI checks
//   --connect-only  pass 1 only, and of it only the connect UI checks (9.)
//   --no-fallback   only pass 1;  --fallback-only  only passes 2 and 3
//   --no-reload  skip the reload UI checks (Reload Window mid-stream lands on that thread,
//               "Stopped by a reload", Retry)
//   --set a,b   pass 1 only, and of it only these UI sets (keys of UI_SETS in runner.mjs), each
//               in its own code-server session; no extension-host suite
//   --update-screenshot  copy the README pictures to docs/screenshot-{chat,queue,rate-limit,
//               checkpoints,variants}.png (else test-results/ only; pass 1's)
//   --verbose   mirror code-server's log and the page console
//
// Passes: the store's SQLite driver is chosen in the extension host (src/engine/store/driver.ts),
// and each pass proves which one it ran on: code-server's environment, which its extension host
// inherits, tells the in-extension-host suite the driver to expect ($VOX_E2E_SQLITE_DRIVER) and
// what the reason for the choice must say ($VOX_E2E_SQLITE_REASON).
//   pass 1 (main; check names unprefixed): the test VSIX, better-sqlite3 loads and is the driver;
//     checks 1.–8.
//   pass 2 ("[fallback: ABI mismatch] …"): the same installed test VSIX, code-server started with
//     VOX_SQLITE_SIMULATE_ABI_MISMATCH=1, so better-sqlite3's loader throws what Electron throws
//     (NODE_MODULE_VERSION mismatch) although the module is there: the store falls back to the
//     N-API @photostructure/sqlite; checks 1.–3. (the suite streams a demo turn, reads the thread
//     back through a fresh session, captures and restores a checkpoint, finds the driver in the log);
//   pass 3 ("[fallback: release VSIX] …"): the release VSIX for this machine, exactly what
//     `npm run package` ships (no better-sqlite3 in it, as desktop VS Code gets it): the store falls
//     back because better-sqlite3 is absent; checks 1.–3., then the chat UI's demo streaming and
//     "Developer: Reload Window" checks (5. view, demo, reload) and the checkpoints UI through
//     Restore and Undo (6. agent, view, restore, undo).
//
// Checks:
//   1. the in-extension-host mocha suite (test/e2e/extension-host/suite.ts), opened through
//      `/?payload=[["extensionDevelopmentPath",…],["extensionTestsPath",…]]`; each mocha test
//      counts as one check; the exit code arrives through window.codeAutomationExit;
//   2. UI: open the workbench on a sample git workspace, run "Vox: Show Logs" from the command
//      palette, see the Vox output channel; screenshot test-results/e2e-show-logs.png;
//   3. UI: open the Vox chat view (a webview) and see it render (blank-webview retry included);
//      screenshot test-results/e2e-chat-view.png; the engine it starts logs "SQLite driver: …"
//      in the Output panel, naming the pass's driver;
//   4. no code-server process is left behind (checked at the very end);
//   5. chat UI (test/e2e/ui-chat.ts), in a second code-server session with a fresh profile and a
//      scripted OpenAI-compatible server: demo model streaming, API key + model picker, tool call
//      approval writing a file, Stop mid-stream, editor tab mid-stream, hide/show mid-stream
//      compared byte for byte with the stored message, the demo thread reopened from the store
//      after "Developer: Reload Window"; one named check each; screenshots in test-results/.
//   6. checkpoints in Source Control (test/e2e/ui-checkpoints.ts), own code-server session: the
//      agent's edit and its checkpoints, the view, Compare, Restore, Undo, a later thread's
//      checkpoints appearing in the open view;
//   7. variants in Source Control (test/e2e/ui-variants.ts), own code-server session: "Vox: Run
//      Prompt as Variants…" with two scripted models writing different text, the Vox Variants
//      view with both completed and their diff stats, Open Variant Diff, Adopt (exactly that
//      variant's text in the workspace, HEAD/branch/index unchanged, worktrees removed).
//   8. run control (SPEC 2.4; test/e2e/ui-run-control.ts), in the chat UI's session after its
//      mid-stream checks, pass 1 only: two prompts queued during a turn held by the scripted
//      server, reordered with Alt+↑ (strip and store agree), one promoted with Steer — the tool
//      call the model asked for does not run, the next request carries the steer, the transcript
//      shows where it landed, the other prompt runs as the next turn; a 429 with retry-after
//      shows the countdown, "Don't auto-resume", "Resume now" retries; screenshots of both.
//   9. connect a model (test/e2e/ui-connect.ts), own code-server session, pass 1 only: the demo
//      banner is one line; its "Connect a model" leads into the flow, where Ollama on a closed
//      port shows the exact failure; "Vox: Connect a Model…" with a scripted OpenAI-compatible
//      server lists its models from GET /v1/models, tests one and uses it (the picker groups it
//      by provider); "Vox: Manage Model Endpoints…" renames it and removes it (the model falls
//      back to the demo model); the dismissed banner stays dismissed after "Developer: Reload Window".
//  10. the conversation tree (test/e2e/ui-branches.ts), own code-server session, pass 1 only: a
//      demo answer regenerated with openai:gpt-e2e from the answer's dropdown, ‹ › between the
//      two answers, the "Compare branches" tab with two columns, an answer edited in place
//      ("edited", also after "Developer: Reload Window").
//  11. rules and $variables (test/e2e/ui-rules.ts), own code-server session, pass 1 only: a
//      workspace rule picked from the @ popup goes to the scripted server as the <user_rules>
//      block with the stripped prompt; the Vox Rules view lists it; "Vox: Show System Prompt"
//      opens the prompt with its $variables resolved.
//  12. compaction (test/e2e/ui-compact.ts), own code-server session, pass 1 only: two turns with
//      openai:gpt-e2e, `/compact` in the composer asks the scripted server for the summary, the chat
//      shows "Context compacted up to here" with the messages above still shown, and the next
//      prompt's request carries the summary in place of them.
//  13. the context sanitiser and handoff (test/e2e/ui-sanitize.ts), own code-server session, pass 1
//      only: inline <think> streamed in chunks lands in the reasoning block; another model picked
//      gets the <context_handoff> block and the chat's note, also after "Developer: Reload Window".
//  14. the shared database (test/e2e/ui-shared-home.ts), own code-server session, pass 1 only: a
//      thread sent in the window is listed and shown by the built CLI with the same HOME; a
//      `vox chat --thread` from that terminal shows live in the open thread, and a new CLI thread
//      in the window's thread list; after a paid turn in the window the status bar shows the exact spend.
//  15. keyboard only (test/e2e/ui-keyboard.ts), own code-server session, pass 1 only: no mouse
//      event; Ctrl+Alt+V, Enter, Ctrl+Alt+N, Tab to a recent thread; Alt+Enter approving from the
//      composer and from the review diff editor.
//  16. permissions (test/e2e/ui-permissions.ts), own code-server session, pass 1 only: "Always
//      allow…" → a command prefix for this workspace; the next matching command runs unasked;
//      "Vox: Permission Rules…" removes the rule and the next one asks again.
// Prints one line per pass, then `N passed, N failed[, N skipped]` over all of them; writes
// {"passed","failed","skipped"} to $VOX_TEST_COUNTS_FILE when set. Bounded by $VOX_E2E_TIMEOUT_MS
// (default 1800000: pass 1 alone takes about 14 min on the 2-core CI machine). Exit 1 on failure.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSuite, REPO_ROOT } from './build-suite.mjs';
import { loadHarness } from './load-harness.mjs';
import { createRun, parseArgs } from './runner.mjs';

const h = await loadHarness();

const { flag, opt } = parseArgs();
const verbose = flag('--verbose');
const runControlOnly = flag('--run-control-only');
const connectOnly = flag('--connect-only');
/** `--set a,b`: only these UI sets (test/e2e/runner.mjs UI_SETS), pass 1 only, no extension-host suite. */
const onlySets = opt('--set')?.split(',').filter(Boolean);
const chatOnly = flag('--chat-only') || runControlOnly || connectOnly || onlySets !== undefined;
const run = createRun(h, { timeoutMs: Number(process.env.VOX_E2E_TIMEOUT_MS ?? 1_800_000), verbose });
const { timed, record } = run;

const SIMULATE = 'VOX_SQLITE_SIMULATE_ABI_MISMATCH';
/**
 * The passes (see the header). `sqlite`: the driver the store must run on and text its reason must
 * hold; `env`: what code-server (and so the extension host) gets, with the driver variables of
 * this shell cleared (undefined = unset), so no pass inherits another's choice; `ui`: which UI
 * checks run (`all`, or the sets and check keys).
 */
const PASSES = [
  {
    id: 'main',
    tag: '',
    title: 'pass 1 (main): test VSIX, better-sqlite3 loads',
    vsix: 'test',
    sqlite: { driver: 'better-sqlite3', reason: 'better-sqlite3' },
    env: { [SIMULATE]: undefined, VOX_SQLITE_DRIVER: undefined },
    ui: 'all',
  },
  {
    id: 'abi',
    tag: '[fallback: ABI mismatch] ',
    title: `pass 2 (fallback): test VSIX, ${SIMULATE}=1`,
    vsix: 'test',
    sqlite: { driver: 'photostructure', reason: `This version of Node.js requires NODE_MODULE_VERSION 132. (simulated by ${SIMULATE})` },
    env: { [SIMULATE]: '1', VOX_SQLITE_DRIVER: undefined },
    ui: { sets: [] },
  },
  {
    id: 'release',
    tag: '[fallback: release VSIX] ',
    title: 'pass 3 (fallback): release VSIX, no better-sqlite3 in it',
    vsix: 'release',
    sqlite: { driver: 'photostructure', reason: "better-sqlite3 does not load here: Cannot find module 'better-sqlite3'" },
    env: { [SIMULATE]: undefined, VOX_SQLITE_DRIVER: undefined },
    ui: { sets: [['chat', ['view', 'demo', 'reload']], ['checkpoints', ['agent', 'view', 'restore', 'undo']]] },
  },
].filter((p) => (flag('--no-fallback') || runControlOnly || connectOnly || onlySets ? p.id === 'main' : flag('--fallback-only') ? p.id !== 'main' : true));

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-e2e-run-'));
/** Profile and extension folders of the test VSIX (passes 1 and 2) and of the release VSIX (pass 3). */
const installs = {
  test: { home: path.join(runRoot, 'home'), userData: path.join(runRoot, 'user-data'), extensions: path.join(runRoot, 'extensions') },
  release: { home: path.join(runRoot, 'release-home'), userData: path.join(runRoot, 'release-user-data'), extensions: path.join(runRoot, 'release-extensions') },
};

await run.main(runRoot, 'e2e run', async () => {
  // ---- Setup
  const codeServerBin = await run.ensureCodeServer();
  const dev = flag('--dev');
  if (dev && !fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js'))) throw new Error('--dev needs a build: npm run build');

  /** The installed extension folder per VSIX kind (the project folder with --dev). */
  const extensionDirs = {};
  const testVsix = opt('--vsix') && path.resolve(opt('--vsix'));
  if (PASSES.some((p) => p.vsix === 'test')) {
    extensionDirs.test = dev ? REPO_ROOT : await run.installVsix({ codeServerBin, dirs: installs.test, vsix: testVsix, out: 'vox-e2e.vsix' });
  }
  if (PASSES.some((p) => p.vsix === 'release') && !dev) {
    // Right after the test VSIX, from the same production build in dist/ (what `npm run package`
    // builds first), unless that one was given: then this pack builds.
    const releaseVsix = opt('--release-vsix') && path.resolve(opt('--release-vsix'));
    const packedTest = extensionDirs.test !== undefined && !testVsix;
    extensionDirs.release = await run.installVsix({ codeServerBin, dirs: installs.release, vsix: releaseVsix, out: 'vox-e2e-release.vsix', release: true, noBuild: packedTest });
  }
  const suiteJs = await timed('bundle extension-host suite', () => buildSuite(path.join(REPO_ROOT, '.vox-sandbox', 'e2e', 'suite', 'suite.js')));
  const session = await run.launchBrowser();

  const summaries = [];
  for (const pass of PASSES) {
    const before = { ...run.counts };
    const t0 = Date.now();
    process.stdout.write(`\n==== ${pass.title}: the store must run on ${pass.sqlite.driver}\n`);
    if (pass.vsix === 'release' && dev) {
      record(`${pass.tag}the release VSIX`, 'skip', '--dev tests the project folder, not a VSIX');
    } else {
      await timed(`${pass.tag || '[main] '}pass (all)`, () => runPass(pass, { codeServerBin, extensionDir: extensionDirs[pass.vsix], suiteJs, session }));
    }
    const c = run.counts;
    summaries.push(`${pass.title}: ${c.passed - before.passed} checks passed, ${c.failed - before.failed} failed${c.skipped > before.skipped ? `, ${c.skipped - before.skipped} skipped` : ''} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  process.stdout.write(`\nPasses:\n${summaries.map((l) => `  ${l}`).join('\n')}\n`);
  // ---- 4. Teardown + leak check: run.main, after this.
});

/** The environment of a pass's code-server sessions (see PASSES). */
function passEnv(pass, extra = {}) {
  return { ...pass.env, VOX_E2E_SQLITE_DRIVER: pass.sqlite.driver, VOX_E2E_SQLITE_REASON: pass.sqlite.reason, ...extra };
}

/** One pass: checks 1.–3. in a first code-server session, then the pass's sets of UI checks. */
async function runPass(pass, { codeServerBin, extensionDir, suiteJs, session }) {
  const { tag } = pass;
  const check = (name, fn, page) => run.check(`${tag}${name}`, fn, page);
  const t = (label, fn) => timed(`${tag}${label}`, fn);
  const dev = flag('--dev');
  const passRoot = path.join(runRoot, pass.id);
  const dirs = {
    home: path.join(passRoot, 'home'),
    userData: path.join(passRoot, 'user-data'),
    workspace: path.join(passRoot, 'workspace'),
    extensions: pass.vsix === 'release' ? installs.release.extensions : installs.test.extensions,
  };
  const report = path.join(passRoot, 'ext-host-report.json');
  h.createSampleWorkspace(dirs.workspace);

  let server;
  if (!chatOnly) {
    server = await t('start code-server (to /healthz)', () =>
      h.startCodeServer({
        codeServerBin,
        workspace: dirs.workspace,
        home: dirs.home,
        userDataDir: dirs.userData,
        extensionsDir: dirs.extensions,
        env: passEnv(pass, { VOX_E2E_REPORT: report }),
        verbose,
      }),
    );
    h.log(`${tag}code-server at ${server.url} (pid ${server.pid})`);
  }

  // ---- 1. In-extension-host suite
  if (server && !flag('--no-host')) {
    const ctx = await session.browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await ctx.newPage();
    try {
      const r = await t('extension-host suite', () =>
        h.runExtensionHostTests(page, server, { extensionDevelopmentPath: extensionDir, extensionTestsPath: suiteJs, folder: dirs.workspace, timeoutMs: 300_000 }),
      );
      const rep = fs.existsSync(report) ? JSON.parse(fs.readFileSync(report, 'utf8')) : undefined;
      if (!rep) record(`${tag}extension-host suite wrote its report`, false, `no ${report}; exit code ${r.exitCode}`);
      else {
        process.stdout.write(`\n${tag}Extension-host suite (exit ${r.exitCode}, ${(r.durationMs / 1000).toFixed(1)} s):\n${rep.log.join('\n')}\n`);
        for (const test of rep.tests) {
          if (test.state === 'pending') record(`${tag}[host] ${test.title}`, 'skip');
          else record(`${tag}[host] ${test.title}`, test.state === 'passed', test.error ? test.error.split('\n')[0] : '');
        }
        if (!rep.finished) record(`${tag}extension-host suite finished`, false, 'report not finished (host crashed?)');
        if (r.exitCode !== 0 && rep.failed === 0) record(`${tag}extension-host exit code`, false, `exit ${r.exitCode} with no failed test`);
      }
    } catch (e) {
      record(`${tag}extension-host suite`, false, e.message);
      await h.screenshot(page, `e2e-FAILED-${tag}extension-host`).catch(() => {});
    } finally {
      await ctx.close().catch(() => {});
    }
  }

  // ---- 2 + 3. UI smoke
  if (server && !flag('--no-ui')) {
    const page = session.page;
    const shot = (name) => h.screenshot(page, `${pass.id === 'main' ? '' : `${pass.id}-`}${name}`);
    let ready = false;
    await check('workbench opens on the sample workspace', async () => {
      // --dev: the window loads the project folder as an extension under development.
      const payload = dev ? [['extensionDevelopmentPath', server.remoteUri(extensionDir)]] : undefined;
      await t('open workbench', () => h.openWorkbench(page, server.workbenchUrl({ folder: dirs.workspace, payload })));
      // The explorer shows the workspace's files.
      await page.getByRole('treeitem', { name: 'README.md' }).first().waitFor({ timeout: 30_000 });
      ready = true;
    }, page);

    const panel = page.locator('.part.panel');
    /** The Output panel's text (Monaco renders spaces as U+00A0). */
    const outputText = async () => (await panel.locator('.view-lines').allInnerTexts().catch(() => [])).join('\n').replace(/\u00a0/g, ' ');
    let logsShown = false;
    await check('"Vox: Show Logs" shows the Vox output channel', async () => {
      if (!ready) throw new Error('workbench not ready');
      await t('UI: Vox: Show Logs', async () => {
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
          return selected.includes('Vox') && /Vox activated/.test(await outputText());
        });
      });
      logsShown = true;
      h.log(`screenshot: ${await shot('e2e-show-logs')}`);
    }, page);

    const pkg = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
    const webviewView = Object.values(pkg.contributes?.views ?? {}).flat().find((v) => v.type === 'webview');
    let chatShown = false;
    await check('the Vox chat view (webview) renders', async () => {
      if (!webviewView) return 'skip';
      if (!ready) throw new Error('workbench not ready');
      await t('UI: chat webview', async () => {
        await h.runCommand(page, `${pkg.displayName ?? 'Vox'}: Focus on ${webviewView.name} View`).catch(async () => {
          // Older/newer titles: click the activity bar entry instead.
          await page.locator(`.activitybar .action-item a[aria-label^="${pkg.displayName ?? 'Vox'}"]`).first().click({ timeout: 10_000 });
        });
        const wv = await h.waitForWebview(page, `extensionId=${pkg.publisher}.${pkg.name}`, { timeoutMs: 20_000, retries: 2 });
        const text = await wv.content.evaluate('document.body.innerText');
        h.log(`chat view text: ${JSON.stringify(String(text).slice(0, 160))}`);
      });
      chatShown = true;
      h.log(`screenshot: ${await shot('e2e-chat-view')}`);
    }, page);

    // The chat view connected to the engine, which started and logged its SQLite driver into
    // the channel the Output panel still shows. The panel wraps long lines (the fallback's reason
    // is one), so its text is compared with all whitespace taken out.
    const driverLine = `SQLite driver: ${pass.sqlite.driver}`;
    await check(`the Output panel's Vox log says "${driverLine}…"`, async () => {
      if (!logsShown || !chatShown) throw new Error('not run: an earlier step failed (the Vox log or the chat view)');
      await t('UI: SQLite driver in the log', async () => {
        const squash = (x) => x.replace(/\s+/g, '');
        /** From "SQLite driver:" to the next log line's timestamp (or the end). */
        const entry = async () => {
          const text = squash(await outputText());
          const at = text.indexOf(squash('SQLite driver: '));
          if (at < 0) return undefined;
          const rest = text.slice(at);
          const next = /\d{4}-\d\d-\d\d\d\d:\d\d:\d\d\.\d{3}\[/.exec(rest);
          return next ? rest.slice(0, next.index) : rest;
        };
        const got = await h.waitFor(`"${driverLine}" in the Output panel`, 20_000, entry, 200).catch(async (e) => {
          throw new Error(`${e.message}; the panel shows: ${JSON.stringify((await outputText()).slice(-600))}`);
        });
        h.log(`${tag}Output panel (whitespace removed): ${got}`);
        if (!got.startsWith(squash(driverLine))) throw new Error(`the log says ${JSON.stringify(got)}, expected "${driverLine}…" (whitespace removed)`);
        if (!got.includes(squash(pass.sqlite.reason))) throw new Error(`the log entry ${JSON.stringify(got)} does not say ${JSON.stringify(pass.sqlite.reason)} (whitespace removed)`);
      });
      h.log(`screenshot: ${await shot('e2e-sqlite-driver-log')}`);
    }, page);
  }

  // ---- 5.–7. Chat, checkpoints and variants UI: each set in its own code-server session (fresh
  // profile), after the first one is gone.
  if (server) await t('stop first code-server', () => server.stop());
  if (flag('--no-ui')) return;
  const uiOptions = {
    codeServerBin,
    extensionsDir: dirs.extensions,
    devExtensionPath: dev ? extensionDir : undefined,
    browser: session.browser,
    rootDir: passRoot,
    updateDocsScreenshot: pass.id === 'main' && flag('--update-screenshot'),
    env: passEnv(pass),
    shotPrefix: pass.id === 'main' ? '' : `${pass.id}-`,
  };
  const sets = onlySets ? onlySets.map((n) => [n])
    : runControlOnly
    ? [['chat', ['view', 'model', 'runQueue', 'runRateLimit', 'runScreenshots', 'commandOutput', 'attention', 'mentions']]]
    : connectOnly ? [['connect']]
    : pass.ui === 'all' ? [['chat'], ['checkpoints'], ['variants'], ['connect'], ['branches'], ['rules'], ['composer'], ['reload'], ['refusal'], ['permissions'], ['compact'], ['importers'], ['search'], ['shared'], ['keyboard'], ['sanitize'], ['threads'], ['mcp-catalog'], ['mcphttp'], ['mcp']] : pass.ui.sets;
  const skipped = { chat: flag('--no-chat'), checkpoints: flag('--no-checkpoints') || chatOnly, variants: flag('--no-variants') || chatOnly, connect: flag('--no-connect') || (chatOnly && !connectOnly), branches: flag('--no-branches') || chatOnly, rules: flag('--no-rules') || chatOnly, composer: flag('--no-composer') || chatOnly, reload: flag('--no-reload') || chatOnly, compact: flag('--no-compact') || chatOnly, refusal: flag('--no-refusal') || chatOnly, permissions: flag('--no-permissions') || chatOnly, importers: flag('--no-importers') || chatOnly, search: flag('--no-search') || chatOnly, shared: flag('--no-shared') || chatOnly, keyboard: flag('--no-keyboard') || chatOnly, sanitize: flag('--no-sanitize') || chatOnly, threads: flag('--no-threads') || chatOnly, mcphttp: flag('--no-mcphttp') || chatOnly, mcp: flag('--no-mcp') || chatOnly };
  for (const [name, only] of sets) {
    if (skipped[name] && !onlySets) continue;
    await run.runUiSet(name, uiOptions, { prefix: tag, only });
  }
}
