/**
 * End-to-end helpers: a real VS Code (code-server 4.100.3 = VS Code 1.100.3, with a real Node
 * extension host) driven by Debian's Chromium through playwright-core. Offline; binds only to
 * 127.0.0.1. See /work/shared/FIELD-NOTES.md ("A real VS Code for end-to-end tests").
 *
 * Everything started here is tracked and torn down by `cleanupAll()`, which also runs on process
 * exit, SIGINT/SIGTERM and uncaught errors: code-server runs in its own process group, and the
 * whole group (server, extension host, pty host, file watcher) is killed.
 *
 * Used by test/e2e/run-e2e.mjs (UI checks + the in-extension-host suite), the shared runner code
 * (test/e2e/runner.mjs), the UI checks (test/e2e/ui-*.ts) and by scripts/start-vscode.mjs (the
 * interactive "run Vox" path).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { git } from '../support/git';
import { sleep, waitFor, withTimeout } from '../support/wait';

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
export const CODE_SERVER_VERSION = '4.100.3';
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
export const CHROMIUM = process.env.VOX_CHROMIUM ?? '/usr/bin/chromium';

/** Flags that keep Debian's Chromium quiet on a machine with no internet (FIELD-NOTES). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// ---------------------------------------------------------------------------------------------
// Small utilities

export function log(msg: string): void {
  process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

export { sleep, waitFor, withTimeout } from '../support/wait';

export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vox-e2e-${prefix}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Cleanup registry

type Cleanup = () => void | Promise<void>;
const cleanups: Cleanup[] = [];
/** Process groups of code-server instances still alive; killed synchronously on exit. */
const liveGroups = new Set<number>();

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs every registered cleanup (newest first). Safe to call more than once. */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length) {
    const c = cleanups.pop()!;
    try {
      await withTimeout('cleanup', 15_000, Promise.resolve().then(c));
    } catch (e) {
      log(`cleanup failed: ${String(e)}`);
    }
  }
  for (const g of liveGroups) killGroup(g, 'SIGKILL');
  liveGroups.clear();
}

let exitHooksInstalled = false;
/** Last-resort teardown: kill every code-server group when this process goes away. */
export function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => {
    for (const g of liveGroups) killGroup(g, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      log(`${sig}: cleaning up`);
      void cleanupAll().finally(() => process.exit(130));
    });
  }
  process.on('uncaughtException', (e) => {
    log(`uncaught: ${e.stack ?? String(e)}`);
    void cleanupAll().finally(() => process.exit(1));
  });
}

// ---------------------------------------------------------------------------------------------
// code-server

/** Runs scripts/setup-code-server.sh (idempotent, ~1 s when installed) and returns the binary. */
export function ensureCodeServer(opts: { quiet?: boolean } = {}): string {
  if (process.env.VOX_CODE_SERVER_BIN) return process.env.VOX_CODE_SERVER_BIN;
  const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'setup-code-server.sh')], {
    stdio: ['ignore', 'pipe', opts.quiet ? 'pipe' : 'inherit'],
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    throw new Error(`setup-code-server.sh failed (exit ${r.status ?? r.signal})${opts.quiet ? `:\n${r.stderr}` : ''}`);
  }
  const bin = r.stdout.trim().split('\n').pop() ?? '';
  if (!fs.existsSync(bin)) throw new Error(`setup-code-server.sh printed '${bin}', which does not exist`);
  return bin;
}

/** The environment code-server and its extension host get: a private HOME and XDG dirs. */
function isolatedEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Do not leak the parent's VS Code / Electron session into the server.
  for (const k of Object.keys(env)) if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') delete env[k];
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    ...extra,
  };
}

export interface InstallExtensionOptions {
  codeServerBin: string;
  vsix: string;
  extensionsDir: string;
  userDataDir: string;
  home: string;
}

/** `code-server --install-extension <vsix>` into a given extensions dir; returns the installed folder. */
export function installExtension(o: InstallExtensionOptions): string {
  fs.mkdirSync(o.extensionsDir, { recursive: true });
  fs.mkdirSync(o.home, { recursive: true });
  const r = spawnSync(
    o.codeServerBin,
    ['--extensions-dir', o.extensionsDir, '--user-data-dir', o.userDataDir, '--install-extension', o.vsix, '--force'],
    { env: isolatedEnv(o.home), encoding: 'utf8', timeout: 120_000 },
  );
  if (r.status !== 0) throw new Error(`--install-extension failed (exit ${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  const manifest = readVsixManifest(o.vsix);
  const id = `${manifest.publisher}.${manifest.name}`.toLowerCase();
  const dir = fs
    .readdirSync(o.extensionsDir)
    .find((d) => d.toLowerCase() === `${id}-${manifest.version}`.toLowerCase() || d.toLowerCase().startsWith(`${id}-${manifest.version}`));
  if (!dir) throw new Error(`installed ${id} not found in ${o.extensionsDir}: ${fs.readdirSync(o.extensionsDir).join(', ')}`);
  return path.join(o.extensionsDir, dir);
}

/** publisher/name/version of a VSIX, read with `unzip -p` (Debian's unzip) or the project's package.json. */
function readVsixManifest(vsix: string): { publisher: string; name: string; version: string } {
  const r = spawnSync('unzip', ['-p', vsix, 'extension/package.json'], { encoding: 'utf8' });
  const text = r.status === 0 && r.stdout ? r.stdout : fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');
  const p = JSON.parse(text) as { publisher: string; name: string; version: string };
  return { publisher: p.publisher, name: p.name, version: p.version };
}

/**
 * User settings that keep a fresh profile's first run quiet (no welcome page, tips, telemetry or
 * update checks). startCodeServer writes them when the profile has no settings.json; a caller
 * that needs more settings writes its own file first, starting from these.
 */
export const QUIET_WORKBENCH_SETTINGS: Readonly<Record<string, unknown>> = {
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.openRepositoryInParentFolders': 'never',
  'security.workspace.trust.enabled': false,
};

export interface CodeServerOptions {
  codeServerBin: string;
  /** Folder the workbench opens by default (`/?folder=` URLs can open another). */
  workspace?: string;
  /** 0 (default) = ephemeral port, read back from code-server's log. */
  port?: number;
  /** Defaults: fresh temp dirs, removed by cleanupAll(). */
  extensionsDir?: string;
  userDataDir?: string;
  home?: string;
  /** Extra environment for the server and, through it, the extension host. */
  env?: NodeJS.ProcessEnv;
  /** Extra code-server arguments. */
  args?: string[];
  /** Mirror the server's log to stderr. */
  verbose?: boolean;
  /** Default 60 s. */
  startTimeoutMs?: number;
  /** Write the server's stdout/stderr to this file instead of a pipe (needed with `persist`). */
  logFile?: string;
  /**
   * Leave the server running when this process exits (scripts/start-vscode.mjs --no-wait): it is
   * not registered for cleanup and is unref'd; stop it with `kill -- -<pid>` (its process group).
   */
  persist?: boolean;
}

export interface CodeServer {
  url: string;
  port: number;
  pid: number;
  extensionsDir: string;
  userDataDir: string;
  home: string;
  workspace: string | undefined;
  /** The server's combined stdout/stderr so far. */
  output(): string;
  /** A `vscode-remote://` URI for a path on this machine, as the workbench's remote authority sees it. */
  remoteUri(fsPath: string): string;
  /** Workbench URL for `folder` plus an optional `payload` (extension development / tests). */
  workbenchUrl(opts?: { folder?: string; payload?: [string, string][] }): string;
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

function httpGet(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Starts code-server on 127.0.0.1 and waits for /healthz. */
export async function startCodeServer(o: CodeServerOptions): Promise<CodeServer> {
  installExitHooks();
  const home = o.home ?? makeTempDir('home');
  const userDataDir = o.userDataDir ?? makeTempDir('user-data');
  const extensionsDir = o.extensionsDir ?? makeTempDir('extensions');
  for (const d of [home, userDataDir, extensionsDir]) fs.mkdirSync(d, { recursive: true });
  // No password, no update/telemetry, and settings that keep the first run quiet.
  const settingsDir = path.join(userDataDir, 'User');
  fs.mkdirSync(settingsDir, { recursive: true });
  const settingsFile = path.join(settingsDir, 'settings.json');
  if (!fs.existsSync(settingsFile)) fs.writeFileSync(settingsFile, JSON.stringify(QUIET_WORKBENCH_SETTINGS, null, 2));
  const configFile = path.join(home, 'code-server-config.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');

  const args = [
    '--config', configFile,
    '--bind-addr', `127.0.0.1:${o.port ?? 0}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
    ...(o.args ?? []),
    ...(o.workspace ? [o.workspace] : []),
  ];
  let logFd: number | undefined;
  if (o.logFile) {
    fs.mkdirSync(path.dirname(o.logFile), { recursive: true });
    logFd = fs.openSync(o.logFile, 'w');
  }
  const child: ChildProcess = spawn(o.codeServerBin, args, {
    env: isolatedEnv(home, o.env),
    stdio: ['ignore', logFd ?? 'pipe', logFd ?? 'pipe'],
    detached: true, // own process group: stop() kills the server and everything it spawned
  });
  if (logFd !== undefined) fs.closeSync(logFd);
  const pgid = child.pid!;
  if (!o.persist) liveGroups.add(pgid);
  let out = '';
  const onData = (b: Buffer): void => {
    const s = b.toString();
    out += s;
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    if (o.verbose) process.stderr.write(s);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const readOutput = (): string => {
    if (!o.logFile) return out;
    try {
      return fs.readFileSync(o.logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const gone = (): boolean => !groupAlive(pgid);
    killGroup(pgid, 'SIGTERM');
    await waitFor('code-server to exit on SIGTERM', 5_000, gone, 100).catch(() => undefined);
    if (groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
    await waitFor('code-server to exit on SIGKILL', 3_000, gone, 100).catch(() => undefined);
    liveGroups.delete(pgid);
  };
  if (!o.persist) cleanups.push(stop);

  try {
    const port = await waitFor('code-server listening', o.startTimeoutMs ?? 60_000, async () => {
      if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}:\n${readOutput()}`);
      const m = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(readOutput());
      return m ? Number(m[1]) : undefined;
    }, 100);
    const url = `http://127.0.0.1:${port}`;
    await waitFor('code-server /healthz', 30_000, async () => {
      const r = await httpGet(`${url}/healthz`, 2_000);
      return r.status === 200 && r.body.includes('status');
    }, 100);
    if (o.persist) child.unref();
    const remoteUri = (fsPath: string): string => `vscode-remote://127.0.0.1:${port}${path.resolve(fsPath)}`;
    return {
      url,
      port,
      pid: pgid,
      extensionsDir,
      userDataDir,
      home,
      workspace: o.workspace,
      output: readOutput,
      remoteUri,
      workbenchUrl: ({ folder, payload } = {}) => {
        const q: string[] = [];
        const f = folder ?? o.workspace;
        // Slashes stay readable in the folder path; everything else is encoded.
        if (f) q.push(`folder=${encodeURIComponent(path.resolve(f)).replace(/%2F/g, '/')}`);
        if (payload) q.push(`payload=${encodeURIComponent(JSON.stringify(payload))}`);
        return `${url}/${q.length ? `?${q.join('&')}` : ''}`;
      },
      stop,
      exited,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Browser

export interface BrowserSession {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Launches Debian Chromium (headless, fresh profile) and opens one page. */
export async function launchBrowser(opts: { viewport?: { width: number; height: number }; onConsole?: (line: string) => void } = {}): Promise<BrowserSession> {
  installExitHooks();
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install chromium (scripts/setup-code-server.sh does)`);
  // launch() gives Chromium a fresh temporary --user-data-dir of its own and removes it on close.
  const browser = await withTimeout(
    'chromium launch',
    60_000,
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 }),
  );
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
  const page = await context.newPage();
  if (opts.onConsole) {
    const cb = opts.onConsole;
    page.on('console', (m) => cb(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => cb(`[pageerror] ${e.message}`));
  }
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await withTimeout('browser close', 10_000, browser.close()).catch((e) => log(`browser close: ${String(e)}`));
  };
  cleanups.push(close);
  return { browser, context, page, close };
}

/** Opens the workbench and waits until it is usable (workbench DOM + service worker ready). */
export async function openWorkbench(page: Page, url: string, timeoutMs = 90_000): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
  await waitForWorkbench(page, timeoutMs);
}

export async function waitForWorkbench(page: Page, timeoutMs = 90_000): Promise<void> {
  await page.waitForSelector('.monaco-workbench .part.statusbar', { state: 'visible', timeout: timeoutMs });
  // Webviews are served through a service worker; commands that open webviews before it is
  // ready leave them blank (FIELD-NOTES).
  await withTimeout('navigator.serviceWorker.ready', timeoutMs, page.evaluate('navigator.serviceWorker.ready.then(() => true)'));
  // The remote extension host connection: the status bar shows the remote indicator when connected.
  await page.waitForSelector('.monaco-workbench .part.activitybar, .monaco-workbench .activitybar', { timeout: timeoutMs });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Runs a command through the command palette: F1, type the title, Enter (or a click on the row
 * whose label is exactly `title` when the focused row is another one). The palette lists the
 * commands known when it opens, and a remote extension's contributions can arrive a few seconds
 * after the workbench shows: so when no row matches, it closes the palette and tries again until
 * `timeoutMs`. Throws when no row ever matches.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000, opts: { opensQuickInput?: boolean } = {}): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  const exact = new RegExp(`^${escapeRegExp(title)}$`);
  const row = rows.filter({ has: page.locator('.label-name', { hasText: exact }) }).first();
  const deadline = Date.now() + timeoutMs;
  let labels: string[] = [];
  for (;;) {
    // Close whatever quick input is open, then open the palette.
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: Math.max(1_000, deadline - Date.now()) });
    await input.fill(`>${title}`);
    const found = await row
      .waitFor({ state: 'visible', timeout: 3_000 })
      .then(() => true)
      .catch(() => false);
    if (found) break;
    labels = await rows.locator('.label-name').allTextContents().catch(() => []);
    if (Date.now() > deadline) {
      await page.keyboard.press('Escape');
      throw new Error(`command palette has no "${title}" after ${timeoutMs} ms (rows: ${labels.slice(0, 8).join(' | ') || 'none'})`);
    }
    await sleep(1_000);
  }
  const focused = widget.locator('.quick-input-list .monaco-list-row.focused .label-name');
  const focusedText = (await focused.textContent({ timeout: 2_000 }).catch(() => null))?.trim();
  if (focusedText === title) await page.keyboard.press('Enter');
  else await row.click();
  // A command that opens a quick input of its own keeps the widget on screen: the caller waits
  // for that input's content instead.
  if (opts.opensQuickInput) return;
  await widget.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => {
    /* the command may open a quick input of its own */
  });
}

/** Types into an open quick input (input box or quick pick) and presses Enter. */
export async function answerQuickInput(page: Page, text: string, timeoutMs = 15_000): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(text);
  await page.keyboard.press('Enter');
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await withTimeout(`screenshot ${name}`, 20_000, page.screenshot({ path: file }));
  return file;
}

// ---------------------------------------------------------------------------------------------
// Webviews

export interface WebviewFrame {
  /** The `iframe.webview` host frame (VS Code's webview shell). */
  outer: Frame;
  /** `#active-frame` inside it: the extension's HTML. */
  content: Frame;
  /** The outer iframe's src (holds extensionId=… and purpose=…). */
  src: string;
}

/**
 * Which webviews to look at: a substring of the host iframe's src (e.g. `extensionId=pub.name`),
 * or a predicate over the src (e.g. to tell a view, `purpose=webviewView`, from an editor panel).
 */
export type WebviewFilter = string | ((src: string) => boolean);

function matchesFilter(src: string, filter: WebviewFilter | undefined): boolean {
  if (filter === undefined) return true;
  return typeof filter === 'string' ? src.includes(filter) : filter(src);
}

function describeFilter(filter: WebviewFilter): string {
  return typeof filter === 'string' ? filter : filter.name || 'matching a predicate';
}

/**
 * The webview frames on the page whose host iframe src matches `filter`. With `within` (a CSS
 * selector of a workbench part, e.g. `.part.sidebar` or `.part.editor`), only webviews shown
 * inside that part: webviews are overlays positioned over their part, and their iframe src does
 * not reliably tell a view from an editor panel (VS Code drops `purpose=webviewView` when it
 * re-creates a view's webview after the view was hidden).
 */
export async function findWebviews(page: Page, filter?: WebviewFilter, opts: { within?: string } = {}): Promise<WebviewFrame[]> {
  const found: WebviewFrame[] = [];
  const part = opts.within ? await page.locator(opts.within).first().boundingBox().catch(() => null) : undefined;
  if (part === null) return found; // the part is not on screen
  for (const el of await page.$$('iframe.webview')) {
    const src = (await el.getAttribute('src')) ?? '';
    if (!matchesFilter(src, filter)) continue;
    if (part) {
      const box = await el.boundingBox();
      if (!box || box.width === 0 || box.height === 0) continue;
      const cx = box.x + box.width / 2;
      const cy = box.y + box.height / 2;
      if (cx < part.x || cx > part.x + part.width || cy < part.y || cy > part.y + part.height) continue;
    }
    const outer = await el.contentFrame();
    if (!outer) continue;
    const inner = await outer.$('#active-frame');
    const content = inner ? await inner.contentFrame() : null;
    if (content) found.push({ outer, content, src });
  }
  return found;
}

/** True when the webview's document has rendered something (text, or any element in body). */
export async function webviewHasContent(w: WebviewFrame): Promise<boolean> {
  try {
    return (await w.content.evaluate(
      `(() => { const b = document.body; if (!b) return false; return b.innerText.trim().length > 0 || b.querySelectorAll('*:not(script):not(style)').length > 0; })()`,
    )) as boolean;
  } catch {
    return false;
  }
}

/**
 * Waits for a non-blank webview matching `filter`. About 1 run in 7 a webview stays blank
 * (webviews share one origin and race for the service worker): then runs "Developer: Reload
 * Webviews" and looks again, up to `retries` times.
 */
export async function waitForWebview(
  page: Page,
  filter: WebviewFilter,
  opts: { timeoutMs?: number; retries?: number; within?: string } = {},
): Promise<WebviewFrame> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const retries = opts.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await waitFor(`webview ${describeFilter(filter)}${opts.within ? ` in ${opts.within}` : ''}`, timeoutMs, async () => {
        for (const w of await findWebviews(page, filter, { within: opts.within })) if (await webviewHasContent(w)) return w;
        return undefined;
      }, 300);
    } catch (e) {
      if (attempt >= retries) throw e;
      log(`webview ${describeFilter(filter)} blank or missing; running "Developer: Reload Webviews" (retry ${attempt + 1}/${retries})`);
      await runCommand(page, 'Developer: Reload Webviews');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// In-extension-host test runs (what @vscode/test-electron does, through the web workbench)

export interface ExtensionHostRunResult {
  /** The exit code the extension host reported through window.codeAutomationExit. */
  exitCode: number;
  durationMs: number;
}

/**
 * Opens `/?folder=…&payload=[["extensionDevelopmentPath",…],["extensionTestsPath",…]]` and waits
 * for the workbench to call `window.codeAutomationExit(code)` when the suite's `run()` settles.
 * The suite must write its own report to a file: mocha's output is not forwarded.
 */
export async function runExtensionHostTests(
  page: Page,
  server: CodeServer,
  o: { extensionDevelopmentPath: string; extensionTestsPath: string; folder?: string; timeoutMs?: number },
): Promise<ExtensionHostRunResult> {
  const t0 = Date.now();
  let resolveExit!: (code: number) => void;
  const exitP = new Promise<number>((r) => (resolveExit = r));
  await page.exposeFunction('codeAutomationExit', (code: unknown) => {
    resolveExit(typeof code === 'number' ? code : Number(code));
  });
  const url = server.workbenchUrl({
    folder: o.folder,
    payload: [
      ['extensionDevelopmentPath', server.remoteUri(o.extensionDevelopmentPath)],
      ['extensionTestsPath', server.remoteUri(o.extensionTestsPath)],
    ],
  });
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  const exitCode = await withTimeout('extension host tests', o.timeoutMs ?? 120_000, exitP);
  return { exitCode, durationMs: Date.now() - t0 };
}

// ---------------------------------------------------------------------------------------------
// Sample workspace

/** Author and committer of the sample workspace's first commit. */
const SANDBOX_IDENTITY = {
  GIT_AUTHOR_NAME: 'Vox Sandbox',
  GIT_AUTHOR_EMAIL: 'sandbox@vox.invalid',
  GIT_COMMITTER_NAME: 'Vox Sandbox',
  GIT_COMMITTER_EMAIL: 'sandbox@vox.invalid',
};

/** A small git repository with a couple of files: what Vox sees in the sandbox. */
export function createSampleWorkspace(dir: string, opts: { reset?: boolean } = {}): string {
  if (opts.reset) fs.rmSync(dir, { recursive: true, force: true });
  if (fs.existsSync(path.join(dir, '.git'))) return dir;
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'README.md'),
    '# Sample project\n\nA tiny workspace for trying Vox: ask it to explain `src/math.js` or to add a test.\n',
  );
  fs.writeFileSync(
    path.join(dir, 'src', 'math.js'),
    [
      '// Small helpers for Vox to read and edit.',
      'export function add(a, b) {',
      '  return a + b;',
      '}',
      '',
      'export function mean(values) {',
      '  if (values.length === 0) return NaN;',
      '  return values.reduce(add, 0) / values.length;',
      '}',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'sample', version: '1.0.0', type: 'module', private: true }, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
  git(dir, ['init', '-q']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'Initial commit'], { env: SANDBOX_IDENTITY });
  return dir;
}

/** Lists this machine's processes whose command line mentions `needle` (leak checks). */
export function processesMentioning(needle: string): string[] {
  const r = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'))
    .map((l) => l.trim());
}
