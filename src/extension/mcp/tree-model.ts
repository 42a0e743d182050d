/**
 * The "MCP Servers" tree as plain data: a pure function from the engine's
 * `McpServerListView` (listMcpServers / the `mcpServers` update) to nodes — one per server with
 * its status icon, transport and tool count, a tooltip naming its config file and last error;
 * under it an error row when it failed, its tools (checkbox = enabled, read-only ones marked) and
 * a prompts/resources summary; then one row per config file that did not parse. No vscode import:
 * servers-view.ts turns the nodes into TreeItems, and the unit test checks this model directly.
 */
import type { McpServerListView, McpServerView } from '../../protocol/commands/mcp';

/** Characters of a server's last error shown in its error row (the tooltip has all of it). */
export const MCP_ERROR_ROW_MAX_CHARS = 160;
/** Characters of a tool's description shown next to it (the tooltip has all of it). */
export const MCP_TOOL_DESCRIPTION_MAX_CHARS = 80;

/** Codicon per server status. */
export const MCP_STATUS_ICON: Record<McpServerView['status'], string> = {
  connected: 'pass-filled',
  starting: 'loading~spin',
  restarting: 'sync~spin',
  failed: 'error',
  needsAuth: 'key',
  disabled: 'circle-slash',
  stopped: 'debug-stop',
};

/** Words per status (descriptions and tooltips). */
export const MCP_STATUS_WORDS: Record<McpServerView['status'], string> = {
  connected: 'connected',
  starting: 'starting…',
  restarting: 'restarting…',
  failed: 'failed',
  needsAuth: 'needs sign-in',
  disabled: 'disabled',
  stopped: 'stopped',
};

export type McpTreeNode =
  | { kind: 'server'; id: string; server: string; label: string; description: string; tooltip: string; icon: string; contextValue: string; children: McpTreeNode[] }
  | { kind: 'error'; id: string; server: string; label: string; tooltip: string; icon: 'warning' }
  | { kind: 'tool'; id: string; server: string; tool: string; label: string; description: string; tooltip: string; checked: boolean; readOnly: boolean; icon: string; contextValue: string }
  | { kind: 'summary'; id: string; server: string; label: string; tooltip: string; icon: string }
  | { kind: 'configError'; id: string; source: string; label: string; description: string; tooltip: string; icon: 'error'; contextValue: 'voxMcpConfigError' };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * The server's context value: `voxMcpServer.<status>` plus `.enabled`/`.disabled`, so menus can
 * offer Enable or Disable, Sign In only for needsAuth, Restart for a server that is enabled.
 */
export function serverContextValue(s: McpServerView): string {
  return `voxMcpServer.${s.status}.${s.enabled ? 'enabled' : 'disabled'}`;
}

export function serverNode(s: McpServerView): McpTreeNode & { kind: 'server' } {
  const activeTools = s.tools.filter((t) => t.enabled).length;
  const toolWords = s.tools.length === 0 ? 'no tools' : activeTools === s.tools.length ? plural(s.tools.length, 'tool') : `${activeTools}/${s.tools.length} tools`;
  const status = s.enabled ? s.status : 'disabled';
  const tooltip = [
    `${s.name} — ${MCP_STATUS_WORDS[status]}`,
    `${s.transport}: ${s.target}`,
    `From ${s.sourcePath}`,
    ...(s.restarts > 0 ? [`Restarted ${plural(s.restarts, 'time')}`] : []),
    ...(s.error ? [`Last error: ${s.error}`] : []),
  ].join('\n');
  const children: McpTreeNode[] = [];
  if (s.error && (status === 'failed' || status === 'needsAuth')) {
    children.push({ kind: 'error', id: `mcp:${s.name}:error`, server: s.name, label: clip(s.error, MCP_ERROR_ROW_MAX_CHARS), tooltip: s.error, icon: 'warning' });
  }
  for (const t of s.tools) {
    children.push({
      kind: 'tool',
      id: `mcp:${s.name}:tool:${t.name}`,
      server: s.name,
      tool: t.name,
      label: t.name,
      description: `${t.readOnly ? 'read-only' : 'execute'}${t.description ? ` · ${clip(t.description, MCP_TOOL_DESCRIPTION_MAX_CHARS)}` : ''}`,
      tooltip: `${t.qualifiedName}${t.readOnly ? ' (read-only: runs without approval under the default policy)' : ' (execute class: asks for approval under the default policy)'}${t.description ? `\n\n${t.description}` : ''}\n\n${t.enabled ? 'Enabled for the agent — untick to hide it' : 'Disabled — tick to give it to the agent'}`,
      checked: t.enabled,
      readOnly: t.readOnly,
      icon: t.readOnly ? 'eye' : 'tools',
      contextValue: `voxMcpTool.${t.enabled ? 'enabled' : 'disabled'}`,
    });
  }
  if (s.prompts.length > 0 || s.resources.length > 0) {
    children.push({
      kind: 'summary',
      id: `mcp:${s.name}:summary`,
      server: s.name,
      label: `${plural(s.prompts.length, 'prompt')} · ${plural(s.resources.length, 'resource')}`,
      tooltip: [
        ...(s.prompts.length > 0 ? [`Prompts (slash commands in the chat): ${s.prompts.map((p) => `/mcp.${s.name}.${p.name}`).join(', ')}`] : []),
        ...(s.resources.length > 0 ? [`Resources (@-mentions in the chat): ${s.resources.map((r) => r.name).join(', ')}`] : []),
      ].join('\n'),
      icon: 'symbol-event',
    });
  }
  return {
    kind: 'server',
    id: `mcp:${s.name}`,
    server: s.name,
    label: s.name,
    // Restarts show in the row itself: a server that keeps crashing is visible without a hover.
    description: `${MCP_STATUS_WORDS[status]} · ${s.transport} · ${toolWords}${s.restarts > 0 ? ` · ${plural(s.restarts, 'restart')}` : ''}`,
    tooltip,
    icon: MCP_STATUS_ICON[status],
    contextValue: serverContextValue(s),
    children,
  };
}

/**
 * The root rows. Empty when nothing is configured and every file parsed, so VS Code shows the
 * view's welcome content instead (package.json viewsWelcome).
 */
export function buildMcpTree(view: McpServerListView): McpTreeNode[] {
  const rows: McpTreeNode[] = view.servers.map(serverNode);
  for (const e of view.configErrors) {
    rows.push({ kind: 'configError', id: `mcp-config:${e.source}`, source: e.source, label: e.source, description: clip(e.message, MCP_ERROR_ROW_MAX_CHARS), tooltip: `${e.source} could not be used (its servers are skipped):\n${e.message}`, icon: 'error', contextValue: 'voxMcpConfigError' });
  }
  return rows;
}

/** The config files a server may come from, relative to the workspace folder (welcome text, Add MCP Server…). */
export const MCP_CONFIG_FILES = ['.vox/mcp.json', '.vscode/mcp.json', '.mcp.json'] as const;

/**
 * The template "Add MCP Server…" writes into a new `.vscode/mcp.json` (VS Code's format, JSON
 * with comments). The example stays commented out: nothing starts until the user names a server.
 */
export const MCP_JSON_TEMPLATE = `{
  // MCP servers for Vox's agent (and VS Code). A local server: "type": "stdio" with "command"
  // and "args" (and "env"); a remote one: "type": "http" with "url". Never paste a token here:
  // Vox signs in to HTTP servers that need OAuth and keeps the tokens in SecretStorage.
  "servers": {
    // "everything": {
    //   "type": "stdio",
    //   "command": "npx",
    //   "args": ["-y", "@modelcontextprotocol/server-everything"]
    // }
  }
}
`;

/** Where a server's config file is, for Open Config File: null for the settings source. */
export function configFileOf(s: Pick<McpServerView, 'source' | 'sourcePath'>): string | null {
  return s.source === 'settings' ? null : s.sourcePath;
}

/** What "Open MCP Config File" does from the palette: a file to open (null: the setting), a pick among the servers, or the offer to create `.vscode/mcp.json`. */
export type OpenConfigPlan = { kind: 'open'; path: string | null } | { kind: 'pick' } | { kind: 'offerCreate'; path: '.vscode/mcp.json' };

/** The source named by the settings' config errors. */
const SETTINGS_SOURCE_PREFIX = 'settings (';

/**
 * One server: its file; several: pick one; none: a config file that failed to parse, else the
 * first that exists (precedence order, `exists` tells), else offer to create `.vscode/mcp.json`.
 */
export function openConfigPlan(view: McpServerListView, exists: (rel: string) => boolean): OpenConfigPlan {
  if (view.servers.length === 1) return { kind: 'open', path: configFileOf(view.servers[0]!) };
  if (view.servers.length > 1) return { kind: 'pick' };
  const failed = view.configErrors[0]?.source;
  if (failed !== undefined) return { kind: 'open', path: failed.startsWith(SETTINGS_SOURCE_PREFIX) ? null : failed.split(': ')[0]! };
  const file = MCP_CONFIG_FILES.find((rel) => exists(rel));
  return file ? { kind: 'open', path: file } : { kind: 'offerCreate', path: '.vscode/mcp.json' };
}
