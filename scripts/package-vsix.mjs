// Builds Vox and packs one per-platform VSIX: vox-<version>-<target>.vsix at the project root.
//
//   node scripts/package-vsix.mjs [--target <t>] [--out file.vsix] [--no-build] [--no-model]
//                                 [--with-better-sqlite3] [--ls]
//   npm run package [-- --target darwin-arm64]
//
//   --target T   linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64 or win32-arm64;
//                `all`: the six, one after another
//                (scripts/vsix/targets.mjs); default: this machine's
//   --out F      where to write the VSIX (default: vox-<version>-<target>.vsix in the project root)
//   --no-build   use dist/ as it is (a `node esbuild.mjs --production` build)
//   --no-model   leave models/vox-demo.gguf out (default: in when it exists)
//   --with-better-sqlite3  also stage the project's better-sqlite3, compiled for THIS machine's
//                Node ABI. Not for release: `npm start` and the code-server end-to-end test's first
//                passes (their extension host runs on Node) use it, so the store's driver there is
//                better-sqlite3; without it the store falls back to @photostructure/sqlite.
//   --ls         stage, then run `vsce ls --tree` instead of packing (what the VSIX would hold)
//
// What a VSIX holds (staged in .vox-sandbox/vsix-stage-<target>, then `vsce package --target`
// runs there, never in the project folder, or it would pack the whole project):
//  - dist/extension.js, dist/webview.js, dist/webview.css, dist/webview-chunks/*.js (esbuild --production: minified, no
//    source maps; the CLI bundle ships through npm, not in the VSIX), media/, the README,
//    CHANGELOG.md, LICENSE, models/vox-demo.gguf;
//  - node_modules with only what dist/extension.js loads at run time and cannot bundle:
//    * node-llama-cpp: bundled with its ~150 dependencies into three ESM files in its own
//      package folder (scripts/vsix/bundle-node-llama-cpp.mjs) plus the small llama/ files it reads;
//    * @node-llama-cpp/<platform>@<node-llama-cpp's version>: that target's llama.cpp binaries,
//      fetched from the npm registry by exact version into a cache and checked against
//      package-lock.json (scripts/vsix/platform-package.mjs); nothing for other platforms;
//    * @photostructure/sqlite (N-API SQLite, loads in Electron) with only that target's prebuild,
//      and node-gyp-build, which finds it;
//  - no native module built for Node's ABI: better-sqlite3 stays out unless --with-better-sqlite3.
// Any other package dist/extension.js still `require`s or `import`s at run time is an error here:
// bundle it (esbuild.mjs) or stage it below. The staged package.json lists exactly the staged
// top-level packages as dependencies, so `npm list --production` (which vsce runs) is complete.
// Prints the VSIX's path on stdout; what it staged, vsce's file count and the size on stderr.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { bundleNodeLlamaCpp } from './vsix/bundle-node-llama-cpp.mjs';
import { fetchPackageTarball, unpackPackage } from './vsix/platform-package.mjs';
import { hostTarget, llamaPackageName, sqlitePrebuildDir, TARGETS, vsixName } from './vsix/targets.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  if (i + 1 >= args.length || args[i + 1].startsWith('--')) throw new Error(`${name} needs a value`);
  return args[i + 1];
};
const t0 = Date.now();
const log = (msg) => process.stderr.write(`[package-vsix] ${msg}\n`);
const secs = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

const KNOWN_FLAGS = new Set(['--target', '--out', '--no-build', '--no-model', '--with-better-sqlite3', '--ls']);
for (let i = 0; i < args.length; i++) {
  if (!KNOWN_FLAGS.has(args[i])) throw new Error(`unknown argument ${args[i]} (see the comment at the top of scripts/package-vsix.mjs)`);
  if (args[i] === '--target' || args[i] === '--out') i++;
}

// `--target all`: the six VSIXs, one after another (the build and the demo model made once, by the first).
if (opt('--target') === 'all') {
  if (flag('--out') || flag('--with-better-sqlite3')) throw new Error('--target all writes the default names; --out and --with-better-sqlite3 are for one target');
  const rest = args.filter((a, i) => a !== '--target' && args[i - 1] !== '--target');
  let first = true;
  for (const t of Object.keys(TARGETS)) {
    const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--target', t, ...rest, ...(first ? [] : ['--no-build', '--no-model'])], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
    first = false;
  }
  process.exit(0);
}

const target = opt('--target') ?? hostTarget();
if (!target) throw new Error(`no VSIX target for this machine (${process.platform}-${process.arch}); pass --target (${Object.keys(TARGETS).join(', ')})`);
if (!(target in TARGETS)) throw new Error(`--target ${target}: expected one of ${Object.keys(TARGETS).join(', ')}`);
const withBetterSqlite = flag('--with-better-sqlite3');
if (withBetterSqlite && target !== hostTarget()) throw new Error(`--with-better-sqlite3 stages this machine's build: only for --target ${hostTarget()}`);

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const defaultName = withBetterSqlite ? vsixName(pkg.name, pkg.version, `${target}-with-better-sqlite3`) : vsixName(pkg.name, pkg.version, target);
const outFile = path.resolve(opt('--out') ?? path.join(root, defaultName));
const stage = path.join(root, '.vox-sandbox', `vsix-stage-${target}`);
const stageModules = path.join(stage, 'node_modules');

function run(cmd, argv, cwd, { capture = false } = {}) {
  const r = spawnSync(cmd, argv, { cwd, stdio: ['ignore', capture ? 'pipe' : 'inherit', capture ? 'pipe' : 'inherit'], encoding: 'utf8', env: { ...process.env, npm_config_yes: 'true' } });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (exit ${r.status ?? r.signal})${capture ? `:\n${r.stdout}\n${r.stderr}` : ''}`);
  return r;
}

/** The installed package `name` of the project (its real folder). */
function installed(name) {
  const dir = path.join(root, 'node_modules', name);
  if (!fs.existsSync(path.join(dir, 'package.json'))) throw new Error(`${name} is not installed: npm ci`);
  return fs.realpathSync(dir);
}
const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));

// ---- 1. Build.
if (!flag('--no-build')) {
  log('building (esbuild --production)');
  run(process.execPath, ['esbuild.mjs', '--production'], root);
}
// tokenizer.js: gpt-tokenizer's encodings, loaded by path on the first OpenAI-family token count.
const RUNTIME_DIST = ['extension.js', 'webview.js', 'webview.css', 'compare.js', 'compare.css', 'usage.js', 'usage.css', 'tokenizer.js'];
for (const f of RUNTIME_DIST) if (!fs.existsSync(path.join(root, 'dist', f))) throw new Error(`dist/${f} missing: build first (node esbuild.mjs --production)`);
if (/sourceMappingURL=/.test(fs.readFileSync(path.join(root, 'dist', 'extension.js'), 'utf8').slice(-500))) {
  log('note: dist/ is a development build (not minified, source maps beside it; the maps stay out of the VSIX)');
}

// ---- 2. What dist/extension.js still loads at run time.
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const externals = new Set();
const extensionJs = fs.readFileSync(path.join(root, 'dist', 'extension.js'), 'utf8');
// A call written inside a string or template is code another library generates, not a load (ajv's standalone
// validators carry `'require("ajv/dist/runtime/equal").default'`): a quote right before it skips it.
for (const m of extensionJs.matchAll(/(?<![`'"])\b(?:require|import)\(\s*["']([^"'./][^"']*)["']\s*\)/g)) {
  const spec = m[1];
  if (builtins.has(spec) || spec === 'vscode' || spec.startsWith('node:')) continue;
  const parts = spec.split('/');
  externals.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
}
log(`target ${target}; packages dist/extension.js loads at run time: ${[...externals].join(', ') || '(none)'}`);

// ---- 3. Stage.
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stageModules, { recursive: true });

/** Copies files of `srcDir` (relative paths, folders recursively) that `keep` accepts into `destDir`. */
function copyInto(srcDir, destDir, rels, keep = () => true) {
  for (const rel of rels) {
    const from = path.join(srcDir, rel);
    if (!fs.existsSync(from)) continue;
    fs.cpSync(from, path.join(destDir, rel), { recursive: true, dereference: true, filter: (s) => fs.statSync(s).isDirectory() || keep(path.relative(srcDir, s).split(path.sep).join('/')) });
  }
}
/** Writes a staged package's package.json: the original's identity fields, with `dependencies` as given. */
function writeManifest(destDir, original, dependencies) {
  const keep = ['name', 'version', 'description', 'license', 'type', 'main', 'module', 'exports', 'gypfile', 'binary'];
  const m = Object.fromEntries(keep.filter((k) => original[k] !== undefined).map((k) => [k, original[k]]));
  if (dependencies && Object.keys(dependencies).length) m.dependencies = dependencies;
  fs.mkdirSync(destDir, { recursive: true });
  fs.writeFileSync(path.join(destDir, 'package.json'), JSON.stringify(m, null, 2) + '\n');
}
const staged = new Map(); // top-level package name -> version

/** node-llama-cpp, bundled, and this target's binaries package at exactly its version. */
async function stageNodeLlamaCpp() {
  const src = installed('node-llama-cpp');
  const version = readJson(path.join(src, 'package.json')).version;
  const pinned = pkg.dependencies['node-llama-cpp'];
  if (pinned !== version) throw new Error(`package.json pins node-llama-cpp ${pinned} but ${version} is installed: npm ci`);
  const b = await bundleNodeLlamaCpp(src, path.join(stageModules, 'node-llama-cpp'));
  log(`node-llama-cpp ${version}: bundled into ${b.files} files (${(b.bytes / 1e6).toFixed(1)} MB)`);
  staged.set('node-llama-cpp', version);

  const name = llamaPackageName(target);
  const tarball = fetchPackageTarball({ root, name, version, log });
  // The binaries, their build metadata, the loader and the license; not the Windows import
  // library (llama-addon.lib: only for linking against the addon) or the README.
  const n = unpackPackage(tarball, path.join(stageModules, name), (rel) => rel === 'package.json' || rel === 'LICENSE' || rel.startsWith('dist/') || (rel.startsWith('bins/') && !rel.endsWith('.lib')));
  staged.set(name, version);
  log(`${name}@${version}: ${n} files staged`);
}

/** @photostructure/sqlite with this target's prebuild only, and node-gyp-build (its loader). */
function stagePhotostructureSqlite() {
  const src = installed('@photostructure/sqlite');
  const p = readJson(path.join(src, 'package.json'));
  const dest = path.join(stageModules, '@photostructure', 'sqlite');
  const prebuild = sqlitePrebuildDir(target);
  const glibc = (rel) => !rel.endsWith('.musl.node'); // musl systems are the alpine-* targets
  copyInto(src, dest, ['LICENSE', 'dist', prebuild], (rel) => (rel.startsWith('dist/') ? /\.(c|m)?js$/.test(rel) : rel === 'LICENSE' || glibc(rel)));
  if (!fs.readdirSync(path.join(dest, prebuild)).some((f) => f.endsWith('.node'))) throw new Error(`@photostructure/sqlite has no ${prebuild}/*.node`);
  // node-addon-api is a build-time dependency (its binding.gyp); only node-gyp-build runs.
  const gypBuild = installed('node-gyp-build');
  const gypVersion = readJson(path.join(gypBuild, 'package.json')).version;
  writeManifest(dest, p, { 'node-gyp-build': gypVersion });
  staged.set(p.name, p.version);
  const gypDest = path.join(stageModules, 'node-gyp-build');
  copyInto(gypBuild, gypDest, ['LICENSE', 'index.js', 'node-gyp-build.js']);
  writeManifest(gypDest, readJson(path.join(gypBuild, 'package.json')));
  staged.set('node-gyp-build', gypVersion);
}

/** better-sqlite3 as compiled by `npm ci` on this machine (Node's ABI), for the code-server e2e. */
function stageBetterSqlite3() {
  const src = installed('better-sqlite3');
  const p = readJson(path.join(src, 'package.json'));
  const dest = path.join(stageModules, 'better-sqlite3');
  copyInto(src, dest, ['LICENSE', 'lib', 'build/Release/better_sqlite3.node']);
  const bindings = installed('bindings');
  const fileUri = installed('file-uri-to-path');
  // prebuild-install only serves `npm install`.
  writeManifest(dest, p, { bindings: readJson(path.join(bindings, 'package.json')).version });
  staged.set(p.name, p.version);
  for (const [dir, files] of [
    [bindings, ['LICENSE.md', 'bindings.js']],
    [fileUri, ['LICENSE', 'index.js']],
  ]) {
    const bp = readJson(path.join(dir, 'package.json'));
    const d = path.join(stageModules, bp.name);
    copyInto(dir, d, files);
    writeManifest(d, bp, bp.dependencies);
    staged.set(bp.name, bp.version);
  }
}

const handled = new Set(['node-llama-cpp', '@photostructure/sqlite', 'better-sqlite3']);
const unhandled = [...externals].filter((e) => !handled.has(e));
if (unhandled.length) {
  throw new Error(`dist/extension.js loads ${unhandled.join(', ')} at run time, which the VSIX does not stage: bundle it (esbuild.mjs) or stage it in scripts/package-vsix.mjs`);
}
// node-llama-cpp and the N-API SQLite go in every VSIX: the first is loaded on first use of a
// local model; the second is the store's driver where better-sqlite3 (Node's ABI) cannot load.
await stageNodeLlamaCpp();
stagePhotostructureSqlite();
if (withBetterSqlite) {
  stageBetterSqlite3();
  log('better-sqlite3: staged this machine\'s build (Node ABI; not a release VSIX)');
} else if (externals.has('better-sqlite3')) {
  log('better-sqlite3: left out (built for Node\'s ABI, it cannot load in desktop VS Code); the store uses @photostructure/sqlite');
}

// The extension's own files.
const copyRoot = (rel, to = rel) => {
  const from = path.join(root, rel);
  if (!fs.existsSync(from)) return false;
  fs.cpSync(from, path.join(stage, to), { recursive: true, dereference: true });
  return true;
};
for (const f of RUNTIME_DIST) copyRoot(path.join('dist', f));
// The webview's lazily loaded chunks (code highlighting: shiki, one per grammar and theme), without their maps.
const WEBVIEW_CHUNKS = path.join('dist', 'webview-chunks');
if (!fs.existsSync(path.join(root, WEBVIEW_CHUNKS))) throw new Error(`${WEBVIEW_CHUNKS} missing: build first (node esbuild.mjs --production)`);
fs.mkdirSync(path.join(stage, WEBVIEW_CHUNKS), { recursive: true });
for (const f of fs.readdirSync(path.join(root, WEBVIEW_CHUNKS)).filter((n) => n.endsWith('.js'))) fs.copyFileSync(path.join(root, WEBVIEW_CHUNKS, f), path.join(stage, WEBVIEW_CHUNKS, f));
for (const rel of ['media', 'README.md', 'CHANGELOG.md', 'LICENSE', '.vscodeignore']) copyRoot(rel);
const model = path.join('models', 'vox-demo.gguf');
if (!flag('--no-model')) {
  if (copyRoot(model)) log(`including ${model} (${(fs.statSync(path.join(root, model)).size / 1e6).toFixed(1)} MB)`);
  else log(`${model} not found: packing without the demo model (run node scripts/make-demo-model.mjs)`);
}

// ---- 4. The staged manifest: no scripts or devDependencies; dependencies = the staged top level.
const stagedPkg = { ...pkg };
delete stagedPkg.devDependencies;
delete stagedPkg.scripts;
delete stagedPkg.bin; // the CLI ships through npm, not the VSIX
stagedPkg.dependencies = Object.fromEntries([...staged].sort());
fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(stagedPkg, null, 2) + '\n');

let files = 0;
let jsFiles = 0;
const walk = (d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else {
      files++;
      if (/\.(c|m)?js$/.test(e.name)) jsFiles++;
    }
  }
};
walk(stage);
log(`staged ${files} files (${jsFiles} JavaScript; .vscodeignore drops a few) in ${path.relative(root, stage)}`);

// ---- 5. vsce (the project's devDependency), run with the stage as cwd.
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!fs.existsSync(vsce)) throw new Error('vsce not installed: npm ci (devDependency @vscode/vsce)');
if (flag('--ls')) {
  run(process.execPath, [vsce, 'ls', '--tree'], stage);
  process.exit(0);
}
fs.mkdirSync(path.dirname(outFile), { recursive: true });
log(`vsce package --target ${target} -> ${path.relative(process.cwd(), outFile) || outFile}`);
const r = run(process.execPath, [vsce, 'package', '--target', target, '--out', outFile], stage, { capture: true });
const vsceOut = `${r.stdout}${r.stderr}`;
// vsce lists every file it packed; show that only when it warned (`--ls` shows the tree).
if (/\bWARNING\b/.test(vsceOut)) {
  process.stderr.write(vsceOut.replace(/^/gm, '  '));
  log('vsce printed a WARNING (above)');
} else {
  for (const line of vsceOut.split('\n').filter((l) => /\bDONE\b/.test(l))) log(`vsce: ${line.replace(/^\s*DONE\s*/, '')}`);
}

const size = fs.statSync(outFile).size;
log(`${path.basename(outFile)}: ${(size / 1024 / 1024).toFixed(1)} MiB, packed in ${secs()}`);
process.stdout.write(outFile + '\n');
