/**
 * Search across threads (SPEC 6.4): titles by the weighted fuzzy score and message bodies / tool
 * output by the trigram index, in one command (engine: src/engine/search/). Both lists come best
 * first with scores on one scale (a title's is ×1.4), so a client can show them apart or merged.
 */
import { arrayOf, int, literal, nullable, num, object, optional, refine, str, type Infer } from '../wire/validators';
import { defineCommand } from './define';

/** Most results per list one search returns. */
export const MAX_SEARCH_LIMIT = 100;
/** The longest query accepted (characters). */
export const MAX_SEARCH_QUERY_CHARS = 500;

export const titleTier = literal('exact', 'substring', 'allWords', 'partialWords', 'prefix', 'inOrder');

export const titleHit = object({
  threadId: str,
  title: str,
  /** When the thread was last updated (ms since the epoch). */
  updatedAt: int,
  /** (best tier + 0.05 when updated in the last 24 h) × 1.4. */
  score: num,
  /** The tier that gave the score. */
  tier: titleTier,
});
export type TitleHit = Infer<typeof titleHit>;

export const highlightRange = object({ start: int, end: int });

export const messageHit = object({
  threadId: str,
  threadTitle: str,
  /** The message to open: the message that matched, or for tool output its run's answer (its prompt before there is one). */
  messageId: nullable(str),
  /** The tool call whose output matched; null for message text. */
  itemId: nullable(str),
  source: literal('message', 'tool'),
  /** Text around the first match (white space as spaces, "…" where cut). */
  snippet: str,
  /** The matched spans of `snippet`: UTF-16 offsets, end exclusive, sorted, not overlapping. */
  ranges: arrayOf(highlightRange),
  /** 0..1 (bm25 mapped), higher is better. */
  score: num,
});
export type MessageHit = Infer<typeof messageHit>;

export const searchCommands = {
  searchThreads: defineCommand('searchThreads', {
    readOnly: true,
    summary: 'Thread titles (fuzzy) and message text and tool output (trigram index, active branches) matching a query, best first, with snippets.',
    requires: ['read'],
    params: {
      query: refine(str, (s) => s.trim().length > 0 && s.length <= MAX_SEARCH_QUERY_CHARS, `non-empty text of at most ${MAX_SEARCH_QUERY_CHARS} characters`),
      limit: optional(refine(int, (n) => n > 0 && n <= MAX_SEARCH_LIMIT, `integer from 1 to ${MAX_SEARCH_LIMIT}`)),
    },
    result: object({ titles: arrayOf(titleHit), messages: arrayOf(messageHit) }),
  }),
};
