/**
 * The composer's drafts, pure: one per thread (by thread id; NEW_THREAD_KEY for the first prompt
 * of a new thread) — the text, its @-mention chips and the caret. Two copies exist: the webview's
 * own state (`AppModel.drafts`, saved with `setState`: hide / show and reloads) and the extension
 * host's (src/extension/drafts.ts, in the workspace state: it also outlives a restart). Each draft
 * carries when it was saved; when the host's copy arrives, the newer of the two wins.
 */
import type { SavedDraft } from '../../../src/protocol/host';
import type { ChipView } from './context-state';

/** Whose draft a new thread's composer holds. */
export const NEW_THREAD_KEY = '';

export function draftKey(threadId: string | null | undefined): string {
  return threadId ?? NEW_THREAD_KEY;
}

/** The composer as a saved draft; null when there is nothing to keep (no text, no chips). */
export function draftOf(text: string, chips: readonly ChipView[], selection: { start: number; end: number }, now: number): SavedDraft | null {
  if (text.length === 0 && chips.length === 0) return null;
  const clamp = (n: number) => Math.max(0, Math.min(text.length, Math.trunc(n)));
  return {
    text,
    chips: chips.map((c) => ({ kind: c.kind, ...(c.target !== undefined ? { target: c.target } : {}), label: c.label })),
    selectionStart: clamp(selection.start),
    selectionEnd: clamp(selection.end),
    savedAt: now,
  };
}

/** What a draft looks like, without when it was saved (two drafts with one signature are the same). */
export function draftSignature(d: SavedDraft | null): string {
  return d ? JSON.stringify([d.text, d.chips, d.selectionStart, d.selectionEnd]) : '';
}

/** A saved draft's chips as the composer shows them before the next estimate sizes them. */
export function chipsOf(d: SavedDraft | null | undefined): ChipView[] {
  return (d?.chips ?? []).map((c) => ({ kind: c.kind, ...(c.target !== undefined ? { target: c.target } : {}), label: c.label, tokens: null, status: 'pending', warning: null }));
}

/**
 * The host's drafts merged into `book` (in place): each one newer than the book's (or missing from
 * it) is taken. Returns the keys taken.
 */
export function mergeDrafts(book: Record<string, SavedDraft>, incoming: readonly { threadKey: string; draft: SavedDraft }[]): string[] {
  const taken: string[] = [];
  for (const { threadKey, draft } of incoming) {
    const mine = book[threadKey];
    if (mine && mine.savedAt >= draft.savedAt) continue;
    book[threadKey] = draft;
    taken.push(threadKey);
  }
  return taken;
}
