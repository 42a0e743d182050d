/**
 * The chat's compaction note and intents (webview/src/lib/compaction-state.ts,
 * features/compaction.ts) over thread states built by the real reducer from stored events: the
 * note follows the entry of the last compacted message ("Context compacted up to here"), the
 * messages above stay in the list and the in-thread find still finds them, a later compaction
 * that takes an earlier one in shows one note, a branch that does not hold the range shows none;
 * `/compact` typed as the whole prompt and the per-message actions send `compactThread` (not a
 * prompt), not while the thread runs, and the answer or error ends "Compacting…".
 */
import { strict as assert } from 'node:assert';
import { applyEvents, createThreadState, type ThreadState } from '../../webview/src/lib/thread-state';
import { compactionNotes, noteLabel } from '../../webview/src/lib/compaction-state';
import { entryKey, findInThread } from '../../webview/src/lib/thread-find';
import { Controller, createModel } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import type { ClientCommand } from '../../src/protocol/commands';
import { longThreadEvents } from './support/long-thread';

const T = 'thread:cmp';
const SUMMARY = '## Goal\nA\n\n## Decisions\nB\n\n## Files touched\nC\n\n## Open items\nNone.';

function compacted(seq: number, id: string, from: string, upTo: string, covered: number, mode: 'full' | 'upTo' | 'from' = 'upTo', trigger: 'manual' | 'auto' = 'manual') {
  return {
    seq, time: 1, threadId: T, type: 'thread.compacted', compactionId: id, mode, trigger, fromMessageId: from, upToMessageId: upTo,
    compactMessageIndex: covered - 1, coveredMessages: covered, summary: SUMMARY, model: 'openai:gpt-4o', usage: { inputTokens: 10, outputTokens: 5 }, supersedes: [], runId: null,
  };
}

function thread(messages: number): { s: ThreadState; next: number } {
  const s = createThreadState(T);
  const evs = longThreadEvents({ threadId: T, messages });
  applyEvents(s, evs);
  return { s, next: evs.length + 1 };
}

describe('webview: the compaction note', () => {
  it('follows the last compacted message; the messages above stay listed and findable', () => {
    const { s, next } = thread(1_000);
    const before = s.entries.map(entryKey);
    applyEvents(s, [compacted(next, 'cmp:1', 'm:u0', 'm:a249', 500)]);
    assert.deepEqual(s.entries.map(entryKey), before, 'no entry is removed');
    const notes = compactionNotes(s);
    assert.deepEqual([...notes.keys()], ['run:run:249']);
    assert.equal(noteLabel(notes.get('run:run:249')!), 'Context compacted up to here · 500 messages summarised by openai:gpt-4o');
    assert.deepEqual(findInThread(s, 'question 10:').matches.map((m) => m.key), ['msg:m:u10'], 'a compacted prompt is still found');
    // An automatic one says so; a user message as the boundary keys the message entry.
    applyEvents(s, [compacted(next + 1, 'cmp:2', 'm:u300', 'm:u310', 21, 'from', 'auto')]);
    assert.deepEqual([...compactionNotes(s).keys()], ['run:run:249', 'msg:m:u310']);
    assert.match(noteLabel(compactionNotes(s).get('msg:m:u310')!), /^Context compacted automatically up to here/);
  });

  it('a later compaction that takes an earlier one in shows one note; replays do not double it', () => {
    const { s, next } = thread(200);
    const a = compacted(next, 'cmp:a', 'm:u10', 'm:a20', 22, 'from');
    const b = compacted(next + 1, 'cmp:b', 'm:u0', 'm:a60', 122);
    applyEvents(s, [a, b]);
    applyEvents(s, [a]); // a replay overlap
    assert.equal(s.compactions!.length, 2);
    assert.deepEqual([...compactionNotes(s).entries()].map(([k, n]) => [k, n.compactionId]), [['run:run:60', 'cmp:b']]);
  });

  it('a branch that does not hold the range shows no note', () => {
    const { s, next } = thread(20);
    applyEvents(s, [
      compacted(next, 'cmp:1', 'm:u0', 'm:a8', 18),
      { seq: next + 1, time: 2, threadId: T, type: 'thread.rewound', toMessageId: 'm:a3' },
      { seq: next + 2, time: 3, threadId: T, type: 'message.added', messageId: 'x1', parentId: 'm:a3', role: 'user', content: 'other way', runId: null, status: 'complete' },
    ]);
    assert.deepEqual([...compactionNotes(s).keys()], []);
  });
});

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
}

describe('webview: compacting from the chat', () => {
  function open(events: Record<string, unknown>[]) {
    const host = new FakeHost();
    const model = createModel();
    const c = new Controller(model, host, { warn: () => {}, error: () => {} });
    c.start();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events });
    host.sent.length = 0;
    return { host, model, c };
  }

  it('/compact as the whole prompt sends compactThread instead of a prompt; the answer ends "Compacting…"', () => {
    const { host, model, c } = open(longThreadEvents({ threadId: T, messages: 10 }));
    model.draft = '/compact';
    assert.equal(c.sendPrompt(), true);
    assert.deepEqual(host.sent.map((x) => x.type), ['compactThread']);
    const cmd = host.sent[0] as Extract<ClientCommand, { type: 'compactThread' }>;
    assert.deepEqual([cmd.threadId, cmd.mode, cmd.messageId], [T, 'full', undefined]);
    assert.equal(model.draft, '');
    assert.equal(model.compacting?.requestId, cmd.requestId);
    assert.equal(c.compaction.possible, false, 'one at a time');
    host.post({ type: 'error', inReplyTo: cmd.requestId, domain: 'compaction', code: 'invalidSummary', message: 'openai:gpt-4o did not answer with a summary' });
    assert.equal(model.compacting, null);
    assert.deepEqual(model.notices.map((n) => n.message), ['openai:gpt-4o did not answer with a summary']);
    model.draft = '/compact up-to m:a2';
    host.sent.length = 0;
    c.sendPrompt();
    assert.deepEqual(host.sent.map((x) => [x.type, (x as { mode?: string }).mode, (x as { messageId?: string }).messageId]), [['compactThread', 'upTo', 'm:a2']]);
    // A prompt that only starts with the word is a prompt.
    host.post({ type: 'result', inReplyTo: host.sent[0]!.requestId, value: {} });
    assert.equal(model.compacting, null);
    model.draft = '/compaction is what?';
    host.sent.length = 0;
    c.sendPrompt();
    assert.deepEqual(host.sent.map((x) => x.type), ['sendPrompt']);
  });

  it('"Compact up to here" / "from here" send the message id; nothing while the thread runs', () => {
    const events = longThreadEvents({ threadId: T, messages: 6 });
    const { host, c } = open(events);
    assert.equal(c.compaction.compact('from', 'm:a1'), true);
    assert.deepEqual(host.sent.map((x) => [x.type, (x as { mode?: string }).mode, (x as { messageId?: string }).messageId]), [['compactThread', 'from', 'm:a1']]);
    const running = open([
      ...events,
      { seq: events.length + 1, time: 1, threadId: T, type: 'message.added', messageId: 'mu', parentId: 'm:a2', role: 'user', content: 'go', runId: null, status: 'complete' },
      { seq: events.length + 2, time: 1, threadId: T, type: 'run.started', runId: 'run:live', ordinal: 9, provider: 'openai', model: 'gpt', ownerPid: 1, userMessageId: 'mu' },
    ]);
    assert.equal(running.c.compaction.compact('upTo', 'm:a1'), false);
    running.model.draft = '/compact';
    running.c.sendPrompt();
    assert.deepEqual(running.host.sent.filter((x) => x.type === 'compactThread'), []);
    assert.deepEqual(running.model.notices.map((n) => n.message), ['Compact works on an open thread that is not running a turn.']);
    assert.equal(running.model.draft, '/compact', 'the draft stays');
  });
});
