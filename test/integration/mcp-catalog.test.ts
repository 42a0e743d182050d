/**
 * The tool-catalog guard (SPEC 3.3) in the real agent loop against the fake OpenAI server (real
 * `openai` SDK over loopback, real SQLite): 12 MCP tools are offered directly, 13 switch to the
 * built-ins + 3 meta-tools (the request's `tools` measured in bytes), and `mcp_call` runs the real
 * tool through the same permission / approval path as a direct call.
 */
import { turnBus } from '../support/turn-stages';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalGate, ApprovalPolicy, type ApprovalRequest } from '../../src/engine/approvals/approval';
import { AgentRunner } from '../../src/engine/agent/runner';
import { RateLimitWaits, systemClock } from '../../src/engine/runs/rate-limit';
import { RunRegistry } from '../../src/engine/runs/registry';
import type { ResolvedModel } from '../../src/engine/providers/types';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { OpenAICompatibleProvider } from '../../src/engine/providers/openai';
import { VoxStore } from '../../src/engine/store/store';
import { TurnStreamRegistry } from '../../src/engine/stream/turn-stream-registry';
import { DEFAULT_TOOL_CATALOG_THRESHOLD, META_TOOL_NAMES } from '../../src/engine/mcp-catalog/catalog';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer } from '../support/fake-openai-server';
import { fakeMcpTools, type FakeMcpTools } from '../support/fake-mcp-tools';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

type WireTool = { type: string; function: { name: string; description: string; parameters: unknown } };
type WireMessage = { role: string; content: string; tool_call_id?: string };

describe('tool-catalog guard (fake OpenAI server, agent loop, real SQLite)', function () {
  this.timeout(20_000);
  let dir: string;
  let ws: string;
  let server: FakeServer | undefined;
  let store: VoxStore;
  let streams: TurnStreamRegistry;
  let gate: ApprovalGate;
  const builtinNames = builtinToolRegistry().list().map((t) => t.spec.name);

  async function turn(mcpCount: number, responses: FakeResponse[], opts: { threshold?: unknown; onPending?: (r: ApprovalRequest) => void; mcp?: FakeMcpTools } = {}) {
    await server?.close();
    server = await startFakeOpenAI({ responses });
    const tools = builtinToolRegistry();
    const mcp = opts.mcp ?? fakeMcpTools(mcpCount);
    for (const t of mcp.tools) tools.register(t);
    gate = new ApprovalGate();
    gate.onPending(opts.onPending ?? ((req) => gate.respond(req.callId, 'approved')));
    const model: ResolvedModel = { provider: new OpenAICompatibleProvider({ apiKey: 'sk-test', baseURL: server.baseUrl }), model: 'gpt-test', label: 'openai:gpt-test', toolsEnabled: true };
    const policy = new ApprovalPolicy();
    const agent = new AgentRunner({ store, streams, gate, tools, policy: () => policy });
    const runs = new RunRegistry({ store, streams, runner: agent, hooks: turnBus(store, 'threshold' in opts ? { catalogThreshold: () => opts.threshold } : {}), waits: new RateLimitWaits({ store, clock: systemClock }), workspaceRoot: ws });
    const result = await runs.start({ prompt: 'use the MCP tools', model }).done;
    assert.equal(result.status, 'completed', result.error ?? '');
    return { result, mcp, requests: server.requests };
  }

  const toolsOf = (body: { tools?: WireTool[] }) => (body.tools ?? []).map((t) => t.function.name);
  const bytesOf = (body: { tools?: WireTool[] }) => Buffer.byteLength(JSON.stringify(body.tools ?? []), 'utf8');
  const toolMessages = (body: { messages: WireMessage[] }) => body.messages.filter((m) => m.role === 'tool');

  beforeEach(() => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'ws'));
    ws = fs.realpathSync(path.join(dir, 'ws'));
    store = VoxStore.open(path.join(dir, 'vox.db'));
    streams = new TurnStreamRegistry({ persist: (c) => store.persistChunk(c), loadAfter: (t, s) => store.chunksAfter(t, s) });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    store.close();
    removeTmpDir(dir);
  });

  it('12 MCP tools go to the model directly; 13 switch to the built-ins + 3 meta-tools, a smaller request', async () => {
    assert.equal(DEFAULT_TOOL_CATALOG_THRESHOLD, 12);
    const direct = await turn(12, [textTurn('ok')]);
    const directBody = direct.requests[0]!.body;
    assert.deepEqual(toolsOf(directBody), [...builtinNames, ...direct.mcp.tools.map((t) => t.spec.name)]);
    assert.ok(!toolsOf(directBody).some((n) => META_TOOL_NAMES.includes(n)));

    const meta = await turn(13, [textTurn('ok')]);
    const metaBody = meta.requests[0]!.body;
    assert.deepEqual(toolsOf(metaBody), [...builtinNames, 'mcp_list_groups', 'mcp_describe', 'mcp_call']);
    const directBytes = bytesOf(directBody);
    const metaBytes = bytesOf(metaBody);
    const thirteenDirect = Buffer.byteLength(JSON.stringify([...(directBody.tools as WireTool[]), { type: 'function', function: { name: meta.mcp.tools[12]!.spec.name, description: meta.mcp.tools[12]!.spec.description, parameters: meta.mcp.tools[12]!.spec.parameters } }]));
    console.log(`      [mcp-catalog] request tools field: 12 MCP tools direct ${directBytes} B; 13 MCP tools meta ${metaBytes} B (13 direct would be ${thirteenDirect} B); built-ins alone ${Buffer.byteLength(JSON.stringify((directBody.tools as WireTool[]).slice(0, builtinNames.length)))} B`);
    assert.ok(metaBytes < directBytes, `meta ${metaBytes} B must be smaller than 12 direct ${directBytes} B`);
  });

  it('the threshold setting is honoured: 0 → meta with one MCP tool; invalid → the default', async () => {
    const zero = await turn(1, [textTurn('ok')], { threshold: 0 });
    assert.ok(toolsOf(zero.requests[0]!.body).includes('mcp_call'));
    const bad = await turn(12, [textTurn('ok')], { threshold: -3 });
    assert.ok(!toolsOf(bad.requests[0]!.body).includes('mcp_call'));
    assert.ok(toolsOf(bad.requests[0]!.body).includes('github__create_issue'));
    const high = await turn(13, [textTurn('ok')], { threshold: 20 });
    assert.ok(!toolsOf(high.requests[0]!.body).includes('mcp_call'));
  });

  it('mcp_list_groups and mcp_describe tell the model the servers, counts and full schemas', async () => {
    const { requests } = await turn(13, [
      toolCallTurn([{ name: 'mcp_list_groups', args: {} }, { name: 'mcp_describe', args: { tools: ['github__create_issue', 'sentry/get_issue_details', 'nope'] } }]),
      textTurn('done'),
    ]);
    const [groups, described] = toolMessages(requests[1]!.body);
    assert.match(groups!.content, /^github \(5 tools\)$/m);
    assert.match(groups!.content, /^postgres \(3 tools\)$/m);
    assert.match(groups!.content, /^sentry \(1 tool\)$/m);
    assert.match(groups!.content, /github__create_issue \[execute\]: Create a new issue in a GitHub repository\.$/m, 'one line per tool');
    const d = JSON.parse(described!.content) as Array<{ name: string; inputSchema?: { required: string[] }; error?: string }>;
    assert.deepEqual(d[0]!.inputSchema!.required, ['owner', 'repo', 'title']);
    assert.equal(d[1]!.name, 'sentry__get_issue_details', 'server/tool is accepted');
    assert.match(d[2]!.error!, /unknown tool/);
  });

  it('mcp_call of an execute-class tool waits for approval of the REAL tool and arguments, then runs it', async () => {
    const mcp = fakeMcpTools(13);
    const asked: ApprovalRequest[] = [];
    const ranBeforeApproval: number[] = [];
    const args = { owner: 'vox', repo: 'vox', title: 'Catalog guard', labels: ['mcp'] };
    const { result, requests, mcp: used } = await turn(13, [
      toolCallTurn([{ name: 'mcp_call', args: { tool: 'github__create_issue', arguments: args }, id: 'call_1' }]),
      textTurn('created'),
    ], {
      onPending: (req) => {
        asked.push(req);
        ranBeforeApproval.push(mcp.calls.length);
        setImmediate(() => gate.respond(req.callId, 'approved'));
      },
      mcp,
    });
    assert.deepEqual(ranBeforeApproval, [0], 'nothing runs before the approval');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.toolName, 'github__create_issue');
    assert.deepEqual(JSON.parse(asked[0]!.argumentsJson), args);
    assert.equal(asked[0]!.toolClass, 'execute');
    assert.deepEqual(used.calls, [{ name: 'github__create_issue', args }]);
    const item = store.items(result.runId).find((i) => i.kind === 'toolCall')!;
    assert.equal(item.toolName, 'github__create_issue', 'the turn item shows the real tool');
    assert.deepEqual(JSON.parse(item.arguments!), args);
    // The model's own call (mcp_call, call_1) is answered under its id.
    const answer = toolMessages(requests[1]!.body)[0]!;
    assert.equal(answer.tool_call_id, 'call_1');
    assert.match(answer.content, /github__create_issue ok/);
  });

  it('a denied mcp_call never runs the tool; a read-class one runs without asking', async () => {
    const asked: string[] = [];
    const { mcp, requests } = await turn(13, [
      toolCallTurn([
        { name: 'mcp_call', args: { tool: 'postgres__execute_migration', arguments: { name: 'drop', sql: 'DROP TABLE users' } } },
        { name: 'mcp_call', args: { tool: 'postgres__query', arguments: { sql: 'SELECT 1' } } },
      ]),
      textTurn('ok'),
    ], { onPending: (req) => { asked.push(req.toolName); gate.respond(req.callId, 'denied'); } });
    assert.deepEqual(asked, ['postgres__execute_migration']);
    assert.deepEqual(mcp.calls.map((c) => c.name), ['postgres__query']);
    assert.match(toolMessages(requests[1]!.body)[0]!.content, /denied this postgres__execute_migration call/);
  });

  it('an unknown tool or bad arguments in mcp_call are typed errors fed back to the model', async () => {
    const asked: string[] = [];
    const { mcp, requests, result } = await turn(13, [
      toolCallTurn([
        { name: 'mcp_call', args: { tool: 'github__delete_repo', arguments: {} } },
        { name: 'mcp_call', args: { tool: 'github__create_issue', arguments: { owner: 'vox' } } },
        { name: 'mcp_call', args: { tool: 'github__create_issue', arguments: 'owner=vox' } },
        { name: 'mcp_call', args: '{"tool": "github__create_issue"' },
        { name: 'mcp_call', args: { name: 'github__create_issue' } },
      ]),
      textTurn('sorry'),
    ], { onPending: (req) => { asked.push(req.toolName); gate.respond(req.callId, 'approved'); } });
    assert.deepEqual(asked, [], 'a call that cannot run is never asked');
    const msgs = toolMessages(requests[1]!.body).map((m) => m.content);
    assert.equal(msgs.length, 5);
    assert.match(msgs[0]!, /^Error \(unknownTool\): mcp_call: no active MCP tool is named "github__delete_repo"\. Call mcp_list_groups/);
    assert.match(msgs[1]!, /^Error \(invalidArguments\): github__create_issue: "repo" is required\./);
    assert.match(msgs[2]!, /^Error \(invalidArguments\): mcp_call: "arguments" must be a JSON object/);
    assert.match(msgs[3]!, /^Error \(invalidArguments\): mcp_call: the arguments are not valid JSON/);
    assert.match(msgs[4]!, /^Error \(invalidArguments\): mcp_call: unknown property "name"/);
    assert.equal(mcp.calls.length, 0);
    const items = store.items(result.runId).filter((i) => i.kind === 'toolCall');
    assert.deepEqual(items.map((i) => [i.toolName, i.status]), [['mcp_call', 'failed'], ['github__create_issue', 'failed'], ['mcp_call', 'failed'], ['mcp_call', 'failed'], ['mcp_call', 'failed']]);
  });
});
