/**
 * Engine → client updates. Only new data travels: event batches from a sequence number and
 * batches of turn chunks; snapshots are sent once when a client subscribes. Clients decode
 * through `updateEnvelope` (and each event through `eventEnvelope`), so an older webview keeps
 * working against a newer engine: unknown variants are kept, not fatal.
 */
import { forwardCompatible } from './wire/envelope';
import { arrayOf, bool, int, literal, nullable, object, optional, str, unknownValue, type Infer } from './wire/validators';

const role = literal('user', 'assistant', 'system');
const seqTime = { seq: int, time: int };

/** Validators for each stored event (see ./events.ts for the TypeScript shapes). */
export const eventEnvelope = forwardCompatible({
  'thread.created': object({ type: literal('thread.created'), ...seqTime, threadId: str, title: str }),
  'thread.renamed': object({ type: literal('thread.renamed'), ...seqTime, threadId: str, title: str }),
  'thread.deleted': object({ type: literal('thread.deleted'), ...seqTime, threadId: str }),
  'message.added': object({
    type: literal('message.added'), ...seqTime, threadId: str, messageId: str, parentId: nullable(str), role, content: str,
    runId: nullable(str), status: literal('complete', 'interrupted', 'cancelled', 'failed'),
  }),
  'run.started': object({
    type: literal('run.started'), ...seqTime, threadId: str, runId: str, ordinal: int, provider: str, model: str, ownerPid: int, userMessageId: str,
  }),
  'item.started': object({
    type: literal('item.started'), ...seqTime, threadId: str, runId: str, itemId: str, ordinal: int,
    kind: literal('text', 'reasoning', 'toolCall'), toolName: nullable(str), arguments: nullable(str),
  }),
  'item.completed': object({
    type: literal('item.completed'), ...seqTime, threadId: str, runId: str, itemId: str,
    status: literal('completed', 'denied', 'failed', 'interrupted'), content: str, isError: bool,
  }),
  'checkpoint.captured': object({
    type: literal('checkpoint.captured'), ...seqTime, threadId: str, runId: nullable(str), ref: str, ordinal: int,
    trigger: literal('tool', 'turnEnd', 'manual'), toolName: nullable(str), changedCount: int, skippedCount: int,
    overBudgetMs: nullable(int), rewindTo: nullable(str),
  }),
  'checkpoint.restored': object({
    type: literal('checkpoint.restored'), ...seqTime, threadId: str, ordinal: int, mode: literal('files', 'thread', 'both'),
    restorePoint: nullable(str), changedCount: int,
  }),
  'checkpoint.pruned': object({ type: literal('checkpoint.pruned'), ...seqTime, threadId: str, refs: arrayOf(str) }),
  'thread.rewound': object({ type: literal('thread.rewound'), ...seqTime, threadId: str, toMessageId: nullable(str) }),
  'run.ended': object({
    type: literal('run.ended'), ...seqTime, threadId: str, runId: str, status: literal('completed', 'cancelled', 'failed', 'interrupted'),
    error: nullable(str), usage: object({ inputTokens: int, outputTokens: int }),
  }),
});

/** Chunk kinds are open: a newer engine may add kinds an older client skips (today: text, reasoning, toolCall, toolResult, status). */
const chunk = object({ turnId: str, seq: int, kind: str, data: str });
const threadSummary = object({ id: str, title: str, createdAt: int, updatedAt: int, lastSeq: int });
const inReplyTo = optional(str);

export const eventsUpdate = object({ type: literal('events'), threadId: nullable(str), events: arrayOf(unknownValue) });
export const turnChunksUpdate = object({ type: literal('turnChunks'), turnId: str, chunks: arrayOf(chunk) });
export const turnEndedUpdate = object({
  type: literal('turnEnded'), turnId: str, status: literal('completed', 'cancelled', 'failed', 'interrupted'), error: optional(str),
});
export const threadsUpdate = object({ type: literal('threads'), inReplyTo, threads: arrayOf(threadSummary) });
export const approvalRequestedUpdate = object({
  type: literal('approvalRequested'), callId: str, toolName: str, argumentsJson: str, toolClass: literal('read', 'write', 'execute'),
});
export const approvalSettledUpdate = object({ type: literal('approvalSettled'), callId: str, decision: literal('approved', 'denied', 'cancelled') });
export const accepted = object({ type: literal('accepted'), inReplyTo, threadId: optional(str), runId: optional(str) });
export const errorUpdate = object({ type: literal('error'), inReplyTo, code: str, message: str });

export const modelChoice = object({ ref: str, label: str, isDemo: bool });
export const settingsUpdate = object({
  type: literal('settings'), inReplyTo, model: str, models: arrayOf(modelChoice),
  /** Set while the demo model is active: the banner text the UI must show. */
  demoNotice: nullable(str),
});

/** Host (VS Code) → webview instructions that are not engine data: palette commands acting on the view. */
export const hostCommandUpdate = object({
  type: literal('hostCommand'),
  command: literal('newThread', 'focusComposer', 'insertPrompt', 'openThread'),
  text: optional(str),
  threadId: optional(str),
});

export const updateEnvelope = forwardCompatible({
  hostCommand: hostCommandUpdate,
  settings: settingsUpdate,
  events: eventsUpdate,
  turnChunks: turnChunksUpdate,
  turnEnded: turnEndedUpdate,
  threads: threadsUpdate,
  approvalRequested: approvalRequestedUpdate,
  approvalSettled: approvalSettledUpdate,
  accepted,
  error: errorUpdate,
});

export type EngineUpdate =
  | Infer<typeof hostCommandUpdate>
  | Infer<typeof settingsUpdate>
  | Infer<typeof eventsUpdate>
  | Infer<typeof turnChunksUpdate>
  | Infer<typeof turnEndedUpdate>
  | Infer<typeof threadsUpdate>
  | Infer<typeof approvalRequestedUpdate>
  | Infer<typeof approvalSettledUpdate>
  | Infer<typeof accepted>
  | Infer<typeof errorUpdate>;
