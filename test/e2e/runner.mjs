// What the code-server e2e runners share (test/e2e/run-e2e.mjs, run-checkpoints-e2e.mjs): the
// argument helpers, the tally of named checks (PASS/FAIL/SKIP lines, timings, the closing
// `N passed, N failed[, N skipped]` line and $VOX_TEST_COUNTS_FILE), the watchdog that bounds the
// whole run, code-server/Chromium setup, building + installing the test or the release VSIX, the
// sets of UI checks (test/e2e/ui-{chat,checkpoints,variants}.ts, whole or a subset, their names
// prefixed by the pass they run in) and the teardown with its leak check.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadBranchesUi, loadChatUi, loadCheckpointsUi, loadCompactUi, loadComposerUi, loadReloadUi, loadConnectUi, loadImportersUi, loadPermissionsUi, loadRefusalUi, loadRulesUi, loadSanitizeUi, loadKeyboardUi, loadSearchUi, loadSharedUi, loadThreadsUi, loadVariantsUi, loadMcpCatalogUi, loadMcpHttpUi, loadMcpUi } from './load-harness.mjs';

/** `flag('--x')`: present; `opt('--x')`: the argument after it. */
export function parseArgs(args = process.argv.slice(2)) {
  return {
    flag: (f) => args.includes(f),
    opt: (f) => {
      const i = args.indexOf(f);
      return i >= 0 ? args[i + 1] : undefined;
    },
  };
}

/**
 * The sets of UI checks, each in its own code-server session: the label it is timed under, its
 * runner and its checks' names by key (for `runUiSet(…, { only })`).
 */
const UI_SETS = {
  chat: { label: 'chat UI', load: async () => { const m = await loadChatUi(); return { run: m.runChatUiChecks, names: m.CHAT_CHECKS }; } },
  checkpoints: { label: 'checkpoints UI', load: async () => { const m = await loadCheckpointsUi(); return { run: m.runCheckpointChecks, names: m.CHECKPOINT_CHECKS }; } },
  variants: { label: 'variants UI', load: async () => { const m = await loadVariantsUi(); return { run: m.runVariantChecks, names: m.VARIANT_CHECKS }; } },
  connect: { label: 'connect UI', load: async () => { const m = await loadConnectUi(); return { run: m.runConnectChecks, names: m.CONNECT_CHECKS }; } },
  branches: { label: 'branches UI', load: async () => { const m = await loadBranchesUi(); return { run: m.runBranchChecks, names: m.BRANCH_CHECKS }; } },
  rules: { label: 'rules UI', load: async () => { const m = await loadRulesUi(); return { run: m.runRulesChecks, names: m.RULES_CHECKS }; } },
  composer: { label: 'composer UI', load: async () => { const m = await loadComposerUi(); return { run: m.runComposerChecks, names: m.COMPOSER_CHECKS }; } },
  reload: { label: 'reload UI', load: async () => { const m = await loadReloadUi(); return { run: m.runReloadChecks, names: m.RELOAD_CHECKS }; } },
  permissions: { label: 'permissions UI', load: async () => { const m = await loadPermissionsUi(); return { run: m.runPermissionChecks, names: m.PERMISSION_CHECKS }; } },
  refusal: { label: 'refusal UI', load: async () => { const m = await loadRefusalUi(); return { run: m.runRefusalChecks, names: m.REFUSAL_CHECKS }; } },
  compact: { label: 'compact UI', load: async () => { const m = await loadCompactUi(); return { run: m.runCompactChecks, names: m.COMPACT_CHECKS }; } },
  importers: { label: 'importers UI', load: async () => { const m = await loadImportersUi(); return { run: m.runImporterChecks, names: m.IMPORTER_CHECKS }; } },
  keyboard: { label: 'keyboard only', load: async () => { const m = await loadKeyboardUi(); return { run: m.runKeyboardChecks, names: m.KEYBOARD_CHECKS }; } },
  shared: { label: 'shared database', load: async () => { const m = await loadSharedUi(); return { run: m.runSharedChecks, names: m.SHARED_CHECKS }; } },
  search: { label: 'search UI', load: async () => { const m = await loadSearchUi(); return { run: m.runSearchChecks, names: m.SEARCH_CHECKS }; } },
  sanitize: { label: 'sanitize UI', load: async () => { const m = await loadSanitizeUi(); return { run: m.runSanitizeChecks, names: m.SANITIZE_CHECKS }; } },
  threads: { label: 'threads UI', load: async () => { const m = await loadThreadsUi(); return { run: m.runThreadChecks, names: m.THREAD_CHECKS }; } },
  'mcp-catalog': { label: 'mcp sign-in (browser)', load: async () => { const m = await loadMcpCatalogUi(); return { run: m.runMcpCatalogChecks, names: m.MCP_CATALOG_CHECKS }; } },
  mcphttp: { label: 'MCP server UI', load: async () => { const m = await loadMcpHttpUi(); return { run: m.runMcpHttpChecks, names: m.MCP_HTTP_CHECKS }; } },
  mcp: { label: 'mcp UI', load: async () => { const m = await loadMcpUi(); return { run: m.runMcpChecks, names: m.MCP_CHECKS }; } },
};

/**
 * One run: starts the watchdog (on expiry after `timeoutMs`: one failure, everything killed, the
 * summary printed) and installs the harness's exit hooks. `h` is test/e2e/harness.ts;
 * `labelWidth`/`clipLabels` lay out the timings table.
 */
export function createRun(h, { timeoutMs, verbose = false, labelWidth = 34, clipLabels = false }) {
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

  let finished = false;
  function finish(code) {
    if (finished) return;
    finished = true;
    timings.push(['total', Date.now() - tRun]);
    const label = (l) => (clipLabels ? l.padEnd(labelWidth).slice(0, labelWidth) : l.padEnd(labelWidth));
    process.stdout.write('\nTimings:\n' + timings.map(([l, ms]) => `  ${label(l)} ${(ms / 1000).toFixed(1)} s`).join('\n') + '\n');
    if (failures.length) process.stdout.write('\nFailures:\n' + failures.map((f) => `  - ${f}`).join('\n') + '\n');
    const summary = `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`;
    process.stdout.write(`\n${summary}\n`);
    if (process.env.VOX_TEST_COUNTS_FILE) fs.writeFileSync(process.env.VOX_TEST_COUNTS_FILE, JSON.stringify({ ...counts, failures }));
    process.exit(code ?? (counts.failed === 0 ? 0 : 1));
  }

  // A hard bound on the whole run: on expiry, kill everything and report what we have.
  const watchdog = setTimeout(() => {
    record('whole run finished in time', false, `exceeded ${timeoutMs} ms`);
    void h.cleanupAll().finally(() => finish(1));
  }, timeoutMs);
  watchdog.unref();
  h.installExitHooks();

  return {
    counts,
    timed,
    record,
    check,
    finish,

    /** scripts/setup-code-server.sh (idempotent); returns the code-server binary. */
    async ensureCodeServer() {
      const bin = await timed('code-server setup (check)', () => h.ensureCodeServer({ quiet: !verbose }));
      h.log(`code-server: ${bin}`);
      return bin;
    },

    /** Debian Chromium, headless (the page console mirrored with --verbose). */
    launchBrowser() {
      return timed('launch chromium', () => h.launchBrowser({ onConsole: verbose ? (l) => h.log(`page ${l}`) : undefined }));
    },

    /**
     * Installs a VSIX with `code-server --install-extension` into dirs.extensions and returns the
     * installed folder. Without `vsix`: generates the demo model when missing, then packs
     * .vox-sandbox/e2e/<out> with scripts/package-vsix.mjs (which builds first, unless `noBuild`):
     *  - `release: false` (the test VSIX): this machine's release layout (bundled node-llama-cpp,
     *    the llama.cpp package fetched by exact version, the N-API SQLite prebuild) plus
     *    `--with-better-sqlite3`, the better-sqlite3 that `npm ci` built for this Node. code-server's
     *    extension host runs on Node, where that build loads: the store's driver is better-sqlite3.
     *  - `release: true`: exactly what `npm run package` ships for this machine, without
     *    better-sqlite3, as desktop VS Code gets it: the store falls back to @photostructure/sqlite.
     * The release VSIXs of every target are checked file by file by test/packaging/vsix.test.ts.
     */
    async installVsix({ codeServerBin, dirs, vsix, out, release = false, noBuild = false }) {
      if (!vsix) {
        if (!fs.existsSync(path.join(h.REPO_ROOT, 'models', 'vox-demo.gguf'))) {
          await timed('demo model', () => {
            const r = spawnSync(process.execPath, ['scripts/make-demo-model.mjs'], { cwd: h.REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8' });
            if (r.status !== 0) throw new Error(`make-demo-model failed: ${r.stderr}`);
          });
        }
        vsix = path.join(h.REPO_ROOT, '.vox-sandbox', 'e2e', out);
        const args = [...(release ? [] : ['--with-better-sqlite3']), ...(noBuild ? ['--no-build'] : []), '--out', vsix];
        await timed(release ? 'package release VSIX' : 'build + package VSIX', () => {
          const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', ...args], { cwd: h.REPO_ROOT, stdio: verbose ? 'inherit' : 'pipe', encoding: 'utf8', timeout: 240_000 });
          if (r.status !== 0) throw new Error(`package-vsix ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${r.stderr?.slice(-4000)}`);
        });
      }
      h.log(`VSIX: ${vsix} (${(fs.statSync(vsix).size / 1024 / 1024).toFixed(1)} MiB)`);
      const installed = await timed(release ? 'install release VSIX' : 'install VSIX (--install-extension)', () =>
        h.installExtension({ codeServerBin, vsix, extensionsDir: dirs.extensions, userDataDir: dirs.userData, home: dirs.home }),
      );
      h.log(`installed: ${installed}`);
      return installed;
    },

    /**
     * Runs one set of UI checks ('chat', 'checkpoints' or 'variants'; test/e2e/ui-session.ts's
     * UiCheckOptions plus this run's check, timed and verbose), timed as "<prefix><set> UI (all)".
     * `prefix` starts every check name and timing label (which pass they belong to); `only`
     * (keys of the set's names, e.g. ['view', 'demo']) runs just those checks: the others are
     * neither run nor counted.
     */
    async runUiSet(name, options, { prefix = '', only } = {}) {
      const set = UI_SETS[name];
      const { run: runChecks, names } = await set.load();
      let wanted;
      if (only) {
        const unknown = only.filter((k) => !(k in names));
        if (unknown.length) throw new Error(`runUiSet('${name}'): no check ${unknown.join(', ')} (known: ${Object.keys(names).join(', ')})`);
        wanted = new Set(only.map((k) => names[k]));
      }
      const setCheck = (n, fn, page) => (wanted && !wanted.has(n) ? Promise.resolve() : check(`${prefix}${n}`, fn, page));
      const setTimed = (label, fn) => timed(`${prefix}${label}`, fn);
      const label = `${prefix}${set.label} (${only ? only.join(', ') : 'all'})`;
      await timed(label, () => runChecks({ ...options, check: setCheck, timed: setTimed, verbose }));
    },

    /**
     * Runs `body`, then tears down and checks that no process mentions `runRoot`; an exception
     * is the failure `failureLabel`. Always cleans up, removes runRoot and prints the summary.
     */
    async main(runRoot, failureLabel, body) {
      try {
        await body();
        await timed('teardown', () => h.cleanupAll());
        await h.sleep(300);
        const leaked = h.processesMentioning(runRoot);
        record('no code-server process left behind', leaked.length === 0, leaked.join(' | '));
      } catch (e) {
        record(failureLabel, false, (e && e.stack) || String(e));
      } finally {
        await h.cleanupAll();
        // VOX_E2E_KEEP=1 keeps the profiles and logs of the run for a post-mortem.
        if (process.env.VOX_E2E_KEEP) h.log(`kept ${runRoot} (VOX_E2E_KEEP)`);
        else fs.rmSync(runRoot, { recursive: true, force: true, maxRetries: 3 });
      }
      finish();
    },
  };
}
