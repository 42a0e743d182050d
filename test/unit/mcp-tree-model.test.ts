/**
 * Tests for src/extension/mcp/tree-model.ts: the "MCP Servers" tree as data — status icons and
 * words per status, the description (transport, tool counts), the tooltip (source file, last
 * error), tool rows with their checkbox state and read-only mark, the error row of a failed
 * server, the prompts/resources summary, config errors, context values the menus match, the
 * empty list (welcome content), and the template of Add MCP Server… (JSON with comments).
 * Open MCP Config File from the palette (openConfigPlan): one server's file, a pick among several, with
 * none the file that exists or failed to parse, else the offer to create `.vscode/mcp.json`.
 * Every view goes through the protocol's own validator first, so the fixtures are real views.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mcpServerListView, type McpServerListView, type McpServerView } from '../../src/protocol/commands/mcp';
import { buildMcpTree, configFileOf, MCP_ERROR_ROW_MAX_CHARS, MCP_JSON_TEMPLATE, MCP_STATUS_ICON, openConfigPlan, serverContextValue, type McpTreeNode } from '../../src/extension/mcp/tree-model';
import { parseVscodeConfig } from '../../src/engine/mcp/config';

function server(over: Partial<McpServerView> = {}): McpServerView {
  return {
    name: 'notes',
    source: 'vscode',
    sourcePath: '.vscode/mcp.json',
    transport: 'stdio',
    target: 'node server.mjs',
    enabled: true,
    status: 'connected',
    error: null,
    restarts: 0,
    tools: [
      { name: 'list_notes', qualifiedName: 'mcp__notes__list_notes', description: 'Lists the notes', readOnly: true, enabled: true },
      { name: 'add_note', qualifiedName: 'mcp__notes__add_note', description: 'Adds a note', readOnly: false, enabled: false },
    ],
    prompts: [{ name: 'summarise', description: 'Summarise notes', arguments: [{ name: 'topic', description: null, required: true }] }],
    resources: [{ uri: 'notes://all', name: 'All notes', description: null, mimeType: 'text/plain' }],
    ...over,
  };
}

function list(servers: McpServerView[], configErrors: McpServerListView['configErrors'] = []): McpServerListView {
  // The protocol's validator: a fixture that the engine could not send fails here.
  return mcpServerListView({ servers, configErrors, catalog: { activeTools: 1, threshold: 12, metaMode: false } });
}

const only = <K extends McpTreeNode['kind']>(nodes: McpTreeNode[], kind: K) => nodes.filter((n): n is Extract<McpTreeNode, { kind: K }> => n.kind === kind);

describe('MCP Servers tree model', () => {
  it('shows a connected server with its status, transport and tool count, and its tools as checkboxes', () => {
    const nodes = buildMcpTree(list([server()]));
    assert.equal(nodes.length, 1);
    const root = nodes[0]!;
    assert.equal(root.kind, 'server');
    if (root.kind !== 'server') return;
    assert.equal(root.label, 'notes');
    assert.equal(root.icon, 'pass-filled');
    assert.equal(root.description, 'connected · stdio · 1/2 tools');
    assert.match(root.tooltip, /From \.vscode\/mcp\.json/);
    assert.match(root.tooltip, /stdio: node server\.mjs/);
    assert.equal(root.contextValue, 'voxMcpServer.connected.enabled');
    const tools = only(root.children, 'tool');
    assert.deepEqual(tools.map((t) => [t.tool, t.checked, t.readOnly]), [['list_notes', true, true], ['add_note', false, false]]);
    assert.match(tools[0]!.description, /^read-only · Lists the notes$/);
    assert.match(tools[1]!.description, /^execute · /);
    assert.match(tools[0]!.tooltip, /mcp__notes__list_notes/);
    const [summary] = only(root.children, 'summary');
    assert.equal(summary!.label, '1 prompt · 1 resource');
    assert.match(summary!.tooltip, /\/mcp\.notes\.summarise/);
    assert.equal(only(root.children, 'error').length, 0);
  });

  it('counts all tools when every one is enabled, and says "no tools" when there are none', () => {
    const all = buildMcpTree(list([server({ tools: [server().tools[0]!] })]))[0]!;
    assert.equal(all.kind === 'server' && all.description, 'connected · stdio · 1 tool');
    const none = buildMcpTree(list([server({ tools: [], prompts: [], resources: [] })]))[0]!;
    assert.equal(none.kind === 'server' && none.description, 'connected · stdio · no tools');
    assert.equal(none.kind === 'server' && none.children.length, 0);
  });

  it('gives a failed server an error row (clipped) and puts the whole error in the tooltip', () => {
    const error = `spawn ENOENT: ${'x'.repeat(400)}`;
    const root = buildMcpTree(list([server({ status: 'failed', error, tools: [], restarts: 3 })]))[0]!;
    assert.equal(root.kind, 'server');
    if (root.kind !== 'server') return;
    assert.equal(root.icon, 'error');
    assert.match(root.tooltip, /Restarted 3 times/);
    assert.equal(root.description, 'failed · stdio · no tools · 3 restarts');
    assert.ok(root.tooltip.includes(`Last error: ${error}`));
    const [row] = only(root.children, 'error');
    assert.ok(row);
    assert.equal(row.label.length, MCP_ERROR_ROW_MAX_CHARS);
    assert.ok(row.label.endsWith('…'));
    assert.equal(row.tooltip, error);
    assert.equal(root.children[0]!.kind, 'error', 'the error comes first');
  });

  it('maps every status to its own icon and context value; a disabled server shows as disabled whatever its status', () => {
    const statuses = ['starting', 'connected', 'restarting', 'failed', 'needsAuth', 'disabled', 'stopped'] as const;
    const icons = new Set(statuses.map((st) => (buildMcpTree(list([server({ status: st })]))[0] as { icon: string }).icon));
    assert.equal(icons.size, statuses.length);
    assert.equal(MCP_STATUS_ICON.needsAuth, 'key');
    assert.equal(serverContextValue(server({ status: 'needsAuth' })), 'voxMcpServer.needsAuth.enabled');
    const off = buildMcpTree(list([server({ enabled: false, status: 'stopped' })]))[0]!;
    assert.equal(off.kind === 'server' && off.icon, 'circle-slash');
    assert.equal(off.kind === 'server' && off.contextValue, 'voxMcpServer.stopped.disabled');
    assert.match(off.kind === 'server' ? off.description : '', /^disabled · /);
  });

  it('the menus\' when-clauses match the context values they are meant for', () => {
    // The regexes of package.json's view/item/context entries.
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { contributes: { menus: Record<string, { command: string; when: string }[]> } };
    const entries = pkg.contributes.menus['view/item/context']!.filter((e) => e.when.includes('vox.mcpServers'));
    const offers = (cv: string) => new Set(entries.filter((e) => {
      const m = /viewItem =~ \/(.+)\/$/.exec(e.when) ?? /viewItem == (\S+)$/.exec(e.when);
      return m ? (e.when.includes('=~') ? new RegExp(m[1]!).test(cv) : m[1] === cv) : false;
    }).map((e) => e.command));
    assert.deepEqual([...offers(serverContextValue(server()))].sort(), ['vox.mcp.disable', 'vox.mcp.openConfig', 'vox.mcp.restart']);
    assert.deepEqual([...offers(serverContextValue(server({ status: 'needsAuth' })))].sort(), ['vox.mcp.disable', 'vox.mcp.openConfig', 'vox.mcp.restart', 'vox.mcp.signIn']);
    assert.deepEqual([...offers(serverContextValue(server({ enabled: false, status: 'disabled' })))].sort(), ['vox.mcp.enable', 'vox.mcp.openConfig']);
    assert.deepEqual([...offers('voxMcpConfigError')], ['vox.mcp.openConfig']);
  });

  it('lists config files that did not parse after the servers', () => {
    const nodes = buildMcpTree(list([server()], [{ source: '.mcp.json', message: 'Unexpected token } in JSON at position 12' }]));
    assert.deepEqual(nodes.map((n) => n.kind), ['server', 'configError']);
    const e = nodes[1]!;
    assert.equal(e.kind === 'configError' && e.source, '.mcp.json');
    assert.match(e.kind === 'configError' ? e.tooltip : '', /Unexpected token/);
  });

  it('is empty when nothing is configured (VS Code then shows the welcome content)', () => {
    assert.deepEqual(buildMcpTree(list([])), []);
  });

  it('names the config file to open, or none for the settings source', () => {
    assert.equal(configFileOf(server()), '.vscode/mcp.json');
    assert.equal(configFileOf(server({ source: 'settings', sourcePath: 'settings (vox.mcp.servers)' })), null);
  });

  it('writes a template that is valid JSON once its comments are removed, with no server started by default', () => {
    const json = JSON.parse(MCP_JSON_TEMPLATE.replace(/^\s*\/\/.*$/gm, '')) as { servers: Record<string, unknown> };
    assert.deepEqual(json, { servers: {} });
    assert.match(MCP_JSON_TEMPLATE, /"type": "stdio"/);
  });

  describe('Open MCP Config File from the palette (openConfigPlan)', () => {
    const none = () => false;
    it('with no server and no config file: offers to create .vscode/mcp.json, whose skeleton the engine parses without an error', () => {
      assert.deepEqual(openConfigPlan(list([]), none), { kind: 'offerCreate', path: '.vscode/mcp.json' });
      const parsed = parseVscodeConfig(MCP_JSON_TEMPLATE, { workspaceRoot: '/ws', env: {} });
      assert.deepEqual(parsed, { servers: [], errors: [] });
    });
    it('with no server: opens the config file that exists (in precedence order), or the one that failed to parse', () => {
      assert.deepEqual(openConfigPlan(list([]), (rel) => rel === '.mcp.json'), { kind: 'open', path: '.mcp.json' });
      assert.deepEqual(openConfigPlan(list([]), (rel) => rel === '.mcp.json' || rel === '.vox/mcp.json'), { kind: 'open', path: '.vox/mcp.json' });
      assert.deepEqual(openConfigPlan(list([], [{ source: '.vscode/mcp.json: $.servers.x', message: 'bad' }]), (rel) => rel === '.mcp.json'), { kind: 'open', path: '.vscode/mcp.json' });
      assert.deepEqual(openConfigPlan(list([], [{ source: 'settings (vox.mcp.servers)', message: 'bad' }]), none), { kind: 'open', path: null }, 'the setting');
    });
    it('one server: its file (or the setting); several: a pick', () => {
      assert.deepEqual(openConfigPlan(list([server()]), none), { kind: 'open', path: '.vscode/mcp.json' });
      assert.deepEqual(openConfigPlan(list([server({ source: 'settings', sourcePath: 'settings (vox.mcp.servers)' })]), none), { kind: 'open', path: null });
      assert.deepEqual(openConfigPlan(list([server(), server({ name: 'b', source: 'claude', sourcePath: '.mcp.json' })]), none), { kind: 'pick' });
    });
  });
});
