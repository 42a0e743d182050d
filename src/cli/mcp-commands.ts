/**
 * `vox mcp …` — the MCP servers Vox's agent uses, clients of the MCP commands:
 *   vox mcp list [--json]                           every server: status, transport, target, source, tools; config errors
 *   vox mcp tools <server> [--json]                 a server's tools (name the model sees, read/execute, on/off)
 *   vox mcp reload [--json]                         read the config files again (they are watched too)
 *   vox mcp restart <server> [--json]               stop and start it (config reloaded)
 *   vox mcp enable|disable <server> [--tool T]      a server, or one of its tools (kept in $VOX_HOME/mcp-settings.json)
 * The `mcp` group is created by main.ts (`vox mcp serve` lives in the same group).
 */
import type { Command } from 'commander';
import { LISTED_TEXT_CHARS, quote } from '../protocol/wire/quote';
import type { McpServerListView, McpServerView } from '../protocol/commands/mcp';
import { withClient } from './connect';
import { print, type Flags } from './output';

type Cwd = Flags & { cwd?: string };

/** A failure the CLI finds itself, printed like the engine's (`McpError (unknownServer): …`). */
class McpCliError extends Error {
  override readonly name = 'McpError';
  readonly domain = 'mcp';
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export function formatMcpServer(s: McpServerView): string {
  const enabledTools = s.tools.filter((t) => t.enabled).length;
  const lines = [`${s.name}  [${s.status}]  ${s.transport} ${s.target}  (${s.sourcePath})`];
  lines.push(`  ${enabledTools}/${s.tools.length} tools, ${s.prompts.length} prompts, ${s.resources.length} resources${s.restarts > 0 ? `, ${s.restarts} restart(s)` : ''}`);
  if (s.error) lines.push(`  error: ${s.error}`);
  return lines.join('\n');
}

export function formatMcpList(v: McpServerListView): string {
  const lines = v.servers.length === 0 ? ['no MCP servers (configure them in .vox/mcp.json, .vscode/mcp.json or .mcp.json)'] : v.servers.map(formatMcpServer);
  for (const e of v.configErrors) lines.push(`config: ${e.source}: ${e.message}`);
  lines.push(`tools offered: ${v.catalog.activeTools} (meta-tools above ${v.catalog.threshold}${v.catalog.metaMode ? ': on' : ''})`);
  return lines.join('\n');
}

export function formatMcpTools(s: McpServerView): string {
  if (s.tools.length === 0) return `${s.name} lists no tools (${s.status})`;
  return s.tools.map((t) => `${t.qualifiedName}  [${t.readOnly ? 'read' : 'execute'}${t.enabled ? '' : ', disabled'}]  ${quote(t.description.split('\n')[0]!, LISTED_TEXT_CHARS)}`).join('\n');
}

export function registerMcpClientCommands(mcp: Command, run: (p: Promise<number>) => void): void {
  const open = <T>(o: Cwd, f: Parameters<typeof withClient<T>>[1]) => withClient<T>({ cwd: o.cwd ?? process.cwd(), autoCheckpoints: false, reading: true }, f);
  const cwdOpt = (c: Command) => c.option('--cwd <dir>', 'workspace (default: the current directory)').option('--json', 'print JSON');
  cwdOpt(mcp.command('list').description('the configured MCP servers with their status, transport, source and tool counts; config errors'))
    .action((o: Cwd) => run(open(o, async ({ client }) => {
      const v = await client.call('listMcpServers', {});
      print(o, formatMcpList(v), v);
      return 0;
    })));
  cwdOpt(mcp.command('tools').description("one server's tools: the name the model sees, read or execute class, enabled").argument('<server>'))
    .action((server: string, o: Cwd) => run(open(o, async ({ client }) => {
      const v = await client.call('listMcpServers', {});
      const s = v.servers.find((x) => x.name === server);
      if (!s) throw new McpCliError('unknownServer', `No MCP server named ${JSON.stringify(server)}. Configured: ${v.servers.map((x) => x.name).join(', ') || '(none)'}.`);
      print(o, formatMcpTools(s), s);
      return 0;
    })));
  cwdOpt(mcp.command('reload').description('read the MCP config files and settings again now (new servers start, removed ones stop); the list'))
    .action((o: Cwd) => run(open(o, async ({ client }) => {
      const v = await client.call('reloadMcpConfig', {});
      print(o, formatMcpList(v), v);
      return 0;
    })));
  cwdOpt(mcp.command('restart').description('stop and start one MCP server (the config files are read again)').argument('<server>'))
    .action((server: string, o: Cwd) => run(open(o, async ({ client }) => {
      const s = await client.call('restartMcpServer', { name: server });
      print(o, formatMcpServer(s), s);
      return s.status === 'connected' ? 0 : 1;
    })));
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    cwdOpt(mcp.command(verb).description(`${verb} an MCP server, or with --tool one of its tools, for the agent in this workspace`).argument('<server>')
      .option('--tool <name>', `${verb} only this tool (its name on the server)`))
      .action((server: string, o: Cwd & { tool?: string }) => run(open(o, async ({ client }) => {
        const s = o.tool !== undefined
          ? await client.call('setMcpToolEnabled', { name: server, tool: o.tool, enabled })
          : await client.call('setMcpServerEnabled', { name: server, enabled });
        print(o, `${o.tool ? `${server}/${o.tool}` : server} ${enabled ? 'enabled' : 'disabled'}\n${formatMcpServer(s)}`, s);
        return 0;
      })));
  }
}
