/**
 * Messages between the VS Code host and the chat webview that are not engine data: palette
 * commands acting on the view (`hostCommand`, host → webview) and buttons that run a VS Code
 * command (`hostAction`, webview → host), and a code block's Insert at Cursor / Apply to File
 * (`codeAction`, webview → host: the extension edits the editor or the file). Declared once here for both sides.
 */
import { literal, object, optional, refine, str, type Infer } from './wire/validators';

export const HOST_ACTIONS = ['setApiKey', 'chooseGguf', 'useOllama', 'downloadModel', 'useVsCodeLm', 'connectModel', 'reviewChanges', 'compareBranches'] as const;
export type HostAction = (typeof HOST_ACTIONS)[number];

/** Webview → host: run the VS Code command behind a button (`threadId`: the thread it acts on, e.g. Compare branches). */
export const hostActionMessage = object({ type: literal('hostAction'), action: literal(...HOST_ACTIONS), threadId: optional(str) });
export type HostActionMessage = Infer<typeof hostActionMessage>;

/** Host → webview: a palette command acting on the view. */
export const hostCommandUpdate = object({
  type: literal('hostCommand'),
  command: literal('newThread', 'focusComposer', 'insertPrompt', 'openThread'),
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
