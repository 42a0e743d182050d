/**
 * The turn-start decider (src/engine/runs/turn-start.ts) as a pure function: every branch of
 * start / queue / wait / refuse, from a read model built here (no store, no engine).
 */
import * as assert from 'node:assert/strict';
import type { Grant } from '../../src/protocol/commands/grants';
import type { ResolvedModel } from '../../src/engine/providers/types';
import type { RunRow } from '../../src/engine/store/store';
import { RunError } from '../../src/engine/runs/errors';
import { GrantModeError } from '../../src/engine/permissions/grant-modes';
import { StoreError } from '../../src/engine/store/errors';
import {
  decideTurnStart, isQueueable, MAX_QUEUED_PER_THREAD, refusalOf, unprepared, type PreparedTurn, type TurnStartCommand, type TurnStartReadModel,
} from '../../src/engine/runs/turn-start';

const model = { label: 'openai:gpt-test', model: 'gpt-test', toolsEnabled: true, provider: { id: 'openai' } } as unknown as ResolvedModel;
const running: RunRow = {
  id: 'run:t1/1', threadId: 't1', ordinal: 1, provider: 'openai', model: 'openai:gpt-test', status: 'running', ownerPid: 1, ownerStartedAt: null, userMessageId: 'm1',
  startedAt: 0, endedAt: null, error: null, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, postureJson: null,
};
const owner: Grant = { capabilities: ['owner'], holder: 'VS Code' };
/** An MCP client's grant: read tools only, no Plan-free interaction (Plan mode threads). */
const planOnly: Grant = { capabilities: ['read', 'write', 'startThreads'], holder: 'Claude Code', modes: { runtime: 0, interaction: 0 } };
const prepared: PreparedTurn = { prompt: 'fix it\n\n<context/>', text: 'fix it', queuedPrompt: 'fix it @strict\n\n<context/>', rules: ['strict'], rulesBlock: '<user_rules/>', warnings: [] };

const cmd = (over: Partial<TurnStartCommand> = {}): TurnStartCommand => ({ threadId: 't1', prompt: 'fix it @strict', modelRef: null, ifBusy: 'queue', what: 'prompt thread t1', ...over });
const thread = (over: { busy?: RunRow | null; queueLength?: number; modes?: { permissionMode: 'ask' | 'autoEdits' | 'fullAuto'; workMode: 'plan' | 'act' } | null } = {}) =>
  ({ exists: true as const, busy: over.busy ?? null, queueLength: over.queueLength ?? 0, modes: over.modes ?? null });
const rm = (over: Partial<TurnStartReadModel> = {}): TurnStartReadModel => ({ thread: thread(), grant: owner, model: { ok: true, resolved: model }, prepared, ...over });

describe('decideTurnStart: one decider for every turn start', () => {
  it('an idle thread with nothing waiting starts, with the prepared prompt, rules and block', () => {
    const d = decideTurnStart(cmd({ run: { kind: 'variant', workspaceRoot: '/wt' } }), rm());
    assert.equal(d.kind, 'start');
    if (d.kind !== 'start') return;
    assert.deepEqual({ ...d.spec, model: d.spec.model.label }, {
      kind: 'variant', workspaceRoot: '/wt', threadId: 't1', prompt: 'fix it\n\n<context/>', model: 'openai:gpt-test', rules: ['strict'], userRules: '<user_rules/>',
    });
    assert.equal(d.newThreadModes, null);
  });

  it('a busy thread queues the prompt as typed (with its context block), its model ref and steer', () => {
    const d = decideTurnStart(cmd({ modelRef: 'openai:other', steer: true }), rm({ thread: thread({ busy: running }) }));
    assert.deepEqual(d.kind === 'queue' && [d.threadId, d.prompt, d.modelRef, d.steer, d.reason], ['t1', 'fix it @strict\n\n<context/>', 'openai:other', true, 'busy']);
  });

  it('an idle thread with prompts waiting queues behind them; a full queue refuses run/queueFull', () => {
    const d = decideTurnStart(cmd(), rm({ thread: thread({ queueLength: 2 }) }));
    assert.deepEqual(d.kind === 'queue' && d.reason, 'behindQueue');
    const full = decideTurnStart(cmd(), rm({ thread: thread({ busy: running, queueLength: MAX_QUEUED_PER_THREAD }) }));
    assert.ok(full.kind === 'refuse' && full.error instanceof RunError && full.error.code === 'queueFull');
  });

  it("ifBusy 'refuse' on a busy thread refuses run/threadBusy naming the run that holds it", () => {
    const d = decideTurnStart(cmd({ ifBusy: 'refuse' }), rm({ thread: thread({ busy: running }) }));
    assert.ok(d.kind === 'refuse' && d.error instanceof RunError);
    assert.equal(d.error.code, 'threadBusy');
    assert.deepEqual(d.error.details, { runId: 'run:t1/1', threadId: 't1' });
    // Not busy: it starts even with prompts waiting (a rerun never waits in the queue).
    assert.equal(decideTurnStart(cmd({ ifBusy: 'refuse' }), rm({ thread: thread({ queueLength: 3 }) })).kind, 'start');
  });

  it('an edit of an earlier message (parentMessageId) of a busy thread refuses threadBusy: it cannot be queued', () => {
    const edit = cmd({ parentMessageId: 'msg:t1/2' });
    assert.equal(isQueueable(edit), false);
    const d = decideTurnStart(edit, rm({ thread: thread({ busy: running }) }));
    assert.ok(d.kind === 'refuse' && d.error instanceof RunError && d.error.code === 'threadBusy');
    const idle = decideTurnStart(edit, rm({ thread: thread({ queueLength: 1 }) }));
    assert.deepEqual(idle.kind === 'start' && idle.spec.parentMessageId, 'msg:t1/2');
  });

  it("a queued prompt of a busy thread stays waiting (ifBusy 'wait'); idle, it starts ahead of the others", () => {
    assert.deepEqual(decideTurnStart(cmd({ ifBusy: 'wait' }), rm({ thread: thread({ busy: running, queueLength: 2 }) })), { kind: 'wait', threadId: 't1' });
    assert.equal(decideTurnStart(cmd({ ifBusy: 'wait' }), rm({ thread: thread({ queueLength: 2 }) })).kind, 'start');
  });

  it('a new thread is never busy or queued; a prompt without a thread starts one', () => {
    const d = decideTurnStart(cmd({ threadId: null }), rm({ thread: null }));
    assert.ok(d.kind === 'start' && d.spec.threadId === undefined && d.newThreadModes === null);
  });

  it('grant mode ceilings: an existing thread above them refuses capabilityDenied; a new thread gets explicit modes within them', () => {
    const above = decideTurnStart(cmd(), rm({ grant: planOnly, thread: thread({ modes: { permissionMode: 'ask', workMode: 'act' } }) }));
    assert.ok(above.kind === 'refuse' && above.error instanceof GrantModeError);
    assert.equal(above.error.code, 'capabilityDenied');
    assert.match(above.error.message, /Claude Code may not prompt thread t1 with runtime default/);
    // Busy and above the ceiling: the ceiling is checked first (nothing is queued for it either).
    const busyAbove = decideTurnStart(cmd(), rm({ grant: planOnly, thread: thread({ busy: running, modes: { permissionMode: 'fullAuto', workMode: 'act' } }) }));
    assert.ok(busyAbove.kind === 'refuse' && busyAbove.error instanceof GrantModeError);
    assert.equal(decideTurnStart(cmd(), rm({ grant: planOnly, thread: thread({ modes: { permissionMode: 'ask', workMode: 'plan' } }) })).kind, 'start');
    const fresh = decideTurnStart(cmd({ threadId: null }), rm({ grant: planOnly, thread: null }));
    assert.deepEqual(fresh.kind === 'start' && fresh.newThreadModes, { permissionMode: 'ask', workMode: 'plan' });
    const asked = decideTurnStart(cmd({ threadId: null, newThread: { workMode: 'act' } }), rm({ grant: planOnly, thread: null }));
    assert.ok(asked.kind === 'refuse' && asked.error instanceof GrantModeError);
  });

  it('new-thread modes for an existing thread, and an unknown thread, refuse before anything is prepared', () => {
    const modes = refusalOf(cmd({ newThread: { permissionMode: 'ask' } }), rm());
    assert.ok(modes instanceof GrantModeError && /new thread only/.test(modes.message));
    const gone = new StoreError('notFound', 'thread t9 does not exist');
    assert.deepEqual(decideTurnStart(cmd({ threadId: 't9' }), rm({ thread: { exists: false, error: gone } })), { kind: 'refuse', error: gone });
    assert.equal(refusalOf(cmd(), rm()), null);
  });

  it('an unknown model refuses with the resolver\'s error, before the thread or the grant is looked at', () => {
    const unknown = new Error('no provider for "nope:model"');
    const d = decideTurnStart(cmd({ modelRef: 'nope:model' }), rm({ model: { ok: false, error: unknown }, grant: planOnly, thread: thread({ busy: running, modes: { permissionMode: 'fullAuto', workMode: 'act' } }) }));
    assert.deepEqual(d, { kind: 'refuse', error: unknown });
  });

  it('without preparation the prompt runs as given (queue drains, subagents, variants)', () => {
    const d = decideTurnStart(cmd({ prompt: 'as stored', run: { fromQueue: 'queued:1' } }), rm({ prepared: null }));
    assert.ok(d.kind === 'start');
    assert.deepEqual([d.spec.prompt, d.spec.fromQueue, d.spec.rules, d.spec.userRules, d.prepared], ['as stored', 'queued:1', undefined, undefined, unprepared('as stored')]);
  });
});
