/**
 * MCP client commands (SPEC 5.3): the MCP servers Vox's agent uses — from
 * `.vox/mcp.json`, the workspace's `.vscode/mcp.json` and `.mcp.json` (VS Code's and Claude
 * Code's formats) and the setting `vox.mcp.servers` — their status, tools, prompts and resources;
 * restart one; enable or disable a server or one of its tools; sign in to one that needs OAuth;
 * read a resource (@-mentions) and expand a prompt (slash commands). `watchMcpServers` pushes an
 * `mcpServers` update (../updates.ts) after every change.
 */
import { arrayOf, bool, int, literal, nullable, object, optional, refine, str, unknownValue, type Infer } from '../wire/validators';
import { defineCommand } from './define';

/** Longest server or tool name a client may send. */
export const MAX_MCP_NAME_CHARS = 200;
/** Longest resource URI a client may send. */
export const MAX_MCP_URI_CHARS = 4_000;

const mcpName = refine(str, (s) => s.length > 0 && s.length <= MAX_MCP_NAME_CHARS, `1..${MAX_MCP_NAME_CHARS} characters`);

/** Where a server's definition came from. */
export const mcpServerSource = literal('vox', 'vscode', 'claude', 'settings');
export const mcpServerStatus = literal('starting', 'connected', 'restarting', 'failed', 'needsAuth', 'disabled', 'stopped');
export const mcpTransport = literal('stdio', 'http', 'sse');

export const mcpToolView = object({
  /** The tool's own name on its server. */
  name: str,
  /** The name the model sees (unique across servers), e.g. `mcp__github__create_issue`. */
  qualifiedName: str,
  description: str,
  /** From the tool's annotations (`readOnlyHint`): a read-class tool; otherwise execute class. */
  readOnly: bool,
  enabled: bool,
});
export const mcpPromptView = object({
  name: str,
  description: nullable(str),
  arguments: arrayOf(object({ name: str, description: nullable(str), required: bool })),
});
export const mcpResourceView = object({ uri: str, name: str, description: nullable(str), mimeType: nullable(str) });

export const mcpServerView = object({
  name: str,
  source: mcpServerSource,
  /** Workspace-relative file (`.vscode/mcp.json`), or `settings (vox.mcp.servers)`. */
  sourcePath: str,
  transport: mcpTransport,
  /** The command line (stdio) or URL (http/sse), secrets removed. */
  target: str,
  enabled: bool,
  status: mcpServerStatus,
  /** The last failure, in words (null when none). */
  error: nullable(str),
  /** Restarts since Vox started it (crashes, hangs, the user). */
  restarts: int,
  tools: arrayOf(mcpToolView),
  prompts: arrayOf(mcpPromptView),
  resources: arrayOf(mcpResourceView),
});
export type McpServerView = Infer<typeof mcpServerView>;

/** The tool-catalog guard (SPEC 3.3): above `threshold` active MCP tools the model sees 3 meta-tools. */
export const mcpCatalogView = object({ activeTools: int, threshold: int, metaMode: bool });

export const mcpServerListView = object({
  servers: arrayOf(mcpServerView),
  /** Config files that could not be read or parsed (each skipped, the rest used). */
  configErrors: arrayOf(object({ source: str, message: str })),
  catalog: mcpCatalogView,
});
export type McpServerListView = Infer<typeof mcpServerListView>;

export const mcpCommands = {
  listMcpServers: defineCommand('listMcpServers', {
    readOnly: true,
    summary: 'The configured MCP servers with their status, tools, prompts and resources, and the config files that did not parse.',
    requires: ['read'],
    params: {},
    result: mcpServerListView,
  }),
  watchMcpServers: defineCommand('watchMcpServers', {
    readOnly: true,
    summary: 'Subscribes to `mcpServers` updates (every server, after any change); answers {target: "mcpServers"}.',
    requires: ['read'],
    params: {},
    result: object({ target: str }),
  }),
  reloadMcpConfig: defineCommand('reloadMcpConfig', {
    readOnly: true,
    summary: 'Reads the MCP config files and settings again now (they are also watched on disk); new servers start, removed or changed ones stop. Answers the list.',
    requires: ['read'],
    params: {},
    result: mcpServerListView,
  }),
  restartMcpServer: defineCommand('restartMcpServer', {
    readOnly: true,
    summary: 'Stops and starts one MCP server (reloading the config files first).',
    requires: ['owner'],
    params: { name: mcpName },
    result: mcpServerView,
  }),
  setMcpServerEnabled: defineCommand('setMcpServerEnabled', {
    readOnly: true,
    summary: 'Enables or disables one MCP server (kept in the workspace settings); a disabled server is stopped and its tools leave the agent.',
    requires: ['owner'],
    params: { name: mcpName, enabled: bool },
    result: mcpServerView,
  }),
  setMcpToolEnabled: defineCommand('setMcpToolEnabled', {
    readOnly: true,
    summary: 'Enables or disables one tool of an MCP server for the agent (kept in the workspace settings).',
    requires: ['owner'],
    params: { name: mcpName, tool: mcpName, enabled: bool },
    result: mcpServerView,
  }),
  authenticateMcpServer: defineCommand('authenticateMcpServer', {
    readOnly: true,
    summary: 'Signs in to an HTTP MCP server that requires OAuth (opens the browser; the tokens go to SecretStorage), then connects.',
    requires: ['owner'],
    params: { name: mcpName },
    result: mcpServerView,
  }),
  readMcpResource: defineCommand('readMcpResource', {
    readOnly: true,
    summary: 'Reads one resource of an MCP server (what an @-mention of it attaches), text bounded.',
    requires: ['read'],
    params: { server: mcpName, uri: refine(str, (s) => s.length > 0 && s.length <= MAX_MCP_URI_CHARS, `1..${MAX_MCP_URI_CHARS} characters`) },
    result: object({ uri: str, mimeType: nullable(str), text: str, truncated: bool }),
  }),
  getMcpPrompt: defineCommand('getMcpPrompt', {
    readOnly: true,
    summary: 'Expands one prompt of an MCP server with its arguments (what its slash command inserts).',
    requires: ['read'],
    params: { server: mcpName, name: mcpName, arguments: optional(unknownValue) },
    result: object({ text: str, description: nullable(str) }),
  }),
};
