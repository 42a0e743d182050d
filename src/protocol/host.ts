/**
 * Messages between the VS Code host and the chat webview that are not engine data: palette
 * commands acting on the view (`hostCommand`, host → webview) and buttons that run a VS Code
 * command (`hostAction`, webview → host), and a code block's Insert at Cursor / Apply to File
 * (`codeAction`, webview → host: the extension edits the editor or the file), and the composer's
 * drafts (`draftSave` / `draftsRequest`, webview → host; `drafts`, host → webview: the extension
 * host keeps a copy of each thread's draft, so it outlives the webview's own state). Declared once
 * here for both sides.
 */
import { MAX_PROMPT_CHARS } from './commands/common';
import { MAX_MENTIONS, mentionKind } from './mentions';
import { arrayOf, int, literal, nullable, object, optional, refine, str, type Infer } from './wire/validators';

export const HOST_ACTIONS = ['setApiKey', 'chooseGguf', 'useOllama', 'downloadModel', 'useVsCodeLm', 'connectModel', 'reviewChanges', 'compareBranches'] as const;
export type HostAction = (typeof HOST_ACTIONS)[number];

/** Webview → host: run the VS Code command behind a button (`threadId`: the thread it acts on, e.g. Compare branches). */
export const hostActionMessage = object({ type: literal('hostAction'), action: literal(...HOST_ACTIONS), threadId: optional(str) });
export type HostActionMessage = Infer<typeof hostActionMessage>;

/** Host → webview: a palette command acting on the view. */
export const hostCommandUpdate = object({
  type: literal('hostCommand'),
  command: literal('newThread', 'focusComposer', 'insertPrompt', 'openThread', 'approveWaiting', 'denyWaiting', 'nextWaiting'),
  text: optional(str),
  threadId: optional(str),
  /** openThread: the message to scroll to and highlight (a search result). */
  messageId: optional(str),
});
export type HostCommandUpdate = Infer<typeof hostCommandUpdate>;

/** Longest code a code block's action carries (UTF-16 code units; a block is text the model wrote, this only bounds garbage). */
export const MAX_CODE_ACTION_CHARS = 1_000_000;
/** Longest path a block may name. */
export const MAX_CODE_PATH_CHARS = 1_024;

/** Webview → host: put a code block's text into the active editor at the cursor, or into a file (after a diff and a confirmation). */
export const codeActionMessage = object({
  type: literal('codeAction'),
  action: literal('insertAtCursor', 'applyToFile'),
  code: refine(str, (s) => s.length <= MAX_CODE_ACTION_CHARS, `at most ${MAX_CODE_ACTION_CHARS} characters`),
  /** applyToFile: the file the block names (workspace-relative or absolute inside the workspace); none: the host asks. */
  path: optional(refine(str, (s) => s.length > 0 && s.length <= MAX_CODE_PATH_CHARS, `a path of 1 to ${MAX_CODE_PATH_CHARS} characters`)),
  /** The block's language (the fence's first word), for the picker's hint. */
  lang: optional(str),
});
export type CodeActionMessage = Infer<typeof codeActionMessage>;

/** Most drafts the extension host keeps (the most recently saved; one per thread, plus a new thread's). */
export const MAX_SAVED_DRAFTS = 50;
/** Longest label of a saved chip (a path or a thread title; longer is garbage). */
export const MAX_DRAFT_CHIP_LABEL_CHARS = 1_024;

/** One @-mention chip of a draft, as the composer shows it (its size and warning are estimated again). */
export const draftChip = object({
  kind: mentionKind,
  target: optional(str),
  label: refine(str, (s) => s.length <= MAX_DRAFT_CHIP_LABEL_CHARS, `at most ${MAX_DRAFT_CHIP_LABEL_CHARS} characters`),
});
/** The composer of one thread: its text, chips and caret, and when it was saved (ms since the epoch; the newer copy wins). */
export const savedDraft = object({
  text: refine(str, (s) => s.length <= MAX_PROMPT_CHARS, `at most ${MAX_PROMPT_CHARS} characters`),
  chips: refine(arrayOf(draftChip), (c) => c.length <= MAX_MENTIONS, `at most ${MAX_MENTIONS} chips`),
  selectionStart: int,
  selectionEnd: int,
  savedAt: int,
});
export type SavedDraft = Infer<typeof savedDraft>;

/** Whose draft: a thread id, or '' for the first prompt of a new thread. */
const threadKey = refine(str, (s) => s.length <= MAX_CODE_PATH_CHARS, `at most ${MAX_CODE_PATH_CHARS} characters`);

/** Webview → host: a thread's draft changed (null: it is empty now, forget it). */
export const draftSaveMessage = object({ type: literal('draftSave'), threadKey, draft: nullable(savedDraft) });
export type DraftSaveMessage = Infer<typeof draftSaveMessage>;
/** Webview → host: send the drafts you keep (answered by a `drafts` update). */
export const draftsRequestMessage = object({ type: literal('draftsRequest') });
export type DraftsRequestMessage = Infer<typeof draftsRequestMessage>;
/** Host → webview: the drafts the extension host keeps, newest first. */
export const draftsUpdate = object({ type: literal('drafts'), drafts: arrayOf(object({ threadKey: str, draft: savedDraft })) });
export type DraftsUpdate = Infer<typeof draftsUpdate>;
