/**
 * Handlers of the MCP client commands (../../../protocol/commands/mcp.ts), on the engine's
 * McpManager (../../mcp/manager.ts). Each first makes sure the servers were started (they start
 * on first need); `watchMcpServers` pushes the `mcpServers` update after every change.
 */
import type { HandlerTable } from './types';

type McpCommand =
  | 'listMcpServers' | 'watchMcpServers' | 'reloadMcpConfig' | 'restartMcpServer' | 'setMcpServerEnabled' | 'setMcpToolEnabled'
  | 'authenticateMcpServer' | 'readMcpResource' | 'getMcpPrompt';

export const mcpHandlers: HandlerTable<McpCommand> = {
  async listMcpServers({ services: { mcp } }) {
    await mcp.ensureStarted();
    return mcp.list();
  },
  watchMcpServers({ services: { mcp }, session }) {
    const target = 'mcpServers';
    const push = () => session.send({ type: 'mcpServers', ...mcp.list() });
    session.addSubscription(target, mcp.onDidChange(push));
    push();
    // The first start runs on; its changes arrive as updates.
    void mcp.ensureStarted();
    return { target };
  },
  reloadMcpConfig: ({ services: { mcp } }) => mcp.reloadConfig(),
  restartMcpServer: ({ services: { mcp } }, cmd) => mcp.restart(cmd.name),
  setMcpServerEnabled: ({ services: { mcp } }, cmd) => mcp.setServerEnabled(cmd.name, cmd.enabled),
  setMcpToolEnabled: ({ services: { mcp } }, cmd) => mcp.setToolEnabled(cmd.name, cmd.tool, cmd.enabled),
  authenticateMcpServer: ({ services: { mcp } }, cmd) => mcp.authenticate(cmd.name),
  readMcpResource: ({ services: { mcp } }, cmd) => mcp.readResource(cmd.server, cmd.uri),
  getMcpPrompt: ({ services: { mcp } }, cmd) => mcp.getPrompt(cmd.server, cmd.name, cmd.arguments),
};
