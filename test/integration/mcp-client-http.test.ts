/**
 * Vox as an MCP client over HTTP: a streamable-HTTP server on 127.0.0.1 whose
 * tool the agent loop calls; an SSE-only (older) server the client falls back to after the
 * streamable POST's 4xx; a server answering 401 shows `needsAuth` (and signing in without the
 * OAuth module says so); and the config of all three file formats plus the setting, read from a
 * real temp workspace, with precedence and the shadowed server reported.
 */
import { strict as assert } from 'node:assert';
import { ClientError } from '../../src/client/engine-client';
import { textTurn, toolCallTurn } from '../support/fake-openai-server';
import { startMcpHttpServer, type McpHttpServer } from '../support/mcp/http-server';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { mcpRig, STDIO_SERVER, toolMessage, type McpRig } from '../support/mcp/rig';
import { until } from '../support/wait';

describe('MCP client: HTTP servers and the config files', function () {
  this.timeout(60_000);
  let rig: McpRig | undefined;
  let http: McpHttpServer | undefined;
  afterEach(async () => {
    await rig?.dispose();
    await http?.close();
    rig = undefined;
    http = undefined;
  });

  it('streamable HTTP: tools listed and called by the agent loop', async () => {
    http = await startMcpHttpServer('streamable');
    rig = await mcpRig({
      files: { '.mcp.json': JSON.stringify({ mcpServers: { web: { type: 'http', url: http.url, headers: { 'X-Test': 'h' } } } }) },
      responses: [toolCallTurn([{ name: 'mcp__web__echo', args: { message: 'over http' } }]), textTurn('done')],
    });
    const v = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.deepEqual([v.transport, v.status, v.target], ['http', 'connected', http.url]);
    assert.ok(v.tools.some((t) => t.qualifiedName === 'mcp__web__echo'));
    await rig.client.call('sendPrompt', { threadId: null, prompt: 'echo' });
    await until(async () => (await rig!.client.call('listRuns', {})).runs.length === 0, { what: 'the run to end', timeoutMs: 25_000 });
    assert.equal(toolMessage(rig.model.requests[1], 'mcp__web__echo'), 'echo: over http');
    assert.ok(!http.requests.some((r) => r.startsWith('GET /messages')), 'no SSE fallback was needed');
  });

  it('an HTTP server that goes away: the call is an error, the client reconnects with backoff and then gives up', async () => {
    http = await startMcpHttpServer('streamable');
    rig = await mcpRig({ files: { '.mcp.json': JSON.stringify({ mcpServers: { web: { type: 'http', url: http.url } } }) } });
    assert.equal((await rig.client.call('listMcpServers', {})).servers[0]!.status, 'connected');
    await http.close();
    http = undefined;
    const tool = rig.services.tools.lookup('mcp__web__echo');
    const r = await tool.run({ message: 'x' }, { workspaceRoot: rig.dir, signal: new AbortController().signal });
    assert.equal(r.isError, true);
    assert.match(r.content, /^Error \(protocolError\): MCP server web failed the call of echo/);
    assert.equal(rig.services.mcp.list().servers[0]!.status, 'restarting');
    await until(() => rig!.services.mcp.list().servers[0]!.status === 'failed', { what: 'it to give up', timeoutMs: 25_000 });
    assert.ok(!rig.services.tools.list().some((t) => t.origin?.kind === 'mcp'), 'its tools left the agent');
  });

  it('an SSE-only server: the streamable POST gets 405 and the client falls back to SSE', async () => {
    http = await startMcpHttpServer('sseOnly');
    rig = await mcpRig({ files: { '.mcp.json': JSON.stringify({ mcpServers: { old: { type: 'http', url: http.url } } }) } });
    const v = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.deepEqual([v.transport, v.status], ['sse', 'connected'], v.error ?? '');
    assert.equal(http.requests[0], 'POST /mcp', 'streamable HTTP was tried first');
    assert.ok(http.requests.includes('GET /mcp'), 'then the SSE stream');
    const tool = rig.services.tools.lookup('mcp__old__echo');
    const r = await tool.run({ message: 'via sse' }, { workspaceRoot: rig.dir, signal: new AbortController().signal });
    assert.equal(r.content, 'echo: via sse');
  });

  it('a server answering 401 is needsAuth, its tools are not offered, and sign-in on a host without a browser is a clear error', async () => {
    http = await startMcpHttpServer('unauthorized');
    rig = await mcpRig({ files: { '.mcp.json': JSON.stringify({ mcpServers: { locked: { type: 'http', url: http.url } } }) } });
    const v = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.deepEqual([v.status, v.error], ['needsAuth', 'MCP server locked requires sign-in.']);
    assert.equal(v.tools.length, 0);
    assert.ok(!http.requests.some((r) => r === 'GET /mcp'), 'no SSE fallback on 401');
    await assert.rejects(rig.client.call('authenticateMcpServer', { name: 'locked' }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'authFailed') && /cannot open a browser/.test(e.message));
    await assert.rejects(rig.client.call('readMcpResource', { server: 'locked', uri: 'note://x' }), (e: unknown) => e instanceof ClientError && e.is('mcp', 'authRequired'));
  });

  it('all three file formats and the setting are picked up; precedence and shadowing reported; a bad entry does not stop the rest', async () => {
    http = await startMcpHttpServer('streamable');
    const node = process.execPath;
    rig = await mcpRig({
      files: {
        '.vox/mcp.json': JSON.stringify({ mcpServers: { fromVox: { command: node, args: [STDIO_SERVER] }, dup: { command: node, args: [STDIO_SERVER] } } }),
        '.vscode/mcp.json': `{
          // VS Code's format, with comments
          "servers": {
            "fromVscode": { "type": "stdio", "command": "${node}", "args": ["${STDIO_SERVER}"], "cwd": "\${workspaceFolder}" },
            "dup": { "type": "http", "url": "${http.url}" },
            "needsInput": { "type": "stdio", "command": "x", "env": { "K": "\${input:apiKey}" } },
          },
          "inputs": [{ "id": "apiKey", "type": "promptString" }],
        }`,
        '.mcp.json': JSON.stringify({ mcpServers: { fromClaude: { type: 'http', url: http.url } } }),
      },
      hostSetup: (h) => (h.mcp = { servers: { fromSettings: { command: node, args: [STDIO_SERVER] }, bad: { type: 'ftp' } } }),
    });
    const list = await rig.client.call('listMcpServers', {});
    assert.deepEqual(list.servers.map((s) => [s.name, s.source, s.status]), [
      ['fromVox', 'vox', 'connected'], ['dup', 'vox', 'connected'], ['fromVscode', 'vscode', 'connected'], ['fromClaude', 'claude', 'connected'], ['fromSettings', 'settings', 'connected'],
    ]);
    const errs = list.configErrors.map((e) => `${e.source} | ${e.message}`);
    assert.equal(errs.length, 3, errs.join('\n'));
    assert.match(errs.find((e) => e.includes('needsInput'))!, /\.vscode\/mcp\.json: servers\.needsInput \| .*\$\{input:apiKey\}.*not support/);
    assert.match(errs.find((e) => e.includes('bad'))!, /settings \(vox\.mcp\.servers\).*unknown "type"/);
    assert.match(errs.find((e) => e.includes('shadowed'))!, /^\.vscode\/mcp\.json \| MCP server "dup" is shadowed by the one in \.vox\/mcp\.json/);
    // Tools of every server, unique names.
    const names = rig.services.tools.list().filter((t) => t.origin?.kind === 'mcp').map((t) => t.spec.name);
    assert.equal(new Set(names).size, names.length);
    for (const s of ['fromVox', 'dup', 'fromVscode', 'fromClaude', 'fromSettings']) assert.ok(names.includes(`mcp__${s}__echo`), s);
    assert.equal(list.catalog.activeTools, names.length);
    assert.equal(list.catalog.metaMode, names.length > 12);
  });
});

describe('MCP client: OAuth sign-in through the engine (real OAuth MCP server, the real provider, loopback redirect)', function () {
  this.timeout(60_000);
  let rig: McpRig | undefined;
  let oauth: OAuthMcpServer | undefined;
  afterEach(async () => {
    await rig?.dispose();
    await oauth?.close();
    rig = undefined;
    oauth = undefined;
  });

  it('needsAuth without a browser popping up; authenticateMcpServer opens the browser, the code comes back, it connects and its tool works', async () => {
    oauth = await startOAuthMcpServer();
    const opened: string[] = [];
    /** The test's browser: GET the authorize URL, follow its redirect to the loopback listener. */
    const browse = async (url: string) => {
      opened.push(url);
      const r = await fetch(url, { redirect: 'manual' });
      await fetch(r.headers.get('location')!);
    };
    rig = await mcpRig({
      files: { '.mcp.json': JSON.stringify({ mcpServers: { notes: { type: 'http', url: oauth.mcpUrl } } }) },
      hostSetup: (h) => Object.assign(h, { openExternal: (url: string) => void browse(url) }),
    });
    const before = (await rig.client.call('listMcpServers', {})).servers[0]!;
    assert.equal(before.status, 'needsAuth', before.error ?? '');
    assert.equal(opened.length, 0, 'an automatic connect never opens the browser');
    const after = await rig.client.call('authenticateMcpServer', { name: 'notes' });
    assert.equal(opened.length, 1);
    assert.equal(after.status, 'connected', after.error ?? '');
    assert.ok(after.tools.some((t) => t.name === 'whoami'));
    const tool = rig.services.tools.lookup('mcp__notes__whoami');
    const r = await tool.run({}, { workspaceRoot: rig.dir, signal: new AbortController().signal });
    assert.equal(r.isError, undefined, r.content);
    // The tokens are in the host's secret store, not in the config or the list.
    const listed = JSON.stringify(await rig.client.call('listMcpServers', {}));
    for (const t of oauth.provider.issued) assert.ok(!listed.includes(t));
  });
});
