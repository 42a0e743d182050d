/**
 * End-to-end helpers: a real VS Code (code-server 4.100.3 = VS Code 1.100.3, with a real Node
 * extension host) driven by Debian's Chromium through playwright-core. Offline; binds only to
 * 127.0.0.1. How and why (the offline install, the Chromium flags, webview frames, the
 * blank-webview race, the extension-host suite): docs/TESTING.md.
 *
 * Everything started here is tracked and torn down by `cleanupAll()`, which also runs on process
 * exit, SIGINT/SIGTERM and uncaught errors: code-server runs in its own process group, and the
 * whole group (server, extension host, pty host, file watcher) is killed.
 *
 * This module is the harness's one entry point; each concern has its own module:
 *   harness-process.ts      processes and teardown: root, log, temp dirs, cleanup, exit hooks, leak check
 *   harness-code-server.ts  code-server: setup, VSIX install, start/stop, workbench URLs, sample workspace
 *   harness-browser.ts      Chromium (flags, fresh profile) and screenshots
 *   harness-workbench.ts    the workbench: open, command palette, quick input, extension-host suites
 *   harness-webviews.ts     webview frames and the blank-webview retry
 * and the waits (`waitFor`, `withTimeout`, `sleep`) are test/support/wait.ts's.
 *
 * Used by test/e2e/run-e2e.mjs (UI checks + the in-extension-host suite), the shared runner code
 * (test/e2e/runner.mjs), the UI checks (test/e2e/ui-*.ts) and by scripts/start-vscode.mjs (the
 * interactive "run Vox" path).
 */
// Named re-exports, not `export *`: run-e2e.mjs and the other .mjs scripts load this module
// through tsx's tsImport, and Node's CommonJS export scanner fails on `export *` there.
export { sleep, waitFor, withTimeout } from '../support/wait';
export { cleanupAll, installExitHooks, log, makeTempDir, processesMentioning, REPO_ROOT } from './harness-process';
export {
  CODE_SERVER_VERSION, createSampleWorkspace, ensureCodeServer, installExtension, QUIET_WORKBENCH_SETTINGS, startCodeServer,
  type CodeServer, type CodeServerOptions, type InstallExtensionOptions,
} from './harness-code-server';
export { CHROMIUM, CHROMIUM_FLAGS, launchBrowser, RESULTS_DIR, screenshot, type BrowserSession } from './harness-browser';
export { answerQuickInput, escapeRegExp, openWorkbench, runCommand, runExtensionHostTests, waitForWorkbench, type ExtensionHostRunResult } from './harness-workbench';
export { findWebviews, waitForWebview, webviewHasContent, type WebviewFilter, type WebviewFrame } from './harness-webviews';
