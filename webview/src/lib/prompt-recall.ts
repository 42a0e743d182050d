/**
 * ArrowUp / ArrowDown in an empty composer: recall earlier prompts like a shell. The history is
 * the open thread's user messages followed by prompts sent from this view that are not among
 * them yet, oldest first. Recall only replaces a draft that is empty or is itself a recalled
 * prompt left unchanged, so typed text is never lost to an arrow key.
 */

/** The most prompts kept for recall (the newest). */
export const MAX_RECALLED_PROMPTS = 100;

/** Oldest first, without repeats (a repeated prompt keeps its newest place), at most MAX_RECALLED_PROMPTS. */
export function promptHistory(threadPrompts: readonly string[], sentHere: readonly string[]): string[] {
  const all = [...threadPrompts, ...sentHere].filter((p) => p.trim().length > 0);
  const seen = new Set<string>();
  const out: string[] = [];
  for (let i = all.length - 1; i >= 0; i--) {
    const p = all[i]!;
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out.reverse().slice(-MAX_RECALLED_PROMPTS);
}

/**
 * The draft after an arrow key, or null when the key should do what it does in a text box (the
 * draft holds typed text, or there is nothing older/newer). `older` from an empty draft gives the
 * newest prompt; `newer` past the newest gives back an empty draft.
 */
export function recall(history: readonly string[], draft: string, direction: 'older' | 'newer'): string | null {
  if (history.length === 0) return null;
  const at = draft.length === 0 ? history.length : history.lastIndexOf(draft);
  if (at < 0) return null; // typed text: leave it alone
  if (direction === 'older') return at === 0 ? null : history[at - 1]!;
  if (draft.length === 0) return null;
  return at + 1 < history.length ? history[at + 1]! : '';
}
