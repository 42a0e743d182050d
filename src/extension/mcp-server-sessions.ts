/**
 * The merge seam between the HTTP server (src/mcp-server/http/, this branch) and Vox's MCP tool
 * set (src/mcp-server/server.ts, built in parallel): the McpServer each HTTP session gets, under
 * the grant its client was given. Until the tool set is merged, opening a session fails with a
 * typed error (the client sees a JSON-RPC "Internal error"); the lead replaces the body with
 *   (grant, clientName) => createVoxMcpServer({ client: connectMcpSession(engine, grant, clientName), grant, clientName })
 */
import type { Engine } from '../engine/engine';
import { McpServerError } from '../mcp-server/http/errors';
import type { ServerFor } from '../mcp-server/http/mcp-endpoint';

export function mcpSessionServers(_engine: Engine): ServerFor {
  return () => {
    throw new McpServerError('notEnabled', "Vox's MCP tool set (src/mcp-server/server.ts) is not part of this build");
  };
}
