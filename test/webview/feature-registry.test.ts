/**
 * The webview's features (webview/src/lib/features/): every stored event the thread view
 * shows has exactly one owner, every other one is listed as not shown; overlapping features are
 * refused; the controller carries every intent the views call; and a feature added to the list —
 * here one of checkpoints, which the chat's own features leave alone — gets its events applied
 * (live, in a long replay, and by `applyEvents` with its registry), its update and command
 * answers, and its intents called, with no edit anywhere else.
 */
import { strict as assert } from 'node:assert';
import { EVENT_TYPES, type VoxEventType } from '../../src/protocol/events';
import type { ClientCommand } from '../../src/protocol/commands';
import { Controller, createModel } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import { applyEvents, createThreadState } from '../../webview/src/lib/thread-state';
import { defineFeature, type Feature } from '../../webview/src/lib/features/feature';
import { DEFAULT_REGISTRY, FEATURES, UNSHOWN_EVENTS } from '../../webview/src/lib/features/index';
import { FeatureRegistry } from '../../webview/src/lib/features/registry';

/** The event types the thread reducer handled before it was split into features. */
const SHOWN_EVENTS: VoxEventType[] = [
  'thread.created', 'thread.renamed', 'thread.deleted', 'thread.rewound', 'thread.branchSwitched',
  'message.added', 'message.edited',
  'run.started', 'item.started', 'item.completed', 'run.ended',
  'run.steered', 'run.refusalRetried', 'run.waitingRateLimit', 'run.rateLimitChanged', 'run.resumed', 'run.settling',
  'checkpoint.captured', 'background.started', 'background.ended', 'handoff.built', 'mcpApp.stateSaved', 'thread.compacted',
  'queue.added', 'queue.edited', 'queue.moved', 'queue.steerRequested', 'queue.removed',
  'thread.workModeSet', 'thread.permissionModeSet', 'plan.submitted', 'plan.edited', 'plan.stepUpdated', 'plan.actedOn',
];

/** What the views and tests call on the controller. */
const INTENTS = [
  'editQueued', 'moveQueued', 'cancelQueued', 'steerQueued', 'cancelRun', 'resumeRun', 'snoozeRun', 'setAutoResume',
  'respondToApproval', 'loadPermissions', 'setWorkMode', 'setPermissionMode', 'updatePlan', 'setPlanStep', 'actOnPlan',
  'renameThread', 'deleteThread', 'setModel', 'hostAction', 'setUiPreference', 'openThread', 'newThread', 'requestReveal',
  'loadThreads', 'loadChildThreads', 'loadMoreThreads', 'sendPrompt', 'continueReply', 'recallPrompt', 'loadPromptHistory',
  'dismissNotice', 'onVisibilityChange', 'resubscribe', 'persistNow', 'start', 'dispose', 'handleMessage',
];
const INTENT_OBJECTS = ['recall', 'search', 'context', 'tree', 'threadList', 'compaction', 'mcp', 'mcpApps'];

class FakeHost implements HostBridge {
  sent: ClientCommand[] = [];
  private listener: ((d: unknown) => void) | null = null;
  send(c: ClientCommand): void {
    this.sent.push(structuredClone(c));
  }
  sendHostAction(_a: HostAction): void {}
  onMessage(l: (d: unknown) => void): () => void {
    this.listener = l;
    return () => (this.listener = null);
  }
  getState(): unknown {
    return undefined;
  }
  setState(): void {}
  post(u: unknown): void {
    this.listener?.(structuredClone(u));
  }
  take(): ClientCommand[] {
    return this.sent.splice(0);
  }
}

const quiet = { warn: () => {}, error: () => {} };
const T = 'thread:1';

/** A feature of checkpoint prunes (an event the chat leaves unowned), defined here only: its reducer counts them on the side, its intent asks for the list. */
function checkpointsFeature() {
  const captured: Array<{ threadId: string; ref: string }> = [];
  const lists: number[] = [];
  const changes: string[] = [];
  const feature = defineFeature({
    name: 'checkpointPrunes',
    events: {
      'checkpoint.pruned'(state, ev) {
        captured.push({ threadId: state.threadId, ref: ev.refs[0]! });
      },
    },
    install(ctx) {
      return {
        intents: {
          listThreadCheckpoints(): string | null {
            const thread = ctx.model.thread;
            return thread ? ctx.send({ type: 'listCheckpoints', threadId: thread.threadId }) : null;
          },
        },
        updates: { variants: (u) => void changes.push(`${u.pools.length} pools`) }, // an update no installed feature owns
        results: { listCheckpoints: (value) => void lists.push(value.checkpoints.length) },
      };
    },
  });
  return { feature, captured, lists, changes };
}

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...e });
const checkpoint = (ordinal: number) => ev({
  type: 'checkpoint.pruned', refs: [`refs/vox/checkpoints/1/${ordinal}`],
});

describe('webview features', () => {
  beforeEach(() => (seq = 0));

  it('every event type the thread view showed is owned by exactly one feature', () => {
    for (const type of SHOWN_EVENTS) {
      const owners = FEATURES.filter((f) => Object.hasOwn(f.events ?? {}, type)).map((f) => f.name);
      assert.equal(owners.length, 1, `${type}: ${owners.join(', ') || 'no owner'}`);
      assert.equal(DEFAULT_REGISTRY.ownerOf(type), owners[0]);
    }
  });

  it('ownership is total: every event type is owned once or listed as not shown, never both', () => {
    const owned = DEFAULT_REGISTRY.ownedEvents();
    assert.equal(new Set(owned).size, owned.length);
    assert.equal(new Set(UNSHOWN_EVENTS).size, UNSHOWN_EVENTS.length);
    for (const type of EVENT_TYPES) {
      const isOwned = owned.includes(type);
      assert.notEqual(isOwned, UNSHOWN_EVENTS.includes(type), `${type}: ${isOwned ? 'owned and listed as not shown' : 'neither owned nor listed'}`);
    }
    assert.deepEqual([...owned, ...UNSHOWN_EVENTS].sort(), [...EVENT_TYPES].sort());
    assert.deepEqual([...SHOWN_EVENTS].sort(), [...owned].sort(), 'the features own what the thread view showed, no more');
  });

  it('refuses features that overlap: a name, an event, an update, an answer, an intent', () => {
    const plain = (name: string, extra: Partial<Feature> = {}): Feature => ({ name, ...extra });
    assert.throws(() => new FeatureRegistry([plain('a'), plain('a')]), /two features are named a/);
    const renamer = (name: string) => plain(name, { events: { 'thread.renamed': (s, e) => void (s.title = e.title) } });
    assert.throws(() => new FeatureRegistry([renamer('a'), renamer('b')]), /event thread\.renamed is owned by both a and b/);
    const host = new FakeHost();
    const withUpdate = (name: string) => plain(name, { install: () => ({ updates: { variants: () => {} } }) });
    assert.throws(() => new Controller(createModel(), host, quiet, [withUpdate('a'), withUpdate('b')]), /update variants is handled by both a and b/);
    const withResult = (name: string) => plain(name, { install: () => ({ results: { listCheckpoints: () => {} } }) });
    assert.throws(() => new Controller(createModel(), host, quiet, [withResult('a'), withResult('b')]), /listCheckpoints is handled by both a and b/);
    const withIntent = (name: string, key: string) => plain(name, { install: () => ({ intents: { [key]: () => {} } }) });
    assert.throws(() => new Controller(createModel(), host, quiet, [withIntent('a', 'go'), withIntent('b', 'go')]), /intent go of b is taken/);
    assert.throws(() => new Controller(createModel(), host, quiet, [withIntent('a', 'openThread')]), /intent openThread of a is taken/, 'nor may a feature shadow the controller');
  });

  it('the controller carries every intent the views call', () => {
    const c = new Controller(createModel(), new FakeHost(), quiet);
    const carried = c as unknown as Record<string, unknown>;
    for (const name of INTENTS) assert.equal(typeof carried[name], 'function', name);
    for (const name of INTENT_OBJECTS) assert.equal(typeof carried[name], 'object', name);
  });

  it('a feature added to the list gets its events, updates and answers, and its intent is callable, with no edit elsewhere', () => {
    const cp = checkpointsFeature();
    const host = new FakeHost();
    const model = createModel();
    const c = new Controller(model, host, quiet, [...FEATURES, cp.feature]);
    c.start();
    c.openThread(T);
    host.take();
    host.post({
      type: 'events', threadId: T, events: [
        ev({ type: 'thread.created', title: 'Hi' }),
        checkpoint(1),
        ev({ type: 'message.added', messageId: 'm1', parentId: null, role: 'user', content: 'hello', runId: null, status: 'complete' }),
      ],
    });
    assert.deepEqual(cp.captured, [{ threadId: T, ref: 'refs/vox/checkpoints/1/1' }]);
    assert.equal(model.thread?.title, 'Hi', 'the other features still apply theirs');
    assert.equal(model.thread?.entries.length, 1);
    assert.equal(model.thread?.lastEventSeq, 3);

    host.post({ type: 'variants', pools: [] });
    assert.deepEqual(cp.changes, ['0 pools']);

    const requestId = c.use(cp.feature).listThreadCheckpoints();
    assert.deepEqual(host.take(), [{ type: 'listCheckpoints', threadId: T, requestId }]);
    host.post({ type: 'result', inReplyTo: requestId, value: { checkpoints: [], threads: [] } });
    assert.deepEqual(cp.lists, [0]);
    assert.equal(model.notices.length, 0);
  });

  it('the added feature also gets the events of a long first replay, and applyEvents with its registry', async () => {
    const cp = checkpointsFeature();
    const host = new FakeHost();
    const model = createModel();
    const c = new Controller(model, host, quiet, [...FEATURES, cp.feature]);
    c.start();
    c.openThread(T);
    const events = [ev({ type: 'thread.created', title: 'Long' })];
    for (let i = 1; i <= 250; i++) events.push(checkpoint(i)); // past BULK_REPLAY_EVENTS: applied in slices
    host.post({ type: 'events', threadId: T, events });
    for (let i = 0; i < 50 && model.thread?.lastEventSeq !== 251; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(model.thread?.title, 'Long');
    assert.equal(cp.captured.length, 250);

    seq = 0;
    const again = checkpointsFeature();
    const state = createThreadState(T);
    applyEvents(state, [checkpoint(1)], undefined, new FeatureRegistry([...FEATURES, again.feature]));
    assert.equal(again.captured.length, 1);
    seq = 0;
    const plainState = createThreadState(T);
    const res = applyEvents(plainState, [checkpoint(1)]);
    assert.equal(res.applied, 1, 'the chat\'s own features: seen, changes nothing');
    assert.equal(again.captured.length, 1);
    assert.equal(plainState.lastEventSeq, 1);
  });
});
