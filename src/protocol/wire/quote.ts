/**
 * Excerpts of text inside messages, errors and titles: `quote(text, maxChars)` keeps the start of
 * the text, cut at a code point boundary (a surrogate pair is never split, so the excerpt is
 * well-formed UTF-16 and encodes to UTF-8 without replacement characters), with an ellipsis when
 * something was cut. Lengths are UTF-16 code units, what `String.length` and the protocol's
 * validators measure, and the ellipsis counts: the result is never longer than `maxChars`.
 *
 * It lives in the protocol because every side quotes text back: the engine, the CLI, the
 * extension and the webview. The limits below are the shared ones, named for what is quoted; a
 * module with a limit of its own (a title, a tree row) keeps it beside its use and still cuts
 * with `quote`.
 */

/** What marks a cut excerpt (one UTF-16 unit, counted in the limit). */
export const ELLIPSIS = '…';

/**
 * A name quoted back in an error (an MCP server, tool or prompt name, a config key). MCP tool
 * names are at most 64 characters, so a real one is shown whole; garbage is still bounded.
 */
export const QUOTED_NAME_CHARS = 80;
/** A bad setting value or `${…}` variable reference quoted in a config error: enough to recognise it. */
export const QUOTED_VALUE_CHARS = 60;
/** One line of a file quoted in a parse error (a rules file's front matter line). */
export const QUOTED_LINE_CHARS = 80;
/** Input quoted in an error: a URL that did not parse, a JSON parser's message, a model's malformed reply. */
export const QUOTED_INPUT_CHARS = 200;
/** Another program's error message relayed in ours (an MCP server's, a sign-in's): its first lines. */
export const QUOTED_ERROR_CHARS = 500;
/** A command line shown in a list (an MCP server's command and arguments, secrets already masked). */
export const QUOTED_COMMAND_CHARS = 500;
/** A prompt or description on one row of a CLI list, leaving the terminal line room for the row's other columns. */
export const LISTED_TEXT_CHARS = 120;
/** A child process's stderr in a failure message (git): enough for its whole usual complaint. */
export const QUOTED_STDERR_CHARS = 2_000;

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * The start of `text`, at most `maxChars` UTF-16 units including the ellipsis added when it was
 * cut; the cut never falls inside a surrogate pair. `text` itself when it fits.
 */
export function quote(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars < ELLIPSIS.length) return '';
  let end = maxChars - ELLIPSIS.length;
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return `${text.slice(0, end)}${ELLIPSIS}`;
}

/** `quote` of the text on one line: runs of whitespace (newlines too) become one space, ends trimmed. */
export function quoteLine(text: string, maxChars: number): string {
  return quote(text.replace(/\s+/g, ' ').trim(), maxChars);
}
