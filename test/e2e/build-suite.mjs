// Bundles test/e2e/extension-host/suite.ts into one CommonJS file for VS Code's test runner
// (`extensionTestsPath`). `vscode` comes from the extension host; `mocha` stays external and
// resolves from the project's node_modules, so the bundle must live inside the project (default
// .vox-sandbox/e2e/suite/suite.js).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/** Returns the absolute path of the bundled suite. */
export async function buildSuite(outFile = path.join(REPO_ROOT, '.vox-sandbox', 'e2e', 'suite', 'suite.js')) {
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(REPO_ROOT, 'test', 'e2e', 'extension-host', 'suite.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  return outFile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  process.stdout.write((await buildSuite(process.argv[2] ? path.resolve(process.argv[2]) : undefined)) + '\n');
}
