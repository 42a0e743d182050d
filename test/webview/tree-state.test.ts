/**
 * The webview's conversation tree (webview/src/lib/tree-state.ts through the thread-state reducer)
 * and its intents (webview/src/lib/tree-intents.ts): children before parents (checked against the
 * protocol's own buildTree / siblingsOf / pathTo over shuffled inputs), the head moving with
 * message.added, thread.rewound and thread.branchSwitched, regenerate and edit as the engine
 * records them, persistence of the tree, and linear work on a 10,000-message replay (counted
 * steps, no timing).
 */
import { strict as assert } from 'node:assert';
import { applyEvents, createThreadState, type ThreadState } from '../../webview/src/lib/thread-state';
import { runText } from '../../webview/src/lib/blocks';
import { pathIds, siblingsIn, treeWork } from '../../webview/src/lib/tree-state';
import { TreeIntents } from '../../webview/src/lib/tree-intents';
import { createModel, type AppModel } from '../../webview/src/lib/app-model';
import { decodeState, encodeState, MAX_PERSISTED_THREAD_MESSAGES } from '../../webview/src/lib/persistence';
import { buildTree, latestLeafUnder, pathTo, siblingsOf } from '../../src/protocol/branches';
import type { ClientCommand } from '../../src/protocol/commands/index';
import { formatContext } from '../../src/protocol/mentions';
import { seededRandom } from '../support/random';

/** A prompt with an attached file, as the engine stores it. */
const WITH_CONTEXT = (prompt: string) => formatContext(prompt, [{ chip: { kind: 'file', target: 'a.ts', label: 'a.ts', tokens: 3, status: 'ok', warning: null }, text: 'export {};' }]);

const T = 'thread:tree';
const BASE_TIME = 1_700_000_000_000;

/** Stored events with increasing seqs (time: given, or one ms per event). */
function log() {
  let seq = 0;
  const e = (ev: Record<string, unknown>, time?: number) => ({ seq: ++seq, time: time ?? BASE_TIME + seq, threadId: T, ...ev });
  return {
    user: (messageId: string, parentId: string | null, content = messageId, time?: number) =>
      e({ type: 'message.added', messageId, parentId, role: 'user', content, runId: null, status: 'complete' }, time),
    answer: (messageId: string, parentId: string, runId: string, content = messageId, time?: number) =>
      e({ type: 'message.added', messageId, parentId, role: 'assistant', content, runId, status: 'complete' }, time),
    run: (runId: string, userMessageId: string, model = 'gpt-test') =>
      e({ type: 'run.started', runId, ordinal: 0, provider: 'openai', model, ownerPid: 1, userMessageId }),
    ended: (runId: string, status = 'completed') => e({ type: 'run.ended', runId, status, error: null, usage: { inputTokens: 1, outputTokens: 1 } }),
    switched: (toMessageId: string) => e({ type: 'thread.branchSwitched', toMessageId }),
    rewound: (toMessageId: string | null) => e({ type: 'thread.rewound', toMessageId }),
    edited: (messageId: string, content: string) => e({ type: 'message.edited', messageId, content }),
  };
}

/** The open branch as ids: messages by id, runs by run id. */
const shown = (st: ThreadState) => st.entries.map((x) => (x.kind === 'run' ? x.runId : x.messageId));

/** A random tree of `n` messages: each one's parent is an earlier message (or none), created one ms apart — a few share a millisecond. */
function randomMessages(n: number, r: () => number): { id: string; parentId: string | null; createdAt: number }[] {
  const out: { id: string; parentId: string | null; createdAt: number }[] = [];
  for (let i = 0; i < n; i++) {
    const parent = i === 0 || r() < 0.08 ? null : out[Math.floor(r() * i)]!.id;
    out.push({ id: `m${i}`, parentId: parent, createdAt: BASE_TIME + Math.floor(i / (r() < 0.2 ? 1 : 2)) });
  }
  return out;
}

function shuffle<T>(xs: T[], r: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe('webview conversation tree', () => {
  it('children before parents: over shuffled inputs, siblings and paths agree with the protocol\'s buildTree', () => {
    for (let seed = 1; seed <= 25; seed++) {
      const r = seededRandom(seed);
      const msgs = randomMessages(60, r);
      const arrival = shuffle(msgs, r); // children often arrive before their parents
      const l = log();
      const st = createThreadState(T);
      applyEvents(st, arrival.map((m) => l.user(m.id, m.parentId, m.id, m.createdAt)));
      const reference = buildTree(arrival); // input order = arrival order: the same tie-break
      for (const m of msgs) {
        assert.deepEqual(siblingsIn(st.tree, m.id), siblingsOf(reference, m.id), `seed ${seed}: siblings of ${m.id}`);
      }
      const leaf = latestLeafUnder(reference, msgs[0]!.id);
      applyEvents(st, [l.switched(leaf)]);
      assert.deepEqual(shown(st), pathTo(reference, leaf).map((m) => m.id), `seed ${seed}: the path to ${leaf}`);
      const leaves = msgs.filter((m) => !msgs.some((c) => c.parentId === m.id)).length;
      assert.equal(st.tree.leafCount, leaves, `seed ${seed}: leaf count`);
    }
  });

  it('a late parent adopts the children that came first; until then they act as roots', () => {
    const l = log();
    const st = createThreadState(T);
    applyEvents(st, [l.user('child-b', 'p', 'b', BASE_TIME + 5), l.user('child-a', 'p', 'a', BASE_TIME + 3)]);
    assert.deepEqual(shown(st), ['child-a'], 'the head is the last message added; its parent is unknown yet');
    applyEvents(st, [l.user('p', null, 'parent', BASE_TIME + 1)]);
    assert.deepEqual(siblingsIn(st.tree, 'child-b'), { index: 1, count: 2, ids: ['child-a', 'child-b'] }, 'ordered by creation, not arrival');
    applyEvents(st, [l.switched('child-b')]);
    assert.deepEqual(shown(st), ['p', 'child-b']);
    assert.equal(st.tree.leafCount, 2);
  });

  it('regenerate: the new prompt is a sibling; switching shows either answer; the head follows every move', () => {
    const l = log();
    const st = createThreadState(T);
    applyEvents(st, [l.user('u1', null, 'Hi'), l.run('r1', 'u1'), l.answer('a1', 'u1', 'r1', 'first answer'), l.ended('r1')]);
    assert.deepEqual(shown(st), ['u1', 'r1']);
    assert.equal(st.tree.headId, 'a1');
    // Regenerate (the engine re-sends u1's content with u1's parent) with another model.
    applyEvents(st, [l.user('u1b', null, 'Hi'), l.run('r2', 'u1b', 'gpt-other'), l.answer('a2', 'u1b', 'r2', 'second answer'), l.ended('r2')]);
    assert.deepEqual(shown(st), ['u1b', 'r2']);
    assert.deepEqual(siblingsIn(st.tree, 'u1b'), { index: 1, count: 2, ids: ['u1', 'u1b'] });
    assert.equal(st.tree.leafCount, 2);
    applyEvents(st, [l.switched('a1')]);
    assert.deepEqual(shown(st), ['u1', 'r1']);
    assert.equal(runText(st.runs.r1!), 'first answer');
    // A follow-up on the first branch continues it, then a restore moves the head back into it.
    applyEvents(st, [l.user('u2', 'a1', 'More'), l.run('r3', 'u2'), l.answer('a3', 'u2', 'r3', 'more'), l.ended('r3')]);
    assert.deepEqual(shown(st), ['u1', 'r1', 'u2', 'r3']);
    applyEvents(st, [l.rewound('a1')]);
    assert.deepEqual(shown(st), ['u1', 'r1']);
    assert.equal(st.rewoundEntries, 2, 'u2 and a3 are below the head: the branch the restore left');
    applyEvents(st, [l.switched('a3')]);
    assert.deepEqual(shown(st), ['u1', 'r1', 'u2', 'r3']);
    assert.equal(st.rewoundEntries, 0);
    applyEvents(st, [l.rewound(null)]);
    assert.deepEqual(shown(st), []);
    applyEvents(st, [l.switched('nope')]);
    assert.deepEqual(shown(st), [], 'an unknown target is ignored');
  });

  it('message.edited: an answer changes in place (run text, editedAt); a standalone message\'s entry too', () => {
    const l = log();
    const st = createThreadState(T);
    applyEvents(st, [l.user('u1', null, 'Hi'), l.run('r1', 'u1'), l.answer('a1', 'u1', 'r1', 'original'), l.ended('r1')]);
    const ev = l.edited('a1', 'corrected');
    applyEvents(st, [ev]);
    assert.equal(runText(st.runs.r1!), 'corrected');
    assert.equal(st.tree.messages.a1!.editedAt, ev.time);
    assert.deepEqual(shown(st), ['u1', 'r1'], 'no truncation');
    applyEvents(st, [l.edited('u1', 'Hello')]);
    assert.deepEqual(st.entries[0], { kind: 'message', messageId: 'u1', role: 'user', content: 'Hello', status: 'complete' });
  });

  it('the tree survives persistence; a state saved by a build without the tree is replayed from the start', () => {
    const l = log();
    const st = createThreadState(T);
    applyEvents(st, [l.user('u1', null), l.run('r1', 'u1'), l.answer('a1', 'u1', 'r1'), l.user('u1b', null), l.run('r2', 'u1b')]);
    const restored = decodeState(encodeState(st, '', []), () => {})!.thread!;
    assert.deepEqual(restored.tree, st.tree);
    applyEvents(restored, [l.switched('a1')]);
    assert.deepEqual(shown(restored), ['u1', 'r1']);
    const { tree: _dropped, ...older } = st;
    const warnings: string[] = [];
    const fromOld = decodeState({ version: 1, threadId: T, draft: '', threadJson: JSON.stringify(older), approvals: [] }, (w) => warnings.push(w))!.thread!;
    assert.equal(fromOld.lastEventSeq, 0, 'replayed from seq 0');
    assert.equal(warnings.length, 1);
  });

  it('a thread over MAX_PERSISTED_THREAD_MESSAGES is not serialised (it is replayed from seq 0 on reload); one at the bound is', () => {
    const l = log();
    const build = (pairs: number) => {
      const st = createThreadState(T);
      const evs: unknown[] = [];
      let parent: string | null = null;
      for (let i = 0; i < pairs; i++) {
        evs.push(l.user(`u${i}`, parent), l.run(`r${i}`, `u${i}`), l.answer(`a${i}`, `u${i}`, `r${i}`));
        parent = `a${i}`;
      }
      applyEvents(st, evs);
      return st;
    };
    const atBound = build(MAX_PERSISTED_THREAD_MESSAGES / 2);
    assert.equal(atBound.tree.messageCount, MAX_PERSISTED_THREAD_MESSAGES);
    assert.ok(encodeState(atBound, 'd', []).threadJson !== null);
    const over = encodeState(build(MAX_PERSISTED_THREAD_MESSAGES / 2 + 1), 'draft kept', []);
    assert.equal(over.threadJson, null);
    assert.equal(over.draft, 'draft kept');
    assert.equal(decodeState(over, () => {})!.thread!.lastEventSeq, 0, 'replayed from the start');
  });

  describe('10,000 messages stay linear (work counted, not timed)', () => {
    /** A linear thread of `pairs` prompt/answer pairs: 2·pairs messages and pairs runs. */
    function linear(pairs: number, l = log()) {
      const evs: ReturnType<ReturnType<typeof log>['user']>[] = [];
      let parent: string | null = null;
      for (let i = 0; i < pairs; i++) {
        evs.push(l.user(`u${i}`, parent), l.run(`r${i}`, `u${i}`), l.answer(`a${i}`, `u${i}`, `r${i}`), l.ended(`r${i}`));
        parent = `a${i}`;
      }
      return { evs, l };
    }

    it('a replay in one batch, and live one event at a time, append without recomputing the path', () => {
      const { evs } = linear(5_000);
      const st = createThreadState(T);
      treeWork.recomputes = 0;
      treeWork.steps = 0;
      applyEvents(st, evs);
      assert.equal(st.entries.length, 10_000);
      assert.equal(treeWork.recomputes, 0);
      assert.equal(treeWork.steps, 0);
      const live = createThreadState(T);
      for (const ev of evs) applyEvents(live, [ev]);
      assert.deepEqual(live.entries, st.entries);
      assert.equal(treeWork.recomputes, 0);
    });

    it('branch switches and regenerated siblings cost O(n) per batch, not per event', () => {
      const work = (pairs: number) => {
        const { evs, l } = linear(pairs);
        // Every 10th prompt regenerated: a sibling with its own run, arriving in the same batch.
        for (let i = 0; i < pairs; i += 10) {
          const parent = i === 0 ? null : `a${i - 1}`;
          evs.push(l.user(`u${i}b`, parent), l.run(`r${i}b`, `u${i}b`), l.answer(`a${i}b`, `u${i}b`, `r${i}b`));
        }
        const st = createThreadState(T);
        treeWork.recomputes = 0;
        treeWork.steps = 0;
        applyEvents(st, evs);
        const replay = { recomputes: treeWork.recomputes, steps: treeWork.steps };
        applyEvents(st, [l.switched(`a${pairs - 1}`)]);
        assert.equal(st.entries.length, pairs * 2, 'the main branch, every prompt and its run');
        assert.deepEqual(pathIds(st.tree, st.tree.headId).length, pairs * 2);
        return { replay, total: treeWork.steps, recomputes: treeWork.recomputes };
      };
      const small = work(500);
      const big = work(5_000);
      assert.equal(big.replay.recomputes, 1, 'one recompute for the whole batch');
      assert.equal(big.recomputes, 2, 'and one for the switch');
      // Linear: ten times the messages, about ten times the steps (quadratic would be a hundred).
      assert.ok(big.total <= small.total * 12, `steps: ${small.total} for 1,000 messages, ${big.total} for 10,000`);
      assert.ok(big.total <= 10 * 10_000, `${big.total} steps for 10,000 messages`);
    });
  });
});

describe('webview tree intents', () => {
  function setup() {
    const model: AppModel = createModel();
    const sent: ClientCommand[] = [];
    const actions: unknown[] = [];
    const intents = new TreeIntents({ model, send: (c) => (sent.push(c), `w${sent.length}`), hostAction: (a, args) => actions.push([a, args]) });
    const l = log();
    const st = createThreadState(T);
    model.thread = st;
    applyEvents(st, [l.user('u1', null, WITH_CONTEXT('Hi')), l.run('r1', 'u1'), l.answer('a1', 'u1', 'r1', 'answer'), l.ended('r1')]);
    return { model, sent, actions, intents, l, st };
  }

  it('regenerate / retry / edit / switch / compare send their commands; nothing while a run is active', () => {
    const { sent, actions, intents, l, st } = setup();
    assert.equal(intents.regenerate('r1'), true);
    assert.equal(intents.regenerate('r1', 'openai:gpt-e2e'), true);
    assert.equal(intents.retry('r1'), false, 'a completed run that was not cut off offers Regenerate, not Retry');
    assert.equal(intents.edit('a1', 'better answer'), true);
    assert.equal(intents.edit('a1', 'answer'), false, 'unchanged');
    assert.equal(intents.edit('a1', '  '), false, 'blank');
    assert.equal(intents.promptOf('u1'), 'Hi', 'the attached context is not part of the editable prompt');
    assert.equal(intents.editPrompt('u1', 'Hello'), true);
    assert.equal(intents.compare(), false, 'one branch: nothing to compare');
    assert.deepEqual(sent, [
      { type: 'regenerate', threadId: T, runId: 'r1' },
      { type: 'regenerate', threadId: T, runId: 'r1', model: 'openai:gpt-e2e' },
      { type: 'editMessage', threadId: T, messageId: 'a1', content: 'better answer' },
      { type: 'editMessage', threadId: T, messageId: 'u1', content: WITH_CONTEXT('Hello') },
    ]);
    sent.length = 0;
    applyEvents(st, [l.user('u1b', null, 'Hi'), l.run('r2', 'u1b')]);
    assert.equal(intents.idle, false);
    assert.equal(intents.step('u1b', -1), false, 'not while the thread runs');
    assert.equal(intents.regenerate('r1'), false);
    assert.equal(intents.editPrompt('u1b', 'x'), false);
    applyEvents(st, [l.ended('r2', 'failed')]);
    assert.equal(intents.retry('r2'), true);
    assert.equal(intents.step('u1b', 1), false, 'already the last sibling');
    assert.equal(intents.step('u1b', -1), true);
    assert.equal(intents.compare(), true);
    assert.deepEqual(sent, [{ type: 'retry', threadId: T, runId: 'r2' }, { type: 'switchBranch', threadId: T, toMessageId: 'u1' }]);
    assert.deepEqual(actions, [['compareBranches', { threadId: T }]]);
  });

  it('"Open that branch" after a restore switches to the head\'s newest child', () => {
    const { sent, intents, l, st } = setup();
    applyEvents(st, [l.user('u2', 'a1'), l.run('r2', 'u2'), l.answer('a2', 'u2', 'r2'), l.ended('r2'), l.rewound('a1')]);
    assert.equal(st.rewoundEntries, 2);
    assert.equal(intents.openRewound(), true);
    assert.deepEqual(sent.at(-1), { type: 'switchBranch', threadId: T, toMessageId: 'u2' });
  });
});
