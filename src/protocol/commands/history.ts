/**
 * Prompt history commands (SPEC 6.3): the newest prompts as typed, across threads and reloads,
 * written by `sendPrompt` (./runs.ts) and read by the composer's ArrowUp recall and `vox history`.
 */
import { arrayOf, int, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { defineCommand } from './define';

/** How many prompts the history keeps (the newest; SPEC 6.3: "the last 100 prompts"). */
export const MAX_PROMPT_HISTORY = 100;

export const promptHistoryEntry = object({
  /** The prompt as typed, with its @tokens. */
  prompt: str,
  /** The thread it went to; null when it failed before a thread existed. */
  threadId: nullable(str),
  /** When it was sent (ms since the epoch). */
  at: int,
});
export type PromptHistoryEntry = Infer<typeof promptHistoryEntry>;

export const historyCommands = {
  listPromptHistory: defineCommand('listPromptHistory', {
    readOnly: true,
    summary: `The newest prompts sent from any client (at most ${MAX_PROMPT_HISTORY}), newest last; consecutive repeats are collapsed.`,
    requires: ['read'],
    params: { limit: optional(refine(int, (n) => n > 0 && n <= MAX_PROMPT_HISTORY, `integer from 1 to ${MAX_PROMPT_HISTORY}`)) },
    result: object({ prompts: arrayOf(promptHistoryEntry) }),
  }),
};
