/**
 * Run commands: send a prompt (starts a run; a thread has at most one active run, so a prompt to a
 * running thread is queued — or refused with `run/threadBusy` when the client asks so —), cancel one run or every run (main threads and variants),
 * list the active runs, and stream a run's turn (`turnChunks` / `turnEnded` updates).
 */
import { arrayOf, bool, int, literal, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { MAX_PROMPT_CHARS, modelRef, name, nonEmpty, seq } from './common';
import { defineCommand } from './define';
import { rateLimitWaitView, subscribed } from './threads';
import { mentionList } from './context';
import { handoffChoice } from '../handoff';
import { permissionMode, workMode } from '../events';

/** The modes a new thread starts in (sendPrompt with threadId null); each unset one takes the default, or the grant's ceiling (./grants.ts GrantModes). */
export const newThreadModes = object({ permissionMode: optional(permissionMode), workMode: optional(workMode) });

/** Longest batching delay a client may ask of `subscribeTurn`. */
export const MAX_TURN_BATCH_DELAY_MS = 1_000;

export const activeRun = object({
  runId: str,
  threadId: str,
  /** `thread`: a prompt in a thread; `variant`: one variant of a variants run (SPEC 4.3); `subagent`: a child thread's run (SPEC 2.4). */
  kind: literal('thread', 'variant', 'subagent'),
  model: str,
  /** Where its tools act (the workspace, or the variant's worktree). */
  workspaceRoot: str,
  startedAt: int,
  /** Set while it waits for a rate limit. */
  waiting: optional(nullable(rateLimitWaitView)),
});
export type ActiveRun = Infer<typeof activeRun>;

export const runCommands = {
  sendPrompt: defineCommand('sendPrompt', {
    exclusive: 'thread',
    summary: 'Starts a run: the prompt in a thread (a new one when threadId is null) with the given or the default model; while the thread runs, the prompt is queued.',
    requires: (p: { threadId: string | null }) => (p.threadId === null ? ['write', 'startThreads'] : ['write']),
    params: {
      threadId: nullable(name), prompt: nonEmpty(MAX_PROMPT_CHARS), model: optional(modelRef), parentMessageId: optional(name),
      /** While the thread runs: `queue` (default) waits in the thread's queue, `refuse` answers `run/threadBusy`. */
      ifBusy: optional(literal('queue', 'refuse')),
      /** Queued: promote it at once, so the running turn takes it at its next boundary. */
      steer: optional(bool),
      /** @-mentions the engine resolves into the prompt (files, folders, problems, terminal, git, selection, threads; ../mentions.ts). */
      mentions: optional(mentionList),
      /** true: a mention that cannot be attached (a missing file, binary, nothing selected) refuses the send (`context/mentionNotAttached`) instead of going as a warning in the message. */
      strictMentions: optional(bool),
      /** false: not added to the prompt history (a prompt the client wrote itself, such as "Continue"). */
      history: optional(bool),
      /** The context handoff this prompt gets (SPEC 5.1, ../handoff.ts), built even without a model change; default: automatic on a change, deltaSinceTargetLastSeen. */
      handoff: optional(handoffChoice),
      /** The permission and work mode of the new thread (threadId null only); above the session grant's modes: `protocol/capabilityDenied`. */
      newThread: optional(newThreadModes),
    },
    /**
     * `runId` when it started; `queued` when it waits (`runId` null). `rules`: the rules attached
     * (SPEC 6.1); `warnings`: `@words` that are neither a rule nor a known mention; `prompt`: the
     * stored prompt, when stripping changed it.
     */
    result: object({
      threadId: str, runId: nullable(str), queued: nullable(object({ entryId: str, position: int })),
      rules: optional(arrayOf(str)), warnings: optional(arrayOf(str)),
      /** The prompt as the thread keeps it when it differs from the one sent (its manual rule tokens stripped). */
      prompt: optional(str),
    }),
  }),
  cancelRun: defineCommand('cancelRun', {
    readOnly: true,
    summary: 'Stops one run; what streamed so far is kept.',
    requires: ['write'],
    params: { runId: name },
    result: object({ runId: str, cancelled: bool }),
  }),
  cancelAllRuns: defineCommand('cancelAllRuns', {
    readOnly: true,
    summary: 'Stops every active run of this engine, variants included.',
    requires: ['write'],
    params: {},
    result: object({ cancelled: int }),
  }),
  listRuns: defineCommand('listRuns', {
    readOnly: true,
    summary: 'The runs active in this engine now.',
    requires: ['read'],
    params: { threadId: optional(name) },
    result: object({ runs: arrayOf(activeRun) }),
  }),
  listWaits: defineCommand('listWaits', {
    readOnly: true,
    summary: 'Every run waiting for a rate limit, in any process on this database (`orphaned`: its process is gone; Resume now takes it over).',
    requires: ['read'],
    params: {},
    result: object({ waits: arrayOf(object({ runId: str, threadId: str, model: str, orphaned: bool, waiting: rateLimitWaitView })) }),
  }),
  resumeRun: defineCommand('resumeRun', {
    summary: 'Resume now: a run waiting for a rate limit retries at once (one whose process is gone is taken over by this engine).',
    requires: ['write'],
    params: { runId: name },
    result: object({ runId: str, waiting: nullable(rateLimitWaitView) }),
  }),
  snoozeRun: defineCommand('snoozeRun', {
    summary: 'Snooze: a run waiting for a rate limit does not resume before `forMs` from now.',
    requires: ['write'],
    params: { runId: name, forMs: refine(int, (n) => n >= 0, 'non-negative integer') },
    result: object({ runId: str, waiting: nullable(rateLimitWaitView) }),
  }),
  setAutoResume: defineCommand('setAutoResume', {
    summary: 'Turns automatic resume of a run waiting for a rate limit off (it waits for Resume now) or back on.',
    requires: ['write'],
    params: { runId: name, autoResume: bool },
    result: object({ runId: str, waiting: nullable(rateLimitWaitView) }),
  }),
  subscribeTurn: defineCommand('subscribeTurn', {
    readOnly: true,
    summary: 'The turn\'s chunks after `afterSeq` (a `turnChunks` update), then new ones batched, then `turnEnded`.',
    requires: ['read'],
    params: {
      turnId: name,
      afterSeq: seq,
      /** How long new chunks may wait to be merged into one update (default 33 ms); 0: each as it streams (in-process clients). */
      maxDelayMs: optional(refine(int, (n) => n >= 0 && n <= MAX_TURN_BATCH_DELAY_MS, `0..${MAX_TURN_BATCH_DELAY_MS}`)),
    },
    result: subscribed,
  }),
};
