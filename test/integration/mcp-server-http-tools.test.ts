/**
 * Vox's tool set behind the HTTP transport, wired as the extension wires it
 * (src/extension/mcp-server-sessions.ts): the official SDK client signs in over OAuth 2.1 + DPoP
 * (jose), the grant the user picks becomes its engine session's protocol grant, and the same
 * capability and escalation refusals hold as over stdio; a default grant starts a real thread.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { memorySecretStore } from '../../src/engine/host';
import { mcpSessionServers } from '../../src/extension/mcp-server-sessions';
import { startVoxMcpHttpServer, type VoxMcpHttpServer } from '../../src/mcp-server/http/server';
import type { McpGrant } from '../../src/mcp-server/http/tokens';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { DpopSigner, TestOAuthProvider, connectWithOAuth } from '../support/mcp-dpop-client';
import { errorOf, runsSettled, seedThreads, SEED_ANSWERS, valueOf } from '../support/mcp-fixtures';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

describe('MCP server over HTTP with Vox\'s tools (the extension\'s wiring)', function () {
  this.timeout(30_000);
  let dir: string;
  let model: FakeServer;
  let t: TestEngine;
  let http: VoxMcpHttpServer;
  let threads: string[];
  let answer: McpGrant;

  beforeEach(async () => {
    dir = makeTmpDir();
    const ws = initRepo(path.join(dir, 'ws'), { 'README.md': '# ws\n' });
    model = await startFakeOpenAI({ responses: [...SEED_ANSWERS.map((a) => textTurn(a)), textTurn('On it, over HTTP.')] });
    t = startTestEngine({ dir, workspaceRoot: ws, host: openaiHost(model), config: { demoModelPath: '/nonexistent.gguf' } });
    threads = await seedThreads(t.client());
    http = await startVoxMcpHttpServer({ host: '127.0.0.1', port: 0, secrets: memorySecretStore(), serverFor: mcpSessionServers(t.engine), chooseGrant: async () => answer });
  });
  afterEach(async () => {
    await http.close();
    await t.dispose();
    await model.close();
    removeTmpDir(dir);
  });

  it('read only: the 5 read tools listed, threads readable, writes capabilityDenied, start_thread above readOnly escalation', async () => {
    answer = 'readOnly';
    const { client } = await connectWithOAuth(http.url, new TestOAuthProvider('HTTP Agent'), await DpopSigner.create('ES256'));
    try {
      assert.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), ['list_checkpoints', 'list_threads', 'list_variants', 'read_thread', 'search_threads']);
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((x) => x.id).sort(), [...threads].sort());
      const read = valueOf<{ messages: Array<{ content: string }> }>(await client.callTool({ name: 'read_thread', arguments: { threadId: threads[0] } }));
      assert.equal(read.messages[1]!.content, SEED_ANSWERS[0]);
      assert.equal(errorOf(await client.callTool({ name: 'capture_checkpoint', arguments: { threadId: threads[0] } })).code, 'capabilityDenied');
      assert.equal(errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'x', runtimeMode: 'fullAccess', interactionMode: 'default' } })).code, 'escalation');
    } finally {
      await client.close();
    }
    assert.equal((await t.client().call('listThreads', {})).threads.length, 2);
  });

  it('default: start_thread default/default runs a real thread in the extension\'s engine', async () => {
    answer = 'default';
    const { client } = await connectWithOAuth(http.url, new TestOAuthProvider('HTTP Agent 2'), await DpopSigner.create('EdDSA'));
    try {
      const started = valueOf<{ threadId: string }>(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Over HTTP', runtimeMode: 'default', interactionMode: 'default' } }));
      await runsSettled(t.client());
      const thread = await t.client().call('getThread', { threadId: started.threadId });
      assert.equal(thread.messages.at(-1)!.content, 'On it, over HTTP.');
      assert.equal((await t.client().call('getPermissions', { threadId: started.threadId })).mode, 'ask');
    } finally {
      await client.close();
    }
  });
});
