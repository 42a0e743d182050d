/**
 * Vox's MCP server in VS Code: runs the streamable-HTTP server of
 * src/mcp-server/http/ on 127.0.0.1 while `vox.mcpServer.enabled` is true (port
 * `vox.mcpServer.port`, 0 = any), restarts it when either setting changes, stops it on disable
 * and on deactivation. A client connecting for the first time gets a prompt (read only / default /
 * full access / refuse); the choice is remembered per client in SecretStorage (EngineHost's
 * secretStore). "Vox: Show MCP Server Address" copies the URL and shows the Claude Code command.
 */
import * as vscode from 'vscode';
import type { Engine } from '../engine/engine';
import type { ExtensionContribution } from './contribution';
import type { EngineHost } from './engine-host';
import { mcpSessionServers } from './mcp-server-sessions';
import { startVoxMcpHttpServer, type VoxMcpHttpServer } from '../mcp-server/http/server';
import type { ServerFor } from '../mcp-server/http/mcp-endpoint';
import type { GrantRequest } from '../mcp-server/http/grants';
import type { McpGrant } from '../mcp-server/http/tokens';

export const SHOW_ADDRESS_COMMAND = 'vox.mcpServer.showAddress';

/** The McpServer of each session, built from the started engine (the tool set of src/mcp-server/). */
export type SessionServers = (engine: Engine) => ServerFor;

type GrantItem = vscode.QuickPickItem & { grant: McpGrant | null };
const GRANT_ITEMS: GrantItem[] = [
  { label: '$(eye) Read only', description: 'readOnly', detail: 'List, read and search this workspace\'s threads, checkpoints and variants. No writes.', grant: 'readOnly' },
  { label: '$(edit) Default', description: 'default', detail: 'Also send to threads, start threads (default modes at most) and capture checkpoints.', grant: 'default' },
  { label: '$(unlock) Full access', description: 'fullAccess', detail: 'Everything in this workspace\'s threads, including threads that run with full access.', grant: 'fullAccess' },
  { label: '$(circle-slash) Refuse', detail: 'The client gets access_denied; it is asked again next time.', grant: null },
];

/** The VS Code prompt for a client's first connection: null when refused or dismissed. */
export async function promptForGrant(client: GrantRequest): Promise<McpGrant | null> {
  const pick = await vscode.window.showQuickPick(GRANT_ITEMS, {
    title: `Vox MCP server: "${client.clientName}" wants to connect`,
    placeHolder: `Choose what "${client.clientName}" may do (it signs in with redirect ${client.redirectUri})`,
    ignoreFocusOut: true,
  });
  return pick?.grant ?? null;
}

export class McpServerHost implements vscode.Disposable {
  private running: VoxMcpHttpServer | undefined;
  /** The start or stop in progress; changes queue behind it. */
  private chain: Promise<void> = Promise.resolve();
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<string | undefined>();
  /** Fires with the new URL (undefined: stopped). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly host: EngineHost,
    private readonly log: vscode.LogOutputChannel,
    private readonly sessions: SessionServers,
    private readonly chooseGrant: (c: GrantRequest) => Promise<McpGrant | null> = promptForGrant,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('vox.mcpServer')) this.refresh();
      }),
      this.changed,
    );
    this.refresh();
  }

  /** The MCP endpoint while running. */
  get url(): string | undefined {
    return this.running?.url;
  }

  /** Settles once the latest enable/disable/port change has been applied. */
  whenSettled(): Promise<void> {
    return this.chain;
  }

  private settings(): { enabled: boolean; port: number } {
    const cfg = vscode.workspace.getConfiguration('vox.mcpServer');
    const port = cfg.get<number>('port') ?? 0;
    return { enabled: cfg.get<boolean>('enabled') === true, port: Number.isInteger(port) && port >= 0 && port <= 65_535 ? port : 0 };
  }

  /** Brings the server in line with the settings (start, stop or move to the new port). */
  refresh(): void {
    this.chain = this.chain.then(() => this.reconcile()).catch((e: unknown) => {
      const msg = (e as Error).message;
      this.log.error(`MCP server: ${msg}`);
      void vscode.window.showErrorMessage(`Vox MCP server: ${msg}`);
    });
  }

  private async reconcile(): Promise<void> {
    const { enabled, port } = this.settings();
    const want = enabled ? port : undefined;
    if (this.running && want !== undefined && (want === 0 || want === this.running.port)) return;
    await this.stop();
    if (want === undefined) return;
    const engine = await this.host.get();
    this.running = await startVoxMcpHttpServer({
      host: '127.0.0.1',
      port: want,
      secrets: this.host.secretStore,
      serverFor: this.sessions(engine),
      chooseGrant: this.chooseGrant,
      onError: (e) => this.log.warn(`MCP server: ${e instanceof Error ? e.message : String(e)}`),
    });
    this.log.info(`MCP server listening on ${this.running.url}`);
    this.changed.fire(this.running.url);
  }

  private async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    if (!r) return;
    await r.close();
    this.log.info('MCP server stopped');
    this.changed.fire(undefined);
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    void this.stop();
  }
}

/**
 * The `claude mcp add` line for Claude Code. Its MCP client (the official SDK's) sends `Bearer`
 * tokens, and this server requires DPoP proofs, so Claude Code runs Vox over stdio instead: the
 * `vox` CLI on the same database (`vox mcp serve --stdio`, read-only unless told otherwise).
 */
export const CLAUDE_CODE_COMMAND = 'claude mcp add vox -- vox mcp serve --stdio --grant readOnly';

async function showAddress(server: McpServerHost): Promise<void> {
  await server.whenSettled();
  if (!server.url) {
    const enable = 'Enable';
    const pick = await vscode.window.showInformationMessage("Vox's MCP server is off (setting vox.mcpServer.enabled). Enable it so other agents can use Vox?", enable);
    if (pick !== enable) return;
    await vscode.workspace.getConfiguration('vox.mcpServer').update('enabled', true, vscode.ConfigurationTarget.Global);
    server.refresh();
    await server.whenSettled();
    if (!server.url) return;
  }
  const url = server.url;
  await vscode.env.clipboard.writeText(url);
  const copy = 'Copy Claude Code Command';
  const pick = await vscode.window.showInformationMessage(
    `Vox MCP server: ${url} (copied), for MCP clients that sign in with OAuth and DPoP. Claude Code sends Bearer tokens: connect it over stdio with: ${CLAUDE_CODE_COMMAND}`,
    copy,
  );
  if (pick === copy) await vscode.env.clipboard.writeText(CLAUDE_CODE_COMMAND);
}

/** The server host (its sessions get the MCP tool set of ./mcp-server-sessions.ts) and "Vox: Show MCP Server Address". */
export const mcpServer: ExtensionContribution<McpServerHost> = {
  name: 'MCP server',
  commands: [SHOW_ADDRESS_COMMAND],
  activate({ host, log }, scope) {
    const server = scope.add(new McpServerHost(host, log, mcpSessionServers));
    scope.command(SHOW_ADDRESS_COMMAND, () => showAddress(server), { log });
    return server;
  },
};
