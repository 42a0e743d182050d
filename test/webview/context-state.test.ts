/**
 * The composer's context logic (webview/src/lib/context-state.ts) and its place in the controller:
 * finding the `@query` at the caret, the popup's requests and keys, accepting a suggestion (the
 * draft and a chip), chips sized by the estimate (warnings kept), stale answers dropped, the
 * overflow confirmation before sending, mentions going out with sendPrompt, and Continue.
 */
import { strict as assert } from 'node:assert';
import type { ClientCommand } from '../../src/protocol/commands/index';
import type { HostAction } from '../../src/protocol/host';
import { CONTINUE_PROMPT, Controller, createModel } from '../../webview/src/lib/controller';
import { ContextController, createContextModel, formatTokens, mentionQueryAt, type ContextHost } from '../../webview/src/lib/context-state';
import type { HostBridge } from '../../webview/src/lib/host-bridge';

class ManualTimers {
  pending: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  schedule = (fn: () => void, ms: number) => {
    const t = { fn, ms, cancelled: false };
    this.pending.push(t);
    return { cancel: () => void (t.cancelled = true) };
  };
  flush(): void {
    const due = this.pending.splice(0);
    for (const t of due) if (!t.cancelled) t.fn();
  }
}

function setup() {
  const sent: Array<ClientCommand & { requestId: string }> = [];
  let draft = '';
  const timers = new ManualTimers();
  let n = 0;
  const host: ContextHost = {
    send: (c) => {
      const requestId = `r${++n}`;
      sent.push({ ...c, requestId } as ClientCommand & { requestId: string });
      return requestId;
    },
    threadId: () => 'thread:1',
    draft: () => draft,
    setDraft: (t) => (draft = t),
    schedule: timers.schedule,
  };
  const model = createContextModel();
  const ctx = new ContextController(model, host);
  return { sent, model, ctx, timers, getDraft: () => draft, setDraft: (t: string) => (draft = t) };
}

const estimate = (over: Record<string, unknown> = {}) => ({
  tokens: 1200, window: 128_000, windowSource: 'table', source: 'o200k_base', fits: true, model: 'openai:gpt-4o',
  parts: { system: 50, history: 0, tools: 900, prompt: 5, mentions: 245 }, mentions: [], ...over,
});

describe('webview: composer context (mentions, chips, meter)', () => {
  it('finds the mention being typed at the caret, not e-mail addresses', () => {
    assert.deepEqual(mentionQueryAt('look at @src/ap', 15), { start: 8, query: 'src/ap' });
    assert.deepEqual(mentionQueryAt('@', 1), { start: 0, query: '' });
    assert.equal(mentionQueryAt('mail me@example.com', 19), null);
    assert.equal(mentionQueryAt('@done and more', 14), null, 'the caret is past the mention');
    assert.deepEqual(mentionQueryAt('a @x b', 4), { start: 2, query: 'x' });
  });

  it('typing opens the popup and asks for suggestions; keys move and accept; the draft gets the mention and a chip appears', () => {
    const { sent, model, ctx, setDraft, getDraft, timers } = setup();
    ctx.activate();
    setDraft('explain @ap');
    ctx.onDraftInput('explain @ap', 11);
    const ask = sent.find((c) => c.type === 'suggestMentions')!;
    assert.deepEqual([ask.type, (ask as { query?: string }).query], ['suggestMentions', 'ap']);
    ctx.onResult(ask.requestId, 'suggestMentions', { items: [
      { kind: 'file', target: 'src/app.ts', label: 'src/app.ts', detail: 'file' },
      { kind: 'file', target: 'src/apply.ts', label: 'src/apply.ts', detail: 'file' },
    ] });
    assert.equal(model.popup?.items.length, 2);
    assert.equal(ctx.onKey('ArrowDown'), true);
    assert.equal(model.popup?.selected, 1);
    assert.equal(ctx.onKey('ArrowDown'), true);
    assert.equal(model.popup?.selected, 0, 'wraps around');
    assert.equal(ctx.onKey('Enter'), true);
    assert.equal(model.popup, null);
    assert.equal(getDraft(), 'explain @src/app.ts ');
    assert.deepEqual(model.chips.map((c) => [c.kind, c.target, c.status]), [['file', 'src/app.ts', 'pending']]);
    assert.deepEqual(ctx.mentions(), [{ kind: 'file', target: 'src/app.ts' }]);
    // The chip's size and the meter come from the next estimate.
    timers.flush();
    const est = sent.filter((c) => c.type === 'estimateContext').at(-1)!;
    assert.deepEqual((est as { mentions?: unknown }).mentions, [{ kind: 'file', target: 'src/app.ts' }]);
    ctx.onResult(est.requestId, 'estimateContext', estimate({ mentions: [{ kind: 'file', target: 'src/app.ts', label: 'src/app.ts', tokens: 245, status: 'ok', warning: null }] }));
    assert.equal(model.chips[0]!.tokens, 245);
    assert.equal(model.chips[0]!.status, 'ok');
    assert.equal(model.estimate?.tokens, 1200);
  });

  it('a chip whose file is gone takes the warning state from the estimate; chips can be removed; Escape closes the popup', () => {
    const { sent, model, ctx, timers } = setup();
    ctx.activate();
    ctx.addChip({ kind: 'file', target: 'gone.ts' }, 'gone.ts');
    assert.equal(ctx.addChip({ kind: 'file', target: 'gone.ts' }, 'gone.ts'), false, 'no duplicate chips');
    timers.flush();
    const est = sent.filter((c) => c.type === 'estimateContext').at(-1)!;
    ctx.onResult(est.requestId, 'estimateContext', estimate({ mentions: [{ kind: 'file', target: 'gone.ts', label: 'gone.ts', tokens: 0, status: 'warning', warning: 'File not found: gone.ts' }] }));
    assert.deepEqual([model.chips[0]!.status, model.chips[0]!.warning], ['warning', 'File not found: gone.ts']);
    ctx.removeChip(0);
    assert.deepEqual(model.chips, []);
    ctx.onDraftInput('@', 1);
    assert.ok(model.popup);
    assert.equal(ctx.onKey('Escape'), true);
    assert.equal(model.popup, null);
    assert.equal(ctx.onKey('ArrowDown'), false, 'keys go to the composer when the popup is closed');
  });

  it('answers older than the latest request are dropped; estimates are debounced', () => {
    const { sent, model, ctx, timers } = setup();
    ctx.activate();
    timers.flush();
    ctx.onDraftInput('a', 1);
    ctx.onDraftInput('ab', 2);
    assert.equal(timers.pending.filter((t) => !t.cancelled).length, 1, 'one pending estimate for two keystrokes');
    timers.flush();
    const ests = sent.filter((c) => c.type === 'estimateContext');
    ctx.onResult(ests.at(-1)!.requestId, 'estimateContext', estimate({ tokens: 10 }));
    ctx.onResult(ests[0]!.requestId, 'estimateContext', estimate({ tokens: 99 }));
    assert.equal(model.estimate?.tokens, 10);
  });

  it('formats token counts like the meter shows them', () => {
    assert.deepEqual([formatTokens(999), formatTokens(12_345), formatTokens(128_000), formatTokens(205_431)], ['999', '12.3k', '128k', '205k']);
  });
});

class FakeBridge implements HostBridge {
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

describe('webview controller: mentions, overflow and Continue', () => {
  it('sends the chips as mentions with the prompt and clears them', () => {
    const bridge = new FakeBridge();
    const model = createModel();
    const c = new Controller(model, bridge, { warn: () => undefined, error: () => undefined });
    c.start();
    c.context.addChip({ kind: 'git' }, 'git');
    model.draft = 'review @git';
    assert.equal(c.sendPrompt(), true);
    const send = bridge.sent.find((m) => m.type === 'sendPrompt') as { mentions?: unknown; prompt?: string };
    assert.deepEqual(send.mentions, [{ kind: 'git' }]);
    assert.equal(send.prompt, 'review @git');
    assert.deepEqual(model.context.chips, []);
    // The engine refuses it: the text and the chips come back.
    bridge.post({ type: 'error', inReplyTo: (send as { requestId?: string }).requestId, domain: 'provider', code: 'auth', message: 'No OpenAI API key is set' });
    assert.equal(model.draft, 'review @git');
    assert.deepEqual(c.context.model.chips.map((ch) => ch.kind), ['git']);
  });

  it('a prompt over the window is held with a confirmation; Send anyway sends it', () => {
    const bridge = new FakeBridge();
    const model = createModel();
    const c = new Controller(model, bridge, { warn: () => undefined, error: () => undefined });
    c.start();
    c.context.estimateNow();
    const est = bridge.sent.find((m) => m.type === 'estimateContext') as { requestId: string };
    bridge.post({ type: 'result', inReplyTo: est.requestId, value: estimate({ tokens: 205_431, window: 128_000, fits: false }) });
    model.draft = 'a huge prompt';
    assert.equal(c.sendPrompt(), false);
    assert.deepEqual(model.context.overflow, { tokens: 205_431, window: 128_000 });
    assert.equal(bridge.sent.filter((m) => m.type === 'sendPrompt').length, 0, 'nothing sent without confirmation');
    assert.equal(c.sendPrompt({ force: true }), true);
    assert.equal(bridge.sent.filter((m) => m.type === 'sendPrompt').length, 1);
  });

  it('Continue after the output limit sends the continuation prompt to the open thread', () => {
    const bridge = new FakeBridge();
    const model = createModel();
    const c = new Controller(model, bridge, { warn: () => undefined, error: () => undefined });
    c.start();
    c.openThread('thread:1');
    model.draft = 'my half-written next question';
    assert.equal(c.continueReply(), true);
    const send = bridge.sent.find((m) => m.type === 'sendPrompt') as { prompt?: string; threadId?: string };
    assert.deepEqual([send.prompt, send.threadId], [CONTINUE_PROMPT, 'thread:1']);
    assert.equal(model.draft, 'my half-written next question', 'the draft is left alone');
  });
  it('a rule suggestion inserts @name and adds no chip; the send answer keeps the rules and warnings for the composer', () => {
    const { sent, model, ctx, setDraft, getDraft } = setup();
    setDraft('fix @st');
    ctx.onDraftInput('fix @st', 7);
    const ask = sent.find((c) => c.type === 'suggestMentions')!;
    ctx.onResult(ask.requestId, 'suggestMentions', { items: [{ kind: 'rule', target: 'style', label: 'style', detail: 'rule' }] });
    assert.equal(ctx.onKey('Tab'), true);
    assert.equal(getDraft(), 'fix @style ');
    assert.deepEqual(model.chips, []);
    assert.deepEqual(ctx.mentions(), []);
    ctx.noteSent(['style'], ['@x is neither a rule nor a known mention']);
    assert.deepEqual(model.sentRules, { rules: ['style'], warnings: ['@x is neither a rule nor a known mention'] });
    ctx.noteSent([], undefined);
    assert.equal(model.sentRules, null);
  });
  it('a prompt whose rule tokens the engine stripped: the message being sent gives way to the stored one, in either order', () => {
    for (const order of ['result first', 'event first'] as const) {
      const bridge = new FakeBridge();
      const model = createModel();
      const c = new Controller(model, bridge, { warn: () => undefined, error: () => undefined });
      c.start();
      c.openThread('thread:1');
      model.draft = 'fix the header @style';
      assert.equal(c.sendPrompt(), true);
      const send = bridge.sent.find((m) => m.type === 'sendPrompt') as { requestId: string };
      assert.equal(model.sending?.prompt, 'fix the header @style');
      const result = () => bridge.post({ type: 'result', inReplyTo: send.requestId, value: { threadId: 'thread:1', runId: 'run:1', queued: null, rules: ['style'], prompt: 'fix the header' } });
      const event = () => bridge.post({ type: 'events', threadId: 'thread:1', events: [
        { seq: 1, time: 1, type: 'message.added', threadId: 'thread:1', messageId: 'msg:1', parentId: null, role: 'user', content: 'fix the header', runId: 'run:1', status: 'complete' },
      ] });
      if (order === 'result first') {
        result();
        event();
      } else {
        event();
        result();
      }
      assert.equal(model.sending, null, order);
    }
  });
});
