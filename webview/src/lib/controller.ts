/**
 * Controller: the webview's client of the engine. It decodes every host message through
 * `updateEnvelope` (engine updates and the extension's `hostCommand`s), folds them into an
 * AppModel, and turns UI intents into protocol commands sent through the HostBridge (the
 * one-command intents live in ./controller-intents.ts, which this class extends).
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
import { SearchRequests } from './thread-search';
import { updateEnvelope, type EngineUpdate } from '../../../src/protocol/updates';
import { COMMANDS, MAX_PROMPT_CHARS, type ClientCommand, type CommandResult } from '../../../src/protocol/commands/index';
import { MAX_NOTICES, applyModelResult, consoleLogger, type AppModel, type Logger } from './app-model';
import type { HostBridge } from './host-bridge';
import { RequestTracker, type Pending } from './requests';
import {
  activeRun, applyChunks, applyEvents, applyTurnEnded, createThreadState, markStreamUnavailable, runsNeedingStream, type EventsResult, type ThreadState,
} from './thread-state';
import { StateSaver } from './state-saver';
import { ReplayIntake } from './bulk-replay';
import { applyHostCommand } from './host-commands';
import { ContextController } from './context-state';
import { takeStoredPrompt } from './rules-state';
import { splitContext } from '../../../src/protocol/mentions';
import { PromptRecall, type ArrowInput, type RecallStep } from './prompt-recall';
import { toSettings } from './settings-state';
import { ControllerIntents } from './controller-intents';
import { TreeIntents } from './tree-intents';
import { McpAppIntents } from './mcp-app-intents';
import { ThreadListLoader } from './thread-list-loader';
import { CompactionIntents } from './compaction-intents';
import { McpController, createMcpModel } from './mcp-state';

export { PERSIST_VERSION, MAX_PERSISTED_THREAD_CHARS, type PersistedState } from './persistence';
export { MAX_TRACKED_REQUESTS } from './requests';
export { MAX_NOTICES, approvalsOf, createModel, type AppModel, type ApprovalView, type Logger, type Notice, type SettingsView, type ThreadSummary } from './app-model';

/** What Continue sends after a reply that stopped at the output-token limit. */
export const CONTINUE_PROMPT = 'Your last reply stopped at the output-token limit. Continue exactly where you stopped, without repeating what you already wrote.';

export class Controller extends ControllerIntents {
  private readonly requests = new RequestTracker();
  private readonly subscribedTurns = new Set<string>();
  private nextNotice = 1;
  /** ArrowUp/ArrowDown prompt recall (./prompt-recall.ts) over the engine's prompt history. */
  readonly recall = new PromptRecall();
  /** `searchThreads` for the search box (./thread-search.ts). */
  readonly search = new SearchRequests((c) => this.send(c));
  private revealSeq = 0;
  /** The model last sent to `prepareModel`. */
  private preparedModel: string | null = null;
  /** When the state is saved with vscode.setState (./state-saver.ts). */
  private readonly saver: StateSaver;
  /** The open thread's first replay while it is applied in slices (./bulk-replay.ts). */
  private readonly replay = new ReplayIntake((w) => this.log.warn(w), (state, res) => {
    this.model.thread = state;
    this.afterEvents(state, res, true);
  });
  private stopListening: (() => void) | null = null;
  /** @-mentions, chips and the context meter of the composer (./context-state.ts). */
  readonly context: ContextController;
  /** Regenerate, retry, edit, switch branch, compare (./tree-intents.ts). */
  readonly tree: TreeIntents;
  /** The thread list in chunks, merged by id, kept across reopening (./thread-list-loader.ts). */
  readonly threadList: ThreadListLoader;
  readonly compaction: CompactionIntents;
  /** MCP prompts as slash commands, resources in the @-popup (./mcp-state.ts). */
  readonly mcp: McpController;
  /** MCP App states and "Fork from here" (./mcp-app-intents.ts). */
  readonly mcpApps: McpAppIntents;

  constructor(model: AppModel, bridge: HostBridge, private readonly log: Logger = consoleLogger) {
    super(model, bridge);
    this.threadList = ThreadListLoader.withTimers(model, (c, extra) => void this.send(c, extra));
    this.saver = new StateSaver(model, bridge, log, this.threadList);
    this.tree = new TreeIntents({ model, send: (c) => this.send(c), hostAction: (a, args) => this.bridge.sendHostAction(a, args) });
    this.compaction = new CompactionIntents({ model, send: (c) => this.send(c), notify: (code, message) => this.notify(code, message) });
    model.mcp ??= createMcpModel(); // read back below: through the $state proxy, so the slash menu is reactive
    this.mcp = new McpController(model.mcp, { send: (c) => this.send(c), draft: () => this.model.draft, setDraft: (t) => (this.model.draft = t), notify: (code, message) => this.notify(code, message) });
    this.mcpApps = new McpAppIntents({ send: (c) => this.send(c), openThread: (id) => { this.loadThreads(); this.openThread(id); } });
    this.context = new ContextController(model.context, {
      send: (c) => this.send(c),
      threadId: () => this.model.thread?.threadId ?? null,
      draft: () => this.model.draft,
      setDraft: (t) => (this.model.draft = t),
      schedule: (fn, ms) => {
        const h = setTimeout(fn, ms);
        return { cancel: () => clearTimeout(h) };
      },
    });
  }

  start(): void {
    this.stopListening = this.bridge.onMessage((data) => this.handleMessage(data));
    this.saver.restore();
    this.send({ type: 'getSettings' });
    this.threadList.start();
    this.resubscribe();
    this.loadPromptHistory();
    this.mcp.start();
  }

  dispose(): void {
    this.persistNow();
    this.threadList.dispose();
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
    const m = this.model;
    switch (u.type) {
      case 'hostCommand':
        applyHostCommand(this, u);
        return;
      case 'settings':
        // Unsolicited: a new engine session (its subscriptions are ours to redo), or the settings changed.
        m.settings = toSettings(u);
        this.prepareModel(u.model, true);
        if (m.permissions !== undefined) this.loadPermissions(); // the permission settings may have changed too
        this.threadList.reconnected(); // maybe a new session: the old one's list requests are lost
        this.resubscribe();
        this.loadPromptHistory(); // a new session may be a new engine (another window's prompts since)
        this.mcp.start();
        return;
      case 'result':
        this.onResult(u.inReplyTo, u.value);
        return;
      case 'threadChanged':
      case 'variants':
        return;
      case 'mcpServers':
        this.mcp.onServers(u);
        return;
      case 'events':
        this.onEvents(u.threadId, u.events, u.more === true);
        return;
      case 'turnChunks':
        if (m.thread && !applyChunks(m.thread, u.turnId, u.chunks, (w) => this.log.warn(w))) {
          this.log.warn(`ignoring chunks of turn ${u.turnId}, which is not in the open thread`);
        }
        return;
      case 'turnEnded':
        this.subscribedTurns.delete(u.turnId);
        // Saved once per turn, by the run.ended event (flushed on hide or dispose if it never comes).
        if (m.thread && m.thread.runs[u.turnId]?.status === 'running' && applyTurnEnded(m.thread, u.turnId, u.status, u.error)) this.saver.defer();
        else if (m.thread) applyTurnEnded(m.thread, u.turnId, u.status, u.error); // after run.ended: nothing a resume needs
        return;
      case 'approvalRequested':
        if (!m.approvals.some((a) => a.callId === u.callId)) {
          m.approvals.push({ callId: u.callId, threadId: u.threadId, runId: u.runId, toolName: u.toolName, argumentsJson: u.argumentsJson, toolClass: u.toolClass, responding: false });
          this.persistNow(); // a reload must not lose it (see PersistedState.approvals)
        }
        return;
      case 'approvalSettled':
        this.dropApproval(u.callId);
        return;
      case 'error':
        this.onError(u);
        return;
    }
  }

  private onEvents(threadId: string | null, events: unknown[], more: boolean): void {
    const thread = this.model.thread;
    if (!thread || threadId !== thread.threadId) return; // a thread we left; its unsubscribe is on the way
    if (this.replay.take(thread, events, more)) return; // a long thread's first replay, or behind it (./bulk-replay.ts)
    this.afterEvents(thread, applyEvents(thread, events, (w) => this.log.warn(w)), false);
  }

  /** Follow-up of applied events; `replayed`: `thread` is the plain state a replay just swapped in. */
  private afterEvents(thread: ThreadState, res: EventsResult, replayed: boolean): void {
    for (const id of res.completedItems) this.dropApproval(id);
    const sending = this.model.sending;
    if (sending && res.userMessages.length > 0) {
      const contents = thread.entries.flatMap((e) => (e.kind === 'message' && res.userMessages.includes(e.messageId) ? [splitContext(e.content).prompt] : []));
      if (contents.includes(sending.prompt)) this.model.sending = null;
    }
    if (thread.deleted) {
      this.leaveThread();
      this.model.thread = null;
      this.loadThreads();
      this.persistNow();
      return;
    }
    this.ensureTurnSubscriptions();
    if (res.endedRuns.length > 0) {
      this.context.refresh(); // the history grew: the meter counts it
      this.loadThreads(); // updatedAt moved
    }
    if (replayed) this.saver.soon(thread); // not in the frame that shows the thread
    else if (res.endedRuns.length > 0) this.persistNow();
    else if (res.applied > 0) this.saver.schedule();
  }

  /** A command's answer, decoded by its result validator; unknown or forgotten requests are ignored. */
  private onResult(inReplyTo: string | undefined, raw: unknown): void {
    this.compaction.settled(inReplyTo);
    const req = this.take(inReplyTo);
    if (!req) return;
    let value: unknown;
    try {
      value = COMMANDS[req.type].result(raw);
    } catch (e) {
      this.log.warn(`ignoring a broken answer to ${req.type}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    if (this.context.onResult(inReplyTo, req.type, value)) return;
    if (this.mcp.onResult(inReplyTo, req.type, value)) return;
    if (this.mcpApps.onResult(inReplyTo, req.type, value)) return;
    if (req.type === 'listThreads') return this.threadList.onPage(req.walk, value as CommandResult<'listThreads'>);
    if (req.type === 'listChildThreads' && req.parentId) this.threadList.childrenSettled(req.parentId);
    if (this.search.onResult(inReplyTo, req.type, value)) return;
    const m = this.model;
    if (applyModelResult(m, req, value)) return;
    if (req.type === 'getSettings' || req.type === 'setModel' || req.type === 'setUiPreference') {
      const st = toSettings(value as CommandResult<'getSettings'>);
      m.settings = st;
      this.prepareModel(st.model, false);
    } else if (req.type === 'sendPrompt') {
      const started = value as CommandResult<'sendPrompt'>;
      this.context.noteSent(started.rules, started.warnings);
      // Rule tokens stripped: the message being sent gives way to the stored one (maybe already here).
      if (started.prompt !== undefined && m.sending?.requestId === inReplyTo) takeStoredPrompt(m, started.prompt);
      this.loadThreads();
      if (!m.thread) this.openThread(started.threadId);
      else if (m.thread.threadId !== started.threadId) m.sending = null;
      // Queued: it shows in the queue strip (from its event), not as a message being sent.
      if (started.queued && m.sending?.prompt === req.prompt) m.sending = null;
    } else if (req.type === 'listPromptHistory') {
      this.recall.setHistory((value as CommandResult<'listPromptHistory'>).prompts.map((p) => p.prompt));
    } else if (req.type === 'respondToApproval' && req.callId) {
      this.dropApproval(req.callId);
    } else if (req.type === 'renameThread' || req.type === 'deleteThread') {
      this.loadThreads();
    }
  }

  private onError(u: Extract<EngineUpdate, { type: 'error' }>): void {
    this.compaction.settled(u.inReplyTo);
    const req = this.take(u.inReplyTo);
    if (req && this.context.onError(u.inReplyTo, req.type)) return; // the meter hides; no notice for a background estimate
    if (req && this.mcp.onError(u.inReplyTo, req.type, u.message)) return;
    if (req?.type === 'listThreads') this.threadList.onError(req.walk);
    if (req?.type === 'listChildThreads' && req.parentId) this.threadList.childrenSettled(req.parentId);
    if (req && this.search.onError(u.inReplyTo, req.type, u.message)) return; // shown in the search box
    if (req && this.mcpApps.onError(u.inReplyTo, req.type, u.message)) return; // the app's frame gets it
    const thread = this.model.thread;
    if (req?.type === 'subscribeTurn' && req.turnId) {
      // The turn left the engine's memory (or never streamed): its events still tell the story.
      this.subscribedTurns.delete(req.turnId);
      if (thread) markStreamUnavailable(thread, req.turnId);
      this.log.warn(`turn ${req.turnId} cannot stream (${u.code}: ${u.message}); showing its events`);
      return;
    }
    if (req?.type === 'subscribeThread' && thread && req.threadId === thread.threadId) {
      this.leaveThread();
      this.model.thread = null;
      this.persistNow();
    }
    if (req?.type === 'sendPrompt' && this.model.sending?.requestId === u.inReplyTo) {
      if (this.model.draft.length === 0 && req.prompt) this.model.draft = req.prompt; // give the text back
      this.context.restoreAfterFailedSend(); // and its mentions
      this.model.sending = null;
    }
    if (req?.type === 'respondToApproval' && req.callId) this.dropApproval(req.callId);
    this.notify(u.code, u.message);
  }

  // ---- intents from the UI --------------------------------------------------------------------

  openThread(threadId: string): void {
    if (this.model.thread?.threadId === threadId) return;
    this.leaveThread();
    const state = createThreadState(threadId);
    state.title = this.model.threads.find((t) => t.id === threadId)?.title ?? null;
    this.model.thread = state;
    this.resubscribe();
    this.persistNow();
    this.context.refresh();
  }

  /** Asks the thread's list to scroll to `messageId` and highlight it once it is loaded (../components/MessageReveal.svelte). */
  requestReveal(threadId: string, messageId: string): void {
    this.model.reveal = { threadId, messageId, n: ++this.revealSeq };
  }

  newThread(): void {
    this.leaveThread();
    this.model.thread = null;
    this.model.focusRequests++;
    this.persistNow();
    this.context.refresh();
  }

  /** Reloads the first page of the thread list (the rows beyond it stay; ./thread-list-loader.ts). */
  loadThreads(): void {
    this.threadList.refresh();
  }

  /** Loads the subagent threads under `threadId` (the thread list shows them nested), unless that load is on its way. */
  loadChildThreads(threadId: string): void {
    this.threadList.loadChildren(threadId);
  }

  /** Loads the next chunk of the thread list now, if there is one. */
  loadMoreThreads(): boolean {
    return this.threadList.more();
  }

  /**
   * Sends the draft as a prompt. While the thread runs it is queued for after the turn — or, with
   * `steer`, handed to the running turn at its next step (SPEC 2.4). False when there is nothing
   * to send or a send is still on its way.
   */
  sendPrompt(opts: { steer?: boolean; /** Send although the meter says it does not fit (the user confirmed). */ force?: boolean } = {}): boolean {
    const prompt = this.model.draft;
    if (prompt.trim().length === 0 || this.model.sending) return false;
    if (this.compaction.slash(prompt)) return true; // `/compact` runs the command instead of being sent
    if (prompt.length > MAX_PROMPT_CHARS) {
      this.notify('promptTooLong', `The prompt has ${prompt.length} characters; the limit is ${MAX_PROMPT_CHARS}.`);
      return false;
    }
    if (!opts.force && !this.context.checkFits()) return false; // the composer asks to confirm
    let threadId = this.model.thread?.threadId ?? null;
    const running = !!this.model.thread && !!activeRun(this.model.thread);
    const mentions = this.context.mentions();
    if (threadId === null && this.model.nextWorkMode === 'plan') threadId = this.createPlanThread(prompt);
    const requestId = this.send({ type: 'sendPrompt', threadId, prompt, ifBusy: 'queue', ...(opts.steer && running ? { steer: true } : {}), ...(mentions.length > 0 ? { mentions } : {}) }, { prompt });
    this.model.sending = { requestId, prompt };
    this.model.draft = '';
    this.context.clearAfterSend();
    this.recall.sent(prompt);
    return true;
  }

  /** Continue after a reply that stopped at the output-token limit: a prompt asking the model to go on. */
  continueReply(): boolean {
    const thread = this.model.thread;
    if (!thread || this.model.sending) return false;
    const prompt = CONTINUE_PROMPT;
    const requestId = this.send({ type: 'sendPrompt', threadId: thread.threadId, prompt, ifBusy: 'queue', history: false }, { prompt });
    this.model.sending = { requestId, prompt };
    return true;
  }

  /** ArrowUp/ArrowDown in the composer (./prompt-recall.ts): the new draft and caret, or null when the key is the text box's. */
  recallPrompt(direction: 'up' | 'down', input: ArrowInput): RecallStep | null {
    const step = this.recall.key(direction, input);
    if (step) this.model.draft = step.draft;
    return step;
  }

  /** Asks the engine for the prompt history (at start and when a new engine session connects). */
  loadPromptHistory(): void {
    this.recall.requested();
    this.send({ type: 'listPromptHistory' });
  }

  dismissNotice(id: number): void {
    this.model.notices = this.model.notices.filter((n) => n.id !== id);
  }

  /** The webview was hidden or shown (document `visibilitychange`). */
  onVisibilityChange(visible: boolean): void {
    if (visible) this.resubscribe();
    else this.persistNow();
  }

  // ---- subscriptions and persistence ----------------------------------------------------------

  /** Subscribes the open thread (and its streaming turns) from the last seqs the state has seen. */
  resubscribe(): void {
    const thread = this.model.thread;
    if (!thread) return;
    this.subscribedTurns.clear();
    this.send({ type: 'subscribeThread', threadId: thread.threadId, afterSeq: thread.lastEventSeq }, { threadId: thread.threadId });
    this.ensureTurnSubscriptions();
  }

  private ensureTurnSubscriptions(): void {
    const thread = this.model.thread;
    if (!thread) return;
    for (const run of runsNeedingStream(thread)) {
      if (this.subscribedTurns.has(run.runId)) continue;
      this.subscribedTurns.add(run.runId);
      this.send({ type: 'subscribeTurn', turnId: run.runId, afterSeq: run.lastChunkSeq }, { turnId: run.runId });
    }
  }

  private leaveThread(): void {
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

  /**
   * Asks the engine to load `model` ahead of the first prompt (a local model takes seconds to
   * load, a prompt after that milliseconds). Sent when an engine session appears (`fresh`) and when
   * the model changes; its answer needs nothing from us (a failure shows on the first prompt).
   */
  private prepareModel(model: string, fresh: boolean): void {
    if (!fresh && model === this.preparedModel) return;
    this.preparedModel = model;
    this.send({ type: 'prepareModel', model });
  }

  // ---- plumbing -------------------------------------------------------------------------------

  protected send(command: ClientCommand, extra: Omit<Pending, 'type'> = {}): string {
    const requestId = this.requests.track(command.type, extra);
    this.bridge.send({ ...command, requestId });
    return requestId;
  }

  private take(requestId: string | undefined): Pending | undefined {
    return this.requests.take(requestId);
  }

  private dropApproval(callId: string): void {
    const i = this.model.approvals.findIndex((a) => a.callId === callId);
    if (i >= 0) this.model.approvals.splice(i, 1);
  }

  private notify(code: string, message: string): void {
    this.model.notices.push({ id: this.nextNotice++, code, message });
    if (this.model.notices.length > MAX_NOTICES) this.model.notices.splice(0, this.model.notices.length - MAX_NOTICES);
  }
}
