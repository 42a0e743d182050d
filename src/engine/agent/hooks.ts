/**
 * The turn's stages and the handlers capabilities install on them (the agent loop, ./runner.ts,
 * only calls the stages). A handler gets the stage's input and, on the stages that shape the
 * turn, its output — `(input, output)` — which it may edit in place; the loop then acts on the
 * output (the request it sends, the control value of a step, the arguments a tool runs with).
 *
 *   turnStart        once, before anything else                          observe
 *   prepareRequest   once, before the first model call                   edits {system, messages, tools}
 *   beforeModelCall  before every model call                             edits {messages} (compaction)
 *   modelStream      every model call's event stream                     wraps {stream} (think tags)
 *   streamDelta      every streamed text/reasoning delta, synchronously   observe (may stop the turn)
 *   afterModelCall   after every model call (its text, tool calls, usage) observe
 *   reviewStep       after every model call                              sets {control}: keep | retry | replace | stop
 *   beforeTool       after parsing and approval, before the tool runs     edits {args, context}, may set {veto}
 *   afterTool        after the tool ran, whatever its outcome             edits {result}
 *   turnEnd          once, whatever the turn's status                     observe
 *
 * Each handler declares its policy: `order` (lower first; equal orders run in install order),
 * `blocking` (the loop awaits it; streamDelta and modelStream handlers are always synchronous),
 * `timeoutMs` (a blocking handler slower than that has failed) and `failure`: `stopsTurn` fails
 * the turn with the handler's error, `reported` hands the error to the bus's `onError` (the
 * host's log and notices) and the turn goes on. A failure is never swallowed. A run may add its
 * own handlers on a child bus (`HookBus.with`), after the engine's.
 */
import type { ChatMessage, ProviderEvent, ToolCall, ToolSpec, Usage } from '../providers/types';
import type { EndedRunStatus } from '../../protocol/events';
import type { AgentTool, ToolContext, ToolResult } from '../tools/types';
import { VoxError } from '../../protocol/wire/vox-error';
import type { RunFailure } from '../../protocol/events';
import { DISK_FULL_MESSAGE, isDiskFull } from '../platform/disk-full';
import type { ResolvedModel } from '../providers/types';
import type { BackgroundPort } from '../tools/types';
import type { SamplingSettings } from '../../protocol/posture';
import type { HandoffChoice } from '../../protocol/handoff';

/* A turn's spec lives here, beside the stages that read it, so the two types need no import cycle. */
/** A run the registry has started: its ids, model, workspace, hooks and cancel signal. */
export interface TurnSpec {
  threadId: string;
  runId: string;
  userMessageId: string;
  model: ResolvedModel;
  workspaceRoot: string;
  hooks: HookBus;
  signal: AbortSignal;
  /**
   * Takes the prompts the user asked to steer this turn with (the thread queue's steer requests,
   * ../runs/queue.ts), removing them from the queue; called at every boundary — before each
   * model call and before each tool batch, never while a tool runs.
   */
  takeSteers?: () => SteerPrompt[];
  /**
   * Called when a model call fails: resolves true when the call should be retried (after a
   * rate-limit wait, ../runs/rate-limit.ts), false when the error stands; it may throw a clearer
   * error. `attempt` counts the waits of this call so far.
   */
  recover?: (error: unknown, attempt: number, usageSoFar: Usage) => Promise<boolean>;
  /**
   * A run taken over after a restart, where it waited for a rate limit: the loop rebuilds its
   * conversation from the store (./resume.ts), waits out the rest of the wait, then goes on.
   */
  resume?: { waitOut: () => Promise<unknown> };
  /**
   * True when a stop is a suspension, not a cancel: the engine shut down while the run waited for
   * a rate limit. The run is then left as it stands in the store — running, waiting — for the next
   * engine to re-arm, and nothing (no message, no `run.ended`) is written.
   */
  suspended?: () => boolean;
  /**
   * True when a stop is the engine shutting down (a window reload or close), not the user: the
   * run ends `interrupted` with cause `ownerEnded`, as the next engine would close it.
   */
  shuttingDown?: () => boolean;
  /** The run's background work (../runs/background.ts): the tools' port, reports at the start, settlement at the end. */
  background?: TurnBackground;
  /** Sampling settings of every model call of the turn (its posture; absent or null: the provider's default). */
  sampling?: SamplingSettings;
  /**
   * The turn's `<user_rules>` block (../rules/): what the model sees after this turn's user
   * message, not stored in it (a regenerate of the turn does not double it).
   */
  userRules?: string;
  /** The context handoff the prompt chose (../handoff/); without it, one is built when the model changed. */
  handoff?: HandoffChoice;
}

export interface TurnBackground {
  port: BackgroundPort;
  /** Finished background work of the thread not yet given to a model, as a message (null: none). */
  takeReport(): string | null;
  /** Waits for the run's awaited work, then its report (null: the turn may end). */
  settle(signal: AbortSignal, onWaiting: (titles: string[]) => void): Promise<string | null>;
}

export interface SteerPrompt { entryId: string; prompt: string }

export interface RunInfo { threadId: string; runId: string; workspaceRoot: string; model: string }

/** The tools a turn offers, as prepareRequest leaves them: the offer, and how a call finds and routes its tool. */
export interface TurnTools {
  /** The tools the model is offered (their specs are the request's `tools` when the model calls tools natively). */
  offered: AgentTool[];
  /** A tool the registry does not know (a meta-tool of the catalog); the registry is asked when this gives nothing. */
  lookup: (name: string) => AgentTool | undefined;
  /** The call to decide, approve and run for a call the model made (e.g. a routed `mcp_call`). */
  route: (call: ToolCall) => ToolCall;
}

/** What prepareRequest shapes: `messages[0]` is the system message; `system` reads and writes it. */
export interface TurnRequest {
  system: string;
  messages: ChatMessage[];
  tools: TurnTools;
  /** How a prompt the user adds mid-turn (a steer) becomes a message (the sanitiser escapes it). */
  userMessage: (text: string) => ChatMessage;
}

/** What the loop does with a model call's reply (reviewStep's control value). */
export type StepControl =
  /** The reply stands (an answer, or native tool calls). */
  | { kind: 'keep' }
  /** Discard the reply, record it as `discarded`, add `reminder` and call the model again. */
  | { kind: 'retry'; reminder: string; tools: string[] }
  /**
   * The reply's text shows as `displayText` and `calls` run through the normal tool path; then
   * `report` turns their results into the messages the model gets (instead of native tool messages).
   */
  | { kind: 'replace'; displayText: string; calls: ToolCall[]; report: (messages: ChatMessage[], results: { call: ToolCall; result: ToolResult }[], steers: readonly string[]) => void }
  /** End the turn with this error. */
  | { kind: 'stop'; error: Error };

/** Per-turn state a capability keeps between its stages (one map per run). */
export type TurnScratch = Map<string, unknown>;

export interface HookInputs {
  turnStart: RunInfo;
  prepareRequest: RunInfo & { turn: TurnSpec; scratch: TurnScratch };
  beforeModelCall: RunInfo & { step: number; turn: TurnSpec; specs: readonly ToolSpec[]; scratch: TurnScratch };
  modelStream: RunInfo & { step: number; scratch: TurnScratch };
  streamDelta: RunInfo & { kind: 'text' | 'reasoning'; delta: string };
  afterModelCall: RunInfo & { step: number; text: string; toolCalls: readonly ToolCall[]; usage: Usage };
  reviewStep: RunInfo & { step: number; text: string; toolCalls: readonly ToolCall[]; scratch: TurnScratch };
  beforeTool: RunInfo & { call: ToolCall; tool: AgentTool; turn: TurnSpec; itemId: string };
  afterTool: RunInfo & { call: ToolCall; tool: AgentTool; status: 'completed' | 'failed' | 'interrupted'; result: ToolResult | null };
  turnEnd: RunInfo & { status: EndedRunStatus };
}

export interface HookOutputs {
  turnStart: void;
  prepareRequest: TurnRequest;
  beforeModelCall: { messages: ChatMessage[] };
  modelStream: { stream: AsyncIterable<ProviderEvent> };
  streamDelta: void;
  afterModelCall: void;
  reviewStep: { control: StepControl };
  /** `veto`: the call does not run and the model is told why; `context`: added to the tool's context. */
  beforeTool: { args: unknown; veto?: string; context: Partial<ToolContext> };
  afterTool: { result: ToolResult | null };
  turnEnd: void;
}

export type HookStage = keyof HookInputs;
/** Kept for handlers written against the observe-only stages: the input of a stage. */
export type HookContexts = HookInputs;
export const HOOK_STAGES: readonly HookStage[] = ['turnStart', 'prepareRequest', 'beforeModelCall', 'modelStream', 'streamDelta', 'afterModelCall', 'reviewStep', 'beforeTool', 'afterTool', 'turnEnd'];

/** prepareRequest's phases, so a handler's place does not depend on which module was installed first. */
export const PREPARE_ORDER = {
  /** The thread's history after the system message (the conversation module). */
  history: 0,
  /** Which tools the turn offers (Plan mode's filter, then the MCP tool catalog). */
  tools: 100,
  /** The system prompt (rules and variables, then what the offered tools need said). */
  system: 200,
  /** The history's messages (the turn's rules block, a handoff preamble, app contexts). */
  messages: 300,
} as const;

export interface HookOptions {
  /** Shown in reported errors ("checkpoints: …"). */
  name: string;
  /** Lower runs first (default 0); equal orders run in install order. */
  order?: number;
  /** The loop awaits it before going on (default true). Ignored for the synchronous stages. */
  blocking?: boolean;
  /** A blocking handler that takes longer has failed (its failure policy applies); default: no limit. */
  timeoutMs?: number;
  /** `stopsTurn`: its failure fails the turn; `reported` (default): the failure is reported, the turn goes on. */
  failure?: 'stopsTurn' | 'reported';
}

export type HookHandler<S extends HookStage> = (input: HookInputs[S], output: HookOutputs[S]) => void | Promise<void>;

interface Entry<S extends HookStage> { handler: HookHandler<S>; name: string; order: number; seq: number; blocking: boolean; stopsTurn: boolean; timeoutMs: number | null }
type Entries = { [S in HookStage]: Entry<S>[] };

/** A handler failure that stops the turn; the message names the handler. */
export class HookFailure extends Error {
  override readonly name = 'HookFailure';
  constructor(readonly hook: string, readonly stage: HookStage, override readonly cause: unknown) {
    super(`${hook} (${stage}): ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** A blocking handler that did not finish within its `timeoutMs`. */
export class HookTimeout extends Error {
  override readonly name = 'HookTimeout';
  constructor(readonly hook: string, readonly stage: HookStage, readonly timeoutMs: number) {
    super(`${hook} did not finish its ${stage} stage within ${timeoutMs} ms`);
  }
}

/**
 * The text a failed turn shows for `e`: a stopsTurn handler's own typed error (a VoxError, written
 * for people — the repetition guard's "stopped: the model repeated itself (…)") as it is, any
 * other failure with the handler named.
 */
export function turnFailureText(e: unknown): string {
  if (isDiskFull(e)) return DISK_FULL_MESSAGE;
  if (e instanceof HookFailure && e.cause instanceof VoxError) return e.cause.message;
  return e instanceof Error ? e.message : String(e);
}

/** The typed error of a failed turn (`run.ended`'s `failure`): a full disk wherever it was met, a VoxError, or one a stage stopped the turn with; null for untyped failures. */
export function turnFailureOf(e: unknown): RunFailure | null {
  if (isDiskFull(e)) return { domain: 'platform', code: 'diskFull' };
  const typed = e instanceof HookFailure ? e.cause : e;
  return typed instanceof VoxError ? { domain: typed.domain, code: typed.code } : null;
}

let installed = 0;
/** Moves on every install and uninstall, so a bus's sorted handler lists are rebuilt only then (not per streamed delta). */
let generation = 0;

function withTimeout<T>(p: Promise<T>, ms: number | null, onTimeout: () => Error): Promise<T> {
  if (ms === null) return p;
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

export class HookBus {
  private readonly entries: Entries = {
    turnStart: [], prepareRequest: [], beforeModelCall: [], modelStream: [], streamDelta: [], afterModelCall: [], reviewStep: [], beforeTool: [], afterTool: [], turnEnd: [],
  };

  constructor(
    /** Receives failures of `reported` handlers and of non-blocking ones. */
    private readonly onError: (e: unknown, hook: string, stage: HookStage) => void = (e, hook, stage) => console.error(`[vox] hook ${hook} (${stage}) failed:`, e),
    private readonly parent?: HookBus,
  ) {}

  /** Installs a handler; returns its uninstaller. */
  on<S extends HookStage>(stage: S, handler: HookHandler<S>, opts: HookOptions): () => void {
    const entry: Entry<S> = {
      handler, name: opts.name, order: opts.order ?? 0, seq: installed++, blocking: opts.blocking ?? true,
      stopsTurn: opts.failure === 'stopsTurn', timeoutMs: opts.timeoutMs ?? null,
    };
    const list = this.entries[stage] as Entry<S>[];
    list.push(entry);
    generation++;
    return () => {
      const i = list.indexOf(entry);
      if (i >= 0) list.splice(i, 1);
      generation++;
    };
  }

  /** A bus that runs this bus's handlers, then its own (one run's extra handlers). */
  with(): HookBus {
    return new HookBus(this.onError, this);
  }

  private readonly sorted = new Map<HookStage, { generation: number; list: Entry<HookStage>[] }>();

  /** The stage's handlers, the parent's and this bus's, by order (then install order); cached until a handler is installed or removed. */
  private all<S extends HookStage>(stage: S): Entry<S>[] {
    const cached = this.sorted.get(stage);
    if (cached && cached.generation === generation) return cached.list as unknown as Entry<S>[];
    const own = this.entries[stage] as Entry<S>[];
    const list = (this.parent ? [...this.parent.all(stage), ...own] : [...own]).sort((a, b) => a.order - b.order || a.seq - b.seq);
    this.sorted.set(stage, { generation, list: list as unknown as Entry<HookStage>[] });
    return list;
  }

  /**
   * Runs the stage's handlers in order (blocking ones awaited, each within its time limit) on
   * `output`, and returns it; throws HookFailure for a `stopsTurn` failure.
   */
  async run<S extends Exclude<HookStage, 'streamDelta' | 'modelStream'>>(stage: S, input: HookInputs[S], ...rest: HookOutputs[S] extends void ? [] : [output: HookOutputs[S]]): Promise<HookOutputs[S]> {
    const output = rest[0] as HookOutputs[S];
    for (const e of this.all(stage)) {
      if (!e.blocking) {
        void Promise.resolve()
          .then(() => e.handler(input, output))
          .catch((err: unknown) => this.onError(err, e.name, stage));
        continue;
      }
      try {
        await withTimeout(Promise.resolve(e.handler(input, output)), e.timeoutMs, () => new HookTimeout(e.name, stage, e.timeoutMs!));
      } catch (err) {
        if (e.stopsTurn) throw new HookFailure(e.name, stage, err);
        this.onError(err, e.name, stage);
      }
    }
    return output;
  }

  /** Runs a synchronous stage's handlers; a `stopsTurn` failure throws HookFailure (the stream is aborted). */
  runSync<S extends 'streamDelta' | 'modelStream'>(stage: S, input: HookInputs[S], ...rest: HookOutputs[S] extends void ? [] : [output: HookOutputs[S]]): HookOutputs[S] {
    const output = rest[0] as HookOutputs[S];
    for (const e of this.all(stage)) {
      try {
        const r = e.handler(input, output) as unknown;
        if (r && typeof (r as Promise<void>).catch === 'function') (r as Promise<void>).catch((err: unknown) => this.onError(err, e.name, stage));
      } catch (err) {
        if (e.stopsTurn) throw new HookFailure(e.name, stage, err);
        this.onError(err, e.name, stage);
      }
    }
    return output;
  }

  /** The streamDelta stage (kept short: it runs for every delta). */
  delta(input: HookInputs['streamDelta']): void {
    this.runSync('streamDelta', input);
  }

  /** Whether any handler is installed on `stage` (the loop skips building contexts nobody reads). */
  has(stage: HookStage): boolean {
    return this.entries[stage].length > 0 || (this.parent?.has(stage) ?? false);
  }
}
