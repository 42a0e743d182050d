// Native addons stay out of every Node bundle (esbuild.mjs, scripts/vsix/bundle-node-llama-cpp.mjs).
//
// Some dependencies load an optional native addon: ipull (under node-llama-cpp) does
// `await import("@reflink/reflink")`, whose binding.js `require`s `./reflink.<platform>.node` or
// the package `@reflink/reflink-<platform>` (its `main` is a `.node` file). Whether those are
// installed depends on how node_modules was made (`npm ci --omit=optional` or a plain
// `npm install`), and esbuild has no loader for a `.node` file, so a bundle of the same code failed
// or built depending on the machine. This plugin makes every import that resolves to a `.node`
// file external, left to run time under its own specifier: there the package's own fallback
// (binding.js's try/catch, ipull's `catch {}`) meets a missing module (MODULE_NOT_FOUND), exactly
// as when the optional dependency is not installed. Nothing native is ever inlined into a bundle.

/** A path that is a native addon. */
const NATIVE_FILE = /\.node$/;
/** Marks the nested resolve this plugin makes itself, so it does not see its own call. */
const NESTED = Symbol('native-external');

/** The esbuild plugin: imports that resolve to a `.node` file become external. */
export function nativeAddonsExternal() {
  return {
    name: 'native-addons-external',
    setup(build) {
      build.onResolve({ filter: NATIVE_FILE }, (args) => ({ path: args.path, external: true }));
      // A package whose entry is a `.node` file (`@reflink/reflink-linux-x64-gnu`): resolve it the
      // normal way first, and keep the specifier when it lands on an addon.
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === NESTED) return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: NESTED });
        // Unresolved (another platform's package, not installed): esbuild's own handling decides (a require in a try is left to run time).
        if (r.errors.length) return undefined;
        if (NATIVE_FILE.test(r.path)) return { path: args.path, external: true };
        return { path: r.path, external: r.external, namespace: r.namespace, sideEffects: r.sideEffects, suffix: r.suffix, pluginData: r.pluginData };
      });
    },
  };
}
