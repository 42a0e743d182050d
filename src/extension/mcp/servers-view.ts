/**
 * "MCP Servers" tree in the Vox container, a protocol client: the rows are
 * ./tree-model.ts's nodes of the last `mcpServers` update (watchMcpServers) or listMcpServers
 * answer. A tool's checkbox calls setMcpToolEnabled. Welcome content (package.json) shows when no
 * server is configured. The commands are in ./commands.ts.
 */
import * as vscode from 'vscode';
import type { EngineClient } from '../../client/engine-client';
import type { McpServerListView } from '../../protocol/commands/mcp';
import type { EngineHost } from '../engine-host';
import { buildMcpTree, type McpTreeNode } from './tree-model';

export const MCP_SERVERS_VIEW_ID = 'vox.mcpServers';

/** A row for when the engine could not list the servers (its error, in words). */
type Node = McpTreeNode | { kind: 'unavailable'; message: string };

export class McpServersView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private watching: Promise<void> | undefined;
  private stop: (() => void) | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The last listing (tests and the palette pickers read it); null until one came. */
  last: McpServerListView | null = null;
  private failure: string | null = null;
  readonly treeView: vscode.TreeView<Node>;

  constructor(private readonly host: EngineHost, private readonly log: vscode.LogOutputChannel) {
    this.treeView = vscode.window.createTreeView(MCP_SERVERS_VIEW_ID, { treeDataProvider: this, showCollapseAll: true, manageCheckboxStateManually: true });
    this.disposables.push(this.treeView, this.treeView.onDidChangeCheckboxState((e) => void this.onCheckboxes(e)));
  }

  /** Subscribes once; every status, tool or config change re-renders the tree. */
  watch(client: EngineClient): Promise<void> {
    this.watching ??= (async () => {
      this.stop = client.on('mcpServers', (u) => {
        const { type: _type, ...view } = u;
        this.last = view;
        this.failure = null;
        this.changed.fire(undefined);
      });
      await client.call('watchMcpServers', {});
    })().catch((e: unknown) => {
      this.watching = undefined; // try again on the next refresh
      throw e;
    });
    return this.watching;
  }

  /** Asks the engine again (Refresh, after a command). */
  async reload(): Promise<McpServerListView> {
    const client = await this.host.client();
    const v = await client.call('listMcpServers', {});
    this.last = v;
    this.failure = null;
    this.changed.fire(undefined);
    return v;
  }

  refresh(): void {
    this.last = null;
    this.changed.fire(undefined);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node) return node.kind === 'server' ? node.children : [];
    try {
      const client = await this.host.client();
      await this.watch(client).catch((e: unknown) => this.log.warn(`watchMcpServers: ${(e as Error).message}`));
      if (!this.last) this.last = await client.call('listMcpServers', {});
      this.failure = null;
    } catch (e) {
      this.failure = (e as Error).message;
      this.last = null;
    }
    if (this.failure !== null) return [{ kind: 'unavailable', message: this.failure }];
    return buildMcpTree(this.last!);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'unavailable') {
      const item = new vscode.TreeItem('MCP servers unavailable');
      item.description = node.message;
      item.tooltip = node.message;
      item.iconPath = new vscode.ThemeIcon('error');
      return item;
    }
    const collapsible = node.kind === 'server' ? (node.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None) : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(node.label, collapsible);
    item.id = node.id;
    item.tooltip = node.tooltip;
    item.iconPath = new vscode.ThemeIcon(node.icon);
    if ('description' in node) item.description = node.description;
    if ('contextValue' in node) item.contextValue = node.contextValue;
    if (node.kind === 'tool') {
      item.checkboxState = { state: node.checked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked, tooltip: node.checked ? 'Untick to hide this tool from the agent' : 'Tick to give this tool to the agent' };
      item.accessibilityInformation = { label: `${node.label}, ${node.readOnly ? 'read-only' : 'execute'} tool, ${node.checked ? 'enabled' : 'disabled'}` };
    }
    if (node.kind === 'configError') item.command = { command: 'vox.mcp.openConfig', title: 'Open Config File', arguments: [node] };
    return item;
  }

  private async onCheckboxes(e: vscode.TreeCheckboxChangeEvent<Node>): Promise<void> {
    const client = await this.host.client();
    for (const [node, state] of e.items) {
      if (node.kind !== 'tool') continue;
      const enabled = state === vscode.TreeItemCheckboxState.Checked;
      try {
        await client.call('setMcpToolEnabled', { name: node.server, tool: node.tool, enabled });
      } catch (err) {
        this.log.error(`setMcpToolEnabled ${node.server}/${node.tool}: ${(err as Error).message}`);
        void vscode.window.showErrorMessage(`Vox: could not ${enabled ? 'enable' : 'disable'} ${node.tool}: ${(err as Error).message}`);
      }
    }
    await this.reload().catch(() => this.refresh()); // the checkbox shows the engine's state, not the click
  }

  dispose(): void {
    this.stop?.();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
