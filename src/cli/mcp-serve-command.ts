/**
 * `vox mcp serve --stdio [--grant readOnly|default|fullAccess] [--cwd DIR]`: Vox as an MCP server
 * for another agent (Claude Code, any MCP client) on stdin/stdout (src/mcp-server/). The grant
 * defaults to readOnly; stdout carries JSON-RPC only (notes go to stderr). It shares the database
 * with VS Code and the other CLI commands ($VOX_HOME/vox.db).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { isMcpGrantLevel, MCP_GRANT_LEVELS, type McpGrantLevel } from '../mcp-server/grants';
import { serveStdio } from '../mcp-server/stdio';
import { openEngine } from './connect';
import { CliUsageError } from './usage-error';

function parseGrant(v: string): McpGrantLevel {
  if (!isMcpGrantLevel(v)) throw new InvalidArgumentError(`--grant must be one of ${MCP_GRANT_LEVELS.join(', ')}`);
  return v;
}

export function registerMcpServeCommand(mcp: Command): void {
  mcp.command('serve')
    .description('serve Vox\'s threads, checkpoints and variants to another agent as an MCP server (JSON-RPC on stdio)')
    .option('--stdio', 'speak MCP over stdin/stdout (the only transport of the CLI; VS Code serves HTTP when enabled)')
    .option('--grant <level>', `what the caller may do: ${MCP_GRANT_LEVELS.join(' | ')} (default readOnly)`, parseGrant, 'readOnly' as McpGrantLevel)
    .option('--cwd <dir>', 'workspace (default: the current directory)')
    .option('--json', 'notes on stderr as JSON lines (stdout is JSON-RPC either way)')
    .addHelpText('after', '\nGrants: readOnly lists, reads and searches; default also sends prompts, captures checkpoints and starts\nthreads up to runtime default (the user approves edits in VS Code); fullAccess also starts fullAccess threads.\nExample (Claude Code): {"mcpServers":{"vox":{"command":"vox","args":["mcp","serve","--stdio"]}}}')
    .action(async (o: { stdio?: boolean; grant: McpGrantLevel; cwd?: string; json?: boolean }, cmd: Command) => {
      if (!o.stdio) throw new CliUsageError('vox mcp serve needs --stdio (HTTP is served by the VS Code extension when enabled)', cmd);
      const engine = openEngine({ cwd: o.cwd ?? process.cwd(), queuePolicy: 'own' });
      process.stderr.write(o.json
        ? `${JSON.stringify({ type: 'serving', transport: 'stdio', grant: o.grant, workspace: engine.workspaceRoot })}\n`
        : `[vox mcp] serving on stdio with the ${o.grant} grant\n`);
      try {
        await serveStdio({ engine, level: o.grant });
      } finally {
        await engine.dispose();
      }
    });
}
