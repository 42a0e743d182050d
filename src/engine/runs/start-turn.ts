/**
 * The I/O around the turn-start decider (./turn-start.ts), one function for every way a turn
 * starts: a sent prompt, the queue's drain, a regenerate / retry / edit, a subagent, a variant.
 * `startTurn` resolves the model, reads the thread (busy, queue, modes), refuses early what the
 * decider refuses without preparation, creates a new thread that needs explicit modes, waits
 * for the MCP servers (when given), prepares the rules and mentions (the caller's way), decides,
 * and acts: starts the run, queues the prompt, or leaves a queued one waiting. The store's
 * transaction stays the authority on busy: a run that took the thread between the read and the
 * start makes it decide again with the thread busy.
 */
import type { Grant } from '../../protocol/commands/grants';
import type { ResolvedModel } from '../providers/types';
import type { QueueRow, VoxStore } from '../store/store';
import { allocate } from '../ids/ids';
import type { ThreadModes } from '../permissions/grant-modes';
import type { ChildLimits } from '../permissions/thread-ceiling';
import type { ChildRunRequest } from './background';
import { RunError } from './errors';
import { isLiveRun, titleFromPrompt, type RunHandle, type RunRegistry } from './registry';
import { decideTurnStart, newThreadModesOf, refusalOf, type PreparedTurn, type ThreadRead, type TurnStartCommand, type TurnStartDecision, type TurnStartReadModel } from './turn-start';

/** What starting a turn reads and acts through. */
export interface TurnStartPorts {
  store: VoxStore;
  runs: RunRegistry;
  resolveModel(ref: string): Promise<ResolvedModel>;
  /** The model ref of a prompt that names none (the host's, now). */
  defaultModel(): string;
  /** Where a busy thread's prompt waits (absent: nothing is queueable here). */
  queue?: { enqueue(threadId: string, prompt: string, model: string | null, steer?: boolean): { entry: QueueRow; position: number } };
  /** The MCP servers' bounded wait, so their tools join the turn (a client's prompt). */
  mcp?: { readyWithin(): Promise<void> };
  /** The session's grant, and the thread's modes it is checked against. */
  grant?: Grant;
  modesOf?: (threadId: string) => ThreadModes;
}

export interface TurnStartRequest extends Omit<TurnStartCommand, 'modelRef'> {
  /** A ref (null: the default), or a model the caller resolved already (variants check all of theirs first). */
  model: string | ResolvedModel | null;
  /** The rules and mentions of the prompt, prepared once the cheap checks passed; absent: the prompt runs as given. */
  prepare?: (model: ResolvedModel, threadId: string | null) => Promise<PreparedTurn>;
  /** A subagent's new thread: listed under its parent, created with its title and the parent's rules and ceiling. */
  child?: NewChildThread;
}

/** What a subagent's thread is created with besides its modes. */
export interface NewChildThread { parent: { threadId: string; runId: string }; title: string; rules: ChildLimits['rules']; ceiling: ChildLimits['ceiling'] }

export type TurnStartOutcome =
  | { kind: 'started'; handle: RunHandle; prepared: PreparedTurn }
  | { kind: 'queued'; threadId: string; entryId: string; position: number; prepared: PreparedTurn }
  | { kind: 'waiting'; threadId: string };

async function resolve(ports: TurnStartPorts, model: TurnStartRequest['model']): Promise<TurnStartReadModel['model']> {
  if (model !== null && typeof model !== 'string') return { ok: true, resolved: model };
  try {
    return { ok: true, resolved: await ports.resolveModel(model ?? ports.defaultModel()) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The thread as the decider reads it (null: a new thread). */
export function readThread(ports: Pick<TurnStartPorts, 'store' | 'grant' | 'modesOf'>, threadId: string | null): ThreadRead | null {
  if (threadId === null) return null;
  const { store } = ports;
  try {
    store.getThread(threadId);
  } catch (error) {
    return { exists: false, error };
  }
  const busy = store.running(threadId).find((r) => isLiveRun(r)) ?? null;
  const modes = ports.grant?.modes && ports.modesOf ? ports.modesOf(threadId) : null;
  return { exists: true, busy, queueLength: store.queue(threadId).length, modes };
}

/** A new thread in explicit modes (a child's: also under its parent, with its rules and ceiling), created before its first turn so its rules and run see them. */
function createThread(store: VoxStore, prompt: string, modes: ThreadModes, child: NewChildThread | undefined): string {
  const threadId = allocate('thread');
  const parent = child ? { parentThreadId: child.parent.threadId, parentRunId: child.parent.runId } : {};
  store.append(
    { type: 'thread.created', threadId, title: child?.title ?? titleFromPrompt(prompt), ...parent },
    { type: 'thread.permissionModeSet', threadId, mode: modes.permissionMode },
    { type: 'thread.workModeSet', threadId, mode: modes.workMode },
    ...(child && child.rules.length > 0 ? [{ type: 'thread.permissionRulesSet' as const, threadId, rules: child.rules }] : []),
    ...(child ? [{ type: 'thread.ceilingSet' as const, threadId, ceiling: child.ceiling }] : []),
  );
  return threadId;
}

/** Starts, queues or refuses (throws) one turn; see the file header. */
export async function startTurn(ports: TurnStartPorts, req: TurnStartRequest): Promise<TurnStartOutcome> {
  const { model, prepare, child, ...rest } = req;
  let cmd: TurnStartCommand = { ...rest, modelRef: typeof model === 'string' ? model : null };
  const resolved = await resolve(ports, model);
  const base = { thread: readThread(ports, cmd.threadId), model: resolved, ...(ports.grant ? { grant: ports.grant } : {}) };
  const refusal = refusalOf(cmd, base);
  if (refusal !== null) throw refusal;
  const modes = newThreadModesOf(cmd, ports.grant);
  if (modes) {
    const created: TurnStartCommand = { ...cmd, threadId: createThread(ports.store, cmd.prompt, modes, child) };
    delete created.newThread; // the thread now exists in them
    cmd = created;
  }
  await ports.mcp?.readyWithin();
  const prepared = prepare && resolved.ok ? await prepare(resolved.resolved, cmd.threadId) : null;
  const read = (): TurnStartReadModel => ({ ...base, thread: readThread(ports, cmd.threadId), prepared });
  return act(ports, cmd, decideTurnStart(cmd, read()), () => decideTurnStart(cmd, read()));
}

/** Acts on a decision; a start that finds the thread taken decides again (`again`) with what the store now says. */
function act(ports: TurnStartPorts, cmd: TurnStartCommand, d: TurnStartDecision, again: (() => TurnStartDecision) | null): TurnStartOutcome {
  switch (d.kind) {
    case 'refuse':
      throw d.error;
    case 'wait':
      return { kind: 'waiting', threadId: d.threadId };
    case 'queue': {
      if (!ports.queue) throw new RunError('threadBusy', `thread ${d.threadId} is running a turn and this engine queues nothing here`, { threadId: d.threadId });
      const q = ports.queue.enqueue(d.threadId, d.prompt, d.modelRef, d.steer);
      return { kind: 'queued', threadId: d.threadId, entryId: q.entry.entryId, position: q.position, prepared: d.prepared };
    }
    case 'start':
      try {
        return { kind: 'started', handle: ports.runs.start(d.spec), prepared: d.prepared };
      } catch (e) {
        if (again && e instanceof RunError && e.code === 'threadBusy') {
          // Decided again on what the store says now: queued or refused as busy, or (the holder ended meanwhile) started once more.
          return act(ports, cmd, again(), null);
        }
        throw e;
      }
  }
}

/**
 * A subagent's turn (./background.ts): a new child thread listed under its parent, on the model
 * asked (a ref), never queued. The thread starts in its parent's limits (`limitsOf`: the parent's
 * modes as its calls are decided, its thread rules, and the ceiling they set,
 * ../permissions/thread-ceiling.ts), never the workspace default.
 */
export async function startChildTurn(
  ports: Pick<TurnStartPorts, 'store' | 'runs' | 'resolveModel' | 'defaultModel'> & { limitsOf(parentThreadId: string, parentRunId: string): ChildLimits },
  req: ChildRunRequest,
): Promise<RunHandle> {
  const parent = { threadId: req.parentThreadId, runId: req.parentRunId };
  const limits = ports.limitsOf(req.parentThreadId, req.parentRunId);
  const out = await startTurn(ports, {
    threadId: null, prompt: req.task, model: req.model, ifBusy: 'refuse', what: `start subagent ${req.title}`, newThread: limits.modes,
    child: { parent, title: req.title, rules: limits.rules, ceiling: limits.ceiling },
    run: { title: req.title, kind: 'subagent', workspaceRoot: req.workspaceRoot, parent },
  });
  if (out.kind !== 'started') throw new Error(`a subagent's turn was ${out.kind}, not started`); // a new thread is never busy
  return out.handle;
}
