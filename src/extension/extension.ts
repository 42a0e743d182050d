/**
 * VS Code entry point (thin): creates the EngineHost (it starts the engine lazily on first use so
 * activation stays fast), the chat views, the status bar and the attention notices, then installs
 * every area's contribution (./contributions.ts) in order. Exports a small API for tests and
 * other extensions (no secret values ever leave it).
 */
import * as vscode from 'vscode';
import { AttentionNotifier } from './attention/notifier';
import { ChatViews, CHAT_VIEW_ID } from './chat-view';
import { Contributions } from './contribution';
import { CONTRIBUTIONS } from './contributions';
import { EngineHost } from './engine-host';
import { guardedCommand } from './guarded-command';
import type { CheckpointsView } from './checkpoints-view';
import type { VariantsView } from './variants-view';
import type { ReviewApi } from './review/register';
import type { RulesView } from './rules-view';
import type { McpServersView } from './mcp/servers-view';
import type { McpServerHost } from './mcp-server-host';

/**
 * performance.now() when evaluating dist/extension.js started: esbuild.mjs puts this at the top
 * of the bundle, before any module of it runs (undefined when this file runs unbundled), and
 * sets `__voxBundleEnd` at its end, after every module it loads eagerly.
 */
declare const __voxBundleStart: number | undefined;
declare const __voxBundleEnd: number | undefined;

export interface VoxApi {
  /** Time `activate` took, in ms. */
  readonly activationMs: number;
  /** Evaluating dist/extension.js (its eagerly loaded modules), in ms; undefined unbundled. */
  readonly loadMs: number | undefined;
  readonly host: EngineHost;
  readonly chats: ChatViews;
  readonly checkpointsView: CheckpointsView;
  readonly variantsView: VariantsView;
  /** "Vox Rules" (SPEC 6.1). */
  readonly rulesView: RulesView;
  /** Edit review: waiting edits in the diff editor, the turn review and its Explorer decorations. */
  readonly review: ReviewApi;
  /** "MCP Servers": the configured MCP servers, their status and tools. */
  readonly mcpServersView: McpServersView;
  /**
   * This window's log folder for Vox (`ExtensionContext.logUri`): the "Vox" output channel
   * ("Vox: Show Logs") is written to a file in it, where tests read what it logged.
   */
  readonly logUri: vscode.Uri;
  /** Vox's MCP server over HTTP (runs while `vox.mcpServer.enabled`). */
  readonly mcpServer: McpServerHost;
}

export function activate(ctx: vscode.ExtensionContext): VoxApi {
  const t0 = performance.now();
  const bundled = typeof __voxBundleStart === 'number' && typeof __voxBundleEnd === 'number';
  const loadMs = bundled ? __voxBundleEnd! - __voxBundleStart! : undefined;
  /** From the end of the bundle's evaluation to this call: the host's own work in between. */
  const waitMs = bundled ? t0 - __voxBundleEnd! : undefined;
  const log = vscode.window.createOutputChannel('Vox', { log: true });
  const host = new EngineHost(ctx, log);
  void host.migrateSettings().then(
    (name) => name && log.info(`vox.compatBaseUrl moved into vox.compatEndpoints as "${name}" (its key kept in SecretStorage)`),
    (e: unknown) => log.warn(`moving vox.compatBaseUrl into vox.compatEndpoints failed (it keeps working as it is): ${e instanceof Error ? e.message : String(e)}`),
  );
  const chats = new ChatViews(ctx, host, log);
  const status = vscode.window.createStatusBarItem('vox.model', vscode.StatusBarAlignment.Right, 100);
  status.name = 'Vox model';
  status.command = 'vox.selectModel';
  const refreshStatus = () => {
    const model = host.model();
    status.text = `$(sparkle) ${model === 'local:demo' ? 'Vox: demo model' : `Vox: ${model}`}`;
    status.tooltip = model === 'local:demo' ? 'Vox is using the offline demo model (writes nonsense). Click to choose a real model.' : `Vox model: ${model}. Click to change.`;
  };
  refreshStatus();
  status.show();
  ctx.subscriptions.push(
    log,
    host,
    chats,
    status,
    host.onDidChange(refreshStatus),
    new AttentionNotifier(host, chats, log),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chats),
  );
  // Each area's views and commands (./contributions.ts), disposed in reverse when the extension is.
  const contributions = new Contributions({ ctx, host, chats, log }, guardedCommand);
  ctx.subscriptions.push(contributions);
  const { checkpoints: checkpointsView, variants: variantsView, review, rules: rulesView, mcpServersView, mcpServer } = contributions.installAll(CONTRIBUTIONS);
  const activationMs = performance.now() - t0;
  const load = loadMs === undefined ? '' : ` (bundle evaluated in ${loadMs.toFixed(1)} ms; activate() called ${waitMs!.toFixed(1)} ms after that)`;
  log.info(`Vox activated in ${activationMs.toFixed(1)} ms${load}`);
  return { activationMs, loadMs, host, chats, checkpointsView, variantsView, rulesView, review, mcpServersView, logUri: ctx.logUri, mcpServer };
}

export function deactivate(): void {
  // Disposables registered on the context (engine host included) are disposed by VS Code.
}
