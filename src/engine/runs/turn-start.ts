/**
 * The one decider of a turn start: whether a prompt — sent, drained from the queue, regenerated,
 * retried, edited, a subagent's task or a variant's — starts now, waits in its thread's queue, or
 * is refused. `decideTurnStart` is pure: it reads a small read model (the thread and whether it
 * runs, its queue, the grant's mode ceiling and the thread's modes, the model as resolved, the
 * prompt's rules and mentions as prepared) and answers a decision; the I/O around it (resolving,
 * preparing, acting) is ./start-turn.ts, shared by every caller.
 *
 * The rules, in the order they are checked:
 *   - a model that did not resolve refuses with the resolver's error;
 *   - new-thread modes for an existing thread, an unknown thread, modes above the grant's ceiling
 *     (an existing thread's, or the new thread's) refuse (`protocol/capabilityDenied`, `store/notFound`);
 *   - a busy thread queues the prompt when it may be queued (`ifBusy: 'queue'`, not an edit of an
 *     earlier message), keeps a queued prompt waiting (`ifBusy: 'wait'`), else refuses `run/threadBusy`;
 *   - an idle thread with prompts already waiting queues this one behind them (when queueable);
 *   - a full queue refuses `run/queueFull`; otherwise the turn starts.
 */
import type { Grant } from '../../protocol/commands/grants';
import type { PermissionModeName, WorkMode } from '../../protocol/events';
import type { ResolvedModel } from '../providers/types';
import type { RunRow } from '../store/store';
import { checkWithinGrant, GrantModeError, newThreadModes, NoApproverError, type ThreadModes } from '../permissions/grant-modes';
import { RunError } from './errors';
import { busyError, type StartRunRequest } from './registry';

/** Most prompts one thread may have waiting (./queue.ts enforces it again as it appends). */
export const MAX_QUEUED_PER_THREAD = 50;

/** What a busy thread does with the prompt: queue it, refuse it, or (a prompt already queued) leave it waiting. */
export type IfBusy = 'queue' | 'refuse' | 'wait';

/** The run request's fields the decider passes through untouched (what the caller's kind of turn needs). */
export type RunExtras = Omit<StartRunRequest, 'threadId' | 'prompt' | 'model' | 'parentMessageId' | 'rules' | 'userRules'>;

export interface TurnStartCommand {
  /** The thread; null starts a new one. */
  threadId: string | null;
  /** The prompt as the caller has it (typed, queued or stored). */
  prompt: string;
  /** The model ref asked for (null: the default), kept on a queued prompt. */
  modelRef: string | null;
  /** The message the prompt answers (an edit, a regenerate); absent: the thread's head. */
  parentMessageId?: string | null;
  ifBusy: IfBusy;
  /** Queued: the running turn is asked to take it at its next boundary. */
  steer?: boolean;
  /** The modes of a new thread (sendPrompt's `newThread`). */
  newThread?: { permissionMode?: PermissionModeName; workMode?: WorkMode };
  /** What the command does, for a refusal's message ("prompt thread t1", "regenerate in thread t1"). */
  what: string;
  run?: RunExtras;
}

/** The prompt's rules and mentions as prepared for the turn. */
export interface PreparedTurn {
  /** The prompt that runs: its manual rule tokens stripped, its mentions' context block appended. */
  prompt: string;
  /** The prompt's own text as the thread keeps it (rule tokens stripped, no context block). */
  text: string;
  /** The prompt that is queued: as typed (its rule tokens kept, prepared again when it starts), with the context block. */
  queuedPrompt: string;
  rules: string[];
  rulesBlock: string;
  warnings: string[];
}

export type ThreadRead =
  | { exists: true; busy: RunRow | null; queueLength: number; modes: ThreadModes | null }
  | { exists: false; error: unknown };

export interface TurnStartReadModel {
  /** The thread as read; null for a new thread. */
  thread: ThreadRead | null;
  /** The session's grant (its mode ceiling); absent for turns the engine starts itself. */
  grant?: Grant;
  model: { ok: true; resolved: ResolvedModel } | { ok: false; error: unknown };
  /** Null until the cheap checks passed (./start-turn.ts prepares only then). */
  prepared: PreparedTurn | null;
}

export type TurnStartDecision =
  | { kind: 'start'; spec: StartRunRequest; newThreadModes: ThreadModes | null; prepared: PreparedTurn }
  | { kind: 'queue'; threadId: string; prompt: string; modelRef: string | null; steer: boolean; reason: 'busy' | 'behindQueue'; prepared: PreparedTurn }
  | { kind: 'wait'; threadId: string }
  | { kind: 'refuse'; error: unknown };

/** A prompt with nothing to prepare (queued, subagent, variant): it runs as given. */
export function unprepared(prompt: string): PreparedTurn {
  return { prompt, text: prompt, queuedPrompt: prompt, rules: [], rulesBlock: '', warnings: [] };
}

const grantRefusal = (check: () => unknown): GrantModeError | NoApproverError | null => {
  try {
    check();
    return null;
  } catch (e) {
    if (e instanceof GrantModeError || e instanceof NoApproverError) return e;
    throw e;
  }
};

/** The refusal the command gets before anything is prepared, or null. */
export function refusalOf(cmd: TurnStartCommand, rm: Omit<TurnStartReadModel, 'prepared'>): unknown {
  if (!rm.model.ok) return rm.model.error;
  const t = rm.thread;
  if (t !== null) {
    if (cmd.newThread) return new GrantModeError('newThread modes apply to a new thread only (threadId null); change an existing thread\'s modes with setPermissionMode / setWorkMode');
    if (!t.exists) return t.error;
    if (rm.grant?.modes && t.modes) return grantRefusal(() => checkWithinGrant(rm.grant!, t.modes!, cmd.what));
    return null;
  }
  return rm.grant ? grantRefusal(() => newThreadModes(rm.grant!, cmd.newThread)) : null;
}

/** The modes a new thread is created in before its first turn (null: it follows the workspace default). */
export function newThreadModesOf(cmd: TurnStartCommand, grant: Grant | undefined): ThreadModes | null {
  if (cmd.threadId !== null) return null;
  return grant ? newThreadModes(grant, cmd.newThread) : cmd.newThread ? { permissionMode: cmd.newThread.permissionMode ?? 'ask', workMode: cmd.newThread.workMode ?? 'act' } : null;
}

/** Whether a busy thread may take the prompt into its queue (an edit of an earlier message may not). */
export function isQueueable(cmd: TurnStartCommand): boolean {
  return cmd.threadId !== null && cmd.ifBusy === 'queue' && !cmd.parentMessageId;
}

/** The decision; see the file header. Pure: the same command and read model give the same decision. */
export function decideTurnStart(cmd: TurnStartCommand, rm: TurnStartReadModel): TurnStartDecision {
  const refusal = refusalOf(cmd, rm);
  if (refusal !== null) return { kind: 'refuse', error: refusal };
  if (!rm.model.ok) return { kind: 'refuse', error: rm.model.error }; // (refusalOf answered it; narrows the type)
  const prepared = rm.prepared ?? unprepared(cmd.prompt);
  const t = rm.thread;
  if (t?.exists) {
    const threadId = cmd.threadId!;
    const queueable = isQueueable(cmd);
    if (t.busy && cmd.ifBusy === 'wait') return { kind: 'wait', threadId };
    if (t.busy && !queueable) return { kind: 'refuse', error: busyError(t.busy) };
    if (queueable && (t.busy || t.queueLength > 0)) {
      if (t.queueLength >= MAX_QUEUED_PER_THREAD) {
        return { kind: 'refuse', error: new RunError('queueFull', `this thread already has ${MAX_QUEUED_PER_THREAD} prompts waiting; cancel some or wait`, { threadId }) };
      }
      return { kind: 'queue', threadId, prompt: prepared.queuedPrompt, modelRef: cmd.modelRef, steer: cmd.steer === true, reason: t.busy ? 'busy' : 'behindQueue', prepared };
    }
  }
  const spec: StartRunRequest = {
    ...cmd.run,
    prompt: prepared.prompt, model: rm.model.resolved,
    ...(cmd.threadId !== null ? { threadId: cmd.threadId } : {}),
    ...(cmd.parentMessageId !== undefined ? { parentMessageId: cmd.parentMessageId } : {}),
    ...(prepared.rules.length > 0 ? { rules: prepared.rules } : {}),
    ...(prepared.rulesBlock ? { userRules: prepared.rulesBlock } : {}),
  };
  return { kind: 'start', spec, newThreadModes: newThreadModesOf(cmd, rm.grant), prepared };
}
