/**
 * Handlers of the MCP client commands (../../../protocol/commands/mcp.ts). Seam for issue 16:
 * until the MCP client (../../mcp/) lands, every command answers `mcp/notConnected`.
 */
import { VoxError } from '../../../protocol/wire/vox-error';
import type { HandlerTable } from './types';

type McpCommand =
  | 'listMcpServers' | 'watchMcpServers' | 'restartMcpServer' | 'setMcpServerEnabled' | 'setMcpToolEnabled'
  | 'authenticateMcpServer' | 'readMcpResource' | 'getMcpPrompt';

class McpSeamError extends VoxError<'mcp'> {
  override readonly name = 'McpSeamError';
  readonly domain = 'mcp' as const;
}

const notYet = (): never => {
  throw new McpSeamError('notConnected', 'MCP servers are not available in this build yet.');
};

export const mcpHandlers: HandlerTable<McpCommand> = {
  listMcpServers: notYet,
  watchMcpServers: notYet,
  restartMcpServer: notYet,
  setMcpServerEnabled: notYet,
  setMcpToolEnabled: notYet,
  authenticateMcpServer: notYet,
  readMcpResource: notYet,
  getMcpPrompt: notYet,
};
