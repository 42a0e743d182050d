/**
 * The webview's fold of the plan and mode events (webview/src/lib/plan-state.ts) through the
 * thread reducer: Plan / Act, the thread's own permission mode, a submitted plan, the user's
 * edit (statuses kept by step id), live step updates, acting; events of an older plan are
 * ignored, and the tool call's permission decision reaches the tool view.
 */
import { strict as assert } from 'node:assert';
import { applyEvents, createThreadState } from '../../webview/src/lib/thread-state';
import { planProgress } from '../../webview/src/lib/plan-state';
import { runBlocks } from '../../webview/src/lib/blocks';

const T = 'thread:p';
let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...e });

describe('webview plan state', () => {
  it('folds modes, the plan, edits, step updates and acting; ignores another plan\'s events', () => {
    const s = createThreadState(T);
    const warnings: string[] = [];
    applyEvents(s, [
      ev({ type: 'thread.created', title: 'p' }),
      ev({ type: 'thread.workModeSet', mode: 'plan' }),
      ev({ type: 'thread.permissionModeSet', mode: 'autoEdits' }),
      ev({ type: 'plan.submitted', runId: null, planId: 'plan:1', title: 'Do it', steps: [{ id: 's1', text: 'one' }, { id: 's2', text: 'two' }] }),
      ev({ type: 'plan.stepUpdated', runId: null, planId: 'plan:1', stepId: 's1', status: 'done', note: 'ok' }),
      ev({ type: 'plan.edited', planId: 'plan:1', title: 'Do it well', steps: [{ id: 's1', text: 'one!' }, { id: 's3', text: 'three' }] }),
      ev({ type: 'plan.stepUpdated', runId: null, planId: 'plan:old', stepId: 's1', status: 'skipped', note: null }),
      ev({ type: 'plan.actedOn', planId: 'plan:1' }),
      ev({ type: 'thread.workModeSet', mode: 'act' }),
    ], (w) => warnings.push(w));
    assert.deepEqual(warnings, []);
    assert.equal(s.workMode, 'act');
    assert.equal(s.permissionMode, 'autoEdits');
    assert.deepEqual(s.plan, {
      planId: 'plan:1', title: 'Do it well', status: 'acting',
      steps: [{ id: 's1', text: 'one!', status: 'done', note: 'ok' }, { id: 's3', text: 'three', status: 'pending', note: null }],
    });
    assert.deepEqual(planProgress(s.plan!), { done: 1, total: 2 });
    // A newer plan replaces it.
    applyEvents(s, [ev({ type: 'plan.submitted', runId: null, planId: 'plan:2', title: 'Again', steps: [{ id: 's1', text: 'x' }] })]);
    assert.equal(s.plan!.planId, 'plan:2');
    assert.equal(s.plan!.status, 'proposed');
  });

  it('a tool call\'s permission decision reaches its tool view', () => {
    const s = createThreadState(T);
    const permission = { decision: 'allow', source: 'rule', rule: 'settings rules[0]: allow * command "npm test"', reason: 'Allowed by settings rules[0].' };
    applyEvents(s, [
      ev({ type: 'thread.created', title: 'p' }),
      ev({ type: 'message.added', messageId: 'm', parentId: null, role: 'user', content: 'go', runId: null, status: 'complete' }),
      ev({ type: 'run.started', runId: 'r', ordinal: 0, provider: 'openai', model: 'm', ownerPid: 1, userMessageId: 'm' }),
      ev({ type: 'item.started', runId: 'r', itemId: 'i', ordinal: 0, kind: 'toolCall', toolName: 'run_command', arguments: '{"command":"npm test"}', permission }),
    ]);
    const tool = runBlocks(s.runs.r!).find((b) => b.kind === 'tool');
    assert.ok(tool && tool.kind === 'tool');
    assert.deepEqual(tool.tool.permission, permission);
  });
});
