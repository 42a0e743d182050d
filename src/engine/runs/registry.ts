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
import { quote } from '../../protocol/wire/quote';
import { redact } from '../platform/secrets';
import type { ResolvedModel } from '../providers/types';
import type { RunRow, VoxStore } from '../store/store';
import { isOwnerAlive, selfStartMs } from '../platform/process-identity';
import type { TurnStreamRegistry } from '../stream/turn-stream-registry';
import type { AgentRunner, TurnResult } from '../agent/runner';
import type { HookBus } from '../agent/hooks';
import { RunError } from './errors';
import { planRateLimitWait, type RateLimitWaits } from './rate-limit';
import type { BackgroundWork } from './background';
import type { UsageTotals } from '../../protocol/events';
import { splitContext } from '../../protocol/mentions';
import { posture as postureValidator, type Posture, type SamplingSettings } from '../../protocol/posture';
import type { HandoffChoice } from '../handoff/apply';

/** Characters of the first prompt used as a new thread's title. */
export const THREAD_TITLE_PROMPT_CHARS = 80;

/** A new thread's title from its first prompt: the start of it, cut by code point with an ellipsis. */
export function titleFromPrompt(prompt: string): string {
  // Redacted before it is cut: a secret cut in two no longer matches its rule, so redacting after would keep its start.
  return quote(redact(prompt), THREAD_TITLE_PROMPT_CHARS);
}

/** Runs executing in this process, across every engine in it (the store asks, see the header). */
const LIVE_RUN_IDS = new Set<string>();

export type RunKind = 'thread' | 'variant' | 'subagent';

export interface StartRunRequest {
  /** The thread to prompt; absent starts a new thread. */
  threadId?: string;
  /** Title of a new thread (default: the prompt's start). */
  title?: string;
  prompt: string;
  /** The resolved model (the caller resolves refs, so a bad ref fails before anything is written). */
  model: ResolvedModel;
  /** The message the prompt answers (null: a new root); default the thread's head. */
  parentMessageId?: string | null;
  /** Names of the rules attached to the prompt (recorded in the run's posture). */
  rules?: string[];
  /** Labels of the prompt's @-mentions (recorded in the run's posture). */
  mentions?: string[];
  /** Sampling settings; each one unset takes the engine's default (`RunRegistryDeps.sampling`), null the provider's. */
  sampling?: SamplingSettings;
  /** Where the run's tools act; default the engine's workspace. */
  workspaceRoot?: string;
  kind?: RunKind;
  /** Handlers for this run only, installed on a child of the engine's hook bus. */
  hooks?: (bus: HookBus) => void;
  /** The queued entry this run takes (./queue.ts); `run/queueEntryGone` when it is no longer queued. */
  fromQueue?: string;
  /** A subagent's run: its new thread is listed under this parent (./background.ts). */
  parent?: { threadId: string; runId: string };
  /** The `<user_rules>` block, given to the model with the turn's user message (not stored in it). */
  userRules?: string;
  /** The context handoff the prompt asked for (../handoff/); without it, one is built when the model changed. */
  handoff?: HandoffChoice;
  /**
   * Prepares the rules of the prompt that runs, synchronously, inside the store's transaction (a
   * queued entry: its latest edit): the stored prompt is the one it returns; its rules and block go with the turn.
   */
  prepareRules?: (prompt: string) => { prompt: string; names: string[]; block: string };
}

export interface RunHandle {
  threadId: string;
  runId: string;
  /** The prompt's user message. */
  userMessageId: string;
  /** Resolves when the run (turn-end hooks included) is over; never rejects. */
  done: Promise<TurnResult>;
  cancel(): void;
}

export interface ActiveRunInfo { runId: string; threadId: string; kind: RunKind; model: string; workspaceRoot: string; startedAt: number }

interface Live extends ActiveRunInfo { ac: AbortController; done: Promise<TurnResult>; suspended: boolean; shuttingDown: boolean }

export interface RunRegistryDeps {
  store: VoxStore;
  /** Rate-limit waits (./rate-limit.ts), on the engine's clock. */
  waits: RateLimitWaits;
  /** Jitter of the backoff (tests fix it). */
  random?: () => number;
  /** Subagents and background commands of runs (./background.ts). */
  background?: BackgroundWork;
  streams: TurnStreamRegistry;
  runner: AgentRunner;
  hooks: HookBus;
  workspaceRoot: string;
  now?: () => number;
  /** The default sampling settings (the host's `vox.sampling.*`), read when a run starts. */
  sampling?: () => SamplingSettings;
}

export class RunRegistry {
  private readonly live = new Map<string, Live>();
  private readonly listeners = new Set<() => void>();
  private readonly endListeners = new Set<(threadId: string, status: TurnResult['status']) => void>();
  private closing = false;

  constructor(private readonly deps: RunRegistryDeps) {}

  /** Starts a run; `run/threadBusy` when the thread already runs, `store/notFound` for an unknown thread. */
  start(req: StartRunRequest): RunHandle {
    if (this.closing) throw new RunError('shuttingDown', 'the engine is shutting down; the prompt was not started');
    const { store, streams } = this.deps;
    const posture = this.postureOf(req);
    // The block of a prompt prepared in the transaction (prepareRules), for the turn; its rule
    // names go into the posture before `run.started` is appended (same transaction).
    const prepared = { block: '' };
    const outcome = store.beginRun({
      threadId: req.threadId ?? null,
      newThreadId: allocate('thread'),
      title: req.title ?? titleFromPrompt(req.prompt),
      prompt: req.prompt,
      userMessageId: allocate('msg'),
      ...(req.parentMessageId !== undefined ? { parentMessageId: req.parentMessageId } : {}),
      posture,
      provider: req.model.provider.id,
      model: req.model.label,
      ownerPid: process.pid,
      ownerStartedAt: selfStartMs(),
      runIdFor: deriveRunFromThreadOrdinal,
      isLive: (r) => isLiveRun(r),
      ...(req.fromQueue !== undefined ? { fromQueue: req.fromQueue } : {}),
      ...(req.parent ? { parent: req.parent } : {}),
      ...(req.prepareRules ? {
        rewritePrompt: (p: string) => {
          const r = req.prepareRules!(p);
          prepared.block = r.block;
          posture.rules = r.names;
          return r.prompt;
        },
      } : {}),
    });
    if (!outcome.started) {
      if ('busy' in outcome) throw busyError(outcome.busy);
      throw new RunError('queueEntryGone', 'that queued prompt is no longer queued (cancelled, steered into the running turn, or started elsewhere)', { threadId: req.threadId ?? '' });
    }
    const { threadId, runId, userMessageId } = outcome;
    streams.open(runId);
    return this.launch({
      threadId, runId, userMessageId, model: req.model, workspaceRoot: req.workspaceRoot ?? this.deps.workspaceRoot, kind: req.kind ?? 'thread', hooks: req.hooks, sampling: posture,
      ...(req.userRules || prepared.block ? { userRules: req.userRules ?? prepared.block } : {}),
      ...(req.handoff ? { handoff: req.handoff } : {}),
    });
  }

  /**
   * The posture a run records and generates with (SPEC 6.3): the model, the sampling settings
   * (the request's, else the engine's defaults), the rules and mentions. webSearch is false: no
   * provider of Vox searches the web yet.
   */
  private postureOf(req: StartRunRequest): Posture {
    const defaults = this.deps.sampling?.() ?? {};
    const pick = <K extends keyof SamplingSettings>(k: K): NonNullable<SamplingSettings[K]> | null => {
      const v = req.sampling?.[k] !== undefined ? req.sampling[k] : defaults[k];
      return (v ?? null) as NonNullable<SamplingSettings[K]> | null;
    };
    return {
      provider: req.model.provider.id, model: req.model.label,
      reasoningEffort: pick('reasoningEffort'), webSearch: false, temperature: pick('temperature'), topP: pick('topP'),
      // The mentions default to the labels of the prompt's context block (what sendPrompt resolved).
      rules: req.rules ?? [], mentions: req.mentions ?? splitContext(req.prompt).chips.map((c) => c.label),
    };
  }

  /**
   * Re-arms the runs that were waiting for a rate limit when their process went away (an engine
   * starting after VS Code or the CLI was closed): each is claimed for this process (one engine
   * wins), its conversation rebuilt from the store, the rest of its wait waited out, and it goes
   * on where it stopped. `only` limits it to one run (`vox runs resume`). Returns the handles.
   */
  async resumeOrphans(resolveModel: (ref: string) => Promise<ResolvedModel>, only?: string): Promise<RunHandle[]> {
    const { store, streams } = this.deps;
    const out: RunHandle[] = [];
    for (const r of store.orphanedWaits((row) => isLiveRun(row))) {
      if (this.closing || (only !== undefined && r.id !== only) || r.userMessageId === null) continue;
      const model = await resolveModel(r.model);
      if (!store.claimRun(r.id, process.pid, selfStartMs(), (row) => isLiveRun(row))) continue;
      const chunks = store.chunksAfter(r.id, 0);
      const joined = (kind: string) => chunks.filter((c) => c.kind === kind).map((c) => c.data).join('');
      streams.open(r.id, { lastSeq: chunks.length > 0 ? chunks[chunks.length - 1]!.seq : 0, text: joined('text'), reasoning: joined('reasoning') });
      const h = this.launch({ threadId: r.threadId, runId: r.id, userMessageId: r.userMessageId, model, workspaceRoot: this.deps.workspaceRoot, kind: 'thread', resumed: true, sampling: storedPosture(r) });
      out.push(h);
    }
    return out;
  }

  private launch(spec: {
    threadId: string; runId: string; userMessageId: string; model: ResolvedModel; workspaceRoot: string; kind: RunKind;
    hooks?: ((bus: HookBus) => void) | undefined; resumed?: boolean; sampling?: SamplingSettings | undefined; userRules?: string;
    handoff?: HandoffChoice;
  }): RunHandle {
    const { store } = this.deps;
    const { threadId, runId, userMessageId, workspaceRoot } = spec;
    const ac = new AbortController();
    const hooks = this.deps.hooks.with();
    spec.hooks?.(hooks);
    LIVE_RUN_IDS.add(runId);
    const waits = this.deps.waits;
    const bg = this.deps.background?.forRun(threadId, runId, workspaceRoot, spec.model.label);
    // Stop cascades: the run's subagents and background commands stop with it.
    ac.signal.addEventListener('abort', () => void this.deps.background?.stopRun(runId, 'all'), { once: true });
    const done = this.deps.runner
      .run({
        threadId, runId, userMessageId, model: spec.model, workspaceRoot, hooks, signal: ac.signal,
        takeSteers: () => store.takeSteers(threadId, runId),
        recover: (e, attempt, usageSoFar) => this.recover(threadId, runId, e, attempt, usageSoFar, ac.signal),
        ...(spec.resumed ? { resume: { waitOut: () => waits.waitOut(threadId, runId, ac.signal) } } : {}),
        suspended: () => this.live.get(runId)?.suspended === true,
        shuttingDown: () => this.live.get(runId)?.shuttingDown === true,
        ...(spec.sampling ? { sampling: spec.sampling } : {}),
        ...(spec.userRules ? { userRules: spec.userRules } : {}),
        ...(spec.handoff ? { handoff: spec.handoff } : {}),
        ...(bg ? { background: { port: bg, takeReport: () => bg.takeReport(), settle: (signal, onWaiting) => bg.settle(signal, onWaiting) } } : {}),
      })
      .then(async (r) => {
        // A failed turn stops the work it was waiting for; work that was not awaited goes on.
        if (r.status !== 'completed' && r.status !== 'cancelled') await this.deps.background?.stopRun(runId, 'awaited');
        return r;
      })
      .then((r) => {
        LIVE_RUN_IDS.delete(runId);
        this.live.delete(runId);
        this.changed();
        for (const l of [...this.endListeners]) l(threadId, r.status);
        return r;
      });
    this.live.set(runId, {
      runId, threadId, kind: spec.kind, model: spec.model.label, workspaceRoot, startedAt: (this.deps.now ?? Date.now)(), ac, done, suspended: false, shuttingDown: false,
    });
    this.changed();
    return { threadId, runId, userMessageId, done, cancel: () => ac.abort() };
  }

  /** A failed model call: a rate limit is waited out (true: retry), anything else stands (false). */
  private async recover(threadId: string, runId: string, e: unknown, attempt: number, usageSoFar: UsageTotals, signal: AbortSignal): Promise<boolean> {
    const { waits, streams } = this.deps;
    const plan = planRateLimitWait(e, attempt, waits.clock.now(), this.deps.random ?? Math.random);
    if (!plan) return false;
    if (plan.kind === 'fail') throw plan.error;
    streams.append(runId, 'status', `Rate limited; retrying at ${new Date(plan.resetAtMs).toISOString()}`);
    await waits.wait({ threadId, runId, resetAtMs: plan.resetAtMs, source: plan.source, attempt, message: plan.message, usageSoFar }, signal);
    streams.append(runId, 'status', '');
    return true;
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

  /** Called with the thread and how the run ended, after one of its runs has ended (the queue starts its next prompt). */
  onRunEnded(listener: (threadId: string, status: TurnResult['status']) => void): () => void {
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

  /**
   * Refuses new runs, cancels the active ones and waits until they have ended. A run waiting for a
   * rate limit is suspended instead: it stays waiting in the store, and the next engine re-arms it.
   * The others end `interrupted` with cause `ownerEnded` (a reload or a closed window stopped them, not the user).
   */
  async dispose(): Promise<void> {
    this.closing = true;
    for (const r of this.live.values()) {
      if (this.deps.store.rateLimitWait(r.runId)) r.suspended = true;
      else r.shuttingDown = true;
    }
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

/** A run's recorded posture (undefined for runs recorded before postures, or an unreadable one). */
export function storedPosture(r: Pick<RunRow, 'postureJson'>): Posture | undefined {
  if (r.postureJson === null) return undefined;
  try {
    return postureValidator(JSON.parse(r.postureJson));
  } catch {
    return undefined;
  }
}

/** Whether a row the store lists as running is really running (see the file header). */
export function isLiveRun(r: RunRow): boolean {
  if (r.ownerPid === null) return false;
  if (r.ownerPid === process.pid && (r.ownerStartedAt === null || r.ownerStartedAt === selfStartMs())) return LIVE_RUN_IDS.has(r.id);
  return isOwnerAlive(r.ownerPid, r.ownerStartedAt);
}

/** `run/threadBusy` naming the run that holds the thread. */
export function busyError(run: RunRow): RunError {
  const where = run.ownerPid === process.pid ? 'in this window' : `in another Vox process (pid ${run.ownerPid})`;
  return new RunError('threadBusy', `this thread is already running a turn (${run.model}, started ${new Date(run.startedAt).toISOString()} ${where}); wait for it to finish or stop it first`, {
    runId: run.id,
    threadId: run.threadId,
  });
}
