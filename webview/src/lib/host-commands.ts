/**
 * What the extension asks of the chat view (`hostCommand` updates: the palette's New Thread,
 * Focus Composer, Add to Chat, a search result to open at its message) applied to the app model
 * through the controller's own intents.
 */
import type { EngineUpdate } from '../../../src/protocol/updates';
import type { AppModel } from './app-model';

export interface HostCommandTarget {
  readonly model: AppModel;
  newThread(): void;
  openThread(threadId: string): void;
  requestReveal(threadId: string, messageId: string): void;
}

export function applyHostCommand(c: HostCommandTarget, u: Extract<EngineUpdate, { type: 'hostCommand' }>): void {
  switch (u.command) {
    case 'newThread':
      c.newThread();
      return;
    case 'focusComposer':
      c.model.focusRequests++;
      return;
    case 'insertPrompt':
      if (u.text) c.model.draft = c.model.draft.length > 0 ? `${c.model.draft}\n${u.text}` : u.text;
      c.model.focusRequests++;
      return;
    case 'openThread':
      if (u.threadId && u.messageId) c.requestReveal(u.threadId, u.messageId);
      if (u.threadId) c.openThread(u.threadId);
      return;
  }
}
