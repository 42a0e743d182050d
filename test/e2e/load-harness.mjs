// Loads test/e2e/harness.ts (and the other TypeScript e2e modules) from plain .mjs scripts
// (the e2e runners and runner.mjs, scripts/start-vscode.mjs) through tsx, without requiring
// `node --import tsx`.
// The project is CommonJS by default, so tsx may hand a module back as a CJS namespace (exports
// under `default`): normalise that.
import { tsImport } from 'tsx/esm/api';

async function loadTs(relative, marker) {
  const mod = await tsImport(relative, import.meta.url);
  return marker in mod ? mod : mod.default;
}

/** @returns {Promise<typeof import('./harness.ts')>} */
export function loadHarness() {
  return loadTs('./harness.ts', 'REPO_ROOT');
}

/** @returns {Promise<typeof import('./ui-chat.ts')>} */
export function loadChatUi() {
  return loadTs('./ui-chat.ts', 'runChatUiChecks');
}

/** @returns {Promise<typeof import('./ui-checkpoints.ts')>} */
export function loadCheckpointsUi() {
  return loadTs('./ui-checkpoints.ts', 'runCheckpointChecks');
}

/** @returns {Promise<typeof import('./ui-variants.ts')>} */
export function loadVariantsUi() {
  return loadTs('./ui-variants.ts', 'runVariantChecks');
}

/** @returns {Promise<typeof import('./ui-connect.ts')>} */
export function loadConnectUi() {
  return loadTs('./ui-connect.ts', 'runConnectChecks');
}

/** @returns {Promise<typeof import('./ui-branches.ts')>} */
export function loadBranchesUi() {
  return loadTs('./ui-branches.ts', 'runBranchChecks');
}

/** @returns {Promise<typeof import('./ui-rules.ts')>} */
export function loadRulesUi() {
  return loadTs('./ui-rules.ts', 'runRulesChecks');
}

/** @returns {Promise<typeof import('./ui-composer.ts')>} */
export function loadComposerUi() {
  return loadTs('./ui-composer.ts', 'runComposerChecks');
}

/** @returns {Promise<typeof import('./ui-reload.ts')>} */
export function loadReloadUi() {
  return loadTs('./ui-reload.ts', 'runReloadChecks');
}

/** @returns {Promise<typeof import('./ui-permissions.ts')>} */
export function loadPermissionsUi() {
  return loadTs('./ui-permissions.ts', 'runPermissionChecks');
}

/** @returns {Promise<typeof import('./ui-refusal.ts')>} */
export function loadRefusalUi() {
  return loadTs('./ui-refusal.ts', 'runRefusalChecks');
}

/** @returns {Promise<typeof import('./ui-shared-home.ts')>} */
export function loadSharedUi() {
  return loadTs('./ui-shared-home.ts', 'runSharedChecks');
}

/** @returns {Promise<typeof import('./ui-keyboard.ts')>} */
export function loadKeyboardUi() {
  return loadTs('./ui-keyboard.ts', 'runKeyboardChecks');
}

/** @returns {Promise<typeof import('./ui-compact.ts')>} */
export function loadCompactUi() {
  return loadTs('./ui-compact.ts', 'runCompactChecks');
}

/** @returns {Promise<typeof import('./ui-importers.ts')>} */
export function loadImportersUi() {
  return loadTs('./ui-importers.ts', 'runImporterChecks');
}

/** @returns {Promise<typeof import('./ui-search.ts')>} */
export function loadSearchUi() {
  return loadTs('./ui-search.ts', 'runSearchChecks');
}

/** @returns {Promise<typeof import('./ui-sanitize.ts')>} */
export function loadSanitizeUi() {
  return loadTs('./ui-sanitize.ts', 'runSanitizeChecks');
}

/** @returns {Promise<typeof import('./ui-threads.ts')>} */
export function loadThreadsUi() {
  return loadTs('./ui-threads.ts', 'runThreadChecks');
}

/** @returns {Promise<typeof import('./ui-mcp.ts')>} */
export function loadMcpUi() {
  return loadTs('./ui-mcp.ts', 'runMcpChecks');
}

/** @returns {Promise<typeof import('./ui-mcp-catalog.ts')>} */
export function loadMcpCatalogUi() {
  return loadTs('./ui-mcp-catalog.ts', 'runMcpCatalogChecks');
}

/** @returns {Promise<typeof import('./ui-mcp-http.ts')>} */
export function loadMcpHttpUi() {
  return loadTs('./ui-mcp-http.ts', 'runMcpHttpChecks');
}
