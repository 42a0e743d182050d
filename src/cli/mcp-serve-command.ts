/**
 * `vox mcp serve --stdio [--grant readOnly|default|fullAccess] [--cwd DIR] [--all-workspaces]`: Vox
 * as an MCP server for another agent (Claude Code, any MCP client) on stdin/stdout
 * (src/mcp-server/). The grant defaults to readOnly and to the threads of the workspace; stdout
 * carries JSON-RPC only (notes go to stderr). It shares the database with VS Code and the other
 * CLI commands ($VOX_HOME/vox.db); a readOnly grant is served from a database it cannot write.
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
    .option('--all-workspaces', 'let the caller reach the threads of every workspace in the database, not only this one\'s')
    .option('--json', 'notes on stderr as JSON lines (stdout is JSON-RPC either way)')
    .addHelpText('after', [
      '',
      'Grants: the caller reaches only the threads of its workspace (--cwd); another workspace\'s thread id is',
      'refused like an id no thread has. --all-workspaces lifts that. readOnly lists, reads and searches; default',
      'also sends prompts, captures checkpoints and starts threads; fullAccess also starts fullAccess threads.',
      'No one can approve a tool call here (the threads run in this process, which VS Code does not see): a turn',
      'that would ask (runtime default: Ask every time) is refused at start; runtime readOnly (Plan) runs, and',
      'fullAccess with --grant fullAccess. To approve edits, use VS Code\'s MCP server (vox.mcpServer.enabled).',
      'readOnly serves a database that cannot be written (read-only file or folder).',
      'Example (Claude Code): {"mcpServers":{"vox":{"command":"vox","args":["mcp","serve","--stdio"]}}}',
    ].join('\n'))
    .action(async (o: { stdio?: boolean; grant: McpGrantLevel; cwd?: string; allWorkspaces?: boolean; json?: boolean }, cmd: Command) => {
      if (!o.stdio) throw new CliUsageError('vox mcp serve needs --stdio (HTTP is served by the VS Code extension when enabled)', cmd);
      // A read-only caller only reads: a database that cannot be written is served read-only (with a note on stderr).
      const engine = openEngine({ cwd: o.cwd ?? process.cwd(), queuePolicy: 'own', reading: o.grant === 'readOnly' });
      const scope = o.allWorkspaces ? 'all workspaces' : 'this workspace';
      process.stderr.write(o.json
        ? `${JSON.stringify({ type: 'serving', transport: 'stdio', grant: o.grant, workspace: engine.workspaceRoot, threads: o.allWorkspaces ? 'all' : 'workspace' })}\n`
        : `[vox mcp] serving on stdio with the ${o.grant} grant (threads of ${scope})\n`);
      try {
        await serveStdio({ engine, level: o.grant, allWorkspaces: o.allWorkspaces === true });
      } finally {
        await engine.dispose();
      }
    });
}
