/**
 * Background work of runs (SPEC 2.4): subagents (child threads with their own agent loop, same
 * tools and approval policy) and background commands. Each job gets a handle, recorded as
 * `background.started` / `background.ended` events; the model looks at one with
 * `command_status` and stops it with `command_kill`.
 *
 * `awaited` decides how a job relates to its run's end. When the model answers without tool
 * calls, the run settles (`run.settling`): it waits for its awaited jobs, then gives the model the
 * results of everything finished and not yet reported, and the turn goes on. Jobs that are not
 * awaited keep running after the turn; when they finish their result waits in the thread and is
 * given to the model at the start of the next turn. Stopping a run stops all its jobs (and a
 * subagent stops its own); a run that fails stops its awaited jobs. Work left running by a
 * process that died is marked interrupted when an engine starts.
 */
import { allocate } from '../ids/ids';
import { quoteLine } from '../../protocol/wire/quote';
import { isOwnerAlive } from '../platform/process-identity';
import type { VoxStore } from '../store/store';
import { backgroundItem, backgroundOf, runningBackground, type BackgroundRow } from '../store/family-reads';
import type { BackgroundEnd, BackgroundJob, BackgroundPort, BackgroundStatusView } from '../tools/types';
import { ToolError } from '../tools/types';
import type { TurnResult } from '../agent/runner';

/** Jobs one run may have running at once. */
export const MAX_BACKGROUND_JOBS_PER_RUN = 8;
/** How deep subagents may nest (a subagent of a subagent is depth 2). */
export const MAX_SUBAGENT_DEPTH = 2;
/** Characters of one job's result given to the model. */
export const BACKGROUND_RESULT_CHARS = 8_000;
/** Characters of a running job's output `command_status` shows. */
export const BACKGROUND_PEEK_CHARS = 8_000;
/** Longest subagent title (the job list and the child thread's title show one line of it). */
export const SUBAGENT_TITLE_CHARS = 80;

export interface ChildRunRequest { parentThreadId: string; parentRunId: string; task: string; title: string; workspaceRoot: string; model: string }
export interface ChildRun { threadId: string; runId: string; done: Promise<TurnResult>; cancel(): void; peek(): string }

interface LiveJob { handle: string; threadId: string; runId: string; job: BackgroundJob; childThreadId: string | null; ended: BackgroundEnd | null; recorded: Promise<void> }

const tail = (s: string, n: number) => (s.length <= n ? s : `[… ${s.length - n} earlier characters]\n${s.slice(-n)}`);

/** The text the model gets for finished work. */
export function formatReport(rows: readonly BackgroundRow[]): string {
  const parts = rows.map((r) => `### ${r.kind === 'subagent' ? 'Subagent' : 'Background command'} ${r.handle} — ${r.title}\nStatus: ${r.status}\n${tail(r.result ?? '', BACKGROUND_RESULT_CHARS)}`);
  return `[Background work finished]\n\n${parts.join('\n\n')}`;
}

export class BackgroundWork {
  private readonly jobs = new Map<string, LiveJob>();

  constructor(private readonly deps: { store: VoxStore; startChild: (req: ChildRunRequest) => ChildRun | Promise<ChildRun> }) {}

  /** The port a run's tools use, and the run's settlement. */
  forRun(threadId: string, runId: string, workspaceRoot: string, model: string): RunBackground {
    return new RunBackground(this, this.deps.store, { threadId, runId, workspaceRoot, model });
  }

  /** @internal Starts a child run for a subagent. */
  startChild(req: ChildRunRequest): ChildRun | Promise<ChildRun> {
    return this.deps.startChild(req);
  }

  /** @internal Records a job and follows it to its end. */
  add(threadId: string, runId: string, job: BackgroundJob, childThreadId: string | null): string {
    const handle = allocate('bg');
    const { store } = this.deps;
    store.append({ type: 'background.started', threadId, runId, handle, kind: job.kind, title: job.title, awaited: job.awaited, childThreadId });
    const live: LiveJob = { handle, threadId, runId, job, childThreadId, ended: null, recorded: Promise.resolve() };
    live.recorded = job.done
      .catch((e: unknown): BackgroundEnd => ({ status: 'failed', result: (e as Error).message ?? String(e) }))
      .then((end) => {
        live.ended = end;
        try {
          store.append({ type: 'background.ended', threadId, runId, handle, status: end.status, result: end.result });
        } catch {
          // the store closed under it (engine shutdown): the next engine marks it interrupted
        }
      });
    this.jobs.set(handle, live);
    void live.recorded.finally(() => this.jobs.delete(handle));
    return handle;
  }

  /** @internal */
  live(handle: string): LiveJob | undefined {
    return this.jobs.get(handle);
  }

  /** @internal Jobs of one run still going. */
  running(runId: string): LiveJob[] {
    return [...this.jobs.values()].filter((j) => j.runId === runId && !j.ended);
  }

  /** Stops the run's jobs (all of them, or only the awaited ones) and waits until they are recorded as ended. */
  async stopRun(runId: string, which: 'all' | 'awaited'): Promise<void> {
    const jobs = this.running(runId).filter((j) => which === 'all' || j.job.awaited);
    for (const j of jobs) j.job.kill();
    await Promise.all(jobs.map((j) => j.recorded));
  }

  /** Marks work left running by processes that are gone as interrupted (an engine starting). */
  recoverInterrupted(): number {
    let n = 0;
    for (const r of runningBackground(this.deps.store.db)) {
      if (this.jobs.has(r.handle) || (r.ownerPid !== null && isOwnerAlive(r.ownerPid, r.ownerStartedAt))) continue;
      this.deps.store.append({ type: 'background.ended', threadId: r.threadId, runId: r.runId, handle: r.handle, status: 'interrupted', result: 'the process running it ended' });
      n++;
    }
    return n;
  }

  /** Stops everything (engine shutdown). */
  async dispose(): Promise<void> {
    const all = [...this.jobs.values()];
    for (const j of all) j.job.kill();
    await Promise.all(all.map((j) => j.recorded));
  }
}

/** One run's face of the background work: the tools' port, plus what the agent loop asks at its start and end. */
export class RunBackground implements BackgroundPort {
  readonly threadId: string;
  readonly runId: string;

  /** `workspaceRoot` and `model`: where the run acts and what it runs on (a subagent gets the same unless told). */
  constructor(private readonly work: BackgroundWork, private readonly store: VoxStore, private readonly run: { threadId: string; runId: string; workspaceRoot: string; model: string }) {
    this.threadId = run.threadId;
    this.runId = run.runId;
  }

  async spawnSubagent(req: { task: string; title?: string; awaited: boolean; model?: string }): Promise<{ handle: string; threadId: string }> {
    if (this.depth() >= MAX_SUBAGENT_DEPTH) {
      throw new ToolError('invalidArguments', `subagents nest at most ${MAX_SUBAGENT_DEPTH} deep; do this task yourself`);
    }
    this.checkCapacity();
    const title = quoteLine(req.title ?? req.task, SUBAGENT_TITLE_CHARS);
    const child = await this.work.startChild({
      parentThreadId: this.threadId, parentRunId: this.runId, task: req.task, title, workspaceRoot: this.run.workspaceRoot, model: req.model ?? this.run.model,
    });
    const job: BackgroundJob = {
      kind: 'subagent', title, awaited: req.awaited,
      done: child.done.then((r) => ({ status: r.status, result: r.status === 'completed' ? r.text : `${r.error ?? r.status}${r.text ? `\n\nWhat it had written:\n${r.text}` : ''}` })),
      peek: () => child.peek(),
      kill: () => child.cancel(),
    };
    return { handle: this.work.add(this.threadId, this.runId, job, child.threadId), threadId: child.threadId };
  }

  track(job: BackgroundJob): string {
    this.checkCapacity();
    return this.work.add(this.threadId, this.runId, job, null);
  }

  /** A job's state; once it has ended, the model has now seen its result (it is not reported again). */
  status(handle: string): BackgroundStatusView {
    const view = this.view(handle);
    if (view.status !== 'running') this.markSeen(handle);
    return view;
  }

  private markSeen(handle: string): void {
    if (backgroundItem(this.store.db, handle)?.reportedBy === null) this.store.append({ type: 'background.reported', threadId: this.threadId, runId: this.runId, handles: [handle] });
  }

  private view(handle: string): BackgroundStatusView {
    const live = this.work.live(handle);
    if (live && live.threadId === this.threadId) {
      return {
        handle, kind: live.job.kind, title: live.job.title, awaited: live.job.awaited, status: live.ended?.status ?? 'running',
        output: tail(live.ended?.result ?? live.job.peek(), BACKGROUND_PEEK_CHARS), threadId: live.childThreadId,
      };
    }
    const row = backgroundItem(this.store.db, handle);
    if (!row || row.threadId !== this.threadId) throw new ToolError('notFound', `no background work ${handle} in this thread`);
    return { handle, kind: row.kind, title: row.title, awaited: row.awaited, status: row.status, output: tail(row.result ?? '', BACKGROUND_PEEK_CHARS), threadId: row.childThreadId };
  }

  async kill(handle: string): Promise<BackgroundStatusView> {
    const live = this.work.live(handle);
    if (live && live.threadId === this.threadId && !live.ended) {
      live.job.kill();
      await live.recorded;
    }
    return this.status(handle);
  }

  /** Finished work of the thread no run was given yet, as a message for the model (marks it reported); null when there is none. */
  takeReport(): string | null {
    const rows = backgroundOf(this.store.db, this.threadId, { unreported: true });
    if (rows.length === 0) return null;
    this.store.append({ type: 'background.reported', threadId: this.threadId, runId: this.runId, handles: rows.map((r) => r.handle) });
    return formatReport(rows);
  }

  /**
   * Settlement at the turn's end: waits for this run's awaited jobs (`run.settling` first, when
   * some still run), then returns the report of everything finished and unreported (null: the
   * turn may end). Rejects when the run is stopped meanwhile.
   */
  async settle(signal: AbortSignal, onWaiting: (titles: string[]) => void): Promise<string | null> {
    const waiting = this.work.running(this.runId).filter((j) => j.job.awaited);
    if (waiting.length > 0) {
      this.store.append({ type: 'run.settling', threadId: this.threadId, runId: this.runId, handles: waiting.map((j) => j.handle) });
      onWaiting(waiting.map((j) => j.job.title));
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new ToolError('cancelled', 'cancelled'));
        signal.addEventListener('abort', onAbort, { once: true });
        void Promise.all(waiting.map((j) => j.recorded)).then(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    return this.takeReport();
  }

  private depth(): number {
    let d = 0;
    for (let t: string | null = this.threadId; t !== null && d <= MAX_SUBAGENT_DEPTH; d++) t = this.store.getThread(t).parentThreadId;
    return d - 1;
  }

  private checkCapacity(): void {
    if (this.work.running(this.runId).length >= MAX_BACKGROUND_JOBS_PER_RUN) {
      throw new ToolError('invalidArguments', `this turn already has ${MAX_BACKGROUND_JOBS_PER_RUN} background jobs running; wait for one (command_status) or stop one (command_kill)`);
    }
  }
}
