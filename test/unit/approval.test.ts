/**
 * Tests for src/engine/agent/approval.ts: policy defaults and settings validation, and the gate's
 * life cycle — approve, deny, abort, answering unknown or finished calls, duplicate ids,
 * listeners (including ones that answer synchronously or throw), and concurrent requests.
 */
import assert from 'node:assert/strict';
import {
  ApprovalGate,
  ApprovalGateError,
  ApprovalPolicy,
  ApprovalSettingsError,
  DEFAULT_APPROVAL_MODES,
  type ApprovalRequest,
  type ApprovalSettled,
} from '../../src/engine/approvals/approval';
import { ToolError } from '../../src/engine/tools/types';

const req = (callId: string, toolClass: ApprovalRequest['toolClass'] = 'write'): ApprovalRequest => ({
  callId,
  threadId: 'thread:t',
  runId: 'run:r',
  toolName: toolClass === 'execute' ? 'run_command' : 'write_file',
  argumentsJson: '{"path":"a.txt","content":"x"}',
  toolClass,
});

function throwsTyped<E extends Error>(fn: () => unknown, cls: new (...a: never[]) => E, check: (e: E) => void): void {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${String(e)}`);
    check(e);
    return;
  }
  assert.fail(`expected ${cls.name}`);
}

describe('ApprovalPolicy', () => {
  it('defaults to read auto, write ask, execute ask', () => {
    const p = new ApprovalPolicy();
    assert.deepEqual(p.toJSON(), { read: 'auto', write: 'ask', execute: 'ask' });
    assert.equal(p.decide({ toolClass: 'read' }), 'auto');
    assert.equal(p.decide({ toolClass: 'write' }), 'ask');
    assert.equal(p.decide({ toolClass: 'execute' }), 'ask');
    assert.deepEqual(ApprovalPolicy.fromSettings(undefined).toJSON(), DEFAULT_APPROVAL_MODES);
    assert.deepEqual(ApprovalPolicy.fromSettings(null).toJSON(), DEFAULT_APPROVAL_MODES);
  });

  it('applies settings per class, keeping defaults for the rest', () => {
    const p = ApprovalPolicy.fromSettings({ write: 'auto', read: 'ask' });
    assert.deepEqual(p.toJSON(), { read: 'ask', write: 'auto', execute: 'ask' });
  });

  it('rejects bad settings with typed errors', () => {
    throwsTyped(() => ApprovalPolicy.fromSettings({ delete: 'auto' }), ApprovalSettingsError, (e) => {
      assert.equal(e.code, 'unknownToolClass');
      assert.equal(e.key, 'delete');
      assert.match(e.message, /read, write, execute/);
    });
    throwsTyped(() => ApprovalPolicy.fromSettings({ execute: 'always' }), ApprovalSettingsError, (e) => {
      assert.equal(e.code, 'invalidMode');
      assert.equal(e.key, 'execute');
      assert.match(e.message, /"always"/);
    });
    throwsTyped(() => ApprovalPolicy.fromSettings({ write: true }), ApprovalSettingsError, (e) => assert.equal(e.code, 'invalidMode'));
    throwsTyped(() => ApprovalPolicy.fromSettings('auto'), ApprovalSettingsError, (e) => assert.equal(e.code, 'notAnObject'));
    throwsTyped(() => ApprovalPolicy.fromSettings(['ask']), ApprovalSettingsError, (e) => assert.equal(e.code, 'notAnObject'));
  });
});

describe('ApprovalGate', () => {
  let gate: ApprovalGate;
  let pendingSeen: ApprovalRequest[];
  let settledSeen: ApprovalSettled[];

  beforeEach(() => {
    gate = new ApprovalGate();
    pendingSeen = [];
    settledSeen = [];
    gate.onPending((r) => void pendingSeen.push(r));
    gate.onSettled((s) => void settledSeen.push(s));
  });

  it('notifies listeners and resolves approved', async () => {
    const p = gate.request(req('c1'));
    assert.deepEqual(pendingSeen, [req('c1')]);
    assert.deepEqual(gate.pending(), [req('c1')]);
    gate.respond('c1', 'approved');
    assert.equal(await p, 'approved');
    assert.deepEqual(gate.pending(), []);
    assert.deepEqual(settledSeen, [{ callId: 'c1', threadId: 'thread:t', runId: 'run:r', decision: 'approved' }]);
  });

  it('resolves denied', async () => {
    const p = gate.request(req('c1'));
    gate.respond('c1', 'denied');
    assert.equal(await p, 'denied');
  });

  it('lets a listener answer synchronously', async () => {
    gate.onPending((r) => gate.respond(r.callId, 'approved'));
    assert.equal(await gate.request(req('sync')), 'approved');
  });

  it('rejects with ToolError cancelled on abort, and immediately if already aborted', async () => {
    const ac = new AbortController();
    const p = gate.request(req('c1'), ac.signal);
    ac.abort();
    await assert.rejects(p, (e: unknown) => e instanceof ToolError && e.code === 'cancelled');
    assert.deepEqual(gate.pending(), []);
    assert.deepEqual(settledSeen, [{ callId: 'c1', threadId: 'thread:t', runId: 'run:r', decision: 'cancelled' }]);
    await assert.rejects(gate.request(req('c2'), ac.signal), (e: unknown) => e instanceof ToolError && e.code === 'cancelled');
    assert.deepEqual(pendingSeen.map((r) => r.callId), ['c1']);
  });

  it('cancelAll rejects every waiting call', async () => {
    const a = gate.request(req('a'));
    const b = gate.request(req('b'));
    gate.cancelAll();
    await assert.rejects(a, ToolError);
    await assert.rejects(b, ToolError);
  });

  it('refuses answers to unknown or finished calls, duplicate ids and bad decisions', async () => {
    throwsTyped(() => gate.respond('nope', 'approved'), ApprovalGateError, (e) => {
      assert.equal(e.code, 'unknownCall');
      assert.equal(e.callId, 'nope');
    });
    const p = gate.request(req('c1'));
    await assert.rejects(gate.request(req('c1')), (e: unknown) => e instanceof ApprovalGateError && e.code === 'duplicateCall');
    throwsTyped(() => gate.respond('c1', 'maybe' as 'approved'), ApprovalGateError, (e) => assert.equal(e.code, 'invalidDecision'));
    gate.respond('c1', 'denied');
    assert.equal(await p, 'denied');
    throwsTyped(() => gate.respond('c1', 'approved'), ApprovalGateError, (e) => assert.equal(e.code, 'unknownCall'));
    // An answer after an abort is refused too.
    const ac = new AbortController();
    const q = gate.request(req('c2'), ac.signal);
    ac.abort();
    await assert.rejects(q, ToolError);
    throwsTyped(() => gate.respond('c2', 'approved'), ApprovalGateError, (e) => assert.equal(e.code, 'unknownCall'));
  });

  it('resolves two concurrent requests independently', async () => {
    const ac = new AbortController();
    const write = gate.request(req('w', 'write'));
    const exec = gate.request(req('x', 'execute'), ac.signal);
    assert.deepEqual(gate.pending().map((r) => r.callId), ['w', 'x']);
    gate.respond('x', 'denied');
    assert.equal(await exec, 'denied');
    assert.deepEqual(gate.pending().map((r) => r.callId), ['w']);
    ac.abort(); // the finished call's signal must not affect the other one
    gate.respond('w', 'approved');
    assert.equal(await write, 'approved');
  });

  it('survives throwing and rejecting listeners, reporting them', async () => {
    const errors: unknown[] = [];
    const g = new ApprovalGate({ onListenerError: (e) => errors.push(e) });
    g.onPending(() => {
      throw new Error('boom');
    });
    g.onPending(async () => {
      throw new Error('async boom');
    });
    const seen: string[] = [];
    const stop = g.onPending((r) => void seen.push(r.callId));
    const p = g.request(req('c1'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(errors.map((e) => (e as Error).message), ['boom', 'async boom']);
    assert.deepEqual(seen, ['c1']);
    g.respond('c1', 'approved');
    assert.equal(await p, 'approved');
    stop();
    const p2 = g.request(req('c2'));
    assert.deepEqual(seen, ['c1']);
    g.respond('c2', 'denied');
    await p2;
  });
});
