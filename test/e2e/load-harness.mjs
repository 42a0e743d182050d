// Loads test/e2e/harness.ts from plain .mjs scripts (run-e2e.mjs, scripts/start-vscode.mjs)
// through tsx, without requiring `node --import tsx`. The project is CommonJS by default, so tsx
// may hand the module back as a CJS namespace (exports under `default`): normalise that.
import { tsImport } from 'tsx/esm/api';

/** @returns {Promise<typeof import('./harness.ts')>} */
export async function loadHarness() {
  const mod = await tsImport('./harness.ts', import.meta.url);
  return 'REPO_ROOT' in mod ? mod : mod.default;
}
