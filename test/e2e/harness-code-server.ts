/**
 * e2e harness, code-server: install it (scripts/setup-code-server.sh, idempotent), install a VSIX
 * into an extensions dir, start it on 127.0.0.1 with a private HOME, profile and quiet settings
 * (its own process group, killed as a whole by `stop()` or by the harness's teardown), the
 * workbench URLs (`?folder=`, `?payload=`) and `vscode-remote://` URIs, and the sample git
 * workspace it opens. Why code-server 4.100.3 and how it installs offline: docs/TESTING.md.
 *
 * Part of test/e2e/harness.ts (import that, not this module).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { git } from '../support/git';
import { waitFor } from '../support/wait';
import { groupAlive, installExitHooks, killGroup, makeTempDir, registerCleanup, REPO_ROOT, trackGroup, untrackGroup } from './harness-process';

export const CODE_SERVER_VERSION = '4.100.3';

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
  // Nor the caller's Vox home: the server's database is <home>/.vox/vox.db unless `extra` names one.
  delete env.VOX_HOME;
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
  if (!o.persist) trackGroup(pgid);
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
    untrackGroup(pgid);
  };
  if (!o.persist) registerCleanup(stop);

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
