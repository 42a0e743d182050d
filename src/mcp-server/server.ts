/**
 * Vox as an MCP server (SPEC 5.2): `createVoxMcpServer` builds the SDK McpServer with Vox's tools
 * (./tools.ts) for one caller, over a protocol client connected with that caller's grant;
 * `connectMcpSession` opens such a client on an engine. Transports live elsewhere: stdio in
 * ./stdio.ts (`vox mcp serve --stdio`), streamable HTTP in ./http/. Like the CLI, this is a
 * client of the protocol: it reaches the engine only through `Engine.connect` and EngineClient.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { EngineClient, inProcessTransport } from '../client/engine-client';
import type { Engine } from '../engine/engine';
import { mcpGrant, type McpGrantLevel, type McpGrantOptions } from './grants';
import { VoxToolRegistry } from './registry';
import { VOX_TOOLS } from './tools';

/** The name and version Vox's MCP server reports in `initialize`. */
export const VOX_MCP_SERVER_INFO = { name: 'vox', version: '0.1.0' } as const;

export function createVoxMcpServer(opts: { client: EngineClient; grant: McpGrantLevel; clientName?: string }): McpServer {
  const registry = new VoxToolRegistry(VOX_MCP_SERVER_INFO, {
    client: opts.client, level: opts.grant,
    log: (e) => process.stderr.write(`[vox mcp] ${opts.clientName ?? 'MCP client'}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`),
  });
  for (const tool of VOX_TOOLS) registry.add(tool);
  return registry.server;
}

/** A protocol client of `engine` holding the MCP grant of `level` (capabilities, thread-mode ceiling, confined to the engine's workspace unless `opts.allWorkspaces`). */
export function connectMcpSession(engine: Engine, level: McpGrantLevel, holder: string, opts: McpGrantOptions = {}): EngineClient {
  return new EngineClient(inProcessTransport((sink) => engine.connect(sink, mcpGrant(level, holder, opts))), 'mcp');
}
