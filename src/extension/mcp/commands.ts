/**
 * The "MCP Servers" view (./servers-view.ts) and its commands in the palette and on its rows, as
 * one contribution (../contribution.ts). The commands are all clients of the MCP
 * protocol commands: Restart, Enable, Disable, Sign In (authenticateMcpServer), Open Config File
 * (the server's source file, or the `vox.mcp.servers` setting; with no server the config file there
 * is, else an offer to create `.vscode/mcp.json`), Add MCP Server… (opens or creates
 * `.vscode/mcp.json` with a template), Refresh (reloadMcpConfig: the files read again), and
 * "Vox: Show MCP Servers". Invoked from a row
 * they act on it; from the palette they ask which server.
 */
import * as vscode from 'vscode';
import type { McpServerView } from '../../protocol/commands/mcp';
import type { EngineHost } from '../engine-host';
import type { ContributionScope, ExtensionContribution } from '../contribution';
import { MCP_SERVERS_VIEW_ID, McpServersView } from './servers-view';
import { configFileOf, MCP_CONFIG_FILES, MCP_JSON_TEMPLATE, MCP_STATUS_WORDS, openConfigPlan } from './tree-model';

/** The server a command acts on: the row it was invoked on, or one the user picks. */
async function pickServer(view: McpServersView, node: unknown, filter: (s: McpServerView) => boolean, verb: string): Promise<McpServerView | undefined> {
  const listed = view.last ?? (await view.reload());
  const n = node as { kind?: string; server?: string } | undefined;
  if (n && typeof n.server === 'string') return listed.servers.find((s) => s.name === n.server);
  const candidates = listed.servers.filter(filter);
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(listed.servers.length === 0 ? 'Vox: no MCP server is configured. Add one with "Vox: Add MCP Server…".' : `Vox: no MCP server to ${verb}.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((s) => ({ label: s.name, description: `${MCP_STATUS_WORDS[s.enabled ? s.status : 'disabled']} · ${s.transport}`, detail: s.sourcePath, s })),
    { placeHolder: `MCP server to ${verb}` },
  );
  return pick?.s;
}

function workspaceFolder(): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[0];
  if (!f) throw new Error('open a folder first: MCP config files live in the workspace');
  return f;
}

async function openConfigFile(relPath: string | null): Promise<void> {
  if (relPath === null) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'vox.mcp.servers');
    return;
  }
  const uri = vscode.Uri.joinPath(workspaceFolder().uri, relPath);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
}

/** The MCP config files that exist in the workspace folder. */
async function existingConfigFiles(): Promise<Set<string>> {
  const root = workspaceFolder().uri;
  const found = await Promise.all(MCP_CONFIG_FILES.map((rel) => vscode.workspace.fs.stat(vscode.Uri.joinPath(root, rel)).then(() => rel, () => null)));
  return new Set(found.filter((rel): rel is (typeof MCP_CONFIG_FILES)[number] => rel !== null));
}

/** Opens `.vscode/mcp.json`, first writing the template when there is none. */
export async function addMcpServer(): Promise<vscode.Uri> {
  const uri = vscode.Uri.joinPath(workspaceFolder().uri, '.vscode', 'mcp.json');
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(MCP_JSON_TEMPLATE));
  }
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  return uri;
}

function registerMcpCommands(host: EngineHost, view: McpServersView, log: vscode.LogOutputChannel, scope: ContributionScope): void {
  const cmd = (id: string, fn: (node?: unknown) => Promise<unknown>) => scope.command(id, (node) => fn(node), { log, after: () => void view.reload().catch(() => view.refresh()) });
  const act = (id: string, verb: string, filter: (s: McpServerView) => boolean, run: (s: McpServerView) => Promise<unknown>) =>
    cmd(id, async (node) => {
      const s = await pickServer(view, node, filter, verb);
      if (s) await run(s);
    });
  scope.command('vox.mcp.show', () => vscode.commands.executeCommand(`${MCP_SERVERS_VIEW_ID}.focus`), { log });
  cmd('vox.mcp.refresh', async () => {
    await (await host.client()).call('reloadMcpConfig', {});
    return view.reload();
  });
  act('vox.mcp.restart', 'restart', (s) => s.enabled, async (s) => {
    const client = await host.client();
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Vox: restarting MCP server ${s.name}…` }, () => client.call('restartMcpServer', { name: s.name }));
    if (r.status === 'failed') void vscode.window.showWarningMessage(`Vox: MCP server ${s.name} failed to start: ${r.error ?? 'no reason given'}`);
  });
  act('vox.mcp.enable', 'enable', (s) => !s.enabled, async (s) => (await host.client()).call('setMcpServerEnabled', { name: s.name, enabled: true }));
  act('vox.mcp.disable', 'disable', (s) => s.enabled, async (s) => (await host.client()).call('setMcpServerEnabled', { name: s.name, enabled: false }));
  act('vox.mcp.signIn', 'sign in to', (s) => s.status === 'needsAuth', async (s) => {
    const client = await host.client();
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Vox: signing in to ${s.name} (finish in the browser)…`, cancellable: false }, () =>
      client.call('authenticateMcpServer', { name: s.name }),
    );
    void vscode.window.showInformationMessage(`Vox: ${s.name} is ${MCP_STATUS_WORDS[r.status]}.`);
  });
  cmd('vox.mcp.openConfig', async (node) => {
    const n = node as { kind?: string; source?: string } | undefined;
    if (n?.kind === 'configError' && typeof n.source === 'string') return openConfigFile(n.source === 'settings (vox.mcp.servers)' ? null : n.source);
    if (n?.kind !== 'server') {
      const existing = await existingConfigFiles();
      const plan = openConfigPlan(await view.reload(), (rel) => existing.has(rel));
      if (plan.kind === 'open') return openConfigFile(plan.path);
      if (plan.kind === 'offerCreate') {
        const create = 'Create .vscode/mcp.json';
        if ((await vscode.window.showInformationMessage('Vox: this workspace has no MCP config file yet.', create)) === create) await addMcpServer();
        return;
      }
    }
    const s = await pickServer(view, node, () => true, 'open the config of');
    if (s) await openConfigFile(configFileOf(s));
  });
  cmd('vox.mcp.add', () => addMcpServer());
}

export const mcpServersView: ExtensionContribution<McpServersView> = {
  name: 'MCP servers view',
  commands: ['vox.mcp.show', 'vox.mcp.add', 'vox.mcp.refresh', 'vox.mcp.restart', 'vox.mcp.enable', 'vox.mcp.disable', 'vox.mcp.signIn', 'vox.mcp.openConfig'],
  activate({ host, log }, scope) {
    const view = scope.add(new McpServersView(host, log));
    registerMcpCommands(host, view, log, scope);
    return view;
  },
};
