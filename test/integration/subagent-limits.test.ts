/**
 * Subagents and background work inherit their parent's limits, in a real engine on a real SQLite
 * file with a real OpenAI-wire server answering each agent by its task: the workspace default is
 * Full auto, yet a subagent of an ask-mode thread (one the owner chose, one a `default`-grant MCP
 * session started) asks before its commands, and so does its own subagent; a child's ceiling
 * refuses a wider mode (typed, naming the ceiling), also from a second engine on the same
 * database; Plan mode still refuses spawn_subagent; a ceiling that says Plan keeps a thread in
 * Plan; a child keeps its parent's thread rules; a background command of an ask-mode thread asks; a ceiling for an unknown thread is a
 * typed store error.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError, type EngineClient } from '../../src/client/engine-client';
import { mcpGrant } from '../../src/mcp-server/grants';
import { VoxStore } from '../../src/engine/store/store';
import { StoreError } from '../../src/engine/store/errors';
import type { UpdateOf } from '../../src/protocol/updates';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer, type RecordedRequest } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

function firstPrompt(req: RecordedRequest): string {
  const m = (req.body?.messages as { role: string; content: unknown }[] | undefined)?.find((x) => x.role === 'user');
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
}

/** Answers each agent from its own script, chosen by a marker in its first prompt (the longest marker first). */
function byAgent(scripts: Record<string, FakeResponse[]>): (req: RecordedRequest) => FakeResponse | undefined {
  const markers = Object.keys(scripts).sort((a, b) => b.length - a.length);
  return (req) => {
    const p = firstPrompt(req);
    for (const marker of markers) if (p.includes(marker)) return scripts[marker]!.shift();
    return undefined;
  };
}

const denied = (re: RegExp) => (e: unknown) => e instanceof ClientError && e.is('protocol', 'capabilityDenied') && re.test((e as Error).message);

describe('subagents and background work inherit their parent\'s limits', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;
  let second: TestEngine | undefined;

  async function engineWith(scripts: Record<string, FakeResponse[]>): Promise<{ t: TestEngine; c: EngineClient; pending: UpdateOf<'approvalRequested'>[] }> {
    server = await startFakeOpenAI({ responses: [], route: byAgent(scripts) });
    const host = openaiHost(server);
    host.permissions = { mode: 'fullAuto' }; // the workspace default a child must not fall back to
    t = startTestEngine({ dir, host });
    const c = t.client();
    const pending: UpdateOf<'approvalRequested'>[] = [];
    c.on('approvalRequested', (u) => pending.push(u));
    return { t, c, pending };
  }

  /** The parent spawns CHILD (awaited), which runs `touch <file>`. */
  const childRuns = (file: string): Record<string, FakeResponse[]> => ({
    PARENT: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: touch the file', title: 'Toucher' } }]), textTurn('waiting'), textTurn('done')],
    CHILD: [toolCallTurn([{ name: 'run_command', args: { command: `touch ${file}` } }]), textTurn('child done')],
  });

  /** Waits until a call of `threadId` asks, or the file the call would make exists (it ran unasked). */
  async function asksOrRuns(pending: UpdateOf<'approvalRequested'>[], file: string, threadOf: () => Promise<string | undefined>): Promise<string> {
    let childId: string | undefined;
    await until(async () => {
      childId ??= await threadOf();
      return fs.existsSync(path.join(dir, file)) || pending.some((p) => p.threadId === childId);
    }, { what: 'the child to ask or run its command' });
    assert.equal(fs.existsSync(path.join(dir, file)), false, 'the child ran its command unasked (the workspace default Full auto)');
    const ask = pending.find((p) => p.threadId === childId)!;
    assert.equal(ask.toolName, 'run_command');
    return childId!;
  }

  const childOf = (c: EngineClient, threadId: string) => async () => (await c.call('listChildThreads', { threadId })).threads[0]?.id;

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await second?.dispose();
    second = undefined;
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  it('a subagent of an ask-mode thread asks before its commands and keeps its parent\'s mode as a ceiling', async () => {
    const { c, pending } = await engineWith(childRuns('ran-child'));
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: go', newThread: { permissionMode: 'ask', workMode: 'act' } });
    const child = await asksOrRuns(pending, 'ran-child', childOf(c, threadId));
    const view = await c.call('getPermissions', { threadId: child });
    assert.deepEqual([view.mode, view.modeSource, view.workMode], ['ask', 'thread', 'act']);
    // Wider than its parent's limits: refused, typed, naming the ceiling; stricter is fine.
    await assert.rejects(c.call('setPermissionMode', { scope: 'thread', threadId: child, mode: 'fullAuto' }), denied(/ceiling/));
    await assert.rejects(c.call('setPermissionMode', { scope: 'thread', threadId: child, mode: null }), denied(/ceiling/));
    assert.equal((await c.call('getPermissions', { threadId: child })).mode, 'ask');
    await c.call('setWorkMode', { threadId: child, mode: 'plan' });
    await c.call('setWorkMode', { threadId: child, mode: 'act' }); // Act is within an Act parent's ceiling
    // A second engine on the same database reads the ceiling from the store.
    second = startTestEngine({ dir, host: openaiHost(server) });
    await assert.rejects(second.client().call('setPermissionMode', { scope: 'thread', threadId: child, mode: 'autoEdits' }), denied(/ceiling/));
    await c.call('respondToApproval', { callId: pending.find((p) => p.threadId === child)!.callId, decision: 'denied' });
    await until(async () => (await c.call('getThread', { threadId })).runs.at(-1)?.status === 'completed', { what: 'the parent completed' });
    assert.equal(fs.existsSync(path.join(dir, 'ran-child')), false);
  });

  it('a subagent of a thread a default-grant MCP session started asks; it never runs unasked', async () => {
    const { t: te, c, pending } = await engineWith(childRuns('ran-mcp-child'));
    const mcp = te.client(mcpGrant('default', 'mcp test client'));
    const { threadId } = await mcp.call('sendPrompt', { threadId: null, prompt: 'PARENT: go' });
    const child = await asksOrRuns(pending, 'ran-mcp-child', childOf(c, threadId));
    assert.equal((await c.call('getPermissions', { threadId: child })).mode, 'ask');
    await c.call('respondToApproval', { callId: pending.find((p) => p.threadId === child)!.callId, decision: 'denied' });
    await until(async () => (await c.call('getThread', { threadId })).runs.at(-1)?.status === 'completed', { what: 'the parent completed' });
  });

  it('a subagent keeps its parent\'s thread rules: what the parent may run unasked, the child may too', async () => {
    const { t: te, c, pending } = await engineWith({
      PARENT: [textTurn('hello'), toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: touch it', title: 'Toucher' } }]), textTurn('waiting'), textTurn('done')],
      CHILD: [toolCallTurn([{ name: 'run_command', args: { command: 'touch ran-allowed' } }]), textTurn('child done')],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: hi', newThread: { permissionMode: 'ask', workMode: 'act' } });
    await until(async () => (await c.call('getThread', { threadId })).runs.at(-1)?.status === 'completed', { what: 'the first turn' });
    const s = VoxStore.open(te.dbPath);
    try {
      s.append({ type: 'thread.permissionRulesSet', threadId, rules: [{ action: 'allow', tool: 'run_command', command: 'touch *' }] });
    } finally {
      s.close();
    }
    const next = await c.call('sendPrompt', { threadId, prompt: 'PARENT: now delegate' });
    await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === next.runId)?.status === 'completed', { what: 'the parent completed' });
    assert.ok(fs.existsSync(path.join(dir, 'ran-allowed')), 'the parent\'s rule allowed the child\'s command');
    assert.deepEqual(pending, [], 'nothing was asked');
    const child = (await childOf(c, threadId)())!;
    const view = await c.call('getPermissions', { threadId: child });
    assert.equal(view.mode, 'ask');
    assert.deepEqual(view.rules.filter((r) => r.scope === 'thread').map((r) => [r.tool, r.command]), [['run_command', 'touch *']]);
  });

  it('a grandchild inherits its parent\'s ceiling and asks too', async () => {
    const { c, pending } = await engineWith({
      PARENT: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: delegate', title: 'Delegator' } }]), textTurn('waiting'), textTurn('done')],
      CHILD: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'GRANDCHILD: touch it', title: 'Grandchild' } }]), textTurn('waiting'), textTurn('child done')],
      GRANDCHILD: [toolCallTurn([{ name: 'run_command', args: { command: 'touch ran-grandchild' } }]), textTurn('grandchild done')],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: go', newThread: { permissionMode: 'ask', workMode: 'act' } });
    const grandchildOf = async () => {
      const child = await childOf(c, threadId)();
      return child ? childOf(c, child)() : undefined;
    };
    const grandchild = await asksOrRuns(pending, 'ran-grandchild', grandchildOf);
    await assert.rejects(c.call('setPermissionMode', { scope: 'thread', threadId: grandchild, mode: 'fullAuto' }), denied(/ceiling/));
    await c.call('respondToApproval', { callId: pending.find((p) => p.threadId === grandchild)!.callId, decision: 'denied' });
    await until(async () => (await c.call('getThread', { threadId })).runs.at(-1)?.status === 'completed', { what: 'the parent completed' });
  });

  it('a plan-mode thread may not spawn a subagent; a ceiling that says Plan keeps a thread in Plan', async () => {
    const { t: te, c } = await engineWith({
      PARENT: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: anything' } }]), textTurn('planned')],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: plan it', newThread: { permissionMode: 'ask', workMode: 'plan' } });
    await until(async () => (await c.call('getThread', { threadId })).runs.at(-1)?.status === 'completed', { what: 'the parent completed' });
    assert.deepEqual((await c.call('listChildThreads', { threadId })).threads, [], 'no child thread was started');
    const told = JSON.stringify(server.requests.at(-1)!.body.messages);
    assert.match(told, /Plan mode/, 'the model was told spawn_subagent does not run in Plan mode');
    // A thread whose recorded ceiling is Plan (runtime readOnly, interaction plan) stays there.
    const s = VoxStore.open(te.dbPath);
    try {
      s.append({ type: 'thread.ceilingSet', threadId, ceiling: { runtime: 0, interaction: 0 } });
    } finally {
      s.close();
    }
    await assert.rejects(c.call('setWorkMode', { threadId, mode: 'act' }), denied(/ceiling/));
    await assert.rejects(c.call('actOnPlan', { threadId, planId: 'plan-none' }), denied(/ceiling/));
    assert.equal((await c.call('getPlan', { threadId })).workMode, 'plan');
    // Even a work mode recorded as Act (written past the commands) is read as Plan under that ceiling.
    const s2 = VoxStore.open(te.dbPath);
    try {
      s2.append({ type: 'thread.workModeSet', threadId, mode: 'act' });
    } finally {
      s2.close();
    }
    assert.equal((await c.call('getPermissions', { threadId })).workMode, 'plan');
  });

  it('a background command of an ask-mode thread asks', async () => {
    const { c, pending } = await engineWith({
      PARENT: [toolCallTurn([{ name: 'run_command', args: { command: 'touch ran-background', background: true } }]), textTurn('done')],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: go', newThread: { permissionMode: 'ask', workMode: 'act' } });
    await until(() => pending.length > 0 || fs.existsSync(path.join(dir, 'ran-background')), { what: 'the command to ask or run' });
    assert.equal(fs.existsSync(path.join(dir, 'ran-background')), false, 'the background command ran unasked');
    assert.deepEqual(pending.map((p) => [p.threadId, p.toolName]), [[threadId, 'run_command']]);
    await c.call('respondToApproval', { callId: pending[0]!.callId, decision: 'denied' });
  });

  it('a ceiling for an unknown thread is a typed error', async () => {
    const { t: te } = await engineWith({});
    const s = VoxStore.open(te.dbPath);
    try {
      assert.throws(() => s.append({ type: 'thread.ceilingSet', threadId: 'thread-nope', ceiling: { runtime: 1, interaction: 1 } }),
        (e: unknown) => e instanceof StoreError && e.code === 'notFound' && /thread-nope/.test(e.message));
    } finally {
      s.close();
    }
  });
});
