/**
 * Controller: the webview's client of the engine. It holds the connection — every host message
 * decoded through `updateEnvelope`, every command sent through the HostBridge with a request id
 * its answer comes back with — the AppModel and the open thread (its subscriptions, its first
 * replay in slices, the saved state), and installs the features (./features/index.ts). Each
 * feature's intents become the controller's own (`controller.sendPrompt`, `controller.tree`, …);
 * each stored event, update and command answer goes to the one feature that owns its type (an
 * update no feature owns — threadChanged, variants: for other views — is ignored).
 *
 * Plain TypeScript, no DOM and no Svelte: the app passes a `$state` proxy as the model (so every
 * mutation here is reactive), tests pass a plain object and a fake bridge.
 *
 * Resume: the current thread's state (with its last event seq and per-run last chunk seq) is saved
 * through `bridge.setState`; on start, whenever the webview becomes visible again, and when the
 * host (re)connects an engine session (an unsolicited `settings` update), the controller
 * subscribes from those seqs, and the reducer drops any overlap.
 * Saving is skipped while a run streams and done once when it ends (SPEC §5.4), and on hide.
 */
import { updateEnvelope, type EngineUpdate } from '../../../src/protocol/updates';
import { COMMANDS, type ClientCommand } from '../../../src/protocol/commands/index';
import type { HostAction } from '../../../src/protocol/host';
import { MAX_NOTICES, consoleLogger, type AppModel, type Logger } from './app-model';
import type { HostBridge } from './host-bridge';
import { RequestTracker, type Pending } from './requests';
import { applyEvents, createThreadState, runsToStream, type EventsResult, type ThreadState } from './thread-state';
import { StateSaver } from './state-saver';
import { ReplayIntake } from './bulk-replay';
import type { ErrorUpdate, Feature, FeatureContext } from './features/feature';
import { DEFAULT_REGISTRY, FEATURES, type DefaultIntents } from './features/index';
import { FeatureRegistry, installFeatures, type InstalledFeatures } from './features/registry';

export { PERSIST_VERSION, MAX_PERSISTED_THREAD_CHARS, type PersistedState } from './persistence';
export { MAX_TRACKED_REQUESTS } from './requests';
export { MAX_NOTICES, approvalsOf, createModel, type AppModel, type ApprovalView, type Logger, type Notice, type SettingsView, type ThreadSummary } from './app-model';
export { CONTINUE_PROMPT } from './features/prompts';

class ControllerCore {
  private readonly requests = new RequestTracker();
  private readonly subscribedTurns = new Set<string>();
  private nextNotice = 1;
  /** Bumped whenever the open thread is left: a follow-up of its events stops once a feature left it. */
  private openings = 0;
  /** Whose reducers apply the open thread's events. */
  private readonly registry: FeatureRegistry;
  private readonly features: InstalledFeatures;
  /** When the state is saved with vscode.setState (./state-saver.ts). */
  private readonly saver: StateSaver;
  /** The open thread's first replay while it is applied in slices (./bulk-replay.ts). */
  private readonly replay: ReplayIntake;
  private stopListening: (() => void) | null = null;

  constructor(readonly model: AppModel, private readonly bridge: HostBridge, private readonly log: Logger = consoleLogger, features: readonly Feature[] = FEATURES) {
    this.registry = features === FEATURES ? DEFAULT_REGISTRY : new FeatureRegistry(features);
    this.replay = new ReplayIntake((w) => log.warn(w), (state, res) => {
      this.model.thread = state;
      this.afterEvents(state, res, true);
    }, this.registry);
    const ctx: FeatureContext = {
      model, log,
      send: (c, extra) => this.send(c, extra),
      notify: (code, message) => this.notify(code, message),
      hostAction: (action, args) => bridge.sendHostAction(action, args),
      draftMessage: (message) => bridge.sendDraftMessage?.(message),
      use: <I extends object>(f: Feature<I>): I => this.use(f),
      openThread: (id) => this.openThread(id),
      newThread: () => this.newThread(),
      closeThread: () => {
        this.leaveThread();
        this.model.thread = null;
      },
      resubscribe: () => this.resubscribe(),
      forgetTurn: (turnId) => void this.subscribedTurns.delete(turnId),
      persistNow: () => this.persistNow(),
      deferSave: () => this.saver.defer(),
      reconnected: () => this.each((f) => f.reconnected?.()),
    };
    this.features = installFeatures(features, ctx, this);
    this.saver = new StateSaver(model, bridge, log, this.features.list.find((f) => f.saved)?.saved);
  }

  /** The intents `feature` installed (a feature's own, also those not known to the Controller type). */
  use<I extends object>(feature: Feature<I>): I {
    const intents = this.features.intents.get(feature.name);
    if (!intents) throw new Error(`feature ${feature.name} is not installed`);
    return intents as I;
  }

  start(): void {
    this.stopListening = this.bridge.onMessage((data) => this.handleMessage(data));
    this.saver.restore();
    this.each((f) => f.start?.());
  }

  dispose(): void {
    this.persistNow();
    this.each((f) => f.dispose?.());
    this.stopListening?.();
    this.stopListening = null;
  }

  // ---- incoming -------------------------------------------------------------------------------

  /** Handles one message from the host. Never throws. */
  handleMessage(data: unknown): void {
    try {
      const decoded = updateEnvelope.tryDecode(data);
      if (!decoded.ok) {
        this.log.warn(`ignoring a broken update: ${decoded.error.message}`);
        return;
      }
      if (decoded.message.kind === 'unknown') return; // a newer engine's update: not for us
      this.onUpdate(decoded.message.value);
    } catch (e) {
      this.log.error(`failed to handle an update: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  }

  private onUpdate(u: EngineUpdate): void {
    switch (u.type) {
      case 'events':
        this.onEvents(u.threadId, u.events, u.more === true);
        return;
      case 'result':
        this.onResult(u.inReplyTo, u.value);
        return;
      case 'error':
        this.onError(u);
        return;
      default:
        this.features.updates.get(u.type)?.(u as never);
    }
  }

  private onEvents(threadId: string | null, events: unknown[], more: boolean): void {
    const thread = this.model.thread;
    if (!thread || threadId !== thread.threadId) return; // a thread we left; its unsubscribe is on the way
    if (this.replay.take(thread, events, more)) return; // a long thread's first replay, or behind it (./bulk-replay.ts)
    this.afterEvents(thread, applyEvents(thread, events, (w) => this.log.warn(w), this.registry), false);
  }

  /** Follow-up of applied events; `replayed`: `thread` is the plain state a replay just swapped in. */
  private afterEvents(thread: ThreadState, res: EventsResult, replayed: boolean): void {
    const opening = this.openings;
    this.each((f) => f.eventsApplied?.(thread, res));
    if (this.openings !== opening) return; // a feature left the thread (it was deleted)
    this.ensureTurnSubscriptions(replayed ? [] : res.startedRuns);
    if (res.endedRuns.length > 0) this.each((f) => f.runsEnded?.(thread, res.endedRuns));
    if (replayed) this.saver.soon(thread); // not in the frame that shows the thread
    else if (res.endedRuns.length > 0) this.persistNow();
    else if (res.applied > 0) this.saver.schedule();
  }

  /** A command's answer, decoded by its result validator, for the feature that handles it; unknown or forgotten requests are ignored. */
  private onResult(inReplyTo: string | undefined, raw: unknown): void {
    this.each((f) => f.replied?.(inReplyTo));
    const req = this.requests.take(inReplyTo);
    if (!req) return;
    let value: unknown;
    try {
      value = COMMANDS[req.type].result(raw);
    } catch (e) {
      this.log.warn(`ignoring a broken answer to ${req.type}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    this.features.results.get(req.type)?.(value as never, req as never, inReplyTo as never);
  }

  /** A command's error: its feature's to handle, shown as a notice unless the feature says it is handled. */
  private onError(u: ErrorUpdate): void {
    this.each((f) => f.replied?.(u.inReplyTo));
    const req = this.requests.take(u.inReplyTo);
    if (req?.type === 'subscribeThread') {
      const thread = this.model.thread;
      if (thread && req.threadId === thread.threadId) {
        this.leaveThread();
        this.model.thread = null;
        this.persistNow();
      }
    } else if (req && this.features.errors.get(req.type)?.(u as never, req as never) === true) return;
    this.notify(u.code, u.message);
  }

  // ---- the open thread ------------------------------------------------------------------------

  openThread(threadId: string): void {
    if (this.model.thread?.threadId === threadId) return;
    this.leaveThread();
    const state = createThreadState(threadId);
    state.title = this.model.threads.find((t) => t.id === threadId)?.title ?? null;
    this.model.thread = state;
    this.resubscribe();
    this.persistNow();
    this.each((f) => f.threadChanged?.());
  }

  newThread(): void {
    this.leaveThread();
    this.model.thread = null;
    this.model.focusRequests++;
    this.persistNow();
    this.each((f) => f.threadChanged?.());
  }

  dismissNotice(id: number): void {
    this.model.notices = this.model.notices.filter((n) => n.id !== id);
  }

  hostAction(action: HostAction): void {
    this.bridge.sendHostAction(action);
  }

  /** The webview was hidden or shown (document `visibilitychange`). */
  onVisibilityChange(visible: boolean): void {
    if (visible) this.resubscribe();
    else this.persistNow();
  }

  /** Subscribes the open thread (and its streaming turns) from the last seqs the state has seen. */
  resubscribe(): void {
    const thread = this.model.thread;
    if (!thread) return;
    this.subscribedTurns.clear();
    this.send({ type: 'subscribeThread', threadId: thread.threadId, afterSeq: thread.lastEventSeq }, { threadId: thread.threadId });
    this.ensureTurnSubscriptions();
  }

  /** Streams the open thread's running turns, and of `justStarted` (a batch's new runs) those that ended before they were asked for. */
  private ensureTurnSubscriptions(justStarted: readonly string[] = []): void {
    const thread = this.model.thread;
    if (!thread) return;
    for (const run of runsToStream(thread, justStarted)) {
      if (this.subscribedTurns.has(run.runId)) continue;
      this.subscribedTurns.add(run.runId);
      this.send({ type: 'subscribeTurn', turnId: run.runId, afterSeq: run.lastChunkSeq }, { turnId: run.runId });
    }
  }

  private leaveThread(): void {
    this.openings++;
    this.replay.cancel();
    const thread = this.model.thread;
    if (!thread) return;
    this.send({ type: 'unsubscribe', target: `thread:${thread.threadId}` });
    for (const turnId of this.subscribedTurns) this.send({ type: 'unsubscribe', target: `turn:${turnId}` });
    this.subscribedTurns.clear();
    this.model.sending = null;
  }

  /** Saves the state now (./state-saver.ts); `raw`: a plain thread state just replayed. */
  persistNow(raw?: ThreadState): void {
    this.saver.now(raw);
  }

  /** True while a save was skipped because a run is streaming. */
  get hasUnsavedState(): boolean {
    return this.saver.unsaved;
  }

  // ---- plumbing -------------------------------------------------------------------------------

  private send(command: ClientCommand, extra: Omit<Pending, 'type'> = {}): string {
    const requestId = this.requests.track(command.type, extra);
    this.bridge.send({ ...command, requestId });
    return requestId;
  }

  private notify(code: string, message: string): void {
    this.model.notices.push({ id: this.nextNotice++, code, message });
    if (this.model.notices.length > MAX_NOTICES) this.model.notices.splice(0, this.model.notices.length - MAX_NOTICES);
  }

  /** Runs `hook` for every installed feature, in order. */
  private each(hook: (f: InstalledFeatures['list'][number]) => void): void {
    for (const f of this.features.list) hook(f);
  }
}

/** The controller with the intents of the chat's features (./features/index.ts), which it installs unless given others. */
export type Controller = ControllerCore & DefaultIntents;
export const Controller = ControllerCore as new (model: AppModel, bridge: HostBridge, log?: Logger, features?: readonly Feature[]) => Controller;
