/**
 * HostBridge: the only door between the chat webview and the extension host.
 *
 * Message contract (both directions are plain structured-clone objects, never JSON text):
 *   webview → host  a ClientCommand of src/protocol/commands.ts (the host hands it to its
 *                   engine ClientSession.handle unchanged), or
 *                   `{ type: 'hostAction', action }` — not an engine command: the extension
 *                   itself handles it (set an API key, choose a GGUF file, …; see HOST_ACTIONS).
 *   host → webview  an EngineUpdate of src/protocol/updates.ts, decoded through `updateEnvelope`
 *                   — including `hostCommand` (newThread, focusComposer, insertPrompt {text},
 *                   openThread {threadId}) that the extension sends for palette commands.
 *                   A `settings` update that answers no request means the host (re)connected
 *                   a ClientSession: the webview subscribes again from its last seqs.
 *
 * ./vscode-bridge.ts implements it over `acquireVsCodeApi()`; tests inject their own, or a fake
 * `acquireVsCodeApi`. This file holds no DOM code, so Node tests can import it.
 */
import type { ClientCommand } from '../../../src/protocol/commands';

/** Actions the demo banner offers; the extension implements each one. */
export const HOST_ACTIONS = ['setApiKey', 'chooseGguf', 'useOllama', 'downloadModel', 'useVsCodeLm'] as const;
export type HostAction = (typeof HOST_ACTIONS)[number];
export interface HostActionMessage { type: 'hostAction'; action: HostAction }

export interface HostBridge {
  /** Sends one engine command. */
  send(command: ClientCommand): void;
  /** Asks the extension to do something outside the engine (see HOST_ACTIONS). */
  sendHostAction(action: HostAction): void;
  /** Listens to messages from the host; returns the unsubscribe function. */
  onMessage(listener: (data: unknown) => void): () => void;
  /** State saved by `setState` in this webview's previous life (or undefined). */
  getState(): unknown;
  setState(state: unknown): void;
}
