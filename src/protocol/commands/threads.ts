/**
 * Thread commands: list (paged), read one, subscribe to its events, watch the list, create,
 * rename, delete, resolve a short id. Subscriptions answer `result {target}` after their replay; `unsubscribe` takes
 * that target. Live data comes as `events` / `threadChanged` updates (../updates.ts).
 */
import { arrayOf, bool, int, literal, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { messageStatus, role, runStatus, usageTotals } from '../events';
import { posture } from '../posture';
import { MAX_TITLE_CHARS, name, nonEmpty, seq } from './common';
import { ack, defineCommand } from './define';

/** Threads in one page of `listThreads` when the client names no limit. */
export const DEFAULT_THREAD_PAGE = 50;
/** Most threads in one page. */
export const MAX_THREAD_PAGE = 200;

export const threadSummary = object({
  id: str, title: str, createdAt: int, updatedAt: int, lastSeq: int,
  /** A subagent's thread: the thread that spawned it (top-level lists leave such threads out). */
  parentThreadId: optional(nullable(str)),
  /** Subagent threads under this one (`listChildThreads`). */
  childCount: optional(int),
});
export type ThreadSummary = Infer<typeof threadSummary>;

export const messageView = object({
  id: str, threadId: str, parentId: nullable(str), role, content: str, runId: nullable(str), status: messageStatus, createdAt: int,
  /** When an assistant message was last edited in place (`message.edited`); null or absent: never. */
  editedAt: optional(nullable(int)),
});
export type MessageView = Infer<typeof messageView>;

/** A run's rate-limit wait (SPEC 2.4): when it resumes on its own, unless auto-resume is off or it is snoozed. */
export const rateLimitWaitView = object({
  resetAtMs: int, autoResume: bool, snoozedUntilMs: nullable(int), attempt: int, source: literal('provider', 'backoff'), message: str,
});
export type RateLimitWaitView = Infer<typeof rateLimitWaitView>;

export const runSummary = object({
  id: str, threadId: str, ordinal: int, provider: str, model: str, status: runStatus, userMessageId: nullable(str),
  startedAt: int, endedAt: nullable(int), error: nullable(str), usage: usageTotals,
  /** Set while the run waits for a rate limit (thread status waitingRateLimit). */
  waiting: optional(nullable(rateLimitWaitView)),
  /** What the run generated with (../posture.ts); absent for runs recorded before posture existed. */
  posture: optional(nullable(posture)),
});
export type RunSummary = Infer<typeof runSummary>;

/** What a subscription answers: the target `unsubscribe` takes. */
export const subscribed = object({ target: str });

/** A subagent's thread under its parent, with the status of its latest run (null: it never ran). */
export const childThreadView = object({
  id: str, title: str, createdAt: int, updatedAt: int, lastSeq: int, parentThreadId: optional(nullable(str)), childCount: optional(int), status: nullable(runStatus),
});
export type ChildThreadView = Infer<typeof childThreadView>;

export const threadCommands = {
  listChildThreads: defineCommand('listChildThreads', {
    readOnly: true,
    summary: 'The subagent threads a thread spawned, oldest first, each with its status (running, completed, cancelled, failed, interrupted).',
    requires: ['read'],
    params: { threadId: name },
    result: object({ threads: arrayOf(childThreadView) }),
  }),
  listThreads: defineCommand('listThreads', {
    readOnly: true,
    summary: 'One page of threads, most recently updated first; pass `before` (the previous page\'s nextCursor) for the next.',
    requires: ['read'],
    params: { limit: optional(refine(int, (n) => n >= 1 && n <= MAX_THREAD_PAGE, `1..${MAX_THREAD_PAGE}`)), before: optional(str) },
    result: object({ threads: arrayOf(threadSummary), nextCursor: nullable(str) }),
  }),
  getThread: defineCommand('getThread', {
    readOnly: true,
    summary: 'A thread with its active message path and its runs.',
    requires: ['read'],
    params: { threadId: name },
    result: object({ thread: threadSummary, messages: arrayOf(messageView), runs: arrayOf(runSummary) }),
  }),
  resolveThreadId: defineCommand('resolveThreadId', {
    readOnly: true,
    summary: 'The thread a reference names: its full id, or a short id (a prefix of the id\'s random part, ../short-ids.ts); null when none matches; `store/ambiguousId` naming the matches when several do.',
    requires: ['read'],
    params: { ref: name },
    result: object({ threadId: nullable(str) }),
  }),
  createThread: defineCommand('createThread', {
    summary: 'Creates a thread (with the given id if it does not exist yet).',
    requires: ['startThreads'],
    params: { threadId: optional(name), title: nonEmpty(MAX_TITLE_CHARS) },
    result: object({ threadId: str, created: bool }),
  }),
  subscribeThread: defineCommand('subscribeThread', {
    readOnly: true,
    summary: 'The thread\'s events after `afterSeq` (an `events` update), then every new one live.',
    requires: ['read'],
    params: { threadId: name, afterSeq: seq },
    result: subscribed,
  }),
  watchThreads: defineCommand('watchThreads', {
    readOnly: true,
    summary: 'A `threadChanged` update whenever any thread is created, renamed, deleted, rewound, switches branch, runs, is checkpointed or has an answer edited.',
    requires: ['read'],
    params: {},
    result: subscribed,
  }),
  unsubscribe: defineCommand('unsubscribe', {
    readOnly: true,
    summary: 'Ends a subscription by its target (`thread:<id>`, `turn:<id>`, `threads`, `variants`).',
    requires: ['read'],
    params: { target: name },
    result: ack,
  }),
  renameThread: defineCommand('renameThread', {
    summary: 'Renames a thread.',
    requires: ['write'],
    params: { threadId: name, title: nonEmpty(MAX_TITLE_CHARS) },
    result: object({ threadId: str }),
  }),
  deleteThread: defineCommand('deleteThread', {
    summary: 'Deletes a thread (its events stay in the log).',
    requires: ['write'],
    params: { threadId: name },
    result: object({ threadId: str }),
  }),
};
