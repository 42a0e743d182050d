/**
 * RunRegistry: the one owner of runs. Every run — a prompt in a thread or one variant of a
 * variants run — is started, tracked, cancelled and counted here, so Stop, "Stop all", engine
 * shutdown and the "nothing is running" check see all of them.
 *
 * A thread has at most one active run. The check is made by the store inside the transaction
 * that starts the run (`VoxStore.beginRun`, IMMEDIATE), against the runs table, so it holds
 * across every engine on the same database file: in this process (two sessions, two engines)
 * and in others (the CLI next to VS Code). A running row counts as live when its owner is this
 * process and the run is in `LIVE_RUN_IDS`, or its owner is another process that is alive; a row
 * left behind by a dead process is closed as interrupted on the spot. A process is its pid and its
 * start time (platform/process-identity.ts): a pid reused by another program does not hold the thread. A second prompt gets a
 * typed `run/threadBusy` naming the run that holds the thread; nothing of it is written.
 */
import { allocate, deriveRunFromThreadOrdinal } from '../ids/ids';
import type { ResolvedModel } from '../providers/types';
import type { RunRow, VoxStore } from '../store/store';
import { isOwnerAlive, selfStartMs } from '../platform/process-identity';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { AgentRunner, TurnResult } from '../agent/runner';
import type { HookBus } from '../agent/hooks';
import { RunError } from './errors';

/** Characters of the first prompt used as a new thread's title. */
export const THREAD_TITLE_PROMPT_CHARS = 80;

/** Runs executing in this process, across every engine in it (the store asks, see the header). */
const LIVE_RUN_IDS = new Set<string>();

export type RunKind = 'thread' | 'variant';

export interface StartRunRequest {
  /** The thread to prompt; absent starts a new thread. */
  threadId?: string;
  /** Title of a new thread (default: the prompt's start). */
  title?: string;
  prompt: string;
  /** The resolved model (the caller resolves refs, so a bad ref fails before anything is written). */
  model: ResolvedModel;
  parentMessageId?: string;
  /** Where the run's tools act; default the engine's workspace. */
  workspaceRoot?: string;
  kind?: RunKind;
  /** Handlers for this run only, installed on a child of the engine's hook bus. */
  hooks?: (bus: HookBus) => void;
  /** The queued entry this run takes (./queue.ts); `run/queueEntryGone` when it is no longer queued. */
  fromQueue?: string;
}

export interface RunHandle {
  threadId: string;
  runId: string;
  /** Resolves when the run (turn-end hooks included) is over; never rejects. */
  done: Promise<TurnResult>;
  cancel(): void;
}

export interface ActiveRunInfo { runId: string; threadId: string; kind: RunKind; model: string; workspaceRoot: string; startedAt: number }

interface Live extends ActiveRunInfo { ac: AbortController; done: Promise<TurnResult> }

export interface RunRegistryDeps {
  store: VoxStore;
  streams: TurnStreamRegistry;
  runner: AgentRunner;
  hooks: HookBus;
  workspaceRoot: string;
  now?: () => number;
}

export class RunRegistry {
  private readonly live = new Map<string, Live>();
  private readonly listeners = new Set<() => void>();
  private readonly endListeners = new Set<(threadId: string) => void>();
  private closing = false;

  constructor(private readonly deps: RunRegistryDeps) {}

  /** Starts a run; `run/threadBusy` when the thread already runs, `store/notFound` for an unknown thread. */
  start(req: StartRunRequest): RunHandle {
    if (this.closing) throw new RunError('shuttingDown', 'the engine is shutting down; the prompt was not started');
    const { store, streams } = this.deps;
    const outcome = store.beginRun({
      threadId: req.threadId ?? null,
      newThreadId: allocate('thread'),
      title: req.title ?? Array.from(req.prompt).slice(0, THREAD_TITLE_PROMPT_CHARS).join(''),
      prompt: req.prompt,
      userMessageId: allocate('msg'),
      ...(req.parentMessageId ? { parentMessageId: req.parentMessageId } : {}),
      provider: req.model.provider.id,
      model: req.model.label,
      ownerPid: process.pid,
      ownerStartedAt: selfStartMs(),
      runIdFor: deriveRunFromThreadOrdinal,
      isLive: (r) => isLiveRun(r),
      ...(req.fromQueue !== undefined ? { fromQueue: req.fromQueue } : {}),
    });
    if (!outcome.started) {
      if ('busy' in outcome) throw busyError(outcome.busy);
      throw new RunError('queueEntryGone', 'that queued prompt is no longer queued (cancelled, steered into the running turn, or started elsewhere)', { threadId: req.threadId ?? '' });
    }
    const { threadId, runId, userMessageId } = outcome;
    streams.open(runId);
    const ac = new AbortController();
    const workspaceRoot = req.workspaceRoot ?? this.deps.workspaceRoot;
    const hooks = this.deps.hooks.with();
    req.hooks?.(hooks);
    LIVE_RUN_IDS.add(runId);
    const done = this.deps.runner
      .run({ threadId, runId, userMessageId, model: req.model, workspaceRoot, hooks, signal: ac.signal, takeSteers: () => store.takeSteers(threadId, runId) })
      .finally(() => {
        LIVE_RUN_IDS.delete(runId);
        this.live.delete(runId);
        this.changed();
        for (const l of [...this.endListeners]) l(threadId);
      });
    this.live.set(runId, {
      runId, threadId, kind: req.kind ?? 'thread', model: req.model.label, workspaceRoot, startedAt: (this.deps.now ?? Date.now)(), ac, done,
    });
    this.changed();
    return { threadId, runId, done, cancel: () => ac.abort() };
  }

  /** Cancels one run; false when it is not running here. */
  cancel(runId: string): boolean {
    const r = this.live.get(runId);
    r?.ac.abort();
    return !!r;
  }

  /** Cancels every run of this engine (threads and variants); returns how many. */
  cancelAll(): number {
    for (const r of this.live.values()) r.ac.abort();
    return this.live.size;
  }

  active(threadId?: string): ActiveRunInfo[] {
    return [...this.live.values()]
      .filter((r) => threadId === undefined || r.threadId === threadId)
      .map(({ runId, threadId: t, kind, model, workspaceRoot, startedAt }) => ({ runId, threadId: t, kind, model, workspaceRoot, startedAt }));
  }

  activeCount(): number {
    return this.live.size;
  }

  /** Called with the thread after one of its runs has ended (the queue starts its next prompt). */
  onRunEnded(listener: (threadId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => void this.endListeners.delete(listener);
  }

  /** Whether the engine still takes new runs. */
  get accepting(): boolean {
    return !this.closing;
  }

  /** Called after a run starts or ends. */
  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Refuses new runs, cancels the active ones and waits until they have ended. */
  async dispose(): Promise<void> {
    this.closing = true;
    this.cancelAll();
    await Promise.all([...this.live.values()].map((r) => r.done));
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch {
        this.listeners.delete(l);
      }
    }
  }
}

/** Whether a row the store lists as running is really running (see the file header). */
export function isLiveRun(r: RunRow): boolean {
  if (r.ownerPid === null) return false;
  if (r.ownerPid === process.pid && (r.ownerStartedAt === null || r.ownerStartedAt === selfStartMs())) return LIVE_RUN_IDS.has(r.id);
  return isOwnerAlive(r.ownerPid, r.ownerStartedAt);
}

function busyError(run: RunRow): RunError {
  const where = run.ownerPid === process.pid ? 'in this window' : `in another Vox process (pid ${run.ownerPid})`;
  return new RunError('threadBusy', `this thread is already running a turn (${run.model}, started ${new Date(run.startedAt).toISOString()} ${where}); wait for it to finish or stop it first`, {
    runId: run.id,
    threadId: run.threadId,
  });
}
