/**
 * `vox mcp serve --stdio` as a real process (the CLI from source through tsx), driven by the
 * official SDK Client over StdioClientTransport, on a temporary workspace and database whose
 * threads the owner made through the protocol: the tools are listed and each is called; a
 * read-only caller is listed only the tools it may call, reads, and is refused the unlisted writes
 * (capabilityDenied) and a thread above its modes
 * (escalation); a default caller is refused fullAccess, is refused an Act thread that would wait for
 * approvals no one can give over stdio (noApprover), and starts a real Plan thread that runs.
 * Also the command's usage: --help, no --stdio, a bad --grant.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT, runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { errorOf, seedThreads, SEED_ANSWERS, valueOf, voxServeCommand } from '../support/mcp-fixtures';
import { openaiHost } from '../support/scripted';
import { startTestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

describe('vox mcp serve --stdio (real process, SDK client)', function () {
  this.timeout(90_000);
  let dir: string;
  let home: string;
  let ws: string;
  let server: FakeServer;
  let threads: string[];
  let env: Record<string, string>;

  before(async () => {
    dir = makeTmpDir();
    home = path.join(dir, 'home');
    fs.mkdirSync(home);
    ws = initRepo(path.join(dir, 'ws'), { 'README.md': '# ws\n' });
    server = await startFakeOpenAI({ responses: [...SEED_ANSWERS.map((a) => textTurn(a)), textTurn('Started from MCP: on it.')] });
    const t = startTestEngine({ dir: home, workspaceRoot: ws, host: openaiHost(server), config: { demoModelPath: '/nonexistent.gguf' } });
    threads = await seedThreads(t.client());
    await t.dispose();
    env = { PATH: process.env.PATH ?? '', HOME: dir, VOX_HOME: home, VOX_MODEL: 'openai:gpt-test', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  });
  after(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  async function connect(level: string, extra: string[] = []): Promise<{ client: Client; stderr: () => string }> {
    const { command, args } = voxServeCommand(REPO_ROOT, level, ws);
    const transport = new StdioClientTransport({ command, args: [...args, ...extra], env, cwd: dir, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d) => (err += String(d)));
    const client = new Client({ name: 'vox-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  it('read-only: lists only the tools it may call, calls each; writes (unlisted) are capabilityDenied, start_thread at default is escalation', async () => {
    const { client, stderr } = await connect('readOnly');
    try {
      const names = (await client.listTools()).tools.map((x) => x.name).sort();
      assert.deepEqual(names, ['list_checkpoints', 'list_threads', 'list_variants', 'read_thread', 'search_threads'], 'no write or thread-starting tool is listed to a read-only caller');
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((x) => x.id).sort(), [...threads].sort());
      const read = valueOf<{ messages: Array<{ content: string }> }>(await client.callTool({ name: 'read_thread', arguments: { threadId: threads[1] } }));
      assert.equal(read.messages[1]!.content, SEED_ANSWERS[1]);
      const found = valueOf<{ messages: Array<{ threadId: string }> }>(await client.callTool({ name: 'search_threads', arguments: { query: 'loadConfig' } }));
      assert.ok(found.messages.some((m) => m.threadId === threads[1]));
      valueOf(await client.callTool({ name: 'list_checkpoints', arguments: { threadId: threads[0] } }));
      assert.deepEqual(valueOf(await client.callTool({ name: 'list_variants', arguments: {} })), { pools: [] });
      assert.equal(errorOf(await client.callTool({ name: 'send_to_thread', arguments: { threadId: threads[0], prompt: 'more' } })).code, 'capabilityDenied');
      assert.equal(errorOf(await client.callTool({ name: 'capture_checkpoint', arguments: { threadId: threads[0] } })).code, 'capabilityDenied');
      const up = errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'fix it', runtimeMode: 'default' } }));
      assert.deepEqual([up.domain, up.code], ['mcpServer', 'escalation']);
      assert.equal(valueOf<{ threads: unknown[] }>(await client.callTool({ name: 'list_threads', arguments: {} })).threads.length, 2);
      await waitFor('the serving note on stderr', 10_000, () => /serving on stdio with the readOnly grant/.test(stderr()), 20);
    } finally {
      await client.close();
    }
  });

  it('default: fullAccess is escalation; default/default would wait for approvals no one gives here (noApprover); a Plan thread starts, is listed and runs', async () => {
    const { client, stderr } = await connect('default', ['--json']);
    try {
      assert.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), ['capture_checkpoint', 'list_checkpoints', 'list_threads', 'list_variants', 'read_thread', 'search_threads', 'send_to_thread', 'start_thread']);
      const note = await waitFor('the serving note on stderr', 10_000, () => stderr().split('\n').find((l) => l.startsWith('{')), 20);
      assert.deepEqual(JSON.parse(note), { type: 'serving', transport: 'stdio', grant: 'default', workspace: fs.realpathSync(ws), threads: 'workspace' });
      const up = errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'go wild', runtimeMode: 'fullAccess', interactionMode: 'default' } }));
      assert.equal(up.code, 'escalation');
      assert.match(up.message, /runtime mode fullAccess, above this caller's default/);
      const asks = errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Look into the flaky test', runtimeMode: 'default', interactionMode: 'default' } }));
      assert.deepEqual([asks.domain, asks.code], ['approval', 'noApprover']);
      const started = valueOf<{ threadId: string; runId: string; permissionMode: string; workMode: string }>(
        await client.callTool({ name: 'start_thread', arguments: { prompt: 'Look into the flaky test', runtimeMode: 'default', interactionMode: 'plan' } }));
      assert.deepEqual([started.permissionMode, started.workMode], ['ask', 'plan']);
      const listed = valueOf<{ threads: Array<{ id: string; title: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.equal(listed.threads.find((x) => x.id === started.threadId)?.title, 'Look into the flaky test');
      const answer = await waitFor('the MCP-started run to answer', 30_000, async () => {
        const r = valueOf<{ messages: Array<{ role: string; content: string }> }>(await client.callTool({ name: 'read_thread', arguments: { threadId: started.threadId } }));
        return r.messages.find((m) => m.role === 'assistant')?.content;
      }, 100);
      assert.equal(answer, 'Started from MCP: on it.');
    } finally {
      await client.close();
    }
  });

  it('stdout carries JSON-RPC only: every line of a whole session parses as a JSON-RPC message; notes go to stderr; it exits 0 when stdin closes', async () => {
    const { command, args } = voxServeCommand(REPO_ROOT, 'readOnly', ws);
    const child = spawn(command, args, { env, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await waitFor('the initialize answer', 20_000, () => out.includes('"id":1'), 20);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_thread', arguments: { threadId: threads[0] } } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'capture_checkpoint', arguments: { threadId: threads[0] } } });
    await waitFor('both answers', 20_000, () => out.includes('"id":2') && out.includes('"id":3'), 20);
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, err);
    const lines = out.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 3, out);
    const byId = new Map(lines.map((l) => {
      const m = JSON.parse(l) as { jsonrpc?: string; id?: number };
      assert.equal(m.jsonrpc, '2.0');
      return [m.id, l] as const;
    }));
    assert.ok(byId.get(2)!.includes(SEED_ANSWERS[0]!)); // the answers may come in any order
    assert.match(byId.get(3)!, /capabilityDenied/);
    assert.match(err, /serving on stdio/);
  });

  it('usage: --help documents --grant; no --stdio and a bad --grant are usage errors (exit 2)', async () => {
    const help = await runVox(['mcp', 'serve', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.out, /--grant <level>.*readOnly \| default \| fullAccess/);
    const none = await runVox(['mcp', 'serve', '--cwd', ws], env);
    assert.equal(none.code, 2);
    assert.match(none.err, /needs --stdio/);
    const bad = await runVox(['mcp', 'serve', '--stdio', '--grant', 'root', '--cwd', ws], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--grant must be one of readOnly, default, fullAccess/);
  });
});
