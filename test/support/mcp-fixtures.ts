/**
 * Fixtures for Vox's MCP server tests: a workspace (a real git repository) whose database holds
 * threads made through the protocol by the owner (real runs against a fake model server), and an
 * SDK client connected in memory to `createVoxMcpServer` for a grant level.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { EngineClient } from '../../src/client/engine-client';
import type { McpGrantLevel } from '../../src/mcp-server/grants';
import { connectMcpSession, createVoxMcpServer } from '../../src/mcp-server/server';
import type { TestEngine } from './test-engine';
import { waitFor } from './wait';

/** The answers the seeded threads get (the fake model must be scripted with them, in order). */
export const SEED_ANSWERS = ['The login bug is in session-store.ts: the cookie expires too early.', 'Rename done: parseConfig is now loadConfig.'];
export const SEED_PROMPTS = ['Why does login fail after a minute?', 'Rename parseConfig to loadConfig'];

/** Waits until no run of this engine is active. */
export async function runsSettled(client: EngineClient): Promise<void> {
  await waitFor('the runs to end', 20_000, async () => (await client.call('listRuns', {})).runs.length === 0, 20);
}

/** Two threads, each one prompt and its answer (scripted on the fake model), made by the owner. */
export async function seedThreads(owner: EngineClient): Promise<string[]> {
  const ids: string[] = [];
  for (const prompt of SEED_PROMPTS) {
    const r = await owner.call('sendPrompt', { threadId: null, prompt });
    ids.push(r.threadId);
    await runsSettled(owner);
  }
  return ids;
}

export interface McpPair { client: Client; session: EngineClient; close(): Promise<void> }

/** An SDK client talking to Vox's MCP server (in memory) whose engine session holds `level`'s grant. */
export async function mcpClient(t: TestEngine, level: McpGrantLevel): Promise<McpPair> {
  const session = connectMcpSession(t.engine, level, `test MCP client (${level})`);
  const server = createVoxMcpServer({ client: session, grant: level, clientName: 'test' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'vox-test', version: '1.0.0' });
  await client.connect(b);
  return { client, session, close: async () => { await client.close(); await server.close(); session.close(); } };
}

/** The structured error of a failed tool call ({domain, code}), asserting it failed. */
export function errorOf(r: unknown): { domain: string; code: string; message: string } {
  const res = r as CallToolResult;
  if (res.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(res).slice(0, 400)}`);
  return res.structuredContent as { domain: string; code: string; message: string };
}

/** The value of a successful tool call. */
export function valueOf<T = Record<string, unknown>>(r: unknown): T {
  const res = r as CallToolResult;
  if (res.isError) throw new Error(`tool failed: ${JSON.stringify(res.content)}`);
  return res.structuredContent as T;
}

/** `node --import tsx src/cli/main.ts mcp serve --stdio …` as a command line any MCP client can spawn (from any cwd). */
export function voxServeCommand(repoRoot: string, level: string, cwd: string): { command: string; args: string[] } {
  const tsx = pathToFileURL(path.join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
  return { command: process.execPath, args: ['--import', tsx, path.join(repoRoot, 'src/cli/main.ts'), 'mcp', 'serve', '--stdio', '--grant', level, '--cwd', cwd] };
}
