/**
 * Vox as an MCP client, end to end in the engine: a real stdio MCP server
 * (test/support/mcp/stdio-server.mjs, the SDK's McpServer) configured in a real temp workspace's
 * `.mcp.json`; the agent loop calls its tools through the fake OpenAI-compatible server and the
 * result comes back to the model; the approval policy applies by class; a hung call times out
 * and the turn ends; a crash restarts the server with backoff; 5 MB is cut; a disabled tool is
 * not offered; Vox's provider key does not reach the server's env; two runs call it at once.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import type { UpdateOf } from '../../src/protocol/updates';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { makeTmpDir } from '../support/tmp';
import { STDIO_SERVER, mcpRig, offeredNames, toolMessage, type McpRig } from '../support/mcp/rig';
import { until } from '../support/wait';

async function runEnded(c: EngineClient): Promise<void> {
  await until(async () => (await c.call('listRuns', {})).runs.length === 0, { what: 'the runs to end', timeoutMs: 25_000 });
}

describe('MCP client: a stdio server in the agent loop', function () {
  this.timeout(60_000);
  let rig: McpRig;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined as never; // a test that disposed its own rig leaves none
  });

  it('lists the server and its tools; the model calls a read-only tool without approval and gets the result', async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__echo', args: { message: 'hello mcp' } }]), textTurn('done')] });
    const list = await rig.client.call('listMcpServers', {});
    assert.equal(list.servers.length, 1);
    const t = list.servers[0]!;
    assert.deepEqual([t.name, t.source, t.sourcePath, t.transport, t.status, t.enabled], ['t', 'claude', '.mcp.json', 'stdio', 'connected', true]);
    const echo = t.tools.find((x) => x.name === 'echo')!;
    assert.deepEqual([echo.qualifiedName, echo.readOnly, echo.enabled], ['mcp__t__echo', true, true]);
    assert.equal(t.tools.find((x) => x.name === 'write_note')!.readOnly, false);
    assert.deepEqual(t.prompts.map((p) => p.name), ['review']);
    assert.ok(t.resources.some((r) => r.uri === 'note://readme'));
    assert.equal(list.catalog.threshold, 12);
    assert.equal(list.catalog.activeTools, t.tools.length);
    const tool = rig.services.tools.lookup('mcp__t__write_note');
    assert.deepEqual([tool.toolClass, tool.mutating, tool.origin], ['execute', true, { kind: 'mcp', server: 't', tool: 'write_note' }]);

    const asked: unknown[] = [];
    rig.client.on('approvalRequested', (u) => asked.push(u));
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'echo please' });
    await runEnded(rig.client);
    assert.ok(offeredNames(rig.model.requests[0]).includes('mcp__t__echo'), 'the MCP tool was offered to the model');
    assert.equal(toolMessage(rig.model.requests[1], 'mcp__t__echo'), 'echo: hello mcp');
    assert.equal(asked.length, 0, 'a read-only MCP tool runs without asking');
  });

  it('an execute-class MCP tool waits for approval under the default policy; approved, it runs', async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__write_note', args: { text: 'n1' } }]), textTurn('done')] });
    const asked: UpdateOf<'approvalRequested'>[] = [];
    rig.client.on('approvalRequested', (u) => asked.push(u));
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'write it' });
    await until(() => asked.length === 1, { what: 'the approval request', timeoutMs: 25_000 });
    assert.deepEqual([asked[0]!.toolName, asked[0]!.toolClass], ['mcp__t__write_note', 'execute']);
    assert.equal(rig.model.requests.length, 1, 'the tool has not run: the model was not called again');
    await rig.client.call('respondToApproval', { callId: asked[0]!.callId, decision: 'approved' });
    await runEnded(rig.client);
    assert.equal(toolMessage(rig.model.requests[1], 'mcp__t__write_note'), 'wrote note: n1');
  });

  it('permission rules match an MCP tool by its qualified name, and mcp__<server>__* all of a server', async () => {
    rig = await mcpRig({
      responses: [toolCallTurn([{ name: 'mcp__t__write_note', args: { text: 'n' } }, { name: 'mcp__t__echo', args: { message: 'm' } }]), textTurn('ok')],
      hostSetup: (h) => (h.permissions = { rules: [{ action: 'deny', tool: 'mcp__t__write_note', reason: 'no notes' }, { action: 'deny', tool: 'mcp__t__*', reason: 'server t is off limits' }, { action: 'deny', tool: 'mcp__other__*' }] }),
    });
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'write' });
    await runEnded(rig.client);
    assert.match(toolMessage(rig.model.requests[1], 'mcp__t__write_note') ?? '', /^Not run: .*no notes/);
    assert.match(toolMessage(rig.model.requests[1], 'mcp__t__echo') ?? '', /^Not run: .*server t is off limits/);
  });

  it('a hung call ends with a timeout error to the model and the turn ends', async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__hang', args: {} }]), textTurn('gave up')] });
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'hang' });
    await runEnded(rig.client);
    const msg = toolMessage(rig.model.requests[1], 'mcp__t__hang') ?? '';
    assert.match(msg, /^Error \(timeout\): MCP server t did not answer the call of hang within 2 s/);
    assert.equal(rig.model.requests.length, 2, 'the model got the error and answered; the turn ended');
    // The server itself is still fine.
    assert.equal((await rig.client.call('listMcpServers', {})).servers[0]!.status, 'connected');
  });

  it("stopping the turn cancels a pending MCP call at once (the turn's AbortSignal reaches the call)", async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__hang', args: {} }]), textTurn('never')], config: { mcp: { timeouts: { callMs: 600_000 } } } });
    const chunks: string[] = [];
    const ended: string[] = [];
    rig.client.on('turnChunks', (u) => chunks.push(...u.chunks.map((c) => (c as { kind: string }).kind)));
    rig.client.on('turnEnded', (u) => ended.push(u.status));
    const { runId } = await rig.client.call('sendPrompt', { threadId: null, prompt: 'hang' });
    await rig.client.call('subscribeTurn', { turnId: runId!, afterSeq: 0 });
    await until(() => chunks.includes('toolCall'), { what: 'the call to be under way', timeoutMs: 25_000 });
    await rig.client.call('cancelRun', { runId: runId! });
    await runEnded(rig.client);
    await until(() => ended.length === 1, { what: 'the turn to end', timeoutMs: 25_000 });
    assert.equal(ended[0], 'cancelled');
    assert.equal(rig.model.requests.length, 1, 'the turn ended without another model call');
    assert.equal((await rig.client.call('listMcpServers', {})).servers[0]!.status, 'connected');
  });

  it('a crash mid-call is an error for that call; the server restarts with backoff (status visible) and works again', async () => {
    const startLog = path.join(makeTmpDir('vox-mcp-log-'), 'starts.log');
    rig = await mcpRig({
      serverEnv: { VOX_TEST_START_LOG: startLog },
      responses: [toolCallTurn([{ name: 'mcp__t__crash', args: {} }]), textTurn('it crashed'), toolCallTurn([{ name: 'mcp__t__echo', args: { message: 'again' } }]), textTurn('fine')],
    });
    const statuses: string[] = [];
    rig.client.on('mcpServers', (u) => statuses.push(u.servers[0]?.status ?? 'none'));
    await rig.client.call('watchMcpServers', {});
    const { threadId } = await rig.client.call('sendPrompt', { threadId: null, prompt: 'crash' });
    await runEnded(rig.client);
    assert.match(toolMessage(rig.model.requests[1], 'mcp__t__crash') ?? '', /^Error \(crashed\): MCP server t stopped during the call of crash/);
    await until(async () => (await rig.client.call('listMcpServers', {})).servers[0]!.status === 'connected' && fs.readFileSync(startLog, 'utf8').trim().split('\n').length === 2, { what: 'the restart', timeoutMs: 25_000 });
    const view = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.equal(view.restarts, 1);
    assert.ok(statuses.includes('restarting'), `statuses seen: ${statuses.join(', ')}`);
    await rig.client.call('sendPrompt', { threadId, prompt: 'echo' });
    await runEnded(rig.client);
    assert.equal(toolMessage(rig.model.requests[3], 'mcp__t__echo'), 'echo: again');
  });

  it('a server that keeps failing to start ends as failed after the capped attempts; restart by hand resets it', async () => {
    rig = await mcpRig({ serverEnv: { VOX_TEST_FAIL_START: '1' } });
    await rig.client.call('watchMcpServers', {});
    await until(async () => (await rig.client.call('listMcpServers', {})).servers[0]!.status === 'failed', { what: 'failed', timeoutMs: 25_000 });
    const v = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.equal(v.restarts, 3);
    assert.match(v.error ?? '', /Gave up after 3 restart attempt\(s\)/);
    assert.match(v.error ?? '', /refusing to start: VOX_TEST_FAIL_START/, 'the server\'s stderr explains why');
    assert.equal(rig.services.tools.list().filter((x) => x.origin?.kind === 'mcp').length, 0);
    // Restarting by hand starts the attempts over: it is trying again, not failed.
    const again = await rig.client.call('restartMcpServer', { name: 't' });
    assert.deepEqual([again.status, again.restarts], ['restarting', 4]);
  });

  it("a server stuck in its handshake does not hold up the engine's shutdown", async () => {
    const stuck = { mcpServers: { stuck: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } } };
    rig = await mcpRig({ files: { '.mcp.json': JSON.stringify(stuck) }, config: { mcp: { timeouts: { connectMs: 600_000 } } } });
    await rig.client.call('watchMcpServers', {});
    assert.equal(rig.services.mcp.list().servers[0]!.status, 'starting');
    await rig.engine.dispose(); // would wait for the 600 s connect timeout (and fail this test's) if a stop did not end the handshake
  });

  it('a config file saved in the editor is read again: a server added to .vscode/mcp.json starts without a restart', async () => {
    rig = await mcpRig();
    await rig.client.call('watchMcpServers', {});
    await until(async () => (await rig.client.call('listMcpServers', {})).servers.some((x) => x.name === 't' && x.status === 'connected'), { what: 't connected', timeoutMs: 25_000 });
    rig.host.fireExternalChange(); // a save of some other file changes nothing
    fs.mkdirSync(path.join(rig.dir, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(rig.dir, '.vscode/mcp.json'), JSON.stringify({ servers: { second: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] } } }));
    rig.host.fireExternalChange();
    await until(async () => (await rig.client.call('listMcpServers', {})).servers.some((x) => x.name === 'second' && x.status === 'connected'), { what: 'second connected', timeoutMs: 25_000 });
    assert.ok(rig.services.tools.list().some((x) => x.spec.name === 'mcp__second__echo'));
  });

  it('a 5 MB result is cut with a note before it reaches the model or the store', async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__big', args: {} }]), textTurn('big')] });
    const { threadId } = await rig.client.call('sendPrompt', { threadId: null, prompt: 'big' });
    await runEnded(rig.client);
    const msg = toolMessage(rig.model.requests[1], 'mcp__t__big') ?? '';
    assert.ok(msg.length <= 32_000, `model got ${msg.length} chars`);
    assert.match(msg, /MCP result cut: 5,242,880 characters/);
    const stored = JSON.stringify(rig.services.store.activePath(threadId));
    assert.ok(stored.length < 200_000, `the store holds ${stored.length} chars of this thread`);
  });

  it('a disabled tool (setting) is not offered; setMcpToolEnabled turns it on and persists through the host', async () => {
    rig = await mcpRig({ responses: [textTurn('one'), textTurn('two')], hostSetup: (h) => (h.mcp = { disabledTools: ['t/write_note'] }) });
    const v = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.equal(v.tools.find((x) => x.name === 'write_note')!.enabled, false);
    const { threadId } = await rig.client.call('sendPrompt', { threadId: null, prompt: 'hi' });
    await runEnded(rig.client);
    assert.ok(offeredNames(rig.model.requests[0]).includes('mcp__t__echo'));
    assert.ok(!offeredNames(rig.model.requests[0]).includes('mcp__t__write_note'), 'disabled tool not offered');
    const after = await rig.client.call('setMcpToolEnabled', { name: 't', tool: 'write_note', enabled: true });
    assert.equal(after.tools.find((x) => x.name === 'write_note')!.enabled, true);
    assert.deepEqual(rig.host.mcp?.disabledTools, []);
    await rig.client.call('sendPrompt', { threadId, prompt: 'again' });
    await runEnded(rig.client);
    assert.ok(offeredNames(rig.model.requests[1]).includes('mcp__t__write_note'));
    await assert.rejects(rig.client.call('setMcpToolEnabled', { name: 't', tool: 'nope', enabled: false }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'unknownTool'));
    await assert.rejects(rig.client.call('restartMcpServer', { name: 'zzz' }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'unknownServer'));
  });

  it('disabling a server stops it and its tools leave the agent; enabling starts it again', async () => {
    rig = await mcpRig();
    await rig.client.call('listMcpServers', {});
    assert.ok(rig.services.tools.list().some((x) => x.spec.name === 'mcp__t__echo'));
    const off = await rig.client.call('setMcpServerEnabled', { name: 't', enabled: false });
    assert.deepEqual([off.status, off.enabled], ['disabled', false]);
    assert.ok(!rig.services.tools.list().some((x) => x.origin?.kind === 'mcp'));
    assert.deepEqual(rig.host.mcp?.disabledServers, ['t']);
    const on = await rig.client.call('setMcpServerEnabled', { name: 't', enabled: true });
    assert.equal(on.status, 'connected');
    assert.ok(rig.services.tools.list().some((x) => x.spec.name === 'mcp__t__echo'));
  });

  it("Vox's provider key does not reach the server's env; its configured env and the workspace cwd do", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-vox-provider-key-must-not-leak';
    try {
      rig = await mcpRig({ serverEnv: { CONFIGURED_FOR_SERVER: 'yes' } });
      await rig.client.call('listMcpServers', {});
      const tool = rig.services.tools.lookup('mcp__t__env');
      const r = await tool.run(tool.parseArgs('{}'), { workspaceRoot: rig.dir, signal: new AbortController().signal });
      const reported = JSON.parse(r.content) as { env: Record<string, string>; cwd: string };
      assert.equal(reported.env.OPENAI_API_KEY, undefined);
      assert.ok(!r.content.includes('sk-vox-provider-key'), 'the key appears nowhere');
      assert.equal(reported.env.CONFIGURED_FOR_SERVER, 'yes');
      assert.equal(fs.realpathSync(reported.cwd), rig.dir);
      assert.ok(Object.keys(reported.env).every((k) => ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'CONFIGURED_FOR_SERVER', 'PWD', 'SHLVL', '_'].includes(k)), Object.keys(reported.env).join(','));
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('two runs call the same server at once; both get their own answers', async () => {
    rig = await mcpRig({
      route: (req) => {
        const msgs = req.body?.messages as Array<{ role: string; content: string }>;
        const last = msgs[msgs.length - 1]!;
        const firstUser = msgs.find((m) => m.role === 'user')!.content;
        const tag = firstUser.includes('A') ? 'A' : 'B';
        return last.role === 'tool' ? textTurn(`done ${tag}`) : toolCallTurn([{ name: 'mcp__t__slow', args: { ms: 400, tag } }]);
      },
    });
    await rig.client.call('listMcpServers', {});
    await Promise.all([rig.client.call('sendPrompt', { threadId: null, prompt: 'run A' }), rig.client.call('sendPrompt', { threadId: null, prompt: 'run B' })]);
    await runEnded(rig.client);
    const answers = rig.model.requests.map((r) => toolMessage(r, 'mcp__t__slow')).filter((x): x is string => !!x).map((s) => s.replace(/ pid \d+/, '')).sort();
    assert.deepEqual(answers, ['slow done: A', 'slow done: B']);
  });

  it('UI resources: an embedded ui:// HTML resource and a _meta.ui.resourceUri both fill ToolResult.app', async () => {
    rig = await mcpRig();
    await rig.client.call('listMcpServers', {});
    const ctx = { workspaceRoot: rig.dir, signal: new AbortController().signal };
    const w = rig.services.tools.lookup('mcp__t__widget');
    const r1 = await w.run(w.parseArgs('{}'), ctx);
    assert.deepEqual(r1.app && { ...r1.app, html: r1.app.html.includes('Weather widget') }, { uri: 'ui://test/widget', html: true, server: 't', title: 'widget' });
    assert.match(r1.content, /Sunny, 21 °C/);
    assert.ok(!r1.content.includes('<html'), 'the HTML does not go to the model');
    const m = rig.services.tools.lookup('mcp__t__widget_meta');
    const r2 = await m.run(m.parseArgs(''), ctx);
    assert.equal(r2.app?.uri, 'ui://test/meta-widget');
    assert.match(r2.app?.html ?? '', /Meta widget/);
    assert.throws(() => m.parseArgs('[1]'), /must be a JSON object/);
    assert.throws(() => m.parseArgs('{'), /not valid JSON/);
  });

  it('an MCP App through the agent loop: the model gets the text, the store keeps the app for the chat (mcp-apps)', async () => {
    rig = await mcpRig({ responses: [toolCallTurn([{ name: 'mcp__t__widget', args: {} }]), textTurn('shown')] });
    const { threadId } = await rig.client.call('sendPrompt', { threadId: null, prompt: 'weather' });
    await runEnded(rig.client);
    assert.equal(toolMessage(rig.model.requests[1], 'mcp__t__widget'), 'Sunny, 21 °C\n[interactive view ui://test/widget shown to the user]');
    const rows = rig.services.store.db.prepare('SELECT server, uri, title, html FROM mcp_apps WHERE thread_id = ?').all(threadId) as Array<{ server: string; uri: string; title: string; html: string }>;
    assert.deepEqual(rows.map((r) => [r.server, r.uri, r.title, r.html.includes('Weather widget')]), [['t', 'ui://test/widget', 'widget', true]]);
  });

  it('listChanged: a tool the server adds at run time joins the registry', async () => {
    rig = await mcpRig();
    await rig.client.call('listMcpServers', {});
    assert.ok(!rig.services.tools.list().some((x) => x.spec.name === 'mcp__t__added'));
    const add = rig.services.tools.lookup('mcp__t__add_tool');
    await add.run({}, { workspaceRoot: rig.dir, signal: new AbortController().signal });
    await until(() => rig.services.tools.list().some((x) => x.spec.name === 'mcp__t__added'), { what: 'the new tool', timeoutMs: 25_000 });
  });

  it('@-mentions of MCP resources: suggested once connected, attached to the prompt the model gets', async () => {
    rig = await mcpRig({ responses: [textTurn('noted')] });
    await rig.client.call('listMcpServers', {});
    const sugg = await rig.client.call('suggestMentions', { query: 'readme' });
    const s = sugg.items.find((x) => x.kind === 'mcp');
    assert.deepEqual(s && [s.target, s.label, s.detail], ['t/note://readme', 't:readme', 'MCP resource · The project notes']);
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'when is the launch?', mentions: [{ kind: 'mcp', target: s!.target! }, { kind: 'mcp', target: 'nope/x://y' }, { kind: 'mcp', target: 'bad' }] });
    await runEnded(rig.client);
    const msgs = rig.model.requests[0]!.body.messages as Array<{ role: string; content: string }>;
    const user = msgs.filter((m) => m.role === 'user').at(-1)!.content;
    assert.match(user, /<context kind="mcp" label="t: note:\/\/readme">\nMCP resource note:\/\/readme of server t \(text\/plain\):\nNOTES: the launch is on Friday\.\n<\/context>/);
    assert.match(user, /label="nope\/x:\/\/y" warning="No MCP server named &quot;nope&quot;/);
    assert.match(user, /label="mcp" warning="An MCP mention needs &lt;server>\/&lt;uri>"/);
  });

  it('resources and prompts through the protocol (what @-mentions and slash commands use)', async () => {
    rig = await mcpRig();
    const res = await rig.client.call('readMcpResource', { server: 't', uri: 'note://readme' });
    assert.deepEqual(res, { uri: 'note://readme', mimeType: 'text/plain', text: 'NOTES: the launch is on Friday.', truncated: false });
    const p = await rig.client.call('getMcpPrompt', { server: 't', name: 'review', arguments: { file: 'src/a.ts' } });
    assert.deepEqual(p, { text: 'Please review src/a.ts carefully.', description: 'Review a file' });
    await assert.rejects(rig.client.call('getMcpPrompt', { server: 't', name: 'nope' }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'unknownPrompt'));
    await assert.rejects(rig.client.call('getMcpPrompt', { server: 't', name: 'review', arguments: { file: 3 } }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'invalidArguments'));
    await assert.rejects(rig.client.call('readMcpResource', { server: 't', uri: 'note://missing' }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'callFailed'));
  });
});
