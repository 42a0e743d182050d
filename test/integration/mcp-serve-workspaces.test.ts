/**
 * `vox mcp serve --stdio` (a real process, the official SDK Client over stdio) on one database
 * shared by two workspaces: a server for workspace A reaches only A's threads — B's ids are
 * `store/notFound` with the same error as a random id (no oracle), in list, read, search, send,
 * list_checkpoints and capture_checkpoint — unless the user grants `--all-workspaces`. Also the
 * three cases the stdio server handled badly: a 20 MB JSON-RPC line gets a JSON-RPC error and the
 * server keeps serving; a `default`-runtime thread (it would wait for approvals no one can give
 * over stdio) is refused at start with a typed error naming what to do; `--grant readOnly` serves
 * a database whose file (or folder) cannot be written.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { allocate } from '../../src/engine/ids/ids';
import { REPO_ROOT, runVox } from '../support/cli';
import { startFakeOpenAI, textTurn, type FakeServer } from '../support/fake-openai-server';
import { initRepo } from '../support/git-fixtures';
import { errorOf, runsSettled, seedThreads, SEED_ANSWERS, valueOf, voxServeCommand } from '../support/mcp-fixtures';
import { makeReadOnly } from '../support/read-only';
import { openaiHost } from '../support/scripted';
import { startTestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';

const B_ANSWER = 'Billing deploy: the zebrafish pipeline is green.';

describe('vox mcp serve: each server stays in its workspace (two workspaces, one database)', function () {
  this.timeout(120_000);
  let dir: string;
  let home: string;
  let wsA: string;
  let wsB: string;
  let server: FakeServer;
  let aThreads: string[];
  let bThread: string;
  let env: Record<string, string>;

  before(async () => {
    dir = makeTmpDir();
    home = path.join(dir, 'home');
    fs.mkdirSync(home);
    wsA = initRepo(path.join(dir, 'ws-a'), { 'README.md': '# a\n' });
    wsB = initRepo(path.join(dir, 'ws-b'), { 'README.md': '# b\n' });
    server = await startFakeOpenAI({ responses: [...SEED_ANSWERS.map((a) => textTurn(a)), textTurn(B_ANSWER), textTurn('Planned from MCP.')] });
    const a = startTestEngine({ dir: home, workspaceRoot: wsA, host: openaiHost(server), config: { demoModelPath: '/nonexistent.gguf' } });
    aThreads = await seedThreads(a.client());
    await a.dispose();
    const b = startTestEngine({ dir: home, workspaceRoot: wsB, host: openaiHost(server), config: { demoModelPath: '/nonexistent.gguf' } });
    const owner = b.client();
    bThread = (await owner.call('sendPrompt', { threadId: null, prompt: 'Deploy the zebrafish billing service' })).threadId;
    await runsSettled(owner);
    await owner.call('captureCheckpoint', { threadId: bThread });
    await b.dispose();
    env = { PATH: process.env.PATH ?? '', HOME: dir, VOX_HOME: home, VOX_MODEL: 'openai:gpt-test', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  });
  after(async () => {
    await server.close();
    removeTmpDir(dir);
  });

  async function connect(level: string, ws: string, extra: string[] = [], vars: Record<string, string> = env): Promise<{ client: Client; stderr: () => string }> {
    const { command, args } = voxServeCommand(REPO_ROOT, level, ws);
    const transport = new StdioClientTransport({ command, args: [...args, ...extra], env: vars, cwd: dir, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d) => (err += String(d)));
    const client = new Client({ name: 'vox-workspaces-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  /** The error of a call naming `id`, with the id taken out of its message (to compare with another id's). */
  async function refusal(client: Client, name: string, args: Record<string, unknown>, id: string): Promise<{ domain: string; code: string; message: string }> {
    const e = errorOf(await client.callTool({ name, arguments: args }));
    return { domain: e.domain, code: e.code, message: e.message.split(id).join('<id>') };
  }

  it('A lists, reads, searches, sends to and captures only its own threads: B\'s ids are notFound exactly like a random id', async () => {
    const { client } = await connect('default', wsA);
    try {
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((t) => t.id).sort(), [...aThreads].sort(), 'B\'s thread is not listed to A');
      const random = allocate('thread');
      for (const [name, extra] of [['read_thread', {}], ['send_to_thread', { prompt: 'more' }], ['capture_checkpoint', {}], ['list_checkpoints', {}]] as const) {
        const b = await refusal(client, name, { threadId: bThread, ...extra }, bThread);
        const r = await refusal(client, name, { threadId: random, ...extra }, random);
        assert.deepEqual([b.domain, b.code], ['store', 'notFound'], `${name} of B's thread: ${b.message}`);
        assert.deepEqual(b, r, `${name}: B's id and a random id get the same error`);
      }
      const found = valueOf<{ titles: Array<{ threadId: string }>; messages: Array<{ threadId: string }> }>(await client.callTool({ name: 'search_threads', arguments: { query: 'zebrafish' } }));
      assert.deepEqual([...found.titles, ...found.messages].filter((h) => h.threadId === bThread), [], 'B\'s title and text are not found from A');
      assert.deepEqual(found.messages, [], 'the word is only in B\'s thread');
      const own = valueOf<{ messages: Array<{ threadId: string }> }>(await client.callTool({ name: 'search_threads', arguments: { query: 'loadConfig' } }));
      assert.ok(own.messages.some((m) => m.threadId === aThreads[1]), 'A still finds its own');
      const cps = valueOf<{ threads: Array<{ threadId: string }>; checkpoints: Array<{ threadId: string }> }>(await client.callTool({ name: 'list_checkpoints', arguments: {} }));
      assert.ok(!cps.threads.some((t) => t.threadId === bThread) && !cps.checkpoints.some((c) => c.threadId === bThread), 'B\'s checkpoints are not listed to A');
      assert.deepEqual(valueOf(await client.callTool({ name: 'read_thread', arguments: { threadId: aThreads[0] } })).thread, listed.threads.find((t) => t.id === aThreads[0]));
    } finally {
      await client.close();
    }
    // B's own server sees B's thread and its one checkpoint, untouched by A's attempt.
    const { client: b } = await connect('readOnly', wsB);
    try {
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await b.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((t) => t.id), [bThread]);
      const cps = valueOf<{ checkpoints: Array<{ ordinal: number }> }>(await b.callTool({ name: 'list_checkpoints', arguments: { threadId: bThread } }));
      assert.equal(cps.checkpoints.length, 1);
    } finally {
      await b.close();
    }
  });

  it('--all-workspaces (named in the grant text of --help) lifts it: A lists and reads B\'s thread', async () => {
    const help = await runVox(['mcp', 'serve', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.out, /--all-workspaces/);
    assert.match(help.out, /only the threads of its workspace/i);
    const { client } = await connect('readOnly', wsA, ['--all-workspaces']);
    try {
      const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.deepEqual(listed.threads.map((t) => t.id).sort(), [...aThreads, bThread].sort());
      const read = valueOf<{ messages: Array<{ content: string }> }>(await client.callTool({ name: 'read_thread', arguments: { threadId: bThread } }));
      assert.equal(read.messages[1]!.content, B_ANSWER);
    } finally {
      await client.close();
    }
  });

  it('a 20 MB JSON-RPC message gets a JSON-RPC error and the server keeps serving', async () => {
    const { client, stderr } = await connect('readOnly', wsA);
    try {
      const huge = 'x'.repeat(20 * 1024 * 1024);
      await assert.rejects(client.callTool({ name: 'search_threads', arguments: { query: huge } }), (e: unknown) => {
        const err = e as { code?: number; message?: string };
        assert.equal(err.code, -32600, String(err.message));
        assert.match(String(err.message), /larger than/);
        return true;
      });
      const listed = valueOf<{ threads: unknown[] }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.equal(listed.threads.length, aThreads.length, 'still serving after the oversized message');
      assert.match(stderr(), /larger than/);
    } finally {
      await client.close();
    }
  });

  it('over stdio no one can approve: a default-runtime Act thread is refused at start (approval/noApprover, naming what to do); Plan starts and runs', async () => {
    const { client } = await connect('default', wsA);
    try {
      const e = errorOf(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Fix the flaky test', runtimeMode: 'default', interactionMode: 'default' } }));
      assert.deepEqual([e.domain, e.code], ['approval', 'noApprover'], e.message);
      assert.match(e.message, /readOnly/);
      assert.match(e.message, /VS Code/);
      const sent = errorOf(await client.callTool({ name: 'send_to_thread', arguments: { threadId: aThreads[0], prompt: 'and then?' } }));
      assert.deepEqual([sent.domain, sent.code], ['approval', 'noApprover'], 'the owner\'s Ask-every-time thread would wait too');
      const listed = valueOf<{ threads: unknown[] }>(await client.callTool({ name: 'list_threads', arguments: {} }));
      assert.equal(listed.threads.length, aThreads.length, 'the refused start made no thread');
      const plan = valueOf<{ threadId: string; workMode: string }>(await client.callTool({ name: 'start_thread', arguments: { prompt: 'Plan the fix' } }));
      assert.equal(plan.workMode, 'plan');
    } finally {
      await client.close();
    }
  });

  for (const what of ['file', 'folder'] as const) {
    it(`--grant readOnly serves a database whose ${what} cannot be written`, async () => {
      const roHome = path.join(dir, `ro-${what}`);
      fs.cpSync(home, roHome, { recursive: true });
      const undo = makeReadOnly(what === 'file' ? path.join(roHome, 'vox.db') : roHome);
      try {
        const { client } = await connect('readOnly', wsA, [], { ...env, VOX_HOME: roHome });
        try {
          const listed = valueOf<{ threads: Array<{ id: string }> }>(await client.callTool({ name: 'list_threads', arguments: {} }));
          assert.ok(aThreads.every((id) => listed.threads.some((t) => t.id === id)) && !listed.threads.some((t) => t.id === bThread), JSON.stringify(listed));
          const read = valueOf<{ messages: Array<{ content: string }> }>(await client.callTool({ name: 'read_thread', arguments: { threadId: aThreads[0] } }));
          assert.equal(read.messages[1]!.content, SEED_ANSWERS[0]);
        } finally {
          await client.close();
        }
      } finally {
        undo();
      }
    });
  }
});
