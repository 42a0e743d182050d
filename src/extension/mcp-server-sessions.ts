/**
 * The merge seam between the HTTP server (src/mcp-server/http/, this branch) and Vox's MCP tool
 * set (src/mcp-server/server.ts, built in parallel): the McpServer each HTTP session gets, under
 * the grant its client was given. Until the tool set is merged, opening a session fails with a
 * typed error (the client sees a JSON-RPC "Internal error", the Vox log the message). At merge
 * the body becomes (tried against the mcp-server branch: the SDK client over HTTP lists the 8
 * tools, list_threads works, start_thread is capabilityDenied under readOnly):
 *
 *   return (grant, clientName) => {
 *     const client = connectMcpSession(engine, grant, `MCP client ${clientName} (HTTP)`);
 *     const server = createVoxMcpServer({ client, grant, clientName });
 *     const closed = server.server.onclose;
 *     server.server.onclose = () => { closed?.(); client.close(); }; // the protocol session ends with the MCP session
 *     return server;
 *   };
 */
import type { Engine } from '../engine/engine';
import { McpServerError } from '../mcp-server/http/errors';
import type { ServerFor } from '../mcp-server/http/mcp-endpoint';

export function mcpSessionServers(_engine: Engine): ServerFor {
  return () => {
    throw new McpServerError('notEnabled', "Vox's MCP tool set (src/mcp-server/server.ts) is not part of this build");
  };
}
