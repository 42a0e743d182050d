/**
 * Vox's MCP server over stdio (`vox mcp serve --stdio`): one caller, the process's stdin/stdout
 * carrying JSON-RPC and nothing else (logs go to stderr). Resolves when the caller closes stdin or
 * the transport closes; the session's client is closed then.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import type { Engine } from '../engine/engine';
import type { McpGrantLevel } from './grants';
import { connectMcpSession, createVoxMcpServer } from './server';

export async function serveStdio(opts: { engine: Engine; level: McpGrantLevel; input?: Readable; output?: Writable }): Promise<void> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const client = connectMcpSession(opts.engine, opts.level, `MCP client (stdio, ${opts.level} grant)`);
  const server = createVoxMcpServer({ client, grant: opts.level });
  const transport = new StdioServerTransport(input, output);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    input.once('end', () => void transport.close());
    input.once('close', () => void transport.close());
  });
  try {
    await server.connect(transport);
    await closed;
  } finally {
    client.close();
  }
}
