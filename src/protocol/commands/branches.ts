/**
 * Conversation-tree commands (SPEC 5.4, 6.3): the whole tree of a thread
 * with its branches, switching branch, regenerate / retry an answer (a new sibling branch, with
 * the original posture or another model), edit a message (assistant: in place; user: a new
 * branch), and the data of a side-by-side compare of 2..4 branches. Pure tree logic lives in
 * ../branches.ts, shared with the webview.
 */
import { arrayOf, bool, int, nullable, object, optional, refine, str, type Infer } from '../wire/validators';
import { MAX_PROMPT_CHARS, modelRef, name } from './common';
import { defineCommand } from './define';
import { messageView } from './threads';

/**
 * Most messages `getThreadTree` returns in one answer (every branch of a thread). A thread of
 * 10,000 messages fits; a larger one is refused with `branch/tooLarge` (details: count, max)
 * rather than sent as one huge message.
 */
export const MAX_TREE_MESSAGES = 20_000;

export const branchView = object({
  /** `main` or `main-<forkMessageId>-<n>` (../branches.ts). */
  branchId: str,
  /** Its name as words, from its first prompt (`fix-login-redirect`; `main` for main), unique in the thread (../branch-names.ts). */
  name: str,
  leafId: str,
  /** The message the branch forks from; null for `main` and for a fork among root messages (`main-root-<n>`). */
  forkMessageId: nullable(str),
  /** Messages from the root to the leaf. */
  length: int,
  /** Latest creation or edit time on the branch (ms since the epoch). */
  updatedAt: int,
  /** The thread's head is this branch's leaf (after a rewind to the middle of a path, no branch is active). */
  active: bool,
});
export type BranchView = Infer<typeof branchView>;

/** What a regenerate / retry / user edit started. */
const rerunResult = object({ threadId: str, runId: str, userMessageId: str });

/** Edited content: at most a prompt's length (an empty or blank text is refused as `branch/emptyContent`). */
const editedContent = refine(str, (s) => s.length <= MAX_PROMPT_CHARS, `string of at most ${MAX_PROMPT_CHARS} characters`);

export const branchCommands = {
  getThreadTree: defineCommand('getThreadTree', {
    readOnly: true,
    summary: `Every message of a thread (all branches, in creation order) with its branches and head; at most ${MAX_TREE_MESSAGES} messages.`,
    requires: ['read'],
    params: { threadId: name },
    result: object({ threadId: str, headMessageId: nullable(str), messages: arrayOf(messageView), branches: arrayOf(branchView) }),
  }),
  switchBranch: defineCommand('switchBranch', {
    exclusive: 'thread',
    summary: 'Moves the thread\'s head to the latest leaf under a message (its branch becomes the active path); refused while the thread runs.',
    requires: ['write'],
    params: { threadId: name, toMessageId: name },
    result: object({ headMessageId: str }),
  }),
  regenerate: defineCommand('regenerate', {
    exclusive: 'thread',
    summary: 'Re-sends the prompt an answer replied to as a new sibling (the old answer stays as a branch), with that run\'s posture or `model`; no target: the head\'s answer.',
    requires: ['write'],
    params: {
      threadId: name,
      /** An assistant message (its prompt is re-sent) or a user message (re-sent itself). */
      messageId: optional(name),
      /** Or the run whose prompt is re-sent. */
      runId: optional(name),
      /** A model (`provider:model`) instead of the original run's. */
      model: optional(modelRef),
    },
    result: rerunResult,
  }),
  retry: defineCommand('retry', {
    exclusive: 'thread',
    summary: 'Regenerate for a run that failed, was cancelled or interrupted, or stopped at the output limit.',
    requires: ['write'],
    params: { threadId: name, runId: name, model: optional(modelRef) },
    result: rerunResult,
  }),
  editMessage: defineCommand('editMessage', {
    exclusive: 'thread',
    summary: 'Assistant message: edited in place (marked edited; the original stays in the event log). User message: a new branch with the new text, run at once.',
    requires: ['write'],
    params: {
      threadId: name, messageId: name, content: editedContent,
      /** User messages: a model instead of the original run's. */
      model: optional(modelRef),
    },
    /** `edited`: in place (runId null); otherwise `messageId` is the new user message and `runId` its run. */
    result: object({ messageId: str, edited: bool, runId: nullable(str) }),
  }),
  compareBranches: defineCommand('compareBranches', {
    readOnly: true,
    summary: 'Side-by-side data of 2..4 branches (by leaf): the shared messages, each branch after the divergence point, and unified diffs of the final answers.',
    requires: ['read'],
    params: { threadId: name, leafIds: arrayOf(name) },
    result: object({
      divergence: object({ index: int, messageId: nullable(str) }),
      shared: arrayOf(messageView),
      columns: arrayOf(object({ leafId: str, branchId: str, name: str, messages: arrayOf(messageView) })),
      /** Each column after the first: its last assistant answer against the first column's (unified diff). */
      finalDiffs: arrayOf(object({ leafId: str, against: str, diff: str })),
    }),
  }),
};
