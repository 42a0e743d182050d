/**
 * Permission rules and Plan mode in the real agent loop, against the fake OpenAI server: a call a
 * rule denies never runs (its side effect does not happen) and the model is told the rule and
 * why; an auto-approved call records the rule that allowed it on its item; Plan mode offers only
 * read tools and refuses a write anyway, the plan round-trips through the store and the protocol,
 * the user edits it, "Act on this plan" carries it to the model, and steps tick as reported.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoredEventOf } from '../../src/protocol/events';
import { VoxStore } from '../../src/engine/store/store';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

function toolNames(body: { tools?: Array<{ function: { name: string } }> }): string[] {
  return (body.tools ?? []).map((t) => t.function.name);
}
function toolMessages(body: { messages: Array<{ role: string; content: unknown }> }): string[] {
  return body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

describe('permissions and plan mode in the agent loop', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  async function finish(threadId: string): Promise<void> {
    const c = t.client();
    await until(async () => (await c.call('listRuns', { threadId })).runs.length === 0, { what: 'the engine to get there' });
  }

  /** The thread's tool-call items as stored (what every client replays), read from the database file. */
  function itemsOf(threadId: string): StoredEventOf<'item.started'>[] {
    const s = VoxStore.open(t.dbPath, { readonly: true });
    try {
      return s.eventsAfter(0, { threadId }).filter((e): e is StoredEventOf<'item.started'> => e.type === 'item.started' && e.kind === 'toolCall');
    } finally {
      s.close();
    }
  }

  it('a command denied by a rule never runs, and the model is told which rule and why; an allowed one says which rule allowed it', async () => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, '.vox'));
    fs.writeFileSync(path.join(dir, '.vox/permissions.json'), JSON.stringify({
      rules: [{ action: 'deny', command: 'touch *', reason: 'no new files from the shell' }, { action: 'allow', command: 'echo *' }],
    }));
    server = await startFakeOpenAI({
      responses: [
        // The deny pattern is matched on the parsed chain: the second sub-command is caught.
        toolCallTurn([{ name: 'run_command', args: { command: 'echo ok && touch pwned.txt' } }]),
        toolCallTurn([{ name: 'run_command', args: { command: "echo 'allowed by rule'" } }]),
        textTurn('done'),
      ],
    });
    t = startTestEngine({ dir, host: openaiHost(server) });
    const c = t.client();
    const approvals: string[] = [];
    c.on('approvalRequested', (u) => approvals.push(u.toolName));
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'go' });
    await finish(r.threadId);
    assert.equal(fs.existsSync(path.join(dir, 'pwned.txt')), false, 'the denied command did not run');
    assert.deepEqual(approvals, [], 'nothing was asked: one call denied by a rule, one allowed by a rule');
    const told = toolMessages(server.requests[1]!.body);
    assert.match(told[0]!, /^Not run: Denied by \.vox\/permissions\.json rules\[0\]: deny \* command "touch \*" \(no new files from the shell\)\./);
    const second = toolMessages(server.requests[2]!.body);
    assert.match(second[second.length - 1]!, /allowed by rule/);
    const items = itemsOf(r.threadId);
    assert.deepEqual(items.map((i) => [i.permission?.decision, i.permission?.source, i.permission?.rule]), [
      ['deny', 'rule', '.vox/permissions.json rules[0]: deny * command "touch *"'],
      ['allow', 'rule', '.vox/permissions.json rules[1]: allow * command "echo *"'],
    ]);
    // The protocol lists the effective rules.
    const eff = await c.call('getPermissions', { threadId: r.threadId });
    assert.deepEqual(eff.rules.map((x) => x.label), ['deny * command "touch *"', 'allow * command "echo *"']);
    assert.deepEqual([eff.mode, eff.modeSource, eff.workMode], ['ask', 'default', 'act']);
  });

  it('the thread\'s mode, set through the protocol, auto-approves edits and is recorded on the call', async () => {
    dir = makeTmpDir();
    server = await startFakeOpenAI({ responses: [textTurn('hi'), toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'A\n' } }]), textTurn('done')] });
    t = startTestEngine({ dir, host: openaiHost(server) });
    const c = t.client();
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'hello' });
    await finish(r.threadId);
    const set = await c.call('setPermissionMode', { scope: 'thread', threadId: r.threadId, mode: 'autoEdits' });
    assert.deepEqual([set.mode, set.modeSource, set.modeLabel], ['autoEdits', 'thread', 'Auto-approve edits']);
    await c.call('sendPrompt', { threadId: r.threadId, prompt: 'write a' });
    await until(() => fs.existsSync(path.join(dir, 'a.txt')), { what: 'the engine to get there' });
    await finish(r.threadId);
    const [item] = itemsOf(r.threadId);
    assert.deepEqual(item!.permission, { decision: 'allow', source: 'mode', rule: null, reason: 'Mode "Auto-approve edits" runs file edits without asking.' });
    // The workspace default goes to the host's settings.
    await c.call('setPermissionMode', { scope: 'workspace', mode: 'fullAuto' });
    assert.equal(t.host.permissions?.mode, 'fullAuto');
    assert.deepEqual([(await c.call('getPermissions', {})).mode, (await c.call('getPermissions', { threadId: r.threadId })).mode], ['fullAuto', 'autoEdits']);
  });

  it('Plan mode: read tools only, a write is refused, the plan round-trips, is edited, carried to Act, and its steps tick', async () => {
    dir = makeTmpDir();
    fs.writeFileSync(path.join(dir, 'README.md'), 'hello\n');
    server = await startFakeOpenAI({
      responses: [
        textTurn('created'),
        // Plan turn: a write attempted anyway (refused), then the plan.
        toolCallTurn([{ name: 'write_file', args: { path: 'x.txt', content: 'no' } }]),
        toolCallTurn([{ name: 'submit_plan', args: { title: 'Greet properly', steps: [{ text: 'Read README.md' }, { text: 'Write hello.txt' }] } }]),
        textTurn('Here is the plan.'),
      ],
    });
    t = startTestEngine({ dir, host: openaiHost(server, { write: 'auto' }) });
    const c = t.client();
    const first = await c.call('sendPrompt', { threadId: null, prompt: 'hi' });
    await finish(first.threadId);
    const threadId = first.threadId;
    const actEstimate = await c.call('estimateContext', { threadId, draft: 'plan a greeting' });
    assert.deepEqual(await c.call('setWorkMode', { threadId, mode: 'plan' }), { threadId, workMode: 'plan' });
    // The composer's meter counts what a Plan turn sends: fewer tools, the Plan-mode instructions.
    const planEstimate = await c.call('estimateContext', { threadId, draft: 'plan a greeting' });
    assert.ok(planEstimate.parts.tools < actEstimate.parts.tools, `tools: plan ${planEstimate.parts.tools} vs act ${actEstimate.parts.tools}`);
    assert.ok(planEstimate.parts.system > actEstimate.parts.system, `system: plan ${planEstimate.parts.system} vs act ${actEstimate.parts.system}`);
    await c.call('sendPrompt', { threadId, prompt: 'plan a greeting' });
    await finish(threadId);
    const planReq = server.requests[1]!.body;
    assert.deepEqual(toolNames(planReq).sort(), ['command_status', 'list_files', 'read_file', 'search_text', 'submit_plan']);
    assert.match(planReq.messages[0].content, /Plan mode/);
    assert.equal(fs.existsSync(path.join(dir, 'x.txt')), false, 'the write did not run in Plan mode');
    assert.match(toolMessages(server.requests[2]!.body)[0]!, /^Not run: The thread is in Plan mode/);

    const got = await c.call('getPlan', { threadId });
    assert.equal(got.workMode, 'plan');
    const plan = got.plan!;
    assert.deepEqual([plan.title, plan.status, plan.steps.map((s) => [s.id, s.text, s.status])], ['Greet properly', 'proposed', [['s1', 'Read README.md', 'pending'], ['s2', 'Write hello.txt', 'pending']]]);

    // The user edits: keeps s1 reworded, drops s2, adds a step.
    const edited = await c.call('updatePlan', { threadId, planId: plan.planId, title: 'Greet', steps: [{ id: 's1', text: 'Read README.md first' }, { text: 'Write hello.txt with "hi"' }] });
    assert.deepEqual(edited.steps.map((s) => [s.id, s.text]), [['s1', 'Read README.md first'], ['s3', 'Write hello.txt with "hi"']], 'a new step gets a fresh id (s2 was removed)');
    await assert.rejects(c.call('updatePlan', { threadId, planId: 'plan:nope', title: 'x', steps: [{ text: 'y' }] }), /No plan plan:nope/);

    server.push(
      toolCallTurn([{ name: 'update_plan_step', args: { planId: plan.planId, stepId: 's1', status: 'done' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'hello.txt', content: 'hi\n' } }, { name: 'update_plan_step', args: { planId: plan.planId, stepId: 's3', status: 'done', note: 'wrote it' } }]),
      textTurn('All done.'),
    );
    const acted = await c.call('actOnPlan', { threadId, planId: plan.planId });
    assert.equal(acted.threadId, threadId);
    await finish(threadId);
    const actReq = server.requests[4]!.body;
    const prompt = actReq.messages[actReq.messages.length - 1].content as string;
    assert.match(prompt, /Carry out this plan: Greet/);
    assert.match(prompt, /1\. \[s1\] Read README\.md first\n2\. \[s3\] Write hello\.txt with "hi"/);
    assert.ok(toolNames(actReq).includes('write_file') && toolNames(actReq).includes('update_plan_step') && !toolNames(actReq).includes('submit_plan'));
    assert.equal(fs.readFileSync(path.join(dir, 'hello.txt'), 'utf8'), 'hi\n');
    const after = await c.call('getPlan', { threadId });
    assert.equal(after.workMode, 'act');
    assert.deepEqual(after.plan!.steps.map((s) => [s.id, s.status, s.note]), [['s1', 'done', null], ['s3', 'done', 'wrote it']]);
    assert.equal(after.plan!.status, 'acting');
    // A step id the plan does not have is an error the model sees.
    server.push(toolCallTurn([{ name: 'update_plan_step', args: { planId: plan.planId, stepId: 's9', status: 'done' } }]), textTurn('ok'));
    await c.call('sendPrompt', { threadId, prompt: 'tick s9' });
    await finish(threadId);
    assert.match(toolMessages(server.requests[server.requests.length - 1]!.body)[0]!, /has no step "s9"; its steps are s1, s3/);
    // The user ticks a step back.
    const reopened = await c.call('setPlanStep', { threadId, planId: plan.planId, stepId: 's3', status: 'pending' });
    assert.equal(reopened.steps[1]!.status, 'pending');

    // The plan and the modes live in the store: a new engine on the same database reads them back.
    const before = await c.call('getPlan', { threadId });
    await t.dispose();
    t = startTestEngine({ dir, host: openaiHost(server, { write: 'auto' }) });
    assert.deepEqual(await t.client().call('getPlan', { threadId }), before);
  });
});
