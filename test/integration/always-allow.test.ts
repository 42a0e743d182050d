/**
 * "Always allow" on an approval: the answer carries a narrow rule (a command prefix, a tool, a
 * path pattern) for this thread or this workspace, written where the user sees and removes it.
 * Real engine, real agent loop against the fake OpenAI server, real .vox/permissions.json.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UpdateOf } from '../../src/protocol/updates';
import { ClientError } from '../../src/client/engine-client';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

describe('always allow on an approval', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  afterEach(async () => {
    await t?.dispose();
    await server?.close();
    removeTmpDir(dir);
  });

  function setup(responses: Parameters<typeof startFakeOpenAI>[0]['responses']) {
    return startFakeOpenAI({ responses }).then((s) => {
      server = s;
      t = startTestEngine({ dir, host: openaiHost(server) });
      const c = t.client();
      const pending: UpdateOf<'approvalRequested'>[] = [];
      c.on('approvalRequested', (u) => pending.push(u));
      return { c, pending };
    });
  }

  const isUnsafe = (e: unknown) => e instanceof ClientError && e.is('permission', 'unsafeRule');

  it('suggests the narrow rule, refuses blanket ones (typed, the call still waits), and a thread rule lets the same command run but not another, nor in another thread', async () => {
    dir = makeTmpDir();
    const { c, pending } = await setup([
      toolCallTurn([{ name: 'run_command', args: { command: 'echo first -- --grep x' } }]),
      toolCallTurn([{ name: 'run_command', args: { command: 'echo first -- --grep x' } }]),
      toolCallTurn([{ name: 'run_command', args: { command: 'printf other' } }]),
      textTurn('done'),
      toolCallTurn([{ name: 'run_command', args: { command: 'echo first -- --grep x' } }]),
      textTurn('done'),
    ]);
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'go' });
    await until(() => pending.length === 1, { what: 'the first approval' });
    const first = pending[0]!;
    assert.deepEqual(first.alwaysAllow?.map((s) => [s.kind, s.value]), [['commandPrefix', 'echo first']]);
    for (const bad of [
      { kind: 'commandPrefix', value: '*' }, { kind: 'commandPrefix', value: '  ' }, { kind: 'commandPrefix', value: 'bash' },
      { kind: 'commandPrefix', value: 'node' }, { kind: 'commandPrefix', value: 'echo a && rm' }, { kind: 'tool', value: 'run_command' },
      { kind: 'pathPattern', value: '**' }, { kind: 'commandPrefix', value: 'ls' },
    ] as const) {
      await assert.rejects(c.call('respondToApproval', { callId: first.callId, decision: 'approved', alwaysAllow: { ...bad, scope: 'thread' } }), isUnsafe, JSON.stringify(bad));
    }
    assert.equal((await c.call('listApprovals', {})).approvals.length, 1, 'a refused rule leaves the call waiting');
    await c.call('respondToApproval', { callId: first.callId, decision: 'approved', alwaysAllow: { kind: 'commandPrefix', value: 'echo first', scope: 'thread' } });
    await until(() => pending.length === 2, { what: 'the printf approval' });
    assert.equal(pending[1]!.argumentsJson.includes('printf'), true, 'the identical echo ran without asking; printf asks');
    const view = await c.call('getPermissions', { threadId: r.threadId });
    const threadRule = view.rules.find((x) => x.scope === 'thread');
    assert.equal(threadRule?.command, 'echo first *');
    await c.call('respondToApproval', { callId: pending[1]!.callId, decision: 'approved' });
    await until(async () => (await c.call('listRuns', { threadId: r.threadId })).runs.length === 0, { what: 'the run to end' });
    assert.equal((await c.call('getPermissions', {})).rules.some((x) => x.scope === 'thread'), false, 'not listed without the thread');
    const other = await c.call('sendPrompt', { threadId: null, prompt: 'again' });
    await until(() => pending.length === 3, { what: 'the other thread asks' });
    assert.equal(pending[2]!.threadId, other.threadId);
    await c.call('respondToApproval', { callId: pending[2]!.callId, decision: 'denied' });
    await c.call('removePermissionRule', { scope: 'thread', threadId: r.threadId, index: threadRule!.index!, label: threadRule!.label });
    assert.equal((await c.call('getPermissions', { threadId: r.threadId })).rules.some((x) => x.scope === 'thread'), false, 'removed');
  });

  it('a workspace rule is written to .vox/permissions.json, listed, and removing it makes the next call ask again; a file tool gets its directory glob', async () => {
    dir = makeTmpDir();
    fs.mkdirSync(path.join(dir, 'src'));
    const { c, pending } = await setup([
      toolCallTurn([{ name: 'write_file', args: { path: 'src/a.txt', content: 'a' } }]),
      toolCallTurn([{ name: 'write_file', args: { path: 'src/b.txt', content: 'b' } }]),
      textTurn('done'),
      toolCallTurn([{ name: 'write_file', args: { path: 'src/c.txt', content: 'c' } }]),
      textTurn('done'),
    ]);
    const r = await c.call('sendPrompt', { threadId: null, prompt: 'go' });
    await until(() => pending.length === 1, { what: 'the first approval' });
    assert.deepEqual(pending[0]!.alwaysAllow?.map((s) => [s.kind, s.value]), [['pathPattern', 'src/**']]);
    await c.call('respondToApproval', { callId: pending[0]!.callId, decision: 'approved', alwaysAllow: { kind: 'pathPattern', value: 'src/**', scope: 'workspace' } });
    await until(async () => (await c.call('listRuns', { threadId: r.threadId })).runs.length === 0, { what: 'the run to end' });
    assert.equal(pending.length, 1, 'the second write ran without asking');
    assert.equal(fs.readFileSync(path.join(dir, 'src/b.txt'), 'utf8'), 'b');
    const file = JSON.parse(fs.readFileSync(path.join(dir, '.vox/permissions.json'), 'utf8')) as { rules: unknown[] };
    assert.deepEqual(file.rules, [{ action: 'allow', tool: 'write_file', path: 'src/**' }]);
    const listed = (await c.call('getPermissions', {})).rules.find((x) => x.scope === 'workspace');
    assert.ok(listed, 'the workspace rule is listed');
    await c.call('removePermissionRule', { scope: 'workspace', index: listed.index!, label: listed.label });
    assert.deepEqual((JSON.parse(fs.readFileSync(path.join(dir, '.vox/permissions.json'), 'utf8')) as { rules: unknown[] }).rules, []);
    await c.call('sendPrompt', { threadId: r.threadId, prompt: 'more' });
    await until(() => pending.length === 2, { what: 'the next write asks again' });
    await c.call('respondToApproval', { callId: pending[1]!.callId, decision: 'denied' });
  });
});
