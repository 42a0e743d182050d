// Run Vox in a real VS Code in your browser: code-server 4.100.3 (= VS Code 1.100.3), offline.
//
//   node scripts/start-vscode.mjs [--port 8080] [--no-wait] [--reset] [--no-package] [--stop] [--help]
//   npm run vscode
//
// Steps (each timed):
//   1. scripts/setup-code-server.sh: installs code-server into ~/.cache/vox/ once (~3-5 min),
//      then only checks it (~1 s);
//   2. generates the offline demo model (models/vox-demo.gguf) when missing;
//   3. builds and packs this machine's VSIX with the better-sqlite3 `npm ci` built for this Node
//      (code-server's extension host runs on Node; scripts/package-vsix.mjs --with-better-sqlite3
//      -> .vox-sandbox/vscode/vox-<version>-<target>-with-better-sqlite3.vsix);
//   4. installs it with `code-server --install-extension` into .vox-sandbox/vscode/extensions;
//   5. creates the sample workspace .vox-sandbox/workspace (a small git repo) if missing;
//   6. starts code-server on 127.0.0.1:<port> with its own HOME and user-data-dir, no auth,
//      no telemetry, no update check, no workspace-trust prompt; waits for /healthz; prints the URL
//      and the `export VOX_HOME=…` line that points the `vox` CLI at the database that window uses.
// Then it keeps running until Ctrl-C (which stops code-server and everything it started).
//   --port N      port on 127.0.0.1 (default $VOX_PORT or 8080; 0 = any free port)
//   --no-wait     leave code-server running in the background and exit; stop it later with --stop
//   --stop        stop a code-server left running by --no-wait, and exit
//   --reset       start from a fresh profile and sample workspace
//   --no-package  reuse the VSIX packed last time
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadHarness } from '../test/e2e/load-harness.mjs';
import { hostTarget, vsixName } from './vsix/targets.mjs';

const USAGE = `Usage: npm start -- [options]   (or: node scripts/start-vscode.mjs [options])

Runs Vox in code-server (VS Code 1.100.3 in your browser), offline, and prints its URL.
  --port N      port on 127.0.0.1 (default $VOX_PORT or 8080; 0 = any free port)
  --no-wait     leave code-server running in the background and exit; stop it later with --stop
  --stop        stop a code-server left running by --no-wait, and exit
  --reset       start from a fresh profile and sample workspace
  --no-package  reuse the VSIX packed last time
  -h, --help    print this and exit
`;
/** The options that take no value, and the one that takes a port number. */
const FLAGS = new Set(['--no-wait', '--stop', '--reset', '--no-package', '--help', '-h']);
const VALUED = new Set(['--port']);
const args = process.argv.slice(2);
/** A mistyped option is refused before anything is installed, built or started (exit 2). */
function refuse(message) {
  process.stderr.write(`start-vscode: ${message}\nRun with --help for the options.\n`);
  process.exit(2);
}
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (FLAGS.has(a)) continue;
  if (VALUED.has(a)) {
    const v = args[i + 1];
    if (v === undefined || !/^\d+$/.test(v) || Number(v) > 65535) refuse(`${a} needs a port number from 0 to 65535${v === undefined ? '' : `, not ${JSON.stringify(v)}`}`);
    i++;
    continue;
  }
  refuse(`unknown option ${JSON.stringify(a)}`);
}
const flag = (f) => args.includes(f);
const opt = (f) => {
  const i = args.indexOf(f);
  return i >= 0 ? args[i + 1] : undefined;
};
if (flag('--help') || flag('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const h = await loadHarness();
const root = h.REPO_ROOT;
const sandbox = path.join(root, '.vox-sandbox');
const dirs = {
  home: path.join(sandbox, 'vscode', 'home'),
  userData: path.join(sandbox, 'vscode', 'user-data'),
  extensions: path.join(sandbox, 'vscode', 'extensions'),
  workspace: path.join(sandbox, 'workspace'),
  // The sandbox's own Vox home (its vox.db): the CLI sees the window's threads with the printed export line.
  voxHome: path.join(sandbox, 'vscode', 'vox-home'),
};
/** A path as one POSIX shell word. */
const shellWord = (p) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);
const pidFile = path.join(sandbox, 'vscode', 'code-server.pid');
const logFile = path.join(sandbox, 'vscode', 'code-server.log');
const say = (m) => process.stdout.write(`[start-vscode] ${m}\n`);
const t0 = Date.now();
const timings = [];
function step(label, fn) {
  const t = Date.now();
  const r = fn();
  const done = (v) => {
    timings.push([label, Date.now() - t]);
    say(`${label}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    return v;
  };
  return r instanceof Promise ? r.then(done) : done(r);
}

/** Stops a server left running by an earlier --no-wait (its whole process group). */
function stopPrevious() {
  if (!fs.existsSync(pidFile)) return false;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  fs.rmSync(pidFile, { force: true });
  if (!pid) return false;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return false;
  }
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(-pid, 0);
    } catch {
      return true;
    }
    spawnSync('sleep', ['0.1']);
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  return true;
}

if (flag('--stop')) {
  say(stopPrevious() ? 'stopped the background code-server' : 'no background code-server was running');
  process.exit(0);
}
if (stopPrevious()) say('stopped a code-server left running by an earlier --no-wait');

const port = Number(opt('--port') ?? process.env.VOX_PORT ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${opt('--port')}`);
if (flag('--reset')) {
  for (const d of [dirs.home, dirs.userData, dirs.extensions, dirs.workspace, dirs.voxHome]) fs.rmSync(d, { recursive: true, force: true });
}

const codeServerBin = step('code-server (setup-code-server.sh)', () => h.ensureCodeServer());

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const target = hostTarget();
if (!target) throw new Error(`Vox ships no VSIX for ${process.platform}-${process.arch}`);
const vsix = path.join(sandbox, 'vscode', vsixName(pkg.name, pkg.version, `${target}-with-better-sqlite3`));
if (!fs.existsSync(path.join(root, 'models', 'vox-demo.gguf'))) {
  step('demo model (make-demo-model.mjs)', () => {
    const r = spawnSync(process.execPath, ['scripts/make-demo-model.mjs'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) say('demo model generation failed: Vox will start without its offline model');
  });
}
if (!flag('--no-package') || !fs.existsSync(vsix)) {
  step('build + package VSIX', () => {
    const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--with-better-sqlite3', '--out', vsix], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error('packaging failed (see above)');
  });
}
say(`VSIX: ${path.relative(root, vsix)} (${(fs.statSync(vsix).size / 1024 / 1024).toFixed(1)} MiB)`);
const installed = step('install VSIX (--install-extension)', () =>
  h.installExtension({ codeServerBin, vsix, extensionsDir: dirs.extensions, userDataDir: dirs.userData, home: dirs.home }),
);
say(`installed into ${path.relative(root, installed)}`);
h.createSampleWorkspace(dirs.workspace);

const noWait = flag('--no-wait');
const server = await step('start code-server (to /healthz)', () =>
  h.startCodeServer({
    codeServerBin,
    port,
    workspace: dirs.workspace,
    home: dirs.home,
    userDataDir: dirs.userData,
    extensionsDir: dirs.extensions,
    logFile,
    env: { VOX_HOME: dirs.voxHome },
    persist: noWait,
  }).catch((e) => {
    if (/EADDRINUSE/.test(String(e))) throw new Error(`port ${port} is in use: pass --port <another> (or 0 for any free port)`);
    throw e;
  }),
);
const url = server.workbenchUrl({ folder: dirs.workspace });
say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.stdout.write(`\n  Vox in VS Code: ${url}\n  workspace:      ${dirs.workspace}\n  server log:     ${logFile}\n  database:       ${path.join(dirs.voxHome, 'vox.db')}\n\n`);
process.stdout.write(`  The vox CLI sees this window's threads after:\n    export VOX_HOME=${shellWord(dirs.voxHome)}\n\n`);

if (noWait) {
  fs.writeFileSync(pidFile, String(server.pid));
  say(`code-server keeps running (pid ${server.pid}); stop it with: node scripts/start-vscode.mjs --stop`);
  process.exit(0);
}
say('press Ctrl-C to stop');
h.installExitHooks(); // Ctrl-C / SIGTERM: stop code-server's whole process group, then exit
const code = await server.exited;
say(`code-server exited (${code}); see ${logFile}`);
await h.cleanupAll();
process.exit(code ?? 1);
