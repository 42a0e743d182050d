/**
 * Persistence write suppression (SPEC §5.4): the webview's `vscode.setState`
 * writes, counted on a fake HostBridge, while a whole streamed turn arrives through the real
 * Controller — text chunks, a tool call with its events, reasoning — are skipped, and exactly one
 * write happens when the turn ends, whichever of `turnEnded` (the stream) and `run.ended` (the
 * event) comes first; hiding the panel and disposing mid-stream flush the skipped state once.
 */
import { strict as assert } from 'node:assert';
import { Controller, createModel, type PersistedState } from '../../webview/src/lib/controller';
import type { HostAction, HostBridge } from '../../webview/src/lib/host-bridge';
import type { ClientCommand } from '../../src/protocol/commands';

class CountingHost implements HostBridge {
  state: unknown = undefined;
  saves = 0;
  private listener: ((d: unknown) => void) | null = null;
  send(_c: ClientCommand): void {}
  sendHostAction(_a: HostAction): void {}
  onMessage(l: (d: unknown) => void): () => void {
    this.listener = l;
    return () => (this.listener = null);
  }
  getState(): unknown {
    return this.state;
  }
  setState(s: unknown): void {
    this.state = structuredClone(s);
    this.saves++;
  }
  post(u: unknown): void {
    this.listener?.(structuredClone(u));
  }
}

const T = 'thread:ws';
const R = 'run:ws';
/** Chunks of the streamed turn. */
const CHUNKS = 120;

function streaming() {
  let seq = 0;
  const ev = (e: Record<string, unknown>) => ({ seq: ++seq, time: 1, threadId: T, ...e });
  const host = new CountingHost();
  const c = new Controller(createModel(), host, { warn: () => undefined, error: () => undefined });
  c.start();
  c.openThread(T);
  host.post({ type: 'events', threadId: T, events: [
    ev({ type: 'thread.created', title: 'Stream' }),
    ev({ type: 'message.added', messageId: 'u', parentId: null, role: 'user', content: 'go', runId: null, status: 'complete' }),
    ev({ type: 'run.started', runId: R, ordinal: 0, provider: 'openai', model: 'm', ownerPid: 1, userMessageId: 'u' }),
  ] });
  const before = host.saves;
  let chunkSeq = 0;
  const chunk = (kind: string, data: string) => host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: ++chunkSeq, kind, data }] });
  const streamTurn = (): void => {
    chunk('reasoning', 'thinking…');
    for (let i = 0; i < CHUNKS / 2; i++) chunk('text', `word${i} `);
    chunk('toolCall', JSON.stringify({ itemId: 'i1', callId: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }));
    host.post({ type: 'events', threadId: T, events: [
      ev({ type: 'item.started', runId: R, itemId: 'i0', ordinal: 0, kind: 'text', toolName: null, arguments: null }),
      ev({ type: 'item.completed', runId: R, itemId: 'i0', status: 'completed', content: 'x', isError: false }),
      ev({ type: 'item.started', runId: R, itemId: 'i1', ordinal: 1, kind: 'toolCall', toolName: 'read_file', arguments: '{"path":"a.ts"}' }),
    ] });
    chunk('toolResult', JSON.stringify({ itemId: 'i1', callId: 'c1', status: 'completed', content: 'export {}', changedPaths: [] }));
    host.post({ type: 'events', threadId: T, events: [ev({ type: 'item.completed', runId: R, itemId: 'i1', status: 'completed', content: 'export {}', isError: false })] });
    for (let i = CHUNKS / 2; i < CHUNKS; i++) chunk('text', `word${i} `);
  };
  const finalEvents = () => [
    ev({ type: 'message.added', messageId: 'a', parentId: 'u', role: 'assistant', content: 'done', runId: R, status: 'complete' }),
    ev({ type: 'run.ended', runId: R, status: 'completed', error: null, usage: { inputTokens: 1, outputTokens: 2 } }),
  ];
  return { host, c, before, streamTurn, finalEvents, chunks: () => chunkSeq };
}

describe('webview persistence: writes suppressed while a message streams', () => {
  it(`no setState during a ${CHUNKS}-chunk turn with a tool call; one write when it ends (events first, then turnEnded)`, () => {
    const s = streaming();
    s.streamTurn();
    assert.equal(s.host.saves, s.before, 'nothing written while streaming');
    assert.equal(s.c.hasUnsavedState, true);
    s.host.post({ type: 'events', threadId: T, events: s.finalEvents() });
    s.host.post({ type: 'turnEnded', turnId: R, status: 'completed' });
    assert.equal(s.host.saves, s.before + 1, 'exactly one write for the whole turn');
    const saved = s.host.state as PersistedState;
    const run = JSON.parse(saved.threadJson!).runs[R];
    assert.equal(run.status, 'completed');
    assert.equal(run.lastChunkSeq, s.chunks(), 'the write holds every chunk');
    assert.equal(s.c.hasUnsavedState, false);
  });

  it('one write when it ends, also when turnEnded comes before run.ended', () => {
    const s = streaming();
    s.streamTurn();
    s.host.post({ type: 'turnEnded', turnId: R, status: 'completed' });
    assert.equal(s.host.saves, s.before, 'the stream ended; the run.ended event brings the write');
    s.host.post({ type: 'events', threadId: T, events: s.finalEvents() });
    assert.equal(s.host.saves, s.before + 1);
    assert.equal(JSON.parse((s.host.state as PersistedState).threadJson!).runs[R].status, 'completed');
  });

  it('hiding the panel mid-stream flushes once; so does disposing', () => {
    const s = streaming();
    s.streamTurn();
    s.c.onVisibilityChange(false);
    assert.equal(s.host.saves, s.before + 1);
    assert.equal(s.c.hasUnsavedState, false);
    assert.equal(JSON.parse((s.host.state as PersistedState).threadJson!).runs[R].lastChunkSeq, s.chunks(), 'the flush holds what streamed so far');
    s.host.post({ type: 'turnChunks', turnId: R, chunks: [{ turnId: R, seq: s.chunks() + 1, kind: 'text', data: 'more' }] });
    assert.equal(s.host.saves, s.before + 1, 'still streaming: skipped again');
    s.c.dispose();
    assert.equal(s.host.saves, s.before + 2, 'dispose flushes');
    assert.equal(JSON.parse((s.host.state as PersistedState).threadJson!).runs[R].lastChunkSeq, s.chunks() + 1);
  });
});
