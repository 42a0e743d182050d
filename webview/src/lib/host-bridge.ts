/**
 * HostBridge: the only door between the chat webview and the extension host.
 *
 * Message contract (both directions are plain structured-clone objects, never JSON text):
 *   webview → host  a ClientCommand of src/protocol/commands/ (the host hands it to its
 *                   engine session unchanged; each is answered by one `result` or `error`), or
 *                   `{ type: 'hostAction', action }` (src/protocol/host.ts) — not an engine
 *                   command: the extension itself handles it (set an API key, choose a GGUF, …);
 *                   or `{ type: 'codeAction', action, code, path? }` (a code block's Insert at Cursor /
 *                   Apply to File, also handled by the extension); or `draftSave` / `draftsRequest`
 *                   (the composer's drafts, kept by the extension host).
 *   host → webview  an EngineUpdate of src/protocol/updates.ts, decoded through `updateEnvelope`
 *                   — including `hostCommand` (newThread, focusComposer, insertPrompt {text},
 *                   openThread {threadId}) that the extension sends for palette commands.
 *                   An (unsolicited) `settings` update means the host (re)connected a session
 *                   or the settings changed: the webview subscribes again from its last seqs.
 *
 * ./vscode-bridge.ts implements it over `acquireVsCodeApi()`; tests inject their own, or a fake
 * `acquireVsCodeApi`. This file holds no DOM code, so Node tests can import it.
 */
import type { ClientCommand } from '../../../src/protocol/commands/index';
import type { CodeActionMessage, DraftSaveMessage, DraftsRequestMessage, HostAction } from '../../../src/protocol/host';

export { HOST_ACTIONS, type CodeActionMessage, type HostAction, type HostActionMessage } from '../../../src/protocol/host';

export interface HostBridge {
  /** Sends one engine command. */
  send(command: ClientCommand): void;
  /** Asks the extension to do something outside the engine (see HOST_ACTIONS), about `args.threadId` if given. */
  sendHostAction(action: HostAction, args?: { threadId?: string }): void;
  /** A code block's Insert at Cursor / Apply to File (the extension edits; optional: test bridges may leave it out). */
  sendCodeAction?(message: CodeActionMessage): void;
  /** The composer's draft to the extension host's copy, or a request for that copy (optional: test bridges may leave it out). */
  sendDraftMessage?(message: DraftSaveMessage | DraftsRequestMessage): void;
  /** Listens to messages from the host; returns the unsubscribe function. */
  onMessage(listener: (data: unknown) => void): () => void;
  /** State saved by `setState` in this webview's previous life (or undefined). */
  getState(): unknown;
  setState(state: unknown): void;
}
