/**
 * False tool refusals (SPEC 3.2): a model that has tools but answers "I can't run commands" or
 * "I don't have access to your files" without calling any. `detectFalseToolRefusal` decides
 * whether a model call's text is such a refusal; the agent loop then discards the step and asks
 * once more with a reminder naming the active tools (./turn-salvage.ts, `refusalReminder`).
 *
 * The two patterns are restated from seed 003 §1.2 (ToolRefusalDetector, ../shared/seeds/
 * 003_a10384db0b092a00.txt): REFUSAL_RE and CAPABILITY_RE, both case-insensitive, word-bounded.
 * Two decisions the seed leaves open, made here:
 *  - Lengths are JS string lengths (UTF-16 code units), as everywhere else in Vox.
 *  - "The first 350 characters" means a match that STARTS before REFUSAL_WINDOW_CHARS: the
 *    patterns run over the whole (short) content, so a word is never cut in two at the window's
 *    edge ("running" cut to "run" would otherwise match `\brun\b`).
 *  - Typographic apostrophes (’) count as straight ones: models write "can’t" as often as "can't".
 *  - CAPABILITY_RE's words take a plural `s`/`es` (see there).
 */

/** Replies at or over this length are real answers, never treated as refusals (seed: `content.len() < 700`). */
export const REFUSAL_MAX_CONTENT_CHARS = 700;
/** Both patterns must match starting within this many leading characters (seed: "the first 350 chars"). */
export const REFUSAL_WINDOW_CHARS = 350;

/** Seed 003 §1.2 REFUSAL_RE: `(?i)\b(can't|cannot|can not|don't have|do not have|unable to|not able to|no access|without access|can't actually|cannot actually)\b`. */
export const REFUSAL_RE = /\b(can't|cannot|can not|don't have|do not have|unable to|not able to|no access|without access|can't actually|cannot actually)\b/gi;
/**
 * Seed 003 §1.2 CAPABILITY_RE: `(?i)\b(tool|terminal|shell|command|run|execute|file|filesystem|browse|browser|web search|search|calendar|schedule|environment)\b`,
 * with one deliberate extension: each word may take a plural / third-person `s` or `es`. Taken
 * literally, `\bfile\b` misses "I can't read your files" and `\bcommand\b` misses "I cannot run
 * commands" — the commonest refusals.
 */
export const CAPABILITY_RE = /\b(tool|terminal|shell|command|run|execute|file|filesystem|browse|browser|web search|search|calendar|schedule|environment)(?:e?s)?\b/gi;

export interface RefusalContext {
  /** The model had tools to call in this call (native, or the fenced syntax for models without native tools). */
  toolsAvailable: boolean;
  /** Tool calls the call produced (native, or salvaged from its text). */
  toolCallsAssembled: number;
}

/** True when `re` matches starting within the window (the regexes are global: matchAll keeps them stateless). */
function matchesInWindow(text: string, re: RegExp): boolean {
  for (const m of text.matchAll(re)) {
    if (m.index < REFUSAL_WINDOW_CHARS) return true;
    return false; // matches come in order: the first one decides
  }
  return false;
}

/** Whether `content` is a false refusal to use tools the model has (see the module comment for the exact rule). */
export function detectFalseToolRefusal(content: string, ctx: RefusalContext): boolean {
  if (!ctx.toolsAvailable || ctx.toolCallsAssembled > 0) return false;
  if (content.length >= REFUSAL_MAX_CONTENT_CHARS) return false;
  const text = content.replace(/\u2019/g, "'");
  return matchesInWindow(text, REFUSAL_RE) && matchesInWindow(text, CAPABILITY_RE);
}
