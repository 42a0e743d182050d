/**
 * Builds the conversation a model sees for a new turn: the system prompt plus the thread's
 * active message path (user and final assistant messages) from the store, with the prompts that
 * steered a turn (../runs/queue.ts) placed before that turn's answer. Tool traffic of earlier
 * turns stays in the turn items and is not replayed. Messages pass the history sanitiser
 * (../sanitize/history.ts): reasoning blocks out of assistant turns, control strings in user
 * input escaped — in the request only, the store keeps them as they were.
 */
import type { ChatMessage } from '../providers/types';
import type { MessageRow } from '../store/store';
import { escapeUserInput, sanitizeAssistantHistory } from '../sanitize/history';
import { compactPath, summaryMessageText, type CompactionSpan } from '../../protocol/compaction';

/** Most earlier messages sent back to the model with a new prompt. */
export const HISTORY_MESSAGE_LIMIT = 40;

export const DEFAULT_SYSTEM_PROMPT = [
  'You are Vox, a coding agent working inside the user\'s workspace.',
  'Use the tools to read, search and change files and to run commands; paths are relative to the workspace root.',
  'Prefer small, exact edits (apply_edit) over rewriting files, and say briefly what you changed.',
].join(' ');

export function buildHistory(
  path: MessageRow[], systemPrompt: string = DEFAULT_SYSTEM_PROMPT, steersOf: (runId: string) => string[] = () => [], compactions: readonly CompactionSpan[] = [],
): ChatMessage[] {
  const msgs: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  const units = compactPath(path, compactions);
  const kept = units.slice(-HISTORY_MESSAGE_LIMIT);
  const cutSummaries = units.slice(0, units.length - kept.length).filter((u) => u.kind === 'summary');
  for (const u of [...cutSummaries, ...kept]) {
    if (u.kind === 'summary') {
      msgs.push({ role: 'user', content: summaryMessageText(u.compaction.summary, u.covered) });
      continue;
    }
    const m = u.message;
    if (m.role === 'user') msgs.push({ role: 'user', content: escapeUserInput(m.content) });
    else if (m.role === 'assistant') {
      if (m.runId !== null) for (const s of steersOf(m.runId)) msgs.push({ role: 'user', content: escapeUserInput(s) });
      const content = sanitizeAssistantHistory(m.content);
      if (content.length > 0) msgs.push({ role: 'assistant', content });
    }
  }
  return msgs;
}
