// Builds Vox and packs it into vox-<version>.vsix (at the project root, or --out <file>).
//
//   node scripts/package-vsix.mjs [--out path/to/vox.vsix] [--no-build] [--no-model]
//   npm run package
//
// How: vsce 3.9.2 runs in a staging directory (.vox-sandbox/vsix-stage), never in the project
// folder. The project's node_modules holds ~300 packages (dev tools, vsce itself, the SDKs that
// esbuild already bundled); the VSIX needs only what dist/*.js still loads at run time. So:
//  1. build the bundles with `node esbuild.mjs --production` (minified, no source maps);
//  2. read dist/*.js for the bare `require("x")` / `import("x")` that esbuild left external
//     (today: better-sqlite3 and node-llama-cpp; `vscode` is provided by the host);
//  3. copy exactly those packages and their runtime closure (dependencies + installed
//     optionalDependencies, resolved like Node does) into the stage's node_modules; other
//     platforms' llama.cpp packages are not installed here, so they never get in;
//  4. write a package.json whose `dependencies` are exactly those top-level packages, so
//     `npm list --production` (which vsce runs) sees a complete tree;
//  5. run vsce with the project's .vscodeignore, which trims docs, sources, build leftovers,
//     and node-llama-cpp's 34 MB llama.cpp source bundle (only needed to compile from source).
// models/vox-demo.gguf goes in when it exists (the offline default model); run
// `node scripts/make-demo-model.mjs` first (start-vscode.mjs does) or pass --no-model to skip.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const t0 = Date.now();
const log = (msg) => process.stderr.write(`[package-vsix] ${msg}\n`);
const secs = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const outFile = path.resolve(opt('--out') ?? path.join(root, `${pkg.name}-${pkg.version}.vsix`));
const stage = path.join(root, '.vox-sandbox', 'vsix-stage');

function run(cmd, argv, cwd) {
  const r = spawnSync(cmd, argv, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, npm_config_yes: 'true' } });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

// 1. Build.
if (!args.includes('--no-build')) {
  log('building (esbuild --production)');
  run(process.execPath, ['esbuild.mjs', '--production'], root);
}
const distDir = path.join(root, 'dist');
// Node-side bundles (the webview bundle runs in a browser frame and is only copied).
const bundles = fs.readdirSync(distDir).filter((f) => f.endsWith('.js') && !f.startsWith('webview'));
if (!bundles.includes(path.basename(pkg.main ?? 'dist/extension.js'))) throw new Error(`dist has no ${pkg.main}; build first`);

// 2. External runtime packages left in the bundles.
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const externals = new Set();
for (const f of bundles) {
  const src = fs.readFileSync(path.join(distDir, f), 'utf8');
  for (const m of src.matchAll(/\b(?:require|import)\(\s*["']([^"'./][^"']*)["']\s*\)/g)) {
    const spec = m[1];
    if (builtins.has(spec) || spec === 'vscode' || spec.startsWith('node:')) continue;
    const parts = spec.split('/');
    externals.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
  }
}
log(`runtime packages left external by the bundles: ${[...externals].join(', ') || '(none)'}`);

// 3. Their closure, resolved from the project's installed node_modules.
/** Finds `name` the way Node does from a package directory: ./node_modules, then each parent's. */
function resolvePkg(name, fromDir) {
  let dir = fromDir;
  for (;;) {
    const cand = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(cand, 'package.json'))) return cand;
    if (dir === root || dir === path.dirname(dir)) return undefined;
    dir = path.dirname(dir);
    if (path.basename(dir) === 'node_modules') dir = path.dirname(dir);
    if (path.basename(path.dirname(dir)) === 'node_modules' && path.basename(dir).startsWith('@')) dir = path.dirname(path.dirname(dir));
  }
}
const closure = new Map(); // real dir -> relative path under root
const queue = [];
for (const name of externals) {
  const dir = resolvePkg(name, root);
  if (!dir) throw new Error(`${name} is required by dist but not installed (npm install)`);
  queue.push(dir);
}
while (queue.length) {
  const dir = queue.shift();
  if (closure.has(dir)) continue;
  closure.set(dir, path.relative(root, dir));
  const p = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const [name, optional] of [
    ...Object.keys(p.dependencies ?? {}).map((n) => [n, false]),
    ...Object.keys(p.optionalDependencies ?? {}).map((n) => [n, true]),
  ]) {
    const d = resolvePkg(name, dir);
    if (d) queue.push(d);
    else if (!optional) throw new Error(`${name} (needed by ${p.name}) is not installed`);
  }
}
log(`${closure.size} packages in the runtime closure`);

// Stage.
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
const copy = (rel) => {
  const from = path.join(root, rel);
  if (!fs.existsSync(from)) return false;
  fs.cpSync(from, path.join(stage, rel), {
    recursive: true,
    dereference: true,
    // Dependencies' nested node_modules are staged as packages of their own.
    filter: (src) => !src.endsWith('.map') && !(src !== from && path.basename(src) === 'node_modules' && fs.statSync(src).isDirectory()),
  });
  return true;
};
for (const rel of ['dist', 'media', 'README.md', 'CHANGELOG.md', 'LICENSE', 'LICENSE.md', '.vscodeignore']) copy(rel);
for (const rel of closure.values()) copy(rel);
const model = path.join('models', 'vox-demo.gguf');
if (!args.includes('--no-model')) {
  if (copy(model)) log(`including ${model} (${(fs.statSync(path.join(root, model)).size / 1e6).toFixed(1)} MB)`);
  else log(`${model} not found: packing without the demo model (run node scripts/make-demo-model.mjs)`);
}

// 4. The staged manifest: no scripts, no devDependencies; dependencies = the staged top level.
const stagedPkg = { ...pkg };
delete stagedPkg.devDependencies;
delete stagedPkg.scripts;
delete stagedPkg.bin; // the CLI ships through npm, not the VSIX
stagedPkg.dependencies = {};
for (const rel of closure.values()) {
  const parts = rel.split(path.sep);
  if (parts.length === (parts[1]?.startsWith('@') ? 3 : 2)) {
    const p = JSON.parse(fs.readFileSync(path.join(root, rel, 'package.json'), 'utf8'));
    stagedPkg.dependencies[p.name] = p.version;
  }
}
fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(stagedPkg, null, 2) + '\n');

// 5. vsce (the project's devDependency), run with the stage as cwd.
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!fs.existsSync(vsce)) throw new Error('vsce not installed: npm install (devDependency @vscode/vsce)');
fs.mkdirSync(path.dirname(outFile), { recursive: true });
log(`vsce package -> ${path.relative(process.cwd(), outFile) || outFile}`);
// --no-rewrite-relative-links: the README's images are relative (docs/…) and the package has no
// repository URL to prefix them with; without it vsce refuses to pack ("Couldn't detect the
// repository … The image … will be broken").
run(process.execPath, [vsce, 'package', '--out', outFile, '--skip-license', '--allow-missing-repository', '--allow-star-activation', '--no-rewrite-relative-links'], stage);

const size = fs.statSync(outFile).size;
log(`${path.basename(outFile)}: ${(size / 1024 / 1024).toFixed(1)} MiB, packed in ${secs()}`);
process.stdout.write(outFile + '\n');
