/**
 * Subagents and background work (SPEC 2.4) in a real engine with a real OpenAI-wire server that
 * answers each agent by its task (parent and child call the model concurrently): an awaited child
 * delays its parent's turn end (`run.settling`) and its result reaches the parent's model; a
 * child that is not awaited lets the turn end and reports into the next turn; Stop cascades to
 * the children; child threads are listed under their parent, not at the top; a child left
 * running by a process that was killed is interrupted when the next engine opens the database;
 * limits and unknown handles are typed tool errors.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineClient } from '../../src/client/engine-client';
import { MAX_SUBAGENT_DEPTH } from '../../src/engine/runs/background';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeResponse, type FakeServer, type RecordedRequest } from '../support/fake-openai-server';
import { openaiHost, heldGate } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { CLI_ENTRY, REPO_ROOT } from '../support/cli';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

/** The first user message of a request (which agent is asking). */
function firstPrompt(req: RecordedRequest): string {
  const m = (req.body?.messages as { role: string; content: unknown }[] | undefined)?.find((x) => x.role === 'user');
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
}

/** Answers each agent from its own script, chosen by a marker in its first prompt. */
function byAgent(scripts: Record<string, FakeResponse[]>): (req: RecordedRequest) => FakeResponse | undefined {
  return (req) => {
    const p = firstPrompt(req);
    for (const [marker, queue] of Object.entries(scripts)) if (p.includes(marker)) return queue.shift();
    return undefined;
  };
}

const requestsOf = (server: FakeServer, marker: string) => server.requests.filter((r) => firstPrompt(r).includes(marker));
const contents = (req: RecordedRequest) => (req.body.messages as { role: string; content: unknown }[]).map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);

describe('subagents and background work', function () {
  this.timeout(60_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine | undefined;

  async function engineWith(scripts: Record<string, FakeResponse[]>): Promise<{ t: TestEngine; c: EngineClient }> {
    server = await startFakeOpenAI({ responses: [], route: byAgent(scripts) });
    const host = openaiHost(server);
    t = startTestEngine({ dir, host });
    return { t, c: t.client() };
  }
  const runStatus = async (c: EngineClient, threadId: string) => (await c.call('getThread', { threadId })).runs.at(-1)?.status;
  const eventTypes = (te: TestEngine, threadId: string) => {
    const s = VoxStore.open(te.dbPath, { readonly: true });
    try {
      return s.eventsAfter(0, { threadId }).map((e) => e.type);
    } finally {
      s.close();
    }
  };

  beforeEach(() => (dir = makeTmpDir()));
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    removeTmpDir(dir);
  });

  it('an awaited subagent delays the turn end; its result goes to the parent model; its thread is listed under the parent with its status', async () => {
    const g = heldGate();
    const { c, t: te } = await engineWith({
      PARENT: [
        toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: count the files', title: 'Count files' } }]),
        textTurn('I asked a helper; waiting for it.'),
        textTurn('The helper counted 3 files.'),
      ],
      CHILD: [textTurn(['There are ', '3 files.'], { holds: [{ afterEvents: 1, release: g.held }] })],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: how many files?' });
    await until(() => eventTypes(te, threadId).includes('run.settling'), { what: 'the parent settles' });
    assert.equal(await runStatus(c, threadId), 'running', 'the turn waits for its awaited child');
    const [child] = (await c.call('listChildThreads', { threadId })).threads;
    assert.ok(child);
    assert.deepEqual([child.title, child.parentThreadId, child.status], ['Count files', threadId, 'running']);
    const top = (await c.call('listThreads', {})).threads;
    assert.deepEqual(top.map((x) => [x.id, x.childCount]), [[threadId, 1]], 'the child thread is not at the top level');
    g.release();
    await until(async () => (await runStatus(c, threadId)) === 'completed', { what: 'the parent completed' });
    assert.equal((await c.call('listChildThreads', { threadId })).threads[0]!.status, 'completed');
    const last = requestsOf(server, 'PARENT').at(-1)!;
    const report = contents(last).at(-1)!;
    assert.match(report, /^user: \[Background work finished\]/);
    assert.match(report, /Count files\nStatus: completed\nThere are 3 files\./);
    const thread = await c.call('getThread', { threadId });
    assert.match(thread.messages.at(-1)!.content, /The helper counted 3 files\./);
    assert.deepEqual(eventTypes(te, threadId).filter((e) => e.startsWith('background.')), ['background.started', 'background.ended', 'background.reported']);
  });

  it('a subagent that is not awaited lets the turn end; it finishes later and reports into the next turn', async () => {
    const g = heldGate();
    const { c } = await engineWith({
      PARENT: [
        toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: run the slow audit', awaited: false } }]),
        textTurn('Started the audit in the background.'),
        textTurn('The audit found nothing.'),
      ],
      CHILD: [textTurn(['audit: ', 'no findings'], { holds: [{ afterEvents: 1, release: g.held }] })],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: audit it' });
    await until(async () => (await runStatus(c, threadId)) === 'completed', { what: 'the parent completed' });
    const child = (await c.call('listChildThreads', { threadId })).threads[0]!;
    assert.equal(child.status, 'running', 'the child keeps running after the turn');
    g.release();
    await until(async () => (await c.call('listChildThreads', { threadId })).threads[0]!.status === 'completed', { what: 'the child completed' });
    const next = await c.call('sendPrompt', { threadId, prompt: 'any news?' });
    await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === next.runId)?.status === 'completed', { what: 'the next turn' });
    const req = contents(requestsOf(server, 'PARENT').at(-1)!);
    assert.match(req.at(-2)!, /^user: \[Background work finished\][\s\S]*audit: no findings/);
    assert.equal(req.at(-1), 'user: any news?');
  });

  it('Stop cascades: cancelling the parent cancels the subagent it waits for', async () => {
    const { c } = await engineWith({
      PARENT: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: think forever' } }]), textTurn('waiting')],
      CHILD: [textTurn(['never ', 'ends'], { holds: [{ afterEvents: 1, release: new Promise(() => undefined) }] })],
    });
    const { threadId, runId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: go' });
    await until(async () => (await c.call('listChildThreads', { threadId })).threads[0]?.status === 'running', { what: 'the child runs' });
    await c.call('cancelRun', { runId: runId! });
    await until(async () => (await runStatus(c, threadId)) === 'cancelled' && (await c.call('listChildThreads', { threadId })).threads[0]!.status === 'cancelled', { what: 'both stopped' });
    // A run leaves the registry just after its run.ended is stored: wait for that, bounded.
    await until(async () => (await c.call('listRuns', {})).runs.length === 0, { what: 'no run is listed any more' });
  });

  it('limits and bad input: an unknown handle is a tool error; subagents nest at most MAX_SUBAGENT_DEPTH deep', async () => {
    const spawnTurn = (task: string) => toolCallTurn([{ name: 'spawn_subagent', args: { task } }]);
    const { c } = await engineWith({
      PARENT: [toolCallTurn([{ name: 'command_status', args: { handle: 'bg:nope' } }]), spawnTurn('LEVEL1: go deeper'), textTurn('parent done'), textTurn('parent reported')],
      LEVEL1: [spawnTurn('LEVEL2: deeper still'), textTurn('level 1 done'), textTurn('level 1 reported')],
      LEVEL2: [spawnTurn('LEVEL3: too deep'), textTurn('level 2 could not go deeper')],
    });
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: nest' });
    await until(async () => (await runStatus(c, threadId)) === 'completed', { what: 'the parent completed' });
    const parentReqs = requestsOf(server, 'PARENT');
    assert.match(contents(parentReqs[1]!).at(-1)!, /^tool: Error \(notFound\): no background work bg:nope in this thread/);
    const level2 = requestsOf(server, 'LEVEL2');
    assert.match(contents(level2[1]!).at(-1)!, new RegExp(`^tool: Error \\(invalidArguments\\): subagents nest at most ${MAX_SUBAGENT_DEPTH} deep`));
    assert.equal(requestsOf(server, 'LEVEL3').length, 0);
  });

  it('a background command returns a handle at once; command_status shows its output; awaited, the turn waits for it and gets its result', async () => {
    const marker = path.join(dir, 'go');
    const { c, t: te } = await engineWith({
      PARENT: [
        toolCallTurn([{ name: 'run_command', args: { command: `echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished`, background: true, awaited: true } }]),
        toolCallTurn([{ name: 'command_status', args: { handle: 'HANDLE' } }]),
        textTurn('waiting for the build'),
        textTurn('the build finished'),
      ],
    });
    c.on('approvalRequested', (u) => void c.call('respondToApproval', { callId: u.callId, decision: 'approved' }));
    // The model learns the handle from the first tool result; the script fills it in before the second call.
    const route = server as unknown as { requests: RecordedRequest[] };
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: build in the background' });
    await until(() => eventTypes(te, threadId).includes('background.started'), { what: 'the background command started' });
    const started = route.requests.length;
    assert.ok(started >= 1);
    await until(() => eventTypes(te, threadId).includes('run.settling'), { what: 'the parent settles on the awaited command' });
    const statusReq = requestsOf(server, 'PARENT')[2]!;
    assert.match(contents(statusReq).at(-1)!, /^tool: (Error \(notFound\)|bg:)/);
    assert.equal(await runStatus(c, threadId), 'running');
    fs.writeFileSync(marker, '');
    await until(async () => (await runStatus(c, threadId)) === 'completed', { what: 'the parent completed' });
    const report = contents(requestsOf(server, 'PARENT').at(-1)!).at(-1)!;
    assert.match(report, /Background command bg:[^\n]+\nStatus: completed\nstarted\nfinished\n\[exit code 0\]/);
  });

  it('a background command that is not awaited outlives its turn; command_kill in a later turn stops it with everything it started', async () => {
    const { c, t: te } = await engineWith({
      PARENT: [
        toolCallTurn([{ name: 'run_command', args: { command: 'sleep 30 & echo child=$!; wait', background: true } }]),
        textTurn('it runs on'),
      ],
    });
    c.on('approvalRequested', (u) => void c.call('respondToApproval', { callId: u.callId, decision: 'approved' }));
    const { threadId } = await c.call('sendPrompt', { threadId: null, prompt: 'PARENT: serve' });
    await until(async () => (await runStatus(c, threadId)) === 'completed', { what: 'the parent completed (not awaited)' });
    const s = VoxStore.open(te.dbPath, { readonly: true });
    const started = s.eventsAfter(0, { threadId }).find((e) => e.type === 'background.started');
    s.close();
    assert.ok(started && started.type === 'background.started');
    // The next turn kills it by handle.
    server.push(toolCallTurn([{ name: 'command_kill', args: { handle: started.handle } }]), textTurn('stopped it'));
    const next = await c.call('sendPrompt', { threadId, prompt: 'stop the server' });
    await until(async () => (await c.call('getThread', { threadId })).runs.find((r) => r.id === next.runId)?.status !== 'running', { what: 'the next turn' });
    assert.equal((await c.call('getThread', { threadId })).runs.find((r) => r.id === next.runId)?.error, null);
    const killResult = contents(server.requests.at(-1)!).filter((m) => m.startsWith('tool:')).at(-1) ?? '';
    assert.match(killResult, /Status: cancelled[\s\S]*child=(\d+)[\s\S]*stopped by command_kill/);
    const pid = Number(/child=(\d+)/.exec(killResult)?.[1]);
    assert.ok(pid > 0);
    await until(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, { what: 'the sleep is gone' });
  });

  it('a subagent left running by a killed process is interrupted when the next engine opens the database', async () => {
    const home = path.join(dir, 'home');
    server = await startFakeOpenAI({
      responses: [],
      route: byAgent({
        PARENT: [toolCallTurn([{ name: 'spawn_subagent', args: { task: 'CHILD: long job' } }]), textTurn('waiting for the child')],
        CHILD: [textTurn(['working ', 'on it'], { holds: [{ afterEvents: 1, release: new Promise(() => undefined) }] })],
      }),
    });
    const env = { ...process.env, VOX_HOME: home, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test' };
    const cli = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'chat', '--model', 'openai:gpt-test', '--cwd', dir, 'PARENT: start the child'], { cwd: REPO_ROOT, env, stdio: 'ignore' });
    await until(() => requestsOf(server, 'CHILD').length === 1 && fs.existsSync(path.join(home, 'vox.db')), { what: 'the child is running' });
    cli.kill('SIGKILL');
    await new Promise((r) => cli.once('exit', r));
    const host = openaiHost(server);
    t = startTestEngine({ dir, host, config: { dbPath: path.join(home, 'vox.db') } });
    const c = t.client();
    const [parent] = (await c.call('listThreads', {})).threads;
    assert.ok(parent);
    assert.equal(await runStatus(c, parent.id), 'interrupted');
    const [child] = (await c.call('listChildThreads', { threadId: parent.id })).threads;
    assert.equal(child?.status, 'interrupted');
    const s = VoxStore.open(t.dbPath, { readonly: true });
    const ended = s.eventsAfter(0, { threadId: parent.id }).filter((e) => e.type === 'background.ended');
    s.close();
    assert.deepEqual(ended.map((e) => e.type === 'background.ended' && e.status), ['interrupted']);
  });
});
