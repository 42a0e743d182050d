/**
 * Approvals through the protocol: each request says its thread and run; a client that opens one
 * thread is told only that thread's waiting calls; answering is the owner's right (a read-only
 * grant sees the request but is refused); the answer lets exactly that call run.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClientError } from '../../src/client/engine-client';
import { readOnlyGrant } from '../../src/protocol/commands/grants';
import type { EngineUpdate, UpdateOf } from '../../src/protocol/updates';
import { startFakeOpenAI, textTurn, toolCallTurn, type FakeServer } from '../support/fake-openai-server';
import { openaiHost } from '../support/scripted';
import { startTestEngine, type TestEngine } from '../support/test-engine';
import { makeTmpDir, removeTmpDir } from '../support/tmp';
import { until } from '../support/wait';

describe('approvals carry their thread and run', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeServer;
  let t: TestEngine;

  beforeEach(async () => {
    dir = makeTmpDir();
    // Two threads, each asking to write its own file; both wait for approval.
    server = await startFakeOpenAI({
      responses: [
        toolCallTurn([{ name: 'write_file', args: { path: 'a.txt', content: 'from A\n' } }]),
        toolCallTurn([{ name: 'write_file', args: { path: 'b.txt', content: 'from B\n' } }]),
        textTurn('done'),
        textTurn('done'),
      ],
    });
    t = startTestEngine({ dir, host: openaiHost(server) });
  });
  afterEach(async () => {
    await t.dispose();
    await server.close();
    removeTmpDir(dir);
  });

  it('a client that opens thread A sees A\'s approval and not B\'s; the answer runs that call only', async () => {
    const c = t.client();
    const pending: UpdateOf<'approvalRequested'>[] = [];
    c.on('approvalRequested', (u) => pending.push(u));
    const a = await c.call('sendPrompt', { threadId: null, prompt: 'write a' });
    await until(() => pending.length === 1, { what: 'the engine to get there' });
    const b = await c.call('sendPrompt', { threadId: null, prompt: 'write b' });
    await until(() => pending.length === 2, { what: 'the engine to get there' });
    assert.deepEqual(pending.map((p) => [p.threadId, p.runId, p.toolName]), [[a.threadId, a.runId, 'write_file'], [b.threadId, b.runId, 'write_file']]);
    assert.deepEqual((await c.call('listApprovals', { threadId: a.threadId })).approvals.map((p) => p.callId), [pending[0]!.callId]);
    assert.equal((await c.call('listApprovals', {})).approvals.length, 2);

    // A webview that (re)opens thread A is told A's waiting call, and only that one.
    const out: EngineUpdate[] = [];
    const view = t.session(out);
    out.length = 0; // the session's greeting announces every waiting call; what follows is the thread's
    view.handle({ type: 'subscribeThread', requestId: 's', threadId: a.threadId, afterSeq: 0 });
    const told = out.filter((u): u is UpdateOf<'approvalRequested'> => u.type === 'approvalRequested');
    assert.deepEqual(told.map((u) => u.threadId), [a.threadId]);
    view.dispose();

    // A read-only client sees the requests but may not answer them.
    const guest = t.client(readOnlyGrant('guest'));
    await assert.rejects(guest.call('respondToApproval', { callId: pending[0]!.callId, decision: 'approved' }), (e: unknown) => e instanceof ClientError && e.is('protocol', 'capabilityDenied'));
    assert.equal(fs.existsSync(path.join(dir, 'a.txt')), false);

    const settled: UpdateOf<'approvalSettled'>[] = [];
    c.on('approvalSettled', (u) => settled.push(u));
    await c.call('respondToApproval', { callId: pending[0]!.callId, decision: 'approved' });
    await until(() => fs.existsSync(path.join(dir, 'a.txt')), { what: 'the engine to get there' });
    assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'from A\n');
    assert.equal(fs.existsSync(path.join(dir, 'b.txt')), false, "B's call still waits");
    assert.deepEqual(settled.map((s) => [s.threadId, s.runId, s.decision]), [[a.threadId, a.runId, 'approved']]);
    await c.call('respondToApproval', { callId: pending[1]!.callId, decision: 'denied' });
    await until(async () => (await c.call('listRuns', {})).runs.length === 0, { what: 'the engine to get there' });
    assert.equal(fs.existsSync(path.join(dir, 'b.txt')), false);
  });
});
