/**
 * The engine's event vocabulary: every change to a thread is one of these, appended to the
 * SQLite event log with a sequence number and projected into tables. Clients receive them as
 * they are stored, so they are part of the protocol contract.
 *
 * Each event is defined once, as a validator; its TypeScript type is derived from it
 * (`VoxEvent`, `EventOf<'run.ended'>`). Fields added later are optional so that events stored by
 * an older build still decode. `eventEnvelope` decodes stored events (with `seq` and `time`)
 * forward-compatibly: a newer engine's event types come out as `unknown`, not as errors.
 */
import { forwardCompatible, type ForwardCompatibleEnvelope } from './wire/envelope';
import { arrayOf, bool, int, literal, nullable, object, optional, str, type Infer, type ObjectOf, type Shape, type Validator } from './wire/validators';
import { posture } from './posture';
import { handoffSummaryShape } from './handoff';
import { mcpAppView } from './mcp-apps';

/** The error of a run whose process went away mid-turn (`run.ended` cause `ownerEnded`), as the CLI and the store show it. */
export const OWNER_ENDED_ERROR = 'stopped by a reload: the window or process running this turn ended before it finished; the text so far is kept';

export const role = literal('user', 'assistant', 'system');
export const messageStatus = literal('complete', 'interrupted', 'cancelled', 'failed');
export const runStatus = literal('running', 'completed', 'cancelled', 'failed', 'interrupted');
export const endedRunStatus = literal('completed', 'cancelled', 'failed', 'interrupted');
export const itemKind = literal('text', 'reasoning', 'toolCall');
export const itemStatus = literal('started', 'completed', 'denied', 'failed', 'interrupted');
export const checkpointTrigger = literal('tool', 'turnEnd', 'manual');
export const restoreMode = literal('files', 'thread', 'both');
/** Plan mode (read tools only, answer with a plan) or Act mode, per thread. */
export const workMode = literal('plan', 'act');
export const permissionMode = literal('ask', 'autoEdits', 'fullAuto');
export const planStepStatus = literal('pending', 'inProgress', 'done', 'skipped');
/** Why a tool call ran, was asked or was refused: the deciding rule (or mode) and a sentence. */
export const permissionInfo = object({
  decision: literal('allow', 'ask', 'deny'),
  source: literal('rule', 'mode', 'plan', 'parser', 'rulesError', 'protected'),
  rule: nullable(str),
  reason: str,
});
export const planStepInput = object({ id: str, text: str });

export type Role = Infer<typeof role>;
export type MessageStatus = Infer<typeof messageStatus>;
export type RunStatus = Infer<typeof runStatus>;
export type EndedRunStatus = Infer<typeof endedRunStatus>;
export type ItemKind = Infer<typeof itemKind>;
export type ItemStatus = Infer<typeof itemStatus>;
export type CheckpointTrigger = Infer<typeof checkpointTrigger>;
export type RestoreMode = Infer<typeof restoreMode>;
export type WorkMode = Infer<typeof workMode>;
export type PermissionModeName = Infer<typeof permissionMode>;
export type PlanStepStatus = Infer<typeof planStepStatus>;
export type PermissionInfo = Infer<typeof permissionInfo>;

/**
 * Token usage of a run, summed over its model calls. `inputTokens` counts every prompt token,
 * cached ones included; the cache and reasoning figures (when the provider reports them) are
 * parts of it and of `outputTokens`, kept apart because they are priced apart.
 */
/** The typed error that failed a run: a domain and a code of ERROR_CODES (./wire/vox-error.ts). */
export const runFailure = object({ domain: str, code: str });
export type RunFailure = Infer<typeof runFailure>;

export const usageTotals = object({
  inputTokens: int,
  outputTokens: int,
  /** Prompt tokens served from the provider's cache. */
  cacheReadTokens: optional(int),
  /** Prompt tokens written to the provider's cache. */
  cacheWriteTokens: optional(int),
  /** Of cacheWriteTokens, those written for 1 hour (priced apart from 5-minute writes). */
  cacheWrite1hTokens: optional(int),
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens: optional(int),
  /** True when some of it was counted by Vox's tokenizer, not reported by the provider (a run stopped mid-stream). */
  estimated: optional(bool),
});
export type UsageTotals = Infer<typeof usageTotals>;

/** The payload shape of every event type (without the `type` tag, `seq` and `time`). */
const SHAPES = {
  'thread.created': {
    threadId: str, title: str,
    /** A subagent's thread: the thread and run that spawned it (it is listed under its parent). */
    parentThreadId: optional(nullable(str)), parentRunId: optional(nullable(str)),
    /** An imported session (src/engine/importers/): the tool it came from, its id there, and JSON {cwd, gitBranch, version}. */
    source: optional(nullable(str)), sourceId: optional(nullable(str)), sourceMeta: optional(nullable(str)),
    /** The workspace (canonical root path) it belongs to, stamped by the store that appends it; absent in events of older builds. */
    workspace: optional(nullable(str)),
  },
  'thread.renamed': { threadId: str, title: str },
  'thread.deleted': { threadId: str },
  'message.added': {
    threadId: str, messageId: str, parentId: nullable(str), role, content: str, runId: nullable(str), status: messageStatus,
  },
  'run.started': {
    threadId: str, runId: str, ordinal: int, provider: str, model: str, ownerPid: int, userMessageId: str,
    /** When the owner process started (ms since the epoch): with the pid, who runs it (pids are reused). */
    ownerStartedAt: optional(nullable(int)),
    /** What the answer is generated with (./posture.ts); absent in events of older builds. */
    posture: optional(posture),
  },
  'item.started': {
    threadId: str, runId: str, itemId: str, ordinal: int, kind: itemKind, toolName: nullable(str), arguments: nullable(str),
    /** Tool calls: what the permission rules and mode decided, before the call ran (or was asked, or refused). */
    permission: optional(permissionInfo),
    /** Tool calls: the provider's opaque signature of the call (Gemini `thoughtSignature`), sent back byte for byte on replay. */
    thoughtSignature: optional(str),
  },
  'item.completed': {
    threadId: str, runId: str, itemId: str, status: literal('completed', 'denied', 'failed', 'interrupted'), content: str, isError: bool,
    /** Tool calls: the MCP App (SPEC 5.3, ./mcp-apps.ts) the call returned; absent for other calls and in older events. */
    app: optional(mcpAppView),
  },
  'checkpoint.captured': {
    threadId: str, runId: nullable(str),
    /** Hidden git ref, e.g. refs/vox/checkpoints/<thread>/<ordinal>. */
    ref: str,
    ordinal: int, trigger: checkpointTrigger, toolName: nullable(str), changedCount: int, skippedCount: int,
    /** Set when the capture took longer than its budget (reported, never silently disabled). */
    overBudgetMs: nullable(int),
    /** The message the thread rewinds to when this checkpoint is restored with mode thread/both. */
    rewindTo: nullable(str),
  },
  'checkpoint.restored': { threadId: str, ordinal: int, mode: restoreMode, restorePoint: nullable(str), changedCount: int },
  /** Checkpoint refs deleted by a prune (the git objects go with git's own garbage collection). */
  'checkpoint.pruned': { threadId: str, refs: arrayOf(str) },
  /** The thread's head moves back to `toMessageId` (null: before the first message); later messages stay as a branch. */
  'thread.rewound': { threadId: str, toMessageId: nullable(str) },
  /** The user picked a branch: the head moves to `toMessageId` (a leaf) as with a rewind; every message stays. */
  'thread.branchSwitched': { threadId: str, toMessageId: str },
  /** An assistant message edited in place: the projection takes `content` (and the edit time); its `message.added` keeps the original. */
  'message.edited': { threadId: str, messageId: str, content: str },
  'run.ended': {
    threadId: str, runId: str, status: endedRunStatus, error: nullable(str), usage: usageTotals,
    /** `length`: the last reply stopped at the output-token limit (OpenAI `finish_reason: length`, Anthropic `max_tokens`, llama.cpp `maxTokens`). */
    stopReason: optional(literal('end', 'length')),
    /**
     * Why an `interrupted` run ended, when Vox knows: `ownerEnded` — the process running it went
     * away mid-turn (a window reload or close, a killed CLI): its engine closed it while shutting
     * down, or the next engine did when it found the process gone; its streamed text is kept. Clients say "stopped by a reload" and offer Retry.
     */
    cause: optional(literal('ownerEnded')),
    /** A `failed` run's typed error (`platform/diskFull`: "the disk is full"), when the failure was one. */
    failure: optional(runFailure),
  },
  /** A prompt sent while the thread ran: it waits in the thread's queue (SPEC 2.4). */
  'queue.added': {
    threadId: str, entryId: str, prompt: str, model: nullable(str),
    /** The process that queued it starts it when its turn comes (while it lives; otherwise any engine does). */
    ownerPid: int, ownerStartedAt: nullable(int),
  },
  'queue.edited': { threadId: str, entryId: str, prompt: str },
  /** The entry moves to `toIndex` (0 = next) among the thread's queued entries. */
  'queue.moved': { threadId: str, entryId: str, toIndex: int },
  /** The entry should steer the running turn at its next boundary instead of waiting for it to end. */
  'queue.steerRequested': { threadId: str, entryId: str },
  'queue.removed': { threadId: str, entryId: str, reason: literal('cancelled', 'started', 'steered'), runId: nullable(str) },
  /**
   * A queued prompt taken into the running turn at a boundary (before a model call or a tool
   * batch): `ordinal` places it among the run's items; `skippedTools` names the tool calls the
   * model had just asked for, which did not run because the new instructions came first.
   */
  'run.steered': { threadId: str, runId: str, itemId: str, ordinal: int, entryId: str, prompt: str, skippedTools: arrayOf(str) },
  /**
   * SPEC 3.2: the model's reply was a false refusal to use its tools (`discarded`, its text); it
   * was dropped from the answer and the model asked once more, reminded of `tools`. `ordinal`
   * places the note among the run's items.
   */
  'run.refusalRetried': { threadId: str, runId: str, itemId: str, ordinal: int, discarded: str, tools: arrayOf(str) },
  /**
   * The run's model call hit a rate limit (SPEC 2.4): the run waits until `resetAtMs` (from the
   * provider's headers or body, or exponential backoff when it gave none) and then retries the
   * same call — nothing that already ran is repeated. `usageSoFar` carries the run's usage across
   * a restart.
   */
  'run.waitingRateLimit': {
    threadId: str, runId: str, resetAtMs: int, source: literal('provider', 'backoff'), attempt: int, message: str,
    autoResume: bool, snoozedUntilMs: nullable(int), usageSoFar: usageTotals,
  },
  /** The user changed a waiting run's schedule: the state after the change (`resumeRequested`: resume now). */
  'run.rateLimitChanged': { threadId: str, runId: str, autoResume: bool, snoozedUntilMs: nullable(int), resumeRequested: bool },
  /** The wait is over and the run retries its model call (`by` the timer, or the user's Resume now). */
  'run.resumed': { threadId: str, runId: str, by: literal('timer', 'user') },
  /** A process took over a waiting run whose process had gone (VS Code restarted): it runs there from now on. */
  'run.claimed': { threadId: str, runId: str, ownerPid: int, ownerStartedAt: nullable(int) },
  /**
   * Background work a run started (SPEC 2.4): a subagent (a child thread) or a background command.
   * `awaited` work is waited for before the run ends (settlement); other work keeps running and
   * reports into the thread when it finishes.
   */
  'background.started': { threadId: str, runId: str, handle: str, kind: literal('command', 'subagent'), title: str, awaited: bool, childThreadId: nullable(str) },
  'background.ended': { threadId: str, runId: str, handle: str, status: literal('completed', 'failed', 'cancelled', 'interrupted'), result: str },
  /** Finished background work whose results were given to the model (by `runId`, at its settlement or its start). */
  'background.reported': { threadId: str, runId: str, handles: arrayOf(str) },
  /** The run's model answered, but awaited background work still runs: the run waits for it before it goes on. */
  'run.settling': { threadId: str, runId: str, handles: arrayOf(str) },
  /** The thread switches between Plan and Act (the next turn runs in that mode). */
  'thread.workModeSet': { threadId: str, mode: workMode },
  /** The thread's own permission mode (null: the workspace default from the settings). */
  'thread.permissionModeSet': { threadId: str, mode: nullable(permissionMode) },
  /**
   * The thread came from a bundle (engine/bundles/): later bundles may add to it (never its rights),
   * while a thread made here takes nothing from any bundle. Kept home (not carried in bundles).
   */
  'thread.imported': { threadId: str },
  /**
   * The highest modes a thread may ever run in (a grant's levels: runtime 0 readOnly .. 2
   * fullAccess, interaction 0 plan / 1 default), fixed when a subagent's thread is spawned from its
   * parent's limits; every call of the thread is decided within it, and no command raises the
   * thread above it.
   */
  'thread.ceilingSet': { threadId: str, ceiling: object({ runtime: literal(0, 1, 2), interaction: literal(0, 1) }) },
  /** The thread's own allow rules ("Always allow" for this thread), as they are now (the whole list). */
  'thread.permissionRulesSet': { threadId: str, rules: arrayOf(object({ action: literal('allow'), tool: str, command: optional(str), path: optional(str) })) },
  /** The agent (Plan mode, `submit_plan`) proposed a plan; it replaces the thread's earlier ones. */
  'plan.submitted': { threadId: str, runId: nullable(str), planId: str, title: str, steps: arrayOf(planStepInput) },
  /** The user edited the plan: its title and steps now (steps keep their status by id; new ids start pending). */
  'plan.edited': { threadId: str, planId: str, title: str, steps: arrayOf(planStepInput) },
  /** A step's progress, reported by the agent in Act mode (`update_plan_step`) or ticked by the user. */
  'plan.stepUpdated': { threadId: str, runId: nullable(str), planId: str, stepId: str, status: planStepStatus, note: nullable(str) },
  /** The user chose "Act on this plan": the thread went to Act with the plan attached to the prompt. */
  'plan.actedOn': { threadId: str, planId: str },
  /**
   * A range of the thread's path was compacted (SPEC 3.7, ./compaction.ts): from now on the model
   * sees `summary` in place of the messages `fromMessageId` … `upToMessageId`, which stay unchanged
   * in the store. `compactMessageIndex`: the path index of `upToMessageId` (0-based) when it was
   * written; `supersedes`: earlier compactions inside the range; `runId`: the run that compacted
   * automatically (null for a command).
   */
  'thread.compacted': {
    threadId: str, compactionId: str, mode: literal('full', 'upTo', 'from'), trigger: literal('manual', 'auto'),
    fromMessageId: str, upToMessageId: str, compactMessageIndex: int, coveredMessages: int,
    summary: str, model: str, usage: usageTotals, supersedes: arrayOf(str), runId: nullable(str),
  },
  /**
   * The run's model differs from the run before it: its request got a `<context_handoff>`
   * preamble (SPEC 5.1, engine/handoff/) — what it carried and left out, for the chat's note.
   */
  'handoff.built': { threadId: str, runId: str, ...handoffSummaryShape },
  /**
   * An MCP App (SPEC 5.3) saved its state: `state` (at most MCP_APP_STATE_MAX_BYTES of UTF-8)
   * replaces the earlier state of the tool call's item `itemId`; the app gets it back on load and
   * later turns see it as `<mcp_app_context>` (engine/mcp-apps/).
   */
  'mcpApp.stateSaved': { threadId: str, itemId: str, state: str },
} as const satisfies Record<string, Shape>;

type Shapes = typeof SHAPES;
export type VoxEventType = keyof Shapes;
type Obj<T> = T extends Shape ? ObjectOf<T> : never;
type EventValidators = { [K in VoxEventType]: Validator<{ type: K } & Obj<Shapes[K]>> };
type StoredValidators = { [K in VoxEventType]: Validator<{ type: K; seq: number; time: number } & Obj<Shapes[K]>> };

function build<T>(extra: Shape): T {
  return Object.fromEntries(Object.entries(SHAPES).map(([type, shape]) => [type, object({ type: literal(type), ...extra, ...shape })])) as T;
}

/** One validator per event type, for an event as the engine appends it. */
export const EVENT_VALIDATORS: EventValidators = build<EventValidators>({});
/** The same with `seq` and `time`, for an event as stored and sent. */
export const STORED_EVENT_VALIDATORS: StoredValidators = build<StoredValidators>({ seq: int, time: int });

export type EventOf<K extends VoxEventType> = Infer<EventValidators[K]>;
export type VoxEvent = { [K in VoxEventType]: EventOf<K> }[VoxEventType];
/** An event as stored: with its global sequence number and time (ms since epoch). */
export type StoredEventOf<K extends VoxEventType> = Infer<StoredValidators[K]>;
export type StoredEvent = { [K in VoxEventType]: StoredEventOf<K> }[VoxEventType];

export const EVENT_TYPES = Object.keys(SHAPES) as VoxEventType[];

/** Decodes stored events forward-compatibly (unknown types are kept raw, not errors). */
export const eventEnvelope: ForwardCompatibleEnvelope<StoredEvent> = forwardCompatible(STORED_EVENT_VALIDATORS) as ForwardCompatibleEnvelope<StoredEvent>;
