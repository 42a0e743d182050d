/**
 * When the chat saves its state with `vscode.setState` (./persistence.ts says what is saved):
 * at once, deferred to a task of its own (a thread just replayed, not in the frame that shows it),
 * or — while a run streams — not until the run ends (`dirty`). Also reads the saved state back at
 * start. The controller calls it; nothing here talks to the engine.
 */
import { decodeState, encodeState } from './persistence';
import { activeRun, type ThreadState } from './thread-state';
import type { AppModel, Logger } from './app-model';
import type { HostBridge } from './host-bridge';

export class StateSaver {
  private dirty = false;
  /** Counts saves, so a deferred save (`soon`) that another overtook is skipped. */
  private generation = 0;

  constructor(private readonly model: AppModel, private readonly bridge: HostBridge, private readonly log: Logger,
    /** The thread list, saved beside the thread so a re-created webview shows it at once (./thread-list-loader.ts). */
    private readonly threadList?: { savedJson(): string | null; restore(json: string | null): void }) {}

  /** Saves now, or — while the open thread's run streams — once it ends. */
  schedule(): void {
    const thread = this.model.thread;
    if (thread && activeRun(thread)) this.dirty = true; // written once the run ends
    else this.now();
  }

  /** Marks the state unsaved without writing: the next save (or the flush on hide / dispose) carries it. */
  defer(): void {
    this.dirty = true;
  }

  /** Saves `raw` (a plain thread state just replayed, ./bulk-replay.ts) in a task of its own, unless a newer save came first. */
  soon(raw: ThreadState): void {
    const generation = ++this.generation;
    setTimeout(() => {
      if (generation === this.generation && this.model.thread?.threadId === raw.threadId) this.now(raw);
    }, 0);
  }

  /**
   * Saves {threadId, draft and every thread's drafts, thread state with its seqs, waiting approvals} now. `raw`: the plain
   * object the open thread was just replayed into (faster to encode than its proxy).
   */
  now(raw?: ThreadState): void {
    this.dirty = false;
    this.generation++;
    try {
      this.bridge.setState(encodeState(raw ?? this.model.thread, this.model.draft, this.model.approvals, this.threadList?.savedJson() ?? null, this.model.drafts ?? {}));
    } catch (e) {
      this.log.warn(`could not save the webview state: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** True while a save was skipped because a run is streaming. */
  get unsaved(): boolean {
    return this.dirty;
  }

  /** Puts the saved draft, approvals and thread (if any) into the model. */
  restore(): void {
    const saved = decodeState(this.bridge.getState(), (w) => this.log.warn(w));
    if (!saved) return;
    this.model.draft = saved.draft;
    this.model.drafts = saved.drafts;
    this.model.approvals = saved.approvals.map((a) => ({ ...a, responding: false }));
    this.model.thread = saved.thread;
    this.threadList?.restore(saved.threadListJson);
  }
}
