/**
 * The prompt history (SPEC 6.3): the newest prompts as the user typed them (with their @tokens),
 * across threads and reloads, for ArrowUp recall in every client. Written by the `sendPrompt`
 * handler, so the CLI's `vox chat` adds to the same history as the chat view. A prompt equal to
 * the newest one is not added again (consecutive duplicates collapse into the newest place), and
 * the table is bounded to MAX_PROMPT_HISTORY rows in the transaction that adds one.
 */
import { MAX_PROMPT_HISTORY } from '../../protocol/commands/history';
import { redact } from '../platform/secrets';
import type { SqlDatabase } from './driver';

export { MAX_PROMPT_HISTORY };

export interface PromptHistoryRow {
  prompt: string;
  /** The thread it went to; null when it failed before a thread existed. */
  threadId: string | null;
  /** When it was sent (ms since the epoch). */
  at: number;
}

/** Adds `prompt` as the newest entry (or refreshes the newest when it is the same text) and drops the oldest past the bound. */
export function recordPrompt(db: SqlDatabase, given: string, threadId: string | null, at: number): void {
  if (given.trim().length === 0) return;
  const prompt = redact(given); // nothing enters the store unredacted (../platform/secrets.ts)
  db.transaction(() => {
    const newest = db.prepare('SELECT id, prompt FROM prompt_history ORDER BY id DESC LIMIT 1').get() as { id: number; prompt: string } | undefined;
    if (newest && newest.prompt === prompt) {
      db.prepare('UPDATE prompt_history SET thread_id = ?, created_at = ? WHERE id = ?').run(threadId, at, newest.id);
      return;
    }
    db.prepare('INSERT INTO prompt_history (prompt, thread_id, created_at) VALUES (?, ?, ?)').run(prompt, threadId, at);
    db.prepare('DELETE FROM prompt_history WHERE id NOT IN (SELECT id FROM prompt_history ORDER BY id DESC LIMIT ?)').run(MAX_PROMPT_HISTORY);
  }, 'immediate');
}

/** The newest `limit` prompts (at most MAX_PROMPT_HISTORY), oldest first (newest last). */
export function promptHistory(db: SqlDatabase, limit: number = MAX_PROMPT_HISTORY): PromptHistoryRow[] {
  const n = Math.max(0, Math.min(limit, MAX_PROMPT_HISTORY));
  const rows = db.prepare(
    'SELECT prompt, thread_id AS threadId, created_at AS at FROM prompt_history ORDER BY id DESC LIMIT ?',
  ).all(n) as PromptHistoryRow[];
  return rows.reverse();
}
