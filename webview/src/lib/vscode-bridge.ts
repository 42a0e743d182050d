/**
 * The real HostBridge: `acquireVsCodeApi()` (callable once per page) for commands and state, the
 * window `message` event for updates. See ./host-bridge.ts for the message contract.
 */
import type { HostActionMessage, HostBridge } from './host-bridge';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  function acquireVsCodeApi(): VsCodeApi;
}

export function createVsCodeBridge(win: Window = window): HostBridge {
  const api = acquireVsCodeApi();
  return {
    send: (command) => api.postMessage(command),
    sendHostAction: (action, args) => api.postMessage({ type: 'hostAction', action, ...(args?.threadId ? { threadId: args.threadId } : {}) } satisfies HostActionMessage),
    sendCodeAction: (message) => api.postMessage(message),
    sendDraftMessage: (message) => api.postMessage(message),
    onMessage(listener) {
      const handler = (e: MessageEvent): void => listener(e.data);
      win.addEventListener('message', handler);
      return () => win.removeEventListener('message', handler);
    },
    getState: () => api.getState(),
    setState: (state) => api.setState(state),
  };
}
