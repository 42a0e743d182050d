/**
 * The webview's part of rules (SPEC 6.1) that is not the composer's popup: a prompt whose manual
 * rule tokens the engine stripped is stored without them, so the message shown while it is being
 * sent gives way to the stored one by that text (which may already have arrived).
 */
import { splitContext } from '../../../src/protocol/mentions';
import type { AppModel } from './app-model';

export function takeStoredPrompt(m: AppModel, prompt: string): void {
  if (!m.sending) return;
  m.sending.prompt = prompt;
  const stored = m.thread?.entries.some((e) => e.kind === 'message' && e.role === 'user' && splitContext(e.content).prompt === prompt);
  if (stored) m.sending = null;
}
