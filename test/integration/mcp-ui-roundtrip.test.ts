/**
 * The user-facing MCP parts against a real engine: a temp workspace whose
 * `.vscode/mcp.json` names the e2e's stdio MCP server (test/e2e/fixtures/mcp-notes-server.mjs,
 * the official SDK) and one whose command does not exist. The "MCP Servers" tree model
 * (src/extension/mcp/tree-model.ts) built from the engine's own listMcpServers and `mcpServers`
 * updates: connected with its tools (read-only marked), the failed one with its error row; a tool
 * unticked through setMcpToolEnabled comes back unticked and counted out. The webview's slash
 * logic (webview/src/lib/mcp-state.ts) driven over the same protocol client: the server's prompts
 * are offered, one with an argument is expanded by the real server into the draft, and an
 * unknown prompt's error reaches the form.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { ClientCommand } from '../../src/protocol/commands/index';
import type { McpServerListView } from '../../src/protocol/commands/mcp';
import { buildMcpTree, type McpTreeNode } from '../../src/extension/mcp/tree-model';
import { McpController, createMcpModel } from '../../webview/src/lib/mcp-state';
import { mcpRig, type McpRig } from '../support/mcp/rig';
import { until } from '../support/wait';

const FIXTURE = path.resolve(__dirname, '../e2e/fixtures/mcp-notes-server.mjs');
const serverNode = (nodes: McpTreeNode[], name: string) => nodes.find((n): n is Extract<McpTreeNode, { kind: 'server' }> => n.kind === 'server' && n.server === name);

describe('MCP UI against a real engine: the tree model and the slash commands', function () {
  this.timeout(60_000);
  let rig: McpRig;
  let latest: McpServerListView | null = null;

  before(async () => {
    rig = await mcpRig({
      files: {
        '.vscode/mcp.json': `{
          // VS Code's format, with a comment
          "servers": {
            "notes": { "type": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(FIXTURE)}] },
            "missing": { "type": "stdio", "command": "/nonexistent/vox-mcp-server" },
          }
        }`,
      },
    });
    rig.client.on('mcpServers', (u) => {
      const { type: _t, ...view } = u;
      latest = view;
    });
    await rig.client.call('watchMcpServers', {});
  });
  after(async () => rig?.dispose());

  it('the tree shows the connected server with its tools and prompts, and the failed one with its error', async () => {
    await until(async () => {
      const v = await rig.client.call('listMcpServers', {});
      return v.servers.find((s) => s.name === 'notes')?.status === 'connected' && v.servers.find((s) => s.name === 'missing')?.status === 'failed';
    }, { what: 'both servers settled', timeoutMs: 25_000 });
    const nodes = buildMcpTree(await rig.client.call('listMcpServers', {}));
    const notes = serverNode(nodes, 'notes')!;
    assert.equal(notes.description, 'connected · stdio · 3 tools');
    assert.equal(notes.icon, 'pass-filled');
    assert.match(notes.tooltip, /From \.vscode\/mcp\.json/);
    const tools = notes.children.filter((c): c is Extract<McpTreeNode, { kind: 'tool' }> => c.kind === 'tool');
    assert.deepEqual(tools.map((t) => [t.tool, t.readOnly, t.checked]).sort(), [['add_note', false, true], ['count_notes', true, true], ['list_notes', true, true]]);
    assert.ok(notes.children.some((c) => c.kind === 'summary' && c.label === '2 prompts · 1 resource'));
    const missing = serverNode(nodes, 'missing')!;
    assert.equal(missing.icon, 'error');
    const err = missing.children.find((c) => c.kind === 'error');
    assert.ok(err, `the failed server has an error row (${JSON.stringify(missing)})`);
    assert.ok(err.tooltip.length > 0);
  });

  it('a tool unticked through setMcpToolEnabled comes back unticked and counted out (the update too)', async () => {
    const after = await rig.client.call('setMcpToolEnabled', { name: 'notes', tool: 'add_note', enabled: false });
    assert.equal(after.tools.find((t) => t.name === 'add_note')?.enabled, false);
    await until(() => latest?.servers.find((s) => s.name === 'notes')?.tools.find((t) => t.name === 'add_note')?.enabled === false, { what: 'the update', timeoutMs: 25_000 });
    const notes = serverNode(buildMcpTree(latest!), 'notes')!;
    assert.equal(notes.description, 'connected · stdio · 2/3 tools');
    const row = notes.children.find((c) => c.kind === 'tool' && c.tool === 'add_note');
    assert.equal(row?.kind === 'tool' && row.checked, false);
    await rig.client.call('setMcpToolEnabled', { name: 'notes', tool: 'add_note', enabled: true });
  });

  it('the slash menu offers the server\'s prompts and the real server expands one with its argument into the draft', async () => {
    let draft = '';
    const notices: string[] = [];
    const pending: Promise<void>[] = [];
    let n = 0;
    const mcp: McpController = new McpController(createMcpModel(), {
      send: (c: ClientCommand) => {
        const id = `w${++n}`;
        const { type, ...params } = c as ClientCommand & Record<string, unknown>;
        pending.push((rig.client.call as (t: string, p: unknown) => Promise<unknown>)(type, params).then(
          (v) => void mcp.onResult(id, type, v),
          (e: Error) => void mcp.onError(id, type, e.message),
        ));
        return id;
      },
      draft: () => draft,
      setDraft: (t) => (draft = t),
      notify: (code, message) => notices.push(`${code}: ${message}`),
    });
    mcp.start();
    await Promise.all(pending.splice(0));
    draft = '/';
    mcp.onDraftInput(draft, 1);
    assert.deepEqual(mcp.model.slash?.items.map((i) => i.name).sort(), ['compact', 'mcp.notes.daily', 'mcp.notes.summarise']);
    draft = '/mcp.notes.sum';
    mcp.onDraftInput(draft, draft.length);
    assert.equal(mcp.onKey('Enter'), true);
    const form = mcp.model.form!;
    assert.deepEqual(form.fields.map((f) => [f.name, f.required]), [['topic', true]]);
    form.fields[0]!.value = 'the launch';
    assert.equal(mcp.submitForm(), true);
    await Promise.all(pending.splice(0));
    assert.equal(mcp.model.form, null);
    assert.equal(draft, 'Summarise my notes about the launch in three bullet points.');

    // A prompt the server does not have: the engine's error (typed, in words) shows in the form.
    mcp.model.form = { server: 'notes', prompt: 'nope', description: null, fields: [], requestId: null, error: null };
    mcp.submitForm();
    await Promise.all(pending.splice(0));
    assert.match(mcp.model.form?.error ?? '', /nope/, 'the error (naming the prompt) is in the form');
    assert.deepEqual(notices, []);
  });
});
