/**
 * Vox's MCP server over stdio (`vox mcp serve --stdio`): one caller, the process's stdin/stdout
 * carrying JSON-RPC and nothing else (logs go to stderr; the line transport is ./stdio-lines.ts).
 * The caller's engine session holds the grant of its level, confined to the engine's workspace
 * unless `allWorkspaces`, and says no one can answer approvals (the engine runs in this process,
 * which no VS Code window sees). Resolves when the caller closes stdin or the transport closes;
 * the session's client is closed then.
 */
import type { Readable, Writable } from 'node:stream';
import type { Engine } from '../engine/engine';
import type { McpGrantLevel } from './grants';
import { connectMcpSession, createVoxMcpServer } from './server';
import { StdioLineTransport } from './stdio-lines';

export async function serveStdio(opts: { engine: Engine; level: McpGrantLevel; allWorkspaces?: boolean; input?: Readable; output?: Writable; note?: (line: string) => void }): Promise<void> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const note = opts.note ?? ((line: string) => void process.stderr.write(`[vox mcp] ${line}\n`));
  const scope = opts.allWorkspaces ? 'all workspaces' : 'this workspace';
  const client = connectMcpSession(opts.engine, opts.level, `MCP client (stdio, ${opts.level} grant, ${scope})`, { allWorkspaces: opts.allWorkspaces === true, noApprover: true });
  const server = createVoxMcpServer({ client, grant: opts.level });
  const transport = new StdioLineTransport(input, output, note);
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
