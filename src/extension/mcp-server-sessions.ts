/**
 * The seam between the HTTP server (src/mcp-server/http/) and Vox's MCP tool set
 * (src/mcp-server/server.ts): the McpServer each HTTP session gets, under the grant its client was
 * given — a protocol session of the extension's engine holding that grant (connectMcpSession),
 * closed when the MCP session closes.
 */
import type { Engine } from '../engine/engine';
import type { ServerFor } from '../mcp-server/http/mcp-endpoint';
import { connectMcpSession, createVoxMcpServer } from '../mcp-server/server';

export function mcpSessionServers(engine: Engine): ServerFor {
  return (grant, clientName) => {
    const client = connectMcpSession(engine, grant, `MCP client ${clientName} (HTTP)`);
    const server = createVoxMcpServer({ client, grant, clientName });
    const closed = server.server.onclose;
    server.server.onclose = () => {
      closed?.();
      client.close(); // the protocol session ends with the MCP session
    };
    return server;
  };
}
