/**
 * The tool-catalog guard wired in a real engine (createEngine, real SQLite, the fake OpenAI server):
 * the threshold comes from the host's MCP settings (`vox.mcp.toolCatalogThreshold`), read per turn,
 * and the context meter counts the same tools the runner sends. MCP tools are put into the engine's
 * registry directly (the MCP client, src/engine/mcp/, does that in the product).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import type { ToolRegistry } from '../../src/engine/tools/registry';
import { countText } from '../../src/engine/providers/token-count';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { fakeMcpTools } from '../support/fake-mcp-tools';
import { startTestEngine, TestHost, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { waitFor } from '../support/wait';

/** TestHost keeps MCP settings itself (`mcp`, `mcpSettings()`). */
class McpTestHost extends TestHost {}

describe('tool-catalog guard in the engine: the threshold setting and the context meter', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  beforeEach(() => {
    dir = fs.realpathSync(makeTmpDir());
  });
  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  it('13 MCP tools: meta mode by default, direct once the setting is raised; the meter counts what is sent', async () => {
    server = await startFakeOpenAI({ responses: [textTurn('one'), textTurn('two')] });
    const host = new McpTestHost({ secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl } });
    t = startTestEngine({ dir, host });
    // The engine's registry (private to the engine; the MCP client registers into it in the product).
    const tools = (t.engine as unknown as { services: { tools: ToolRegistry } }).services.tools;
    for (const tool of fakeMcpTools(13).tools) tools.register(tool);
    const c = t.client();
    const names = (i: number) => (server.requests[i]!.body.tools as Array<{ function: { name: string } }>).map((x) => x.function.name);

    const estimate = await c.call('estimateContext', { threadId: null, draft: 'hi', model: 'openai:gpt-4o' });
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'hi', model: 'openai:gpt-4o' });
    await waitFor('the first request', 30_000, () => server.requests.length >= 1, 20);
    assert.deepEqual(names(0).slice(-3), ['mcp_list_groups', 'mcp_describe', 'mcp_call']);
    assert.ok(!names(0).includes('github__create_issue'));
    const sentSpecs = (server.requests[0]!.body.tools as Array<{ function: { name: string; description: string; parameters: unknown } }>).map((x) => ({ name: x.function.name, description: x.function.description, parameters: x.function.parameters }));
    assert.equal(estimate.parts.tools, await countText('o200k_base', JSON.stringify(sentSpecs)), 'the meter counts the meta-tools, not 13 schemas');

    host.mcp = { toolCatalogThreshold: 13 };
    await waitFor('the first run ends', 30_000, () => server.pending() === 1, 20);
    await c.call('sendPrompt', { threadId: first.threadId, prompt: 'again', model: 'openai:gpt-4o' });
    await waitFor('the second request', 30_000, () => server.requests.length >= 2, 20);
    assert.ok(names(1).includes('github__create_issue'), 'the raised threshold applies to the next turn');
    assert.ok(!names(1).includes('mcp_call'));
  });
});
