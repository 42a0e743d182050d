// Bundles node-llama-cpp and its ~150 dependencies into a few ESM files for the VSIX, keeping
// the package's file layout as node-llama-cpp sees it at run time.
//
// node-llama-cpp finds its own files from `import.meta.url` (config.js: `<dist>/../llama`,
// getModuleVersion.js: `<dist>/../../package.json`, …), and on Linux it tests a prebuilt binary in
// a child process that runs its own testBindingBinary.js. So:
//  - every output file sits in one folder, `<package>/dist/`: the entry `index.js`, the entry
//    `testBindingBinary.js` (the child process's script) and the shared chunks;
//  - in each of node-llama-cpp's own modules `import.meta.url` becomes the URL its original file
//    would have had (`new URL("./bindings/utils/getModuleVersion.js", import.meta.url)` from any
//    file in dist/), so every path it derives is the one it had unbundled; testBindingBinary's
//    becomes the entry `dist/testBindingBinary.js`, which the child process runs;
//  - `@node-llama-cpp/*` (the platform binaries, imported by name), `electron` and any import that
//    resolves to a `.node` addon (ipull's optional @reflink/reflink; ../build/native-external.mjs)
//    stay external.
// The staged package.json keeps only what resolution needs (name, version, type, exports), so it
// declares no dependencies that are now inside the bundle.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nativeAddonsExternal } from '../build/native-external.mjs';

/** The files of node-llama-cpp's `llama/` folder read at run time (the rest only serve a source build). */
const LLAMA_RUNTIME_FILES = ['package.json', 'binariesGithubRelease.json', 'llama.cpp.info.json'];

/**
 * Writes `<outPkgDir>` (…/node_modules/node-llama-cpp) from the installed package `pkgDir`.
 * Returns { files, bytes } of what was written.
 */
export async function bundleNodeLlamaCpp(pkgDir, outPkgDir) {
  const srcDist = path.join(fs.realpathSync(pkgDir), 'dist');
  const outDist = path.join(outPkgDir, 'dist');
  fs.rmSync(outPkgDir, { recursive: true, force: true });
  fs.mkdirSync(outDist, { recursive: true });
  const testBinding = path.join(srcDist, 'bindings', 'utils', 'testBindingBinary.js');

  const rewriteImportMeta = {
    name: 'node-llama-cpp-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(srcDist + path.sep)) return undefined;
        let src = fs.readFileSync(args.path, 'utf8');
        if (!src.includes('import.meta.url')) return { contents: src, loader: 'js' };
        const rel = args.path === testBinding ? './testBindingBinary.js' : `./${path.relative(srcDist, args.path).split(path.sep).join('/')}`;
        src = src.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`);
        return { contents: src, loader: 'js' };
      });
    },
  };

  const result = await esbuild.build({
    entryPoints: [
      { in: path.join(srcDist, 'index.js'), out: 'index' },
      { in: testBinding, out: 'testBindingBinary' },
    ],
    outdir: outDist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: process.env.VOX_NLC_NO_MINIFY !== "1",
    legalComments: 'none',
    chunkNames: 'chunk-[hash]',
    external: ['@node-llama-cpp/*', 'electron'],
    // Bundled CommonJS dependencies call require(): give the ESM output a real one.
    banner: { js: 'import { createRequire as __voxCreateRequire } from "node:module"; const require = __voxCreateRequire(import.meta.url);' },
    // ipull's optional @reflink/reflink (a `.node` addon, present after a plain `npm install`) stays a run-time require.
    plugins: [rewriteImportMeta, nativeAddonsExternal()],
    logLevel: 'warning',
    metafile: true,
  });
  if (result.errors.length) throw new Error(`bundling node-llama-cpp failed: ${result.errors.map((e) => e.text).join('; ')}`);

  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const staged = {
    name: pkg.name,
    version: pkg.version,
    description: `${pkg.description} (bundled for Vox: dist/ holds node-llama-cpp and its dependencies)`,
    license: pkg.license,
    type: 'module',
    main: './dist/index.js',
    exports: { '.': { import: './dist/index.js', node: './dist/index.js', default: './dist/index.js' } },
  };
  fs.writeFileSync(path.join(outPkgDir, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
  for (const f of ['LICENSE']) if (fs.existsSync(path.join(pkgDir, f))) fs.copyFileSync(path.join(pkgDir, f), path.join(outPkgDir, f));
  const llamaOut = path.join(outPkgDir, 'llama');
  fs.mkdirSync(llamaOut, { recursive: true });
  for (const f of LLAMA_RUNTIME_FILES) fs.copyFileSync(path.join(pkgDir, 'llama', f), path.join(llamaOut, f));
  // The GBNF grammars LlamaGrammar.getFor() reads (json, list, …): small text files.
  fs.cpSync(path.join(pkgDir, 'llama', 'grammars'), path.join(llamaOut, 'grammars'), { recursive: true, filter: (s) => !s.endsWith('.md') });

  let files = 0;
  let bytes = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files++;
        bytes += fs.statSync(p).size;
      }
    }
  };
  walk(outPkgDir);
  return { files, bytes };
}
