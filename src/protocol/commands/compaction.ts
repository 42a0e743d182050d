/**
 * Compaction commands (SPEC 3.7): compact a thread's path — `full`, `upTo` a
 * message or `from` a message to the end — into a summary written by the thread's model, and list
 * the compactions of a thread. The path logic is ../compaction.ts, shared with the webview.
 */
import { usageTotals } from '../events';
import { arrayOf, bool, int, literal, nullable, object, optional, str, type Infer } from '../wire/validators';
import { modelRef, name } from './common';
import { defineCommand } from './define';

export const compactionView = object({
  compactionId: str, mode: literal('full', 'upTo', 'from'), trigger: literal('manual', 'auto'),
  fromMessageId: str, upToMessageId: str,
  /** The path index (0-based) of `upToMessageId` when the compaction was written. */
  compactMessageIndex: int,
  coveredMessages: int, summary: str, model: str, usage: usageTotals,
  /** Earlier compactions inside this one's range (the model sees this summary instead). */
  supersedes: arrayOf(str),
  runId: nullable(str),
});
export type CompactionView = Infer<typeof compactionView>;

export const compactionCommands = {
  compactThread: defineCommand('compactThread', {
    summary: 'Compacts the thread\'s path (full, up to a message, or from a message to the end) into a structured summary by the thread\'s model; the raw messages stay. Refused while the thread runs.',
    requires: ['write'],
    params: {
      threadId: name,
      mode: literal('full', 'upTo', 'from'),
      /** `upTo`: the last message compacted; `from`: the first. */
      messageId: optional(name),
      /** A model (`provider:model`) instead of the thread's current one. */
      model: optional(modelRef),
    },
    result: compactionView,
  }),
  listCompactions: defineCommand('listCompactions', {
    readOnly: true,
    summary: 'The thread\'s compactions, oldest first, with which of them apply to its current path.',
    requires: ['read'],
    params: { threadId: name },
    result: object({ compactions: arrayOf(object({ ...compactionView.shape, active: bool, createdAt: int })) }),
  }),
};
