// The esbuild options of Vox's Node bundles (dist/extension.js, dist/cli.js, dist/tokenizer.js),
// shared by esbuild.mjs and the packaging test (test/packaging/native-optional.test.ts), which
// runs them over a node_modules holding an optional native addon.
import { nativeAddonsExternal } from './native-external.mjs';

/** Packages that must not be bundled: the VS Code API, native addons (they find their binaries beside their own files), and node-llama-cpp (binaries + ESM; scripts/package-vsix.mjs bundles it on its own). */
export const EXTERNAL = ['vscode', 'better-sqlite3', '@photostructure/sqlite', 'node-llama-cpp', '@node-llama-cpp/*'];

/** The options every Node bundle starts from. */
export function nodeBundleOptions({ production }) {
  return {
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
    // An optional native addon (a `.node` file) is left to run time, never inlined (native-external.mjs).
    plugins: [nativeAddonsExternal()],
  };
}
