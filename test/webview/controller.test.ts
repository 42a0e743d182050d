/**
 * The webview Controller (webview/src/lib/controller.ts) against a fake HostBridge: the commands
 * it sends, how it treats unknown and broken updates, re-subscription on show, persistence
 * (skipped while streaming, flushed at the end) and resume after a reload, host actions.
 */
import { strict as assert } from 'node:assert';
import { Controller, createModel, PERSIST_VERSION, type PersistedState } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import type { ClientCommand } from '../../src/protocol/commands';
import { runText } from '../../webview/src/lib/blocks';

class FakeHost implements HostBridge {
  sent: ClientCommand[] = [];
  actions: HostAction[] = [];
  state: unknown = undefined;
  saves = 0;
  private listener: ((d: unknown) => void) | null = null;
  send(c: ClientCommand): void {
    this.sent.push(structuredClone(c));
  }
  sendHostAction(a: HostAction): void {
    this.actions.push(a);
  }
  onMessage(l: (d: unknown) => void): () => void {
    this.listener = l;
    return () => (this.listener = null);
  }
  getState(): unknown {
    return this.state;
  }
  setState(s: unknown): void {
    this.state = structuredClone(s); // what VS Code does: the value must be cloneable
    this.saves++;
  }
  post(u: unknown): void {
    this.listener?.(structuredClone(u));
  }
  take(): ClientCommand[] {
    return this.sent.splice(0);
  }
}

const T = 'thread:1';
const R = 'run:1';
let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...e });
const startEvents = () => [
  ev({ type: 'thread.created', title: 'Hi' }),
  ev({ type: 'message.added', messageId: 'm1', parentId: null, role: 'user', content: 'hello', runId: null, status: 'complete' }),
  ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'gpt', ownerPid: 1, userMessageId: 'm1' }),
];
const endEvents = (text: string) => [
  ev({ type: 'message.added', messageId: 'm2', parentId: 'm1', role: 'assistant', content: text, runId: R, status: 'complete' }),
  ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 2 } }),
];

function setup(state?: unknown) {
  const host = new FakeHost();
  host.state = state;
  const warnings: string[] = [];
  const errors: string[] = [];
  const model = createModel();
  const c = new Controller(model, host, { warn: (m) => warnings.push(m), error: (m) => errors.push(m) });
  c.start();
  return { host, c, model, warnings, errors };
}

describe('webview controller', () => {
  beforeEach(() => (seq = 0));

  it('asks for settings and threads on start; a first prompt opens its new thread from seq 0', () => {
    const { host, c, model } = setup();
    const first = host.take();
    assert.deepEqual(first.map((x) => x.type), ['getSettings', 'listThreads', 'watchThreads', 'listPromptHistory', 'listMcpServers', 'watchMcpServers']);
    host.post({ type: 'result', inReplyTo: first[1]!.requestId, value: { threads: [], nextCursor: null } }); // the list (one request at a time)
    model.draft = 'hello';
    assert.equal(c.sendPrompt(), true);
    const [send] = host.take();
    assert.equal(send?.type === 'sendPrompt' && send.threadId, null);
    assert.equal(model.draft, '');
    host.post({ type: 'result', inReplyTo: send!.requestId, value: { threadId: T, runId: R, queued: null } });
    const cmds = host.take();
    assert.deepEqual(cmds.map((x) => x.type), ['listThreads', 'subscribeThread']);
    assert.deepEqual({ ...cmds[1], requestId: undefined }, { type: 'subscribeThread', threadId: T, afterSeq: 0, requestId: undefined });
    host.post({ type: 'events', threadId: T, events: startEvents() });
    assert.equal(model.sending, null, 'the pending prompt gives way to the real user message');
    const sub = host.take();
    assert.deepEqual(sub.map((x) => x.type === 'subscribeTurn' && [x.turnId, x.afterSeq]), [[R, 0]]);
  });

  it('a turn that started and ended before the view subscribed still streams its chunks (the reasoning lives only there)', () => {
    const { host, c, model } = setup();
    const first = host.take();
    host.post({ type: 'result', inReplyTo: first[1]!.requestId, value: { threads: [], nextCursor: null } });
    model.draft = 'hello';
    c.sendPrompt();
    const [send] = host.take();
    host.post({ type: 'result', inReplyTo: send!.requestId, value: { threadId: T, runId: R, queued: null } });
    host.take();
    // A busy machine: the whole turn is in the first batch of events the view gets.
    host.post({ type: 'events', threadId: T, events: [...startEvents(), ...endEvents('Teal.')] });
    const sub = host.take().filter((x) => x.type === 'subscribeTurn');
    assert.deepEqual(sub.map((x) => x.type === 'subscribeTurn' && [x.turnId, x.afterSeq]), [[R, 0]]);
    host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 1, kind: 'reasoning', data: 'The user wants a colour.' }, { turnId: R, seq: 2, kind: 'text', data: 'Teal.' }] });
    host.post({ type: 'turnEnded', turnId: R, status: 'completed' });
    const run = model.thread!.runs[R]!;
    assert.deepEqual(run.stream.filter((s) => s.kind === 'reasoning').map((s) => s.kind === 'reasoning' && s.text), ['The user wants a colour.']);
    assert.equal(run.streamEnded, true);
    assert.equal(c.hasUnsavedState, true, 'the late chunks are saved with the next write (or the flush on hide)');
    // Events of a thread already streamed do not ask again.
    host.post({ type: 'events', threadId: T, events: [ev({ type: 'thread.renamed', title: 'Colour' })] });
    assert.deepEqual(host.take().filter((x) => x.type === 'subscribeTurn'), []);
  });

  it('ignores unknown update variants, logs broken ones, and keeps working', () => {
    const { host, model, warnings, errors } = setup();
    host.post({ type: 'settings', model: 'local:demo', models: [], demoNotice: 'demo!' });
    host.post({ type: 'holographicProjection', payload: 1 }); // a newer engine's update
    host.post({ type: 'turnChunks', turnId: 5 }); // broken
    host.post('garbage');
    host.post({ type: 'hostCommand', command: 'selfDestruct' }); // a known variant with a broken payload
    host.post({ type: 'result', inReplyTo: 'w2', value: { threads: [{ id: T, title: 'Hi', createdAt: 1, updatedAt: 2, lastSeq: 3 }], nextCursor: null } }); // the answer to listThreads
    assert.equal(model.settings?.demoNotice, 'demo!');
    assert.equal(model.threads.length, 1);
    assert.equal(warnings.length, 3);
    assert.deepEqual(errors, []);
  });

  it('re-subscribes from the last seqs when shown again; persists only when the run ends', () => {
    const { host, c, model } = setup();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: startEvents() });
    host.take();
    const savesBefore = host.saves;
    host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 4, kind: 'text', data: 'Hel' }] });
    host.post({ type: 'events', threadId: T, events: [ev({ type: 'item.started', runId: R, itemId: 'i0', ordinal: 0, kind: 'text', toolName: null, arguments: null })] });
    assert.equal(host.saves, savesBefore, 'no state writes while the run streams');
    assert.equal(c.hasUnsavedState, true);
    c.onVisibilityChange(false); // hidden: flush
    assert.equal(host.saves, savesBefore + 1);
    c.onVisibilityChange(true);
    const cmds = host.take();
    assert.deepEqual(cmds.map((x) => (x.type === 'subscribeThread' || x.type === 'subscribeTurn' ? [x.type, x.afterSeq] : x.type)), [
      ['subscribeThread', 4],
      ['subscribeTurn', 4],
    ]);
    host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 4, kind: 'text', data: 'Hel' }, { turnId: R, seq: 6, kind: 'text', data: 'lo' }] });
    host.post({ type: 'events', threadId: T, events: endEvents('Hello') });
    host.post({ type: 'turnEnded', turnId: R, status: 'completed' });
    assert.equal(runText(model.thread!.runs[R]!), 'Hello');
    const saved = host.state as PersistedState;
    assert.equal(saved.version, PERSIST_VERSION);
    assert.equal(saved.threadId, T);
    assert.equal(JSON.parse(saved.threadJson!).runs[R].lastChunkSeq, 6);
  });

  it('after a reload, resumes the saved thread from its seqs without replaying what it has', () => {
    const first = setup();
    first.c.openThread(T);
    first.host.post({ type: 'events', threadId: T, events: startEvents() });
    first.host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 3, kind: 'text', data: 'Hello, ' }] });
    first.c.onVisibilityChange(false);
    const { host, model } = setup(first.host.state); // the webview was destroyed and recreated
    const cmds = host.take();
    assert.deepEqual(cmds.map((x) => (x.type === 'subscribeThread' || x.type === 'subscribeTurn' ? [x.type, x.afterSeq] : x.type)), [
      'getSettings', 'listThreads', 'watchThreads', ['subscribeThread', 3], ['subscribeTurn', 3], 'listPromptHistory', 'listMcpServers', 'watchMcpServers',
    ]);
    host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 3, kind: 'text', data: 'Hello, ' }, { turnId: R, seq: 4, kind: 'text', data: 'world' }] });
    assert.equal(runText(model.thread!.runs[R]!), 'Hello, world');
  });

  it('a saved state of another version is ignored', () => {
    const { host, model } = setup({ version: 999, threadId: T, draft: 'x', threadJson: '{}' });
    assert.equal(model.thread, null);
    assert.deepEqual(host.take().map((x) => x.type), ['getSettings', 'listThreads', 'watchThreads', 'listPromptHistory', 'listMcpServers', 'watchMcpServers']);
  });

  it('a turn the engine cannot stream falls back to events, without an error notice', () => {
    const { host, c, model } = setup();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: startEvents() });
    const sub = host.take().find((x) => x.type === 'subscribeTurn')!;
    host.post({ type: 'error', inReplyTo: sub.requestId, domain: 'stream', code: 'unknownTurn', message: 'gone' });
    assert.equal(model.thread!.runs[R]!.streamUnavailable, true);
    assert.deepEqual(model.notices, []);
    c.onVisibilityChange(true);
    assert.deepEqual(host.take().map((x) => x.type), ['subscribeThread'], 'no retry of the unavailable turn');
  });

  it('approvals: shown on request, answered once with the call id, dropped when accepted', () => {
    const { host, c, model } = setup();
    host.post({ type: 'approvalRequested', callId: 'item:7', threadId: T, runId: R, toolName: 'write_file', argumentsJson: '{}', toolClass: 'write' });
    host.post({ type: 'approvalRequested', callId: 'item:7', threadId: T, runId: R, toolName: 'write_file', argumentsJson: '{}', toolClass: 'write' });
    assert.equal(model.approvals.length, 1);
    host.take();
    c.respondToApproval('item:7', 'approved');
    c.respondToApproval('item:7', 'approved'); // double click
    const cmds = host.take();
    assert.equal(cmds.length, 1);
    assert.deepEqual({ ...cmds[0], requestId: undefined }, { type: 'respondToApproval', callId: 'item:7', decision: 'approved', requestId: undefined });
    host.post({ type: 'result', inReplyTo: cmds[0]!.requestId, value: {} });
    assert.deepEqual(model.approvals, []);
  });

  it('Stop cancels the active run; rename/delete/setModel/host actions send what the host expects', () => {
    const { host, c } = setup();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: startEvents() });
    host.take();
    assert.equal(c.cancelRun(), true);
    assert.deepEqual(host.take().map((x) => x.type === 'cancelRun' && x.runId), [R]);
    assert.equal(c.renameThread(T, '   '), false);
    assert.equal(c.renameThread(T, ' New name '), true);
    c.deleteThread('thread:9');
    host.post({ type: 'result', inReplyTo: 'w1', value: { model: 'local:demo', models: [{ ref: 'local:demo', label: 'Demo', isDemo: true }], demoNotice: 'd' } });
    c.setModel('local:demo'); // unchanged: nothing sent
    c.setModel('openai:gpt-4o-mini');
    c.hostAction('setApiKey');
    const cmds = host.take().map((x) => ({ ...x, requestId: undefined }));
    assert.deepEqual(cmds, [
      { type: 'renameThread', threadId: T, title: 'New name', requestId: undefined },
      { type: 'deleteThread', threadId: 'thread:9', requestId: undefined },
      { type: 'prepareModel', model: 'local:demo', requestId: undefined }, // the first settings: load it before the first prompt
      { type: 'setModel', model: 'openai:gpt-4o-mini', requestId: undefined },
    ]);
    assert.deepEqual(host.actions, ['setApiKey']);
  });

  it('while a run is active: Enter queues, Ctrl+Enter steers; the queue strip follows queue.* events; edit/move/cancel/steer send their commands', () => {
    const { host, c, model } = setup();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: startEvents() });
    host.take();
    model.draft = 'after this turn';
    assert.equal(c.sendPrompt(), true, 'a prompt while running is queued, not dropped');
    const [q] = host.take();
    assert.deepEqual(q?.type === 'sendPrompt' && [q.threadId, q.ifBusy, q.steer], [T, 'queue', undefined]);
    assert.equal(model.draft, '');
    host.post({ type: 'result', inReplyTo: q!.requestId, value: { threadId: T, runId: null, queued: { entryId: 'q1', position: 0 } } });
    assert.equal(model.sending, null, 'a queued prompt is not "being sent"');
    model.draft = 'change course';
    c.sendPrompt({ steer: true });
    const steer = host.take().find((x) => x.type === 'sendPrompt');
    assert.deepEqual(steer?.type === 'sendPrompt' && [steer.ifBusy, steer.steer], ['queue', true]);
    host.post({ type: 'result', inReplyTo: steer!.requestId, value: { threadId: T, runId: null, queued: { entryId: 'q2', position: 1 } } });

    host.post({ type: 'events', threadId: T, events: [
      ev({ type: 'queue.added', entryId: 'q1', prompt: 'after this turn', model: null, ownerPid: 1, ownerStartedAt: null }),
      ev({ type: 'queue.added', entryId: 'q2', prompt: 'change course', model: null, ownerPid: 1, ownerStartedAt: null }),
      ev({ type: 'queue.steerRequested', entryId: 'q2' }),
      ev({ type: 'queue.added', entryId: 'q3', prompt: 'third', model: 'openai:x', ownerPid: 2, ownerStartedAt: null }),
      ev({ type: 'queue.edited', entryId: 'q1', prompt: 'after this turn, edited' }),
      ev({ type: 'queue.moved', entryId: 'q3', toIndex: 0 }),
    ] });
    assert.deepEqual(model.thread!.queue.map((x) => [x.entryId, x.prompt, x.steer]), [
      ['q3', 'third', false], ['q1', 'after this turn, edited', false], ['q2', 'change course', true],
    ]);
    host.take();
    assert.equal(c.editQueued('q1', '   '), false, 'an empty edit is not sent');
    assert.equal(c.editQueued('q1', 'new text'), true);
    c.moveQueued('q1', 0);
    c.moveQueued('q1', 3); // out of range: nothing sent
    c.cancelQueued('q3');
    c.steerQueued('q1');
    assert.deepEqual(host.take().map((x) => ({ ...x, requestId: undefined })), [
      { type: 'editQueued', threadId: T, entryId: 'q1', prompt: 'new text', requestId: undefined },
      { type: 'moveQueued', threadId: T, entryId: 'q1', toIndex: 0, requestId: undefined },
      { type: 'cancelQueued', threadId: T, entryId: 'q3', requestId: undefined },
      { type: 'steerQueued', threadId: T, entryId: 'q1', requestId: undefined },
    ]);
    // The steer lands in the run: a steer chunk while streaming, the run.steered event for good; q2 leaves the strip.
    host.post({ type: 'turnChunks', turnId: R, chunks: [
      { turnId: R, seq: 1, kind: 'text', data: 'working' },
      { turnId: R, seq: 2, kind: 'steer', data: JSON.stringify({ itemId: 'i1', prompt: 'change course', skippedTools: ['write_file'] }) },
    ] });
    host.post({ type: 'events', threadId: T, events: [
      ev({ type: 'queue.removed', entryId: 'q2', reason: 'steered', runId: R }),
      ev({ type: 'run.steered', runId: R, itemId: 'i1', ordinal: 1, entryId: 'q2', prompt: 'change course', skippedTools: ['write_file'] }),
    ] });
    assert.deepEqual(model.thread!.queue.map((x) => x.entryId), ['q3', 'q1']);
    const run = model.thread!.runs[R]!;
    assert.deepEqual(run.items.map((i) => [i.kind, i.content, i.skippedTools]), [['steer', 'change course', ['write_file']]]);
    assert.deepEqual(run.stream.map((x) => x.kind), ['text', 'steer']);
  });

  it('a deleted open thread closes; a failed prompt gives its text back with a notice', () => {
    const { host, c, model } = setup();
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: [ev({ type: 'thread.deleted' })] });
    assert.equal(model.thread, null);
    host.take();
    model.draft = 'please';
    c.sendPrompt();
    const [send] = host.take();
    host.post({ type: 'error', inReplyTo: send!.requestId, domain: 'provider', code: 'badRequest', message: 'no model' });
    assert.equal(model.draft, 'please');
    assert.equal(model.sending, null);
    assert.deepEqual(model.notices.map((n) => n.message), ['no model']);
  });

  it('host commands: newThread, focusComposer, insertPrompt and openThread', () => {
    const { host, c, model } = setup();
    c.openThread(T);
    host.take();
    host.post({ type: 'hostCommand', command: 'newThread' });
    assert.equal(model.thread, null);
    assert.deepEqual(host.take().map((x) => x.type === 'unsubscribe' && x.target), [`thread:${T}`]);
    const focus = model.focusRequests;
    host.post({ type: 'hostCommand', command: 'focusComposer' });
    model.draft = 'Explain:';
    host.post({ type: 'hostCommand', command: 'insertPrompt', text: 'src/a.ts:1-2\n```ts\nx\n```' });
    assert.equal(model.draft, 'Explain:\nsrc/a.ts:1-2\n```ts\nx\n```');
    assert.equal(model.focusRequests, focus + 2);
    host.post({ type: 'hostCommand', command: 'openThread', threadId: 'thread:7' });
    assert.equal(c.model.thread?.threadId, 'thread:7'); // (via c: `model.thread` is narrowed to null above)
    assert.deepEqual(host.take().map((x) => x.type === 'subscribeThread' && [x.threadId, x.afterSeq]), [['thread:7', 0]]);
  });

  it('an unsolicited settings update (the host connected a new session) re-subscribes from the last seqs', () => {
    const { host, c } = setup();
    const getSettings = host.take().find((x) => x.type === 'getSettings');
    assert.equal(getSettings?.requestId, 'w1');
    c.openThread(T);
    host.post({ type: 'events', threadId: T, events: startEvents() });
    host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: 2, kind: 'text', data: 'Hi' }] });
    host.take();
    const settings = { type: 'settings', model: 'm', models: [], demoNotice: null };
    host.post({ type: 'result', inReplyTo: 'w1', value: { model: 'm', models: [], demoNotice: null } }); // the answer to our getSettings: nothing to redo
    assert.deepEqual(host.take().map((x) => x.type), ['prepareModel']);
    host.post(settings);
    assert.deepEqual(host.take().map((x) => (x.type === 'subscribeThread' || x.type === 'subscribeTurn' ? [x.type, x.afterSeq] : x.type)), [
      'prepareModel', // a new engine session: its model may not be loaded
      'listThreads', // the list's pass again (the old session's request is never answered)
      'watchThreads', // and its watch of threads changed elsewhere
      ['subscribeThread', 3],
      ['subscribeTurn', 2],
      'listPromptHistory', // and the prompt history (other windows may have sent prompts)
      'listMcpServers', // and the MCP servers (the slash menu's prompts), watched again in the new session
      'watchMcpServers',
    ]);
  });

  it('prepares the model before the first prompt: on the first settings, on a new session, and when the model changes', () => {
    const { host } = setup();
    host.take();
    const prepared = () => host.take().flatMap((x) => (x.type === 'prepareModel' ? [x.model] : []));
    host.post({ type: 'result', inReplyTo: 'w1', value: { model: 'local:demo', models: [], demoNotice: 'd' } });
    assert.deepEqual(prepared(), ['local:demo']);
    host.post({ type: 'result', inReplyTo: 'w3', value: { model: 'local:demo', models: [], demoNotice: 'd' } }); // an unknown request: ignored
    host.post({ type: 'settings', model: 'local:demo', models: [], demoNotice: 'd' }); // a new engine session
    assert.deepEqual(prepared(), ['local:demo']);
    host.post({ type: 'settings', model: 'openai:gpt-4o-mini', models: [], demoNotice: null }); // the model changed
    assert.deepEqual(prepared(), ['openai:gpt-4o-mini']);
  });

  it('ArrowUp walks the engine\'s prompt history (asked at start and per engine session) plus what this view sends; the stash comes back', () => {
    const { host, c, model } = setup();
    const asked = host.take().filter((x) => x.type === 'listPromptHistory');
    assert.equal(asked.length, 1, 'asked for the history at start');
    const at = (draft: string) => ({ draft, selectionStart: draft.length, selectionEnd: draft.length });
    host.post({ type: 'result', inReplyTo: (asked[0] as { requestId: string }).requestId, value: { prompts: [
      { prompt: 'older @notes.md', threadId: 'thread:a', at: 1 }, { prompt: 'hello', threadId: T, at: 2 },
    ] } });
    model.draft = 'half typed';
    assert.equal(c.recallPrompt('up', at(model.draft))?.draft, 'hello');
    assert.equal(model.draft, 'hello');
    assert.equal(c.recallPrompt('up', at(model.draft))?.draft, 'older @notes.md');
    assert.equal(c.recallPrompt('up', at(model.draft)), null, 'nothing older');
    assert.equal(c.recallPrompt('down', at(model.draft))?.draft, 'hello');
    const back = c.recallPrompt('down', at(model.draft));
    assert.deepEqual([back?.draft, back?.caret, model.draft], ['half typed', 10, 'half typed'], 'the stashed draft, caret at its end');
    model.draft = 'next one';
    assert.equal(c.sendPrompt(), true);
    assert.equal(model.draft, '');
    assert.equal(c.recallPrompt('up', at(''))?.draft, 'next one', 'sent from here, before the engine lists it');
    assert.equal(c.recallPrompt('down', at('next one'))?.draft, '', 'ArrowDown past the newest gives back the empty draft');
    assert.equal(c.recallPrompt('down', at('')), null, 'not walking: ArrowDown is the text box\'s');
    host.take();
    host.post({ type: 'settings', model: 'm', models: [], demoNotice: null }); // a new engine session: asked again
    assert.ok(host.take().some((x) => x.type === 'listPromptHistory'));
  });

  it('waiting approvals survive a reload; one whose tool completed meanwhile is dropped on replay', () => {
    const first = setup();
    first.c.openThread(T);
    first.host.post({ type: 'events', threadId: T, events: startEvents() });
    first.host.post({ type: 'approvalRequested', callId: 'item:a', threadId: T, runId: R, toolName: 'write_file', argumentsJson: '{}', toolClass: 'write' });
    first.host.post({ type: 'approvalRequested', callId: 'item:b', threadId: T, runId: R, toolName: 'run_command', argumentsJson: '{}', toolClass: 'execute' });
    const { host, model } = setup(first.host.state);
    assert.deepEqual(model.approvals.map((a) => [a.callId, a.responding]), [['item:a', false], ['item:b', false]]);
    host.post({ type: 'events', threadId: T, events: [
      ev({ type: 'item.started', runId: R, itemId: 'item:a', ordinal: 0, kind: 'toolCall', toolName: 'write_file', arguments: '{}' }),
      ev({ type: 'item.completed', runId: R, itemId: 'item:a', status: 'interrupted', content: 'cancelled', isError: true }),
    ] });
    assert.deepEqual(model.approvals.map((a) => a.callId), ['item:b']);
    host.post({ type: 'approvalSettled', callId: 'item:b', threadId: T, runId: R, decision: 'denied' });
    assert.deepEqual(model.approvals, []);
  });
});
