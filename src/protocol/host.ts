/**
 * Messages between the VS Code host and the chat webview that are not engine data: palette
 * commands acting on the view (`hostCommand`, host → webview) and buttons that run a VS Code
 * command (`hostAction`, webview → host). Declared once here for both sides.
 */
import { literal, object, optional, str, type Infer } from './wire/validators';

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
});
export type HostCommandUpdate = Infer<typeof hostCommandUpdate>;
