/**
 * Vox's MCP server in process (the official SDK Client over an in-memory transport): a raw tool
 * registration is refused at start, bad input gets typed tool errors, every tool answers from the
 * real engine, a page snapshot in a thread is dropped for a hint, and — below the MCP layer — the
 * protocol grant of each level refuses what it does not hold, including thread modes above it.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { ClientError } from '../../src/client/engine-client';
import { McpToolAccess } from '../../src/mcp-server/access';
import { McpServerError } from '../../src/mcp-server/errors';
import { defineVoxTool, VoxToolRegistry } from '../../src/mcp-server/registry';
import { connectMcpSession, createVoxMcpServer } from '../../src/mcp-server/server';
import { VOX_TOOLS } from '../../src/mcp-server/tools';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { errorOf, mcpClient, runsSettled, seedThreads, SEED_ANSWERS, valueOf } from '../support/mcp-fixtures';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const isRaw = (e: unknown) => e instanceof McpServerError && e.code === 'rawRegistration';

describe('MCP server (in process)', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;
  let threads: string[];

  beforeEach(async () => {
    dir = makeTmpDir();
    const ws = initRepo(path.join(dir, 'ws'), { 'README.md': '# ws\n' });
    // A page dump of ~40 KB whose rows differ (a repeated row would trip the repetition guard).
    const rows = Array.from({ length: 1_500 }, (_, i) => `<li id="r${i}">${((i * 7_919) % 10_007).toString(36)} ${i % 3 ? 'open' : 'closed'}</li>`);
    const page = `<!DOCTYPE html><html><body><ul>${rows.join('')}</ul></body></html>`;
    server = await startFakeOpenAI({ responses: [...SEED_ANSWERS.map((a) => textTurn(a)), textTurn(page), textTurn('planned'), textTurn('more')] });
    t = startTestEngine({ dir, workspaceRoot: ws, host: openaiHost(server), config: { demoModelPath: '/nonexistent.gguf' } });
    const owner = t.client();
    threads = await seedThreads(owner);
  });
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('refuses a raw registration: on the sealed server, around it (refused at start), and a tool without an access declaration', async () => {
    const mcp = createVoxMcpServer({ client: connectMcpSession(t.engine, 'readOnly', 'x'), grant: 'readOnly' });
    assert.throws(() => mcp.registerTool('evil', { description: 'x' }, async () => ({ content: [] })), isRaw);
    assert.throws(() => (mcp.tool as (...a: unknown[]) => unknown)('evil', async () => ({ content: [] })), isRaw);
    (McpServer.prototype.registerTool as (...a: unknown[]) => unknown).call(mcp, 'evil', { description: 'bypass' }, async () => ({ content: [{ type: 'text', text: 'owned' }] }));
    const [a] = InMemoryTransport.createLinkedPair();
    await assert.rejects(mcp.connect(a), (e: unknown) => isRaw(e) && /tool evil was registered around/.test((e as Error).message));

    // A declared tool whose handler is swapped afterwards is caught at start too.
    const other = createVoxMcpServer({ client: connectMcpSession(t.engine, 'readOnly', 'y'), grant: 'readOnly' });
    (other as unknown as { _registeredTools: Record<string, { update(u: unknown): void }> })._registeredTools.list_threads!.update({ callback: async () => ({ content: [] }) });
    await assert.rejects(other.connect(InMemoryTransport.createLinkedPair()[0]), isRaw);

    assert.throws(() => defineVoxTool({ name: 'no_access', description: 'x', input: {}, handler: async () => ({}) } as never), (e: unknown) => isRaw(e) && /declares no access/.test((e as Error).message));
    assert.throws(() => defineVoxTool({ name: 'fake_access', description: 'x', input: {}, access: { kind: 'reads' } as never, handler: async () => ({}) }), isRaw);
    assert.throws(() => defineVoxTool({ name: 'Bad-Name', description: 'x', input: {}, access: McpToolAccess.reads, handler: async () => ({}) }), isRaw);
    const reg = new VoxToolRegistry({ name: 't', version: '1' }, { client: connectMcpSession(t.engine, 'readOnly', 'z'), level: 'readOnly', log: () => undefined });
    assert.throws(() => reg.add({ name: 'plain', description: 'x', input: {}, access: McpToolAccess.reads, handler: async () => ({}) }), isRaw);
    reg.add(defineVoxTool({ name: 'ok_tool', description: 'x', input: { n: z.number() }, access: McpToolAccess.reads, handler: async (x) => ({ n: x.n }) }));
    reg.verify(); // the declared one passes
  });

  it('read-only: lists, reads and searches; writes are capabilityDenied, a thread above its modes is escalation', async () => {
    const { client, close } = await mcpClient(t, 'readOnly');
    try {
      const tools = (await client.listTools()).tools;
      assert.deepEqual(tools.map((x) => x.name), VOX_TOOLS.filter((x) => x.access.kind === 'reads').map((x) => x.name), 'a read-only caller is listed only the tools it may call');
      assert.deepEqual(tools.map((x) => x.name).sort(), ['list_checkpoints', 'list_threads', 'list_variants', 'read_thread', 'search_threads']);
      const listed = valueOf<{ threads: Array<{ id: string; title: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((x) => x.id).sort(), [...threads].sort());
      const read = valueOf<{ messages: Array<{ role: string; content: string }>; totalMessages: number }>(await client.callTool({ name: 'read_thread', arguments: { threadId: threads[0] } }));
      assert.equal(read.totalMessages, 2);
      assert.deepEqual(read.messages.map((m) => [m.role, m.content]), [['user', 'Why does login fail after a minute?'], ['assistant', SEED_ANSWERS[0]]]);
      const paged = valueOf<{ messages: unknown[]; nextOffset: number | null }>(await client.callTool({ name: 'read_thread', arguments: { threadId: threads[0], limit: 1 } }));
      assert.deepEqual([paged.messages.length, paged.nextOffset], [1, 1]);
      const found = valueOf<{ messages: Array<{ threadId: string }> }>(await client.callTool({ name: 'search_threads', arguments: { query: 'cookie expires' } }));
      assert.deepEqual(found.messages.map((m) => m.threadId), [threads[0]]);
      valueOf(await client.callTool({ name: 'list_checkpoints', arguments: {} }));
      assert.deepEqual(valueOf(await client.callTool({ name: 'list_variants', arguments: {} })), { pools: [] });

      const send = errorOf(await client.callTool({ name: 'send_to_thread', arguments: { threadId: threads[0], prompt: 'go on' } }));
      assert.deepEqual([send.domain, send.code], ['mcpServer', 'capabilityDenied']);
      assert.equal(errorOf(await client.callTool({ name: 'capture_checkpoint', arguments: { threadId: threads[0] } })).code, 'capabilityDenied');
      const up = errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'do it', runtimeMode: 'default', interactionMode: 'default' } }));
      assert.equal(up.code, 'escalation');
      assert.match(up.message, /runtime mode default, above this caller's readOnly/);
      assert.equal(errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'plan it' } })).code, 'capabilityDenied');
      const after = valueOf<{ threads: unknown[] }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.equal(after.threads.length, 2, 'no thread was created');
    } finally {
      await close();
    }
  });

  it('default: fullAccess is escalation; default/default starts a real thread in Ask + Act; a page snapshot is dropped for a hint', async () => {
    await t.host.setPermissionMode('fullAuto'); // the workspace default must not leak into an MCP client's thread
    const { client, close } = await mcpClient(t, 'default');
    const owner = t.client();
    try {
      assert.equal(errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'x', runtimeMode: 'fullAccess', interactionMode: 'default' } })).code, 'escalation');
      const started = valueOf<{ threadId: string; permissionMode: string; workMode: string }>(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Dump the page', runtimeMode: 'default', interactionMode: 'default' } }));
      assert.deepEqual([started.permissionMode, started.workMode], ['ask', 'act']);
      await runsSettled(owner);
      const perms = await owner.call('getPermissions', { threadId: started.threadId });
      assert.deepEqual([perms.mode, perms.modeSource, perms.workMode], ['ask', 'thread', 'act']);
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.ok(listed.threads.some((x) => x.id === started.threadId));
      const read = await client.callTool({ name: 'read_thread', arguments: { threadId: started.threadId } });
      const answer = valueOf<{ messages: Array<{ content: string }> }>(read).messages[1]!.content;
      assert.match(answer, /^\[DOM snapshot dropped: \d+ bytes is over the 20480-byte limit/);
      assert.ok(!JSON.stringify(read).includes('<li id="r1">'));

      const plan = valueOf<{ threadId: string; workMode: string }>(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Plan a refactor', runtimeMode: 'readOnly', interactionMode: 'default' } }));
      assert.equal(plan.workMode, 'plan');
      await runsSettled(owner);
      assert.equal((await owner.call('getPlan', { threadId: plan.threadId })).workMode, 'plan');
      // The owner's thread follows the workspace default (Full auto): above this caller, refused by the engine itself.
      const above = errorOf(await client.callTool({ name: 'send_to_thread', arguments: { threadId: threads[1], prompt: 'and the tests?' } }));
      assert.deepEqual([above.domain, above.code], ['protocol', 'capabilityDenied']);
      valueOf(await client.callTool({ name: 'send_to_thread', arguments: { threadId: started.threadId, prompt: 'and the tests?' } }));
      await runsSettled(owner);
      assert.equal((await owner.call('getThread', { threadId: started.threadId })).messages.at(-1)!.content, 'more');
      const cp = valueOf<{ threadId: string; ordinal: number }>(await client.callTool({ name: 'capture_checkpoint', arguments: { threadId: threads[1] } }));
      assert.equal(cp.threadId, threads[1]);
      const cps = valueOf<{ checkpoints: Array<{ threadId: string; trigger: string }> }>(await client.callTool({ name: 'list_checkpoints', arguments: { threadId: threads[1] } }));
      assert.ok(cps.checkpoints.some((c) => c.trigger === 'manual'));
    } finally {
      await close();
    }
  });

  it('bad input: unknown tool, arguments that fail the schema, an unknown thread — each a typed tool error', async () => {
    const { client, close } = await mcpClient(t, 'default');
    try {
      const unknown = errorOf(await client.callTool({ name: 'drop_database', arguments: {} }));
      assert.deepEqual([unknown.domain, unknown.code], ['mcpServer', 'unknownTool']);
      const bad = errorOf(await client.callTool({ name: 'read_thread', arguments: { threadId: 42 } }));
      assert.deepEqual([bad.domain, bad.code], ['mcpServer', 'invalidArguments']);
      assert.match(bad.message, /threadId/);
      assert.equal(errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'x', runtimeMode: 'root' } })).code, 'invalidArguments');
      assert.equal(errorOf(await client.callTool({ name: 'list_threads', arguments: { limit: 0 } })).code, 'invalidArguments');
      const missing = errorOf(await client.callTool({ name: 'read_thread', arguments: { threadId: 'thread-nope' } }));
      assert.equal(missing.domain, 'store');
    } finally {
      await close();
    }
  });

  it('below the MCP layer, the protocol grant refuses: writes on a read-only session, modes above a default session\'s', async () => {
    const ro = connectMcpSession(t.engine, 'readOnly', 'ro');
    const def = connectMcpSession(t.engine, 'default', 'def');
    const owner = t.client();
    const denied = (e: unknown) => e instanceof ClientError && e.is('protocol', 'capabilityDenied');
    await assert.rejects(ro.call('captureCheckpoint', { threadId: threads[0]! }), denied);
    await assert.rejects(ro.call('sendPrompt', { threadId: threads[0]!, prompt: 'x' }), denied);
    await assert.rejects(ro.call('sendPrompt', { threadId: null, prompt: 'x', newThread: { workMode: 'plan' } }), denied);
    await assert.rejects(ro.call('setPermissionMode', { scope: 'workspace', mode: 'fullAuto' }), denied);
    await assert.rejects(def.call('sendPrompt', { threadId: null, prompt: 'x', newThread: { permissionMode: 'fullAuto', workMode: 'act' } }), (e: unknown) => denied(e) && /at most runtime default/.test((e as Error).message));
    await assert.rejects(def.call('setPermissionMode', { scope: 'thread', threadId: threads[0]!, mode: 'fullAuto' }), denied);
    // A thread the owner put in Full auto is above a default session: no prompt, no Plan → Act.
    await owner.call('setPermissionMode', { scope: 'thread', threadId: threads[1]!, mode: 'fullAuto' });
    await assert.rejects(def.call('sendPrompt', { threadId: threads[1]!, prompt: 'x' }), (e: unknown) => denied(e) && /prompt thread/.test((e as Error).message));
    await assert.rejects(def.call('regenerate', { threadId: threads[1]! }), (e: unknown) => denied(e) && /regenerate in thread/.test((e as Error).message));
    await assert.rejects(def.call('editMessage', { threadId: threads[1]!, messageId: 'msg-x', content: 'x' }), denied);
    await t.host.setPermissionMode('fullAuto'); // variants run with the workspace default: above a default session
    await assert.rejects(def.call('startVariants', { prompt: 'x', models: ['openai:gpt-test'] }), (e: unknown) => denied(e) && /start variants/.test((e as Error).message));
    await owner.call('setWorkMode', { threadId: threads[1]!, mode: 'plan' });
    await assert.rejects(def.call('setWorkMode', { threadId: threads[1]!, mode: 'act' }), denied);
    assert.equal((await owner.call('getPlan', { threadId: threads[1]! })).workMode, 'plan');
    const count = (await owner.call('listThreads', {})).threads.length;
    assert.equal(count, 2, 'no refused call created a thread');
    assert.equal((await owner.call('getThread', { threadId: threads[1]! })).messages.length, 2, 'no refused call ran the thread');
    ro.close();
    def.close();
  });
});
