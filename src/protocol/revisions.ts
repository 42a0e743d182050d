/**
 * Chunks that revise text already streamed (SPEC 3.2): `refusalRetry` drops the discarded reply,
 * `textRevised` replaces a reply by its text without the tool calls written in it. This module
 * applies one to a run's accumulated stream text — the engine's stream registry and the rebuild
 * of a resumed turn use it; the webview applies the same rule to its stream segments. Pure.
 */
import { refusalRetryData, textRevisedData } from './chunks';

export const REVISION_KINDS: readonly string[] = ['refusalRetry', 'textRevised'];

/** The tail to remove and what replaces it, for a revision chunk (null: not one, or unreadable). */
export function revisionOf(kind: string, data: string): { removed: number; text: string } | null {
  try {
    if (kind === 'refusalRetry') return { removed: refusalRetryData(JSON.parse(data)).discarded.length, text: '' };
    if (kind === 'textRevised') {
      const d = textRevisedData(JSON.parse(data));
      return { removed: d.removed, text: d.text };
    }
  } catch {
    return null;
  }
  return null;
}

/** `text` with a revision chunk applied (unchanged for other chunks, or a revision longer than the text). */
export function applyRevision(text: string, kind: string, data: string): string {
  const r = revisionOf(kind, data);
  if (!r || r.removed > text.length) return text;
  return text.slice(0, text.length - r.removed) + r.text;
}
