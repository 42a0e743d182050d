/**
 * ClientSession: one connected client (sidebar webview, editor tab, guest page, CLI) talking the
 * protocol of src/protocol. Commands are decoded through the forward-compatible envelope and
 * dispatched through a table of typed handlers; updates go out through `send`. Thread
 * subscriptions replay events from a seq then stream live ones; turn subscriptions replay chunks
 * and then stream new ones through a ChunkBatcher, so only new chunks travel, batched.
 */
import { EnvelopeError } from '../../protocol/wire/envelope';
import { commandEnvelope, type CommandOf, type CommandType } from '../../protocol/commands';
import type { EngineUpdate } from '../../protocol/updates';
import type { StoredEvent } from '../../protocol/events';
import type { Engine } from '../engine';
import { ChunkBatcher } from '../stream/chunk-batcher';
import { parseModelRef } from '../providers/resolve';
import { DEMO_MODEL_NOTICE, isDemoModel } from '../model/demo-model';

export interface ModelChoice { ref: string; label: string; isDemo: boolean }

export interface ClientSessionOptions {
  /** Model used when a prompt names none (e.g. the `vox.model` setting). */
  getModel: () => string;
  /** Persists a new default model (the extension writes the `vox.model` setting). */
  setModel: (ref: string) => void | Promise<void>;
  /** Models offered in the picker. */
  modelChoices: () => ModelChoice[];
}

type Handler<K extends CommandType> = (s: ClientSession, cmd: CommandOf<K>) => void;

function errorInfo(e: unknown): { code: string; message: string } {
  const err = e as { code?: unknown; message?: unknown };
  return { code: typeof err.code === 'string' ? err.code : 'internal', message: typeof err.message === 'string' ? err.message : String(e) };
}

const HANDLERS: { [K in CommandType]: Handler<K> } = {
  subscribeThread(s, cmd) {
    s.dropSubscription(`thread:${cmd.threadId}`);
    s.engine.store.getThread(cmd.threadId);
    const forThread = (evs: StoredEvent[]) => evs.filter((e) => 'threadId' in e && e.threadId === cmd.threadId);
    const sub = s.engine.store.subscribe(cmd.afterSeq, (evs) => {
      const mine = forThread(evs);
      if (mine.length > 0) s.send({ type: 'events', threadId: cmd.threadId, events: mine });
    });
    s.addSubscription(`thread:${cmd.threadId}`, sub.unsubscribe);
    s.send({ type: 'events', threadId: cmd.threadId, events: forThread(sub.replay) });
    // A client that (re)subscribes — e.g. a webview reloaded while hidden — must see approvals still waiting.
    for (const req of s.engine.gate.pending()) s.send({ type: 'approvalRequested', ...req });
  },
  subscribeTurn(s, cmd) {
    const key = `turn:${cmd.turnId}`;
    s.dropSubscription(key);
    const batcher = new ChunkBatcher({
      sendChunks: (chunks) => s.send({ type: 'turnChunks', turnId: cmd.turnId, chunks }),
      sendEnd: (end) => {
        s.send({ type: 'turnEnded', turnId: cmd.turnId, status: end.status, ...(end.error ? { error: end.error } : {}) });
        s.dropSubscription(key);
      },
    });
    const sub = s.engine.streams.subscribeOrReplay(cmd.turnId, cmd.afterSeq, batcher);
    s.addSubscription(key, () => {
      sub.unsubscribe();
      batcher.dispose();
    });
    if (sub.replay.length > 0) s.send({ type: 'turnChunks', turnId: cmd.turnId, chunks: sub.replay });
    if (sub.ended) batcher.onEnd(sub.ended);
  },
  unsubscribe(s, cmd) {
    s.dropSubscription(cmd.target);
  },
  sendPrompt(s, cmd) {
    const model = s.engine.models.resolve(cmd.model ?? s.options.getModel());
    const h = s.engine.runner.startTurn({
      prompt: cmd.prompt, model,
      ...(cmd.threadId ? { threadId: cmd.threadId } : {}),
      ...(cmd.parentMessageId ? { parentMessageId: cmd.parentMessageId } : {}),
    });
    s.send({ type: 'accepted', inReplyTo: cmd.requestId, threadId: h.threadId, runId: h.runId });
  },
  cancelRun(s, cmd) {
    s.engine.runner.cancel(cmd.runId);
    s.send({ type: 'accepted', inReplyTo: cmd.requestId, runId: cmd.runId });
  },
  respondToApproval(s, cmd) {
    s.engine.gate.respond(cmd.callId, cmd.decision);
    s.send({ type: 'accepted', inReplyTo: cmd.requestId });
  },
  getSettings(s, cmd) {
    s.sendSettings(cmd.requestId);
  },
  setModel(s, cmd) {
    parseModelRef(cmd.model);
    void Promise.resolve(s.options.setModel(cmd.model)).then(
      () => s.sendSettings(cmd.requestId),
      (e: unknown) => s.send({ type: 'error', inReplyTo: cmd.requestId, ...errorInfo(e) }),
    );
  },
  listThreads(s, cmd) {
    s.send({ type: 'threads', inReplyTo: cmd.requestId, threads: s.engine.store.listThreads() });
  },
  renameThread(s, cmd) {
    s.engine.store.append({ type: 'thread.renamed', threadId: cmd.threadId, title: cmd.title });
    s.send({ type: 'accepted', inReplyTo: cmd.requestId, threadId: cmd.threadId });
  },
  deleteThread(s, cmd) {
    s.engine.store.append({ type: 'thread.deleted', threadId: cmd.threadId });
    s.send({ type: 'accepted', inReplyTo: cmd.requestId, threadId: cmd.threadId });
  },
};

export class ClientSession {
  private readonly subscriptions = new Map<string, () => void>();
  private readonly stopApprovals: () => void;
  private readonly stopSettled: () => void;
  private closed = false;

  constructor(readonly engine: Engine, private readonly sink: (u: EngineUpdate) => void, readonly options: ClientSessionOptions) {
    this.stopApprovals = engine.gate.onPending((req) => this.send({ type: 'approvalRequested', ...req }));
    this.stopSettled = engine.gate.onSettled((s) => this.send({ type: 'approvalSettled', callId: s.callId, decision: s.decision }));
    // A client that connects while approvals wait (e.g. a reloaded webview) still sees them.
    for (const req of engine.gate.pending()) this.send({ type: 'approvalRequested', ...req });
  }

  send(u: EngineUpdate): void {
    if (!this.closed) this.sink(u);
  }

  /** Decodes and runs one command. Never throws: failures become `error` updates. */
  handle(raw: unknown): void {
    let requestId: string | undefined;
    try {
      const decoded = commandEnvelope.decode(raw);
      if (decoded.kind === 'unknown') {
        this.send({ type: 'error', code: 'unsupportedCommand', message: `this engine does not support "${decoded.type}"` });
        return;
      }
      requestId = decoded.value.requestId;
      (HANDLERS[decoded.value.type] as Handler<CommandType>)(this, decoded.value);
    } catch (e) {
      const info = e instanceof EnvelopeError ? { code: 'invalidCommand', message: e.message } : errorInfo(e);
      this.send({ type: 'error', inReplyTo: requestId, ...info });
    }
  }

  sendSettings(inReplyTo?: string): void {
    const model = this.options.getModel();
    this.send({ type: 'settings', inReplyTo, model, models: this.options.modelChoices(), demoNotice: isDemoModel(model) ? DEMO_MODEL_NOTICE : null });
  }

  addSubscription(key: string, stop: () => void): void {
    this.subscriptions.set(key, stop);
  }

  dropSubscription(key: string): void {
    const stop = this.subscriptions.get(key);
    this.subscriptions.delete(key);
    stop?.();
  }

  dispose(): void {
    for (const key of [...this.subscriptions.keys()]) this.dropSubscription(key);
    this.stopApprovals();
    this.stopSettled();
    this.closed = true;
  }
}
