// Bundles Vox: dist/extension.js (VS Code extension host, CJS), dist/cli.js (the `vox` CLI) and
// dist/webview.js + dist/webview.css (the Svelte chat webview, an ES module; code-block highlighting —
// shiki, each grammar and theme — is split into dist/webview-chunks/, loaded on first use),
// dist/compare.js + .css (the compare tab), dist/usage.js + .css (the Usage tab).
// `vscode` and native/ESM-only packages with binaries stay external and load from node_modules.
// The webview's CSS is emitted as a separate file (Svelte `css: 'external'`), so the webview's
// CSP needs no 'unsafe-inline' for styles. `--only=webview` (or extension, cli) builds one bundle.
import * as esbuild from 'esbuild';
import sveltePlugin from 'esbuild-svelte';
import * as fs from 'node:fs';
import { nodeBundleOptions } from './scripts/build/node-options.mjs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const common = nodeBundleOptions({ production });

/**
 * Svelte's a11y checks cannot see that @vscode-elements custom elements (`<vscode-button>`, …) set
 * their own role, tabindex and keyboard handling at runtime; only those warnings are dropped.
 */
const CUSTOM_ELEMENT_A11Y = new Set(['a11y_click_events_have_key_events', 'a11y_no_static_element_interactions']);
const keepSvelteWarning = (w) => !(CUSTOM_ELEMENT_A11Y.has(w.code) && /`<vscode-[a-z-]+>`/.test(w.message));

/** Where the webview's lazily loaded chunks go (emptied before each webview build: hashed names would pile up). */
const WEBVIEW_CHUNKS = 'webview-chunks';

const webview = {
  entryPoints: { webview: 'webview/src/main.ts' },
  outdir: 'dist', // dist/webview.js and dist/webview.css
  chunkNames: `${WEBVIEW_CHUNKS}/[name]-[hash]`,
  splitting: true,
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: !production,
  legalComments: 'none',
  conditions: ['svelte', 'browser', 'production'],
  define: { 'process.env.NODE_ENV': '"production"' },
  mainFields: ['svelte', 'browser', 'module', 'main'],
  logLevel: 'info',
  plugins: [sveltePlugin({ compilerOptions: { css: 'external', dev: false }, filterWarnings: keepSvelteWarning })],
};

const all = {
  extension: {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    // When evaluating the bundle started and ended: activate() reports that time with its own
    // (VoxApi.loadMs). The banner comes first in the file, so it repeats the "use strict"
    // directive esbuild writes after it; the footer runs after every eagerly loaded module.
    banner: { js: '"use strict";\nvar __voxBundleStart = performance.now(), __voxBundleEnd;' },
    footer: { js: '__voxBundleEnd = performance.now();' },
  },
  cli: { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js' },
  // gpt-tokenizer's encodings (~3.6 MB of BPE ranks) apart from extension.js and cli.js, which load
  // this file by path on the first OpenAI-family token count (src/engine/providers/token-count.ts).
  tokenizer: { ...common, entryPoints: ['src/engine/providers/gpt-tokenizer-entry.ts'], outfile: 'dist/tokenizer.js', sourcemap: false },
  webview,
  // The "Compare branches" editor tab (src/extension/compare/): its own small bundle, dist/compare.js + .css.
  // A classic script (no code splitting: it highlights nothing), so its page loads it like before.
  compare: { ...webview, entryPoints: { compare: 'webview/src/compare/main.ts' }, splitting: false, format: 'iife', chunkNames: undefined },
  // The "Vox: Usage" editor tab (src/extension/usage/): its own bundle with the chart (uPlot), dist/usage.js + .css.
  usage: { ...webview, entryPoints: { usage: 'webview/src/usage/main.ts' }, splitting: false, format: 'iife', chunkNames: undefined },
};
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
if (only !== undefined && !(only in all)) throw new Error(`--only=${only}: expected one of ${Object.keys(all).join(', ')}`);
const builds = only ? [all[only]] : Object.values(all);

fs.mkdirSync('dist', { recursive: true });
if (builds.includes(all.webview)) fs.rmSync(`dist/${WEBVIEW_CHUNKS}`, { recursive: true, force: true });
if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  if (builds.includes(all.cli)) fs.chmodSync('dist/cli.js', 0o755);
}
