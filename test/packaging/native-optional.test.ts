/**
 * Bundling with an optional native addon installed (a plain `npm install` keeps optional
 * dependencies; `npm ci --omit=optional` does not): a fixture node_modules holds a package shaped
 * like @reflink/reflink (binding.js requires `./<name>.<platform>.node` if it exists, else the
 * package `<name>-<platform>` whose `main` is a `.node` file), loaded the way ipull loads it
 * (`await import()` in a try, falling back on failure). The real bundler configurations run over
 * it — the Node bundles' options (scripts/build/node-options.mjs, as esbuild.mjs uses them) and
 * the VSIX's node-llama-cpp bundle (scripts/vsix/bundle-node-llama-cpp.mjs) — and must build;
 * the bundles then run in a separate Node process: without the addon they take the package's own
 * fallback, with it (a real addon, better-sqlite3's, on NODE_PATH) they load it.
 */
import { execFileSync } from 'node:child_process';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { nodeBundleOptions } from '../../scripts/build/node-options.mjs';
import { bundleNodeLlamaCpp } from '../../scripts/vsix/bundle-node-llama-cpp.mjs';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const ROOT = path.resolve(__dirname, '..', '..');
/** A real N-API/Node addon to stand in for the optional one at run time. */
const REAL_ADDON = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const PLATFORM_PKG = '@fixture/reflinkish-linux-x64-gnu';

function write(file: string, text: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** The optional package, its platform package (main: a .node file) and a local .node beside its binding. */
function writeOptionalNative(modules: string): void {
  const pkg = path.join(modules, '@fixture', 'reflinkish');
  write(path.join(pkg, 'package.json'), JSON.stringify({ name: '@fixture/reflinkish', version: '1.0.0', main: 'index.js', optionalDependencies: { [PLATFORM_PKG]: '1.0.0' } }));
  write(path.join(pkg, 'index.js'), "const binding = require('./binding');\nmodule.exports = { clone: (a, b) => binding.clone(a, b), binding };\n");
  write(path.join(pkg, 'binding.js'), [
    "const { existsSync } = require('fs');",
    "const { join } = require('path');",
    'let nativeBinding = null;',
    'let loadError = null;',
    'try {',
    // Another platform's package, not installed (inside the try: esbuild leaves it to run time).
    "  if (process.platform === 'win32') nativeBinding = require('@fixture/reflinkish-win32-x64-msvc');",
    "  else if (existsSync(join(__dirname, 'reflinkish.linux-x64-gnu.node'))) nativeBinding = require('./reflinkish.linux-x64-gnu.node');",
    `  else nativeBinding = require('${PLATFORM_PKG}');`,
    '} catch (e) { loadError = e; }',
    "if (!nativeBinding) throw loadError ?? new Error('Failed to load native binding');",
    'module.exports = nativeBinding;',
  ].join('\n') + '\n');
  write(path.join(pkg, 'reflinkish.linux-x64-gnu.node'), fs.readFileSync(REAL_ADDON));
  const plat = path.join(modules, ...PLATFORM_PKG.split('/'));
  write(path.join(plat, 'package.json'), JSON.stringify({ name: PLATFORM_PKG, version: '1.0.0', main: 'reflinkish.linux-x64-gnu.node', os: ['linux'], cpu: ['x64'] }));
  write(path.join(plat, 'reflinkish.linux-x64-gnu.node'), fs.readFileSync(REAL_ADDON));
}

/** What ipull does: the optional package through a dynamic import, a plain copy when it cannot load. */
const CLONE_OR_COPY = `async function cloneOrCopy() {
  try {
    const m = await import('@fixture/reflinkish');
    return 'native ' + typeof (m.binding ?? m.default?.binding);
  } catch (e) {
    return 'fallback ' + (e.code ?? e.message);
  }
}`;

/** Runs `code` in a separate Node process (cwd: `dir`, nothing of the fixture reachable but NODE_PATH) and returns its stdout. */
function runNode(dir: string, args: string[], nodePath?: string): string {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '' };
  if (nodePath) env['NODE_PATH'] = nodePath;
  return execFileSync(process.execPath, args, { cwd: dir, env, encoding: 'utf8', timeout: 30_000 }).trim();
}

describe('bundling with an optional native addon installed', function () {
  this.timeout(120_000);
  let tmp: string;
  let fixture: string;
  let runDir: string;
  let addonModules: string;

  before(() => {
    tmp = makeTmpDir('vox-native-optional-');
    fixture = path.join(tmp, 'project');
    runDir = path.join(tmp, 'run'); // outside the project: no node_modules up the tree
    addonModules = path.join(tmp, 'runtime-modules');
    writeOptionalNative(path.join(fixture, 'node_modules'));
    writeOptionalNative(addonModules);
    fs.mkdirSync(runDir, { recursive: true });
  });
  after(() => removeTmpDir(tmp));

  it('the Node bundles (esbuild.mjs options) build, and the addon is left to run time', async () => {
    const entry = path.join(fixture, 'src', 'entry.js');
    write(entry, `${CLONE_OR_COPY}\ncloneOrCopy().then((r) => console.log(r));\n`);
    const outfile = path.join(runDir, 'extension.js');
    const result = await esbuild.build({ ...nodeBundleOptions({ production: true }), entryPoints: [entry], outfile, logLevel: 'silent', absWorkingDir: fixture });
    assert.deepEqual(result.errors, []);
    const bundle = fs.readFileSync(outfile, 'utf8');
    assert.ok(bundle.includes(PLATFORM_PKG), 'the platform package is required by name at run time');
    assert.equal(runNode(runDir, [outfile]), 'fallback MODULE_NOT_FOUND', 'without the addon: the package\'s own fallback');
    assert.equal(runNode(runDir, [outfile], addonModules), 'native object', 'with the addon installed: it loads');
  });

  it('the VSIX\'s node-llama-cpp bundle builds with the addon under one of its dependencies', async () => {
    const nlc = path.join(fixture, 'node_modules', 'node-llama-cpp');
    write(path.join(nlc, 'package.json'), JSON.stringify({ name: 'node-llama-cpp', version: '0.0.0-fixture', type: 'module', main: './dist/index.js', license: 'MIT' }));
    write(path.join(nlc, 'dist', 'index.js'), `${CLONE_OR_COPY}\nexport { cloneOrCopy };\n`);
    write(path.join(nlc, 'dist', 'bindings', 'utils', 'testBindingBinary.js'), 'export const tested = true;\n');
    for (const f of ['package.json', 'binariesGithubRelease.json', 'llama.cpp.info.json']) write(path.join(nlc, 'llama', f), '{}\n');
    write(path.join(nlc, 'llama', 'grammars', 'json.gbnf'), 'root ::= "{}"\n');
    const out = path.join(runDir, 'node_modules', 'node-llama-cpp');
    await bundleNodeLlamaCpp(nlc, out);
    const index = path.join(out, 'dist', 'index.js');
    const call = `import(${JSON.stringify(index)}).then((m) => m.cloneOrCopy()).then((r) => console.log(r))`;
    assert.equal(runNode(runDir, ['-e', call]), 'fallback MODULE_NOT_FOUND');
    assert.equal(runNode(runDir, ['-e', call], addonModules), 'native object');
  });
});
