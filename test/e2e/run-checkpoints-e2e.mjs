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
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHarness } from './load-harness.mjs';
import { createRun, parseArgs } from './runner.mjs';

const h = await loadHarness();
const REPO_ROOT = h.REPO_ROOT;

const { flag, opt } = parseArgs();
const verbose = flag('--verbose');
const sets = (flag('--no-checkpoints') ? 0 : 1) + (flag('--no-variants') ? 0 : 1);
const timeoutMs = Number(process.env.VOX_E2E_TIMEOUT_MS ?? 300_000 * Math.max(1, sets));
const run = createRun(h, { timeoutMs, verbose, labelWidth: 44, clipLabels: true });

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vox-e2e-cp-'));
const dirs = {
  home: path.join(runRoot, 'home'),
  userData: path.join(runRoot, 'user-data'),
  extensions: path.join(runRoot, 'extensions'),
};

await run.main(runRoot, 'source control e2e run', async () => {
  const codeServerBin = await run.ensureCodeServer();

  let devExtensionPath;
  if (flag('--dev') || opt('--extension-path')) {
    devExtensionPath = opt('--extension-path') ? path.resolve(opt('--extension-path')) : REPO_ROOT;
    if (!fs.existsSync(path.join(devExtensionPath, 'dist', 'extension.js'))) throw new Error(`${devExtensionPath} has no dist/extension.js: npm run build`);
    h.log(`extension under development: ${devExtensionPath}`);
  } else {
    const vsix = opt('--vsix') && path.resolve(opt('--vsix'));
    await run.installVsix({ codeServerBin, dirs, vsix, out: 'vox-checkpoints-e2e.vsix' });
  }

  const session = await run.launchBrowser();
  // The checks open their own browser context and code-server session; the session's own page
  // stays unused.
  const uiOptions = {
    codeServerBin,
    extensionsDir: dirs.extensions,
    devExtensionPath,
    browser: session.browser,
    rootDir: runRoot,
    updateDocsScreenshot: flag('--update-screenshot'),
  };
  if (!flag('--no-checkpoints')) await run.runUiSet('checkpoints', uiOptions);
  if (!flag('--no-variants')) await run.runUiSet('variants', uiOptions);
  // Teardown + leak check: run.main, after this.
});
