/** A real engine on a temp workspace whose config names the test MCP servers, with a fake OpenAI model (MCP client tests). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineClient, inProcessTransport } from '../../../src/client/engine-client';
import { assembleEngine, type Engine, type EngineConfig } from '../../../src/engine/engine';
import type { EngineServices } from '../../../src/engine/services';
import { ownerGrant } from '../../../src/protocol/commands/grants';
import { startFakeOpenAI, type FakeServer, type RecordedRequest } from '../fake-openai-server';
import { openaiHost } from '../scripted';
import type { TestHost } from '../test-engine';
import { makeTmpDir, removeTmpDir } from '../tmp';

export const STDIO_SERVER = path.resolve(__dirname, './stdio-server.mjs');

/** The content of the tool message answering `name` in a request to the model. */
export function toolMessage(req: RecordedRequest | undefined, toolCallName: string): string | undefined {
  const msgs = (req?.body?.messages ?? []) as Array<{ role: string; content: string; tool_call_id?: string }>;
  const calls = msgs.flatMap((m) => ((m as { tool_calls?: Array<{ id: string; function: { name: string } }> }).tool_calls ?? []));
  const call = calls.find((c) => c.function.name === toolCallName);
  return msgs.find((m) => m.role === 'tool' && m.tool_call_id === call?.id)?.content;
}

export function offeredNames(req: RecordedRequest | undefined): string[] {
  return ((req?.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
}

export interface McpRig { dir: string; engine: Engine; services: EngineServices; client: EngineClient; host: TestHost; model: FakeServer; dispose(): Promise<void> }

/** A workspace with `.mcp.json` naming the test server as `t`, an engine on it with short MCP timeouts. */
export async function mcpRig(opts: {
  responses?: Parameters<typeof startFakeOpenAI>[0]['responses'];
  route?: Parameters<typeof startFakeOpenAI>[0]['route'];
  serverEnv?: Record<string, string>;
  files?: Record<string, string>;
  config?: Partial<EngineConfig>;
  hostSetup?: (h: TestHost) => void;
} = {}): Promise<McpRig> {
  const dir = fs.realpathSync(makeTmpDir('vox-mcp-'));
  const files = opts.files ?? { '.mcp.json': JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [STDIO_SERVER], env: opts.serverEnv ?? {} } } }) };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  const model = await startFakeOpenAI({ responses: opts.responses ?? [], ...(opts.route ? { route: opts.route } : {}) });
  const host = openaiHost(model);
  opts.hostSetup?.(host);
  const { engine, services } = assembleEngine({
    dbPath: path.join(dir, '.vox-test.db'), workspaceRoot: dir, demoModelPath: '/none.gguf', autoCheckpoints: false,
    mcp: { timeouts: { callMs: 2_000 }, backoff: { baseMs: 100, maxMs: 400, maxAttempts: 3 } }, ...opts.config,
  }, host);
  const client = new EngineClient(inProcessTransport((sink) => engine.connect(sink, ownerGrant('test'))), 'mcp-');
  return {
    dir, engine, services, client, host, model,
    async dispose() {
      client.close();
      await engine.dispose();
      await model.close();
      removeTmpDir(dir);
    },
  };
}

