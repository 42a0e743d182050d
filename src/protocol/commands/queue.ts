/**
 * Queue commands (SPEC 2.4): the prompts waiting for a thread's run to end. `sendPrompt` while
 * the thread runs queues (./runs.ts, `ifBusy`); these list, edit, reorder and cancel the waiting
 * entries, tell what became of one, and promote one to steer the running turn at its next
 * boundary. Every change is a `queue.*` event on the thread, so subscribers see it.
 */
import { arrayOf, bool, int, literal, nullable, object, str, type Infer } from '../wire/validators';
import { MAX_PROMPT_CHARS, count, name, nonEmpty } from './common';
import { ack, defineCommand } from './define';

export const queueStatus = literal('queued', 'started', 'steered', 'cancelled');

export const queuedPromptView = object({
  entryId: str,
  threadId: str,
  prompt: str,
  /** The model it runs with; null: the default when it starts. */
  model: nullable(str),
  /** 0 = next among the waiting entries; null once it left the queue. */
  position: nullable(int),
  /** Promoted: the running turn takes it at its next boundary. */
  steer: bool,
  status: queueStatus,
  /** The run that took it (started or steered). */
  runId: nullable(str),
  /** The process that queued it (it starts it when its turn comes). */
  ownerPid: int,
  createdAt: int,
});
export type QueuedPromptView = Infer<typeof queuedPromptView>;

const entryRef = { threadId: name, entryId: name };

export const queueCommands = {
  listQueue: defineCommand('listQueue', {
    readOnly: true,
    summary: 'The prompts waiting for the thread\'s run to end, next first.',
    requires: ['read'],
    params: { threadId: name },
    result: object({ entries: arrayOf(queuedPromptView) }),
  }),
  getQueued: defineCommand('getQueued', {
    readOnly: true,
    summary: 'One queued prompt and what became of it (still queued, started or steered into a run, cancelled).',
    requires: ['read'],
    params: { entryId: name },
    result: object({ entry: queuedPromptView }),
  }),
  editQueued: defineCommand('editQueued', {
    summary: 'Replaces the text of a waiting prompt.',
    requires: ['write'],
    params: { ...entryRef, prompt: nonEmpty(MAX_PROMPT_CHARS) },
    result: ack,
  }),
  moveQueued: defineCommand('moveQueued', {
    summary: 'Moves a waiting prompt to another place in the queue (0 = next).',
    requires: ['write'],
    params: { ...entryRef, toIndex: count },
    result: ack,
  }),
  cancelQueued: defineCommand('cancelQueued', {
    summary: 'Takes a prompt out of the queue; it never runs.',
    requires: ['write'],
    params: entryRef,
    result: ack,
  }),
  steerQueued: defineCommand('steerQueued', {
    summary: 'promoteToSteer: the running turn takes the prompt at its next boundary (before its next model call or tool batch) without stopping; an idle thread starts it now.',
    requires: ['write'],
    params: entryRef,
    result: object({ outcome: literal('steering', 'started'), runId: nullable(str) }),
  }),
};
