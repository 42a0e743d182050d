/**
 * Named stages of the agent loop and the handlers installed on them. Capabilities hook into a
 * turn here instead of editing the loop: checkpoints capture before file-changing tools and at
 * turn end, variants refresh their diff stats after tools, and the next wave (loop guards, the
 * run queue's steering, the cost ledger) lands on the same stages.
 *
 *   turnStart        once, before the first model call
 *   beforeModelCall  before every model call (the messages about to be sent)
 *   streamDelta      every streamed text/reasoning delta, synchronously (keep it cheap)
 *   afterModelCall   after every model call (its text, tool calls, usage)
 *   beforeTool       before a tool call runs (after parsing and approval)
 *   afterTool        after a tool call ran, whatever its outcome (not for denied calls)
 *   turnEnd          once, whatever the turn's status
 *
 * Each handler declares whether the loop waits for it (`blocking`; streamDelta handlers always
 * run synchronously) and what its failure means: `stopsTurn` fails the turn with the handler's
 * error, `reported` hands the error to the bus's `onError` and the turn goes on. Handlers run in
 * the order they were installed; a run may add its own (`HookBus.with`) after the engine's.
 */
import type { ToolCall, Usage } from '../providers/types';
import type { EndedRunStatus } from '../../protocol/events';
import type { ChatMessage } from '../providers/types';
import type { AgentTool, ToolResult } from '../tools/types';
import { VoxError } from '../../protocol/wire/vox-error';

export interface RunInfo { threadId: string; runId: string; workspaceRoot: string; model: string }

export interface HookContexts {
  turnStart: RunInfo;
  beforeModelCall: RunInfo & { step: number; messages: readonly ChatMessage[] };
  streamDelta: RunInfo & { kind: 'text' | 'reasoning'; delta: string };
  afterModelCall: RunInfo & { step: number; text: string; toolCalls: readonly ToolCall[]; usage: Usage };
  beforeTool: RunInfo & { call: ToolCall; tool: AgentTool };
  afterTool: RunInfo & { call: ToolCall; tool: AgentTool; result: ToolResult | null; status: 'completed' | 'failed' | 'interrupted' };
  turnEnd: RunInfo & { status: EndedRunStatus };
}
export type HookStage = keyof HookContexts;
export const HOOK_STAGES: readonly HookStage[] = ['turnStart', 'beforeModelCall', 'streamDelta', 'afterModelCall', 'beforeTool', 'afterTool', 'turnEnd'];

export interface HookOptions {
  /** Shown in reported errors ("checkpoints: …"). */
  name: string;
  /** The loop awaits it before going on (default true). Ignored for streamDelta (always synchronous). */
  blocking?: boolean;
  /** `stopsTurn`: its failure fails the turn; `reported` (default): the failure is reported, the turn goes on. */
  failure?: 'stopsTurn' | 'reported';
}

export type HookHandler<S extends HookStage> = (ctx: HookContexts[S]) => void | Promise<void>;

interface Entry<S extends HookStage> { handler: HookHandler<S>; name: string; blocking: boolean; stopsTurn: boolean }
type Entries = { [S in HookStage]: Entry<S>[] };

/** A handler failure that stops the turn; the message names the handler. */
export class HookFailure extends Error {
  override readonly name = 'HookFailure';
  constructor(readonly hook: string, readonly stage: HookStage, override readonly cause: unknown) {
    super(`${hook} (${stage}): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The text a failed turn shows for `e`: a stopsTurn handler's own typed error (a VoxError, written
 * for people — the repetition guard's "stopped: the model repeated itself (…)") as it is, any
 * other failure with the handler named.
 */
export function turnFailureText(e: unknown): string {
  if (e instanceof HookFailure && e.cause instanceof VoxError) return e.cause.message;
  return e instanceof Error ? e.message : String(e);
}

export class HookBus {
  private readonly entries: Entries = { turnStart: [], beforeModelCall: [], streamDelta: [], afterModelCall: [], beforeTool: [], afterTool: [], turnEnd: [] };

  constructor(
    /** Receives failures of `reported` handlers and of non-blocking ones. */
    private readonly onError: (e: unknown, hook: string, stage: HookStage) => void = (e, hook, stage) => console.error(`[vox] hook ${hook} (${stage}) failed:`, e),
    private readonly parent?: HookBus,
  ) {}

  /** Installs a handler; returns its uninstaller. */
  on<S extends HookStage>(stage: S, handler: HookHandler<S>, opts: HookOptions): () => void {
    const entry: Entry<S> = { handler, name: opts.name, blocking: opts.blocking ?? true, stopsTurn: opts.failure === 'stopsTurn' };
    const list = this.entries[stage] as Entry<S>[];
    list.push(entry);
    return () => {
      const i = list.indexOf(entry);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** A bus that runs this bus's handlers, then its own (one run's extra handlers). */
  with(): HookBus {
    return new HookBus(this.onError, this);
  }

  private all<S extends HookStage>(stage: S): Entry<S>[] {
    const own = this.entries[stage] as Entry<S>[];
    return this.parent ? [...this.parent.all(stage), ...own] : [...own];
  }

  /** Runs the stage's handlers (blocking ones in order, awaited); throws HookFailure for a `stopsTurn` failure. */
  async run<S extends Exclude<HookStage, 'streamDelta'>>(stage: S, ctx: HookContexts[S]): Promise<void> {
    for (const e of this.all(stage)) {
      if (!e.blocking) {
        void Promise.resolve()
          .then(() => e.handler(ctx))
          .catch((err: unknown) => this.onError(err, e.name, stage));
        continue;
      }
      try {
        await e.handler(ctx);
      } catch (err) {
        if (e.stopsTurn) throw new HookFailure(e.name, stage, err);
        this.onError(err, e.name, stage);
      }
    }
  }

  /** Runs the streamDelta handlers synchronously; a `stopsTurn` failure throws HookFailure (the stream is aborted). */
  delta(ctx: HookContexts['streamDelta']): void {
    for (const e of this.all('streamDelta')) {
      try {
        const r = e.handler(ctx);
        if (r && typeof (r as Promise<void>).catch === 'function') (r as Promise<void>).catch((err: unknown) => this.onError(err, e.name, 'streamDelta'));
      } catch (err) {
        if (e.stopsTurn) throw new HookFailure(e.name, 'streamDelta', err);
        this.onError(err, e.name, 'streamDelta');
      }
    }
  }

  /** Whether any handler is installed on `stage` (the loop skips building contexts nobody reads). */
  has(stage: HookStage): boolean {
    return this.entries[stage].length > 0 || (this.parent?.has(stage) ?? false);
  }
}
