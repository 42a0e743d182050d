// Bundles Vox: dist/extension.js (VS Code extension host, CJS) and dist/cli.js (the `vox` CLI).
// `vscode` and native/ESM-only packages with binaries stay external and load from node_modules.
// The webview bundle (dist/webview.js) joins when the webview lands.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** Packages that must not be bundled: the VS Code API, native addons, and node-llama-cpp (binaries + ESM). */
const EXTERNAL = ['vscode', 'better-sqlite3', 'node-llama-cpp', '@node-llama-cpp/*'];

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  external: EXTERNAL,
  logLevel: 'info',
  // Keep `import()` of external ESM packages as a real dynamic import in the CJS output.
  supported: { 'dynamic-import': true },
};

const builds = [
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js' },
];

fs.mkdirSync('dist', { recursive: true });
if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  fs.chmodSync('dist/cli.js', 0o755);
}
