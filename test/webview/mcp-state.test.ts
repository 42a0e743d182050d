/**
 * The composer's MCP logic (webview/src/lib/mcp-state.ts, mcp-mentions.ts, mcp-names.ts) and its
 * place in the controller: the slash query at the caret, the menu's rows (only connected, enabled
 * servers; prefix matches first; /compact too), keys, accepting a prompt without arguments
 * (getMcpPrompt, the command replaced by the text) and with arguments (the form, required fields,
 * errors shown in it, stale answers dropped), a text too long for the composer refused with a
 * notice, the `mcpServers` update reaching the menu, an MCP resource row of the @-popup (its
 * server, its draft text) and its mention going out, and MCP tool names parsed.
 */
import { strict as assert } from 'node:assert';
import type { ClientCommand } from '../../src/protocol/commands/index';
import { MAX_PROMPT_CHARS } from '../../src/protocol/commands/index';
import { mcpServerListView, type McpServerListView, type McpServerView } from '../../src/protocol/commands/mcp';
import type { HostAction } from '../../src/protocol/host';
import type { MentionSuggestion } from '../../src/protocol/mentions';
import { Controller, createModel } from '../../webview/src/lib/controller';
import type { HostBridge } from '../../webview/src/lib/host-bridge';
import { McpController, SLASH_MENU_ROWS, createMcpModel, slashItems, slashQueryAt, type McpHost, type McpModel } from '../../webview/src/lib/mcp-state';
import { isMcpSuggestion, mcpMentionTarget, mcpMentionText, mcpSuggestionServer } from '../../webview/src/lib/mcp-mentions';
import { parseMcpToolName } from '../../webview/src/lib/mcp-names';

function server(over: Partial<McpServerView> = {}): McpServerView {
  return {
    name: 'notes', source: 'vscode', sourcePath: '.vscode/mcp.json', transport: 'stdio', target: 'node notes.mjs', enabled: true, status: 'connected', error: null, restarts: 0,
    tools: [{ name: 'add_note', qualifiedName: 'mcp__notes__add_note', description: 'Adds a note', readOnly: false, enabled: true }],
    prompts: [
      { name: 'daily', description: 'Today’s notes', arguments: [] },
      { name: 'summarise', description: 'Summarise notes on a topic', arguments: [{ name: 'topic', description: 'What about', required: true }, { name: 'style', description: null, required: false }] },
    ],
    resources: [{ uri: 'notes://all', name: 'All notes', description: 'every note', mimeType: 'text/plain' }],
    ...over,
  };
}
const listOf = (servers: McpServerView[]): McpServerListView => mcpServerListView({ servers, configErrors: [], catalog: { activeTools: 1, threshold: 12, metaMode: false } });

function setup(servers: McpServerView[] = [server()]) {
  const sent: Array<ClientCommand & { requestId: string }> = [];
  const notices: string[] = [];
  let draft = '';
  let n = 0;
  const host: McpHost = {
    send: (c) => {
      const requestId = `r${++n}`;
      sent.push({ ...c, requestId } as ClientCommand & { requestId: string });
      return requestId;
    },
    draft: () => draft,
    setDraft: (t) => (draft = t),
    notify: (code, message) => notices.push(`${code}: ${message}`),
  };
  const mcp = new McpController(createMcpModel(), host);
  mcp.onServers(listOf(servers));
  const type = (t: string) => {
    draft = t;
    mcp.onDraftInput(t, t.length);
  };
  return { mcp, sent, notices, type, draft: () => draft };
}

describe('webview MCP: slash commands for prompts, resources in the @-popup, tool names', () => {
  it('finds the slash query only at the start of the prompt, in its first word', () => {
    assert.equal(slashQueryAt('/', 1), '');
    assert.equal(slashQueryAt('/mcp.no', 7), 'mcp.no');
    assert.equal(slashQueryAt('/mcp.notes.daily more', 21), null, 'past the first word');
    assert.equal(slashQueryAt('say /mcp', 8), null, 'not at the start');
    assert.equal(slashQueryAt('/mcp.no', 3), 'mc', 'up to the caret');
  });

  it('offers /compact and the prompts of connected, enabled servers; prefix matches first; bounded', () => {
    const names = slashItems([server(), server({ name: 'down', status: 'failed' }), server({ name: 'off', enabled: false })], '').map((i) => i.name);
    assert.deepEqual(names, ['compact', 'mcp.notes.daily', 'mcp.notes.summarise']);
    assert.deepEqual(slashItems([server()], 'daily').map((i) => i.name), ['mcp.notes.daily'], 'a word inside the name matches too');
    assert.deepEqual(slashItems([server()], 'MCP.NOTES.S').map((i) => i.name), ['mcp.notes.summarise']);
    const many = server({ prompts: Array.from({ length: 30 }, (_, i) => ({ name: `p${i}`, description: null, arguments: [] })) });
    assert.equal(slashItems([many], '').length, SLASH_MENU_ROWS);
    assert.equal(slashItems([many], 'mcp')[0]!.description, 'prompt of notes', 'a prompt without description says whose it is');
  });

  it('a prompt without arguments: Enter asks the engine for it and its text replaces the command', () => {
    const { mcp, sent, type, draft } = setup();
    type('/mcp.notes.d');
    assert.deepEqual(mcp.model.slash?.items.map((i) => i.name), ['mcp.notes.daily']);
    assert.equal(mcp.onKey('Enter'), true);
    assert.equal(mcp.model.slash, null);
    assert.equal(draft(), '/mcp.notes.daily');
    const ask = sent.at(-1)!;
    assert.deepEqual({ type: ask.type, server: (ask as { server?: string }).server, name: (ask as { name?: string }).name, args: (ask as { arguments?: unknown }).arguments }, { type: 'getMcpPrompt', server: 'notes', name: 'daily', args: undefined });
    assert.equal(mcp.onResult('r-other', 'getMcpPrompt', { text: 'stale', description: null }), true);
    assert.equal(draft(), '/mcp.notes.daily', 'an answer to another request changes nothing');
    mcp.onResult(ask.requestId, 'getMcpPrompt', { text: 'List my notes of today.', description: null });
    assert.equal(draft(), 'List my notes of today.');
  });

  it('keys: arrows wrap, Escape closes, Enter with no match is not taken (the prompt is sent as typed)', () => {
    const { mcp, type } = setup();
    type('/');
    assert.equal(mcp.model.slash?.selected, 0);
    mcp.onKey('ArrowUp');
    assert.equal(mcp.model.slash?.selected, 2);
    mcp.onKey('ArrowDown');
    assert.equal(mcp.model.slash?.selected, 0);
    assert.equal(mcp.onKey('Escape'), true);
    assert.equal(mcp.model.slash, null);
    type('/compact');
    assert.equal(mcp.onKey('Enter'), false, '/compact typed in full: Enter is the composer\'s (it compacts)');
    assert.equal(mcp.model.slash, null);
    type('/comp');
    assert.equal(mcp.onKey('Enter'), true, 'a part of it: Enter completes it');
    type('/nothing-like-this');
    assert.equal((mcp.model.slash as McpModel['slash'])?.items.length, 0); // (cast: TS keeps the null asserted above)
    assert.equal(mcp.onKey('Enter'), false);
  });

  it('a prompt with arguments opens the form: required fields checked, the engine\'s error shown in it, then the text inserted', () => {
    const { mcp, sent, type, draft } = setup();
    type('/mcp.notes.sum');
    mcp.onKey('Enter');
    const form = mcp.model.form!;
    assert.ok(form, 'the form is open');
    assert.deepEqual(form.fields.map((f) => [f.name, f.required]), [['topic', true], ['style', false]]);
    const before = sent.length;
    assert.equal(mcp.submitForm(), false);
    assert.equal(form.fields[0]!.error, 'required');
    assert.equal(sent.length, before, 'nothing sent with a required field empty');
    form.fields[0]!.value = 'release';
    assert.equal(mcp.submitForm(), true);
    const ask = sent.at(-1)! as { type: string; requestId: string; arguments?: unknown };
    assert.equal(ask.type, 'getMcpPrompt');
    assert.deepEqual(ask.arguments, { topic: 'release' }, 'an empty optional argument is left out');
    assert.equal(mcp.submitForm(), false, 'not twice while one is on its way');
    mcp.onError(ask.requestId, 'getMcpPrompt', 'MCP server notes: prompt failed');
    assert.equal(mcp.model.form?.error, 'MCP server notes: prompt failed');
    assert.equal(mcp.model.form?.requestId, null);
    form.fields[1]!.value = 'short';
    mcp.submitForm();
    const again = sent.at(-1)! as { requestId: string; arguments?: unknown };
    assert.deepEqual(again.arguments, { topic: 'release', style: 'short' });
    mcp.onResult(again.requestId, 'getMcpPrompt', { text: 'Summarise the release notes, briefly.', description: null });
    assert.equal(mcp.model.form, null);
    assert.equal(draft(), 'Summarise the release notes, briefly.');
  });

  it('Cancel keeps the draft as typed; the menu stays closed while the form is open', () => {
    const { mcp, type, draft } = setup();
    type('/mcp.notes.summ');
    mcp.onKey('Tab');
    assert.ok(mcp.model.form);
    type('/mcp');
    assert.equal(mcp.model.slash, null, 'no menu over the form');
    mcp.cancelForm();
    assert.equal(mcp.model.form, null);
    assert.equal(draft(), '/mcp');
  });

  it('a prompt whose text is longer than a prompt may be is refused with a notice, the draft unchanged', () => {
    const { mcp, sent, notices, type, draft } = setup();
    type('/mcp.notes.daily');
    mcp.onKey('Enter');
    mcp.onResult(sent.at(-1)!.requestId, 'getMcpPrompt', { text: 'x'.repeat(MAX_PROMPT_CHARS + 1), description: null });
    assert.equal(draft(), '/mcp.notes.daily');
    assert.match(notices[0]!, /^promptTooLong: \/mcp\.notes\.daily expands to/);
  });

  it('a failed expansion without a form becomes a notice', () => {
    const { mcp, sent, notices, type } = setup();
    type('/mcp.notes.daily');
    mcp.onKey('Enter');
    mcp.onError(sent.at(-1)!.requestId, 'getMcpPrompt', 'server notes is not connected');
    assert.equal(mcp.model.expanding, null);
    assert.deepEqual(notices, ['mcpPrompt: server notes is not connected']);
  });

  it('a resource row: its server, and the text it leaves in the draft', () => {
    const row: MentionSuggestion = { kind: 'mcp', target: mcpMentionTarget('notes', 'notes://all'), label: 'notes:All notes', detail: 'MCP resource · every note' };
    assert.equal(row.target, 'notes/notes://all');
    assert.equal(isMcpSuggestion(row), true);
    assert.equal(mcpSuggestionServer(row), 'notes');
    assert.equal(mcpMentionText(row), '@notes:All-notes');
    assert.equal(mcpMentionText({ ...row, label: 'All notes' }), '@notes:All-notes', 'the server is added when the label lacks it');
    assert.equal(mcpSuggestionServer({ kind: 'file', target: 'notes/x' }), null);
    assert.equal(mcpSuggestionServer({ kind: 'mcp', target: 'noslash' }), null);
  });

  it('parses MCP tool names; built-in tools are none', () => {
    assert.deepEqual(parseMcpToolName('mcp__github__create_issue'), { server: 'github', tool: 'create_issue' });
    assert.deepEqual(parseMcpToolName('mcp__my-server__a__b'), { server: 'my-server', tool: 'a__b' });
    for (const n of ['read_file', 'mcp__', 'mcp____x', 'mcp__only']) assert.equal(parseMcpToolName(n), null, n);
  });

  describe('in the controller', () => {
    function controller() {
      const posted: Array<Record<string, unknown>> = [];
      let listener: ((d: unknown) => void) | null = null;
      const bridge: HostBridge = {
        send: (m) => void posted.push(m as unknown as Record<string, unknown>),
        onMessage: (fn) => {
          listener = fn;
          return () => (listener = null);
        },
        getState: () => undefined,
        setState: () => undefined,
        sendHostAction: (_a: HostAction) => undefined,
      };
      const model = createModel();
      const c = new Controller(model, bridge, { warn: () => {}, error: () => {} });
      c.start();
      return { c, model, posted, deliver: (u: unknown) => listener!(u) };
    }

    it('lists and watches the servers at start; the mcpServers update reaches the slash menu', () => {
      const { c, model, posted, deliver } = controller();
      const list = posted.find((m) => m.type === 'listMcpServers')!;
      assert.ok(list, 'listMcpServers posted');
      assert.ok(posted.some((m) => m.type === 'watchMcpServers'));
      deliver({ type: 'result', inReplyTo: list.requestId, value: listOf([server({ prompts: [] })]) });
      model.draft = '/';
      c.mcp.onDraftInput('/', 1);
      assert.deepEqual(model.mcp!.slash!.items.map((i) => i.name), ['compact']);
      deliver({ type: 'mcpServers', ...listOf([server()]) });
      assert.deepEqual(model.mcp!.slash!.items.map((i) => i.name), ['compact', 'mcp.notes.daily', 'mcp.notes.summarise']);
    });

    it('a resource the engine suggests, taken from the @-popup, goes out with the prompt as an mcp mention', () => {
      const { c, model, posted, deliver } = controller();
      model.draft = 'read @all';
      c.context.onDraftInput(model.draft, model.draft.length);
      const ask = posted.filter((m) => m.type === 'suggestMentions').at(-1)!;
      deliver({ type: 'result', inReplyTo: ask.requestId, value: { items: [{ kind: 'mcp', target: 'notes/notes://all', label: 'notes:All notes', detail: 'MCP resource · every note' }] } });
      assert.deepEqual(model.context.popup!.items.map((i) => i.label), ['notes:All notes']);
      assert.equal(c.context.accept(0), true);
      assert.equal(model.draft, 'read @notes:All-notes ');
      assert.deepEqual(c.context.mentions(), [{ kind: 'mcp', target: 'notes/notes://all' }]);
    });
  });
});
