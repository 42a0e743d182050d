/**
 * @-mentions (the composer's `@file`, `@problems`, `@terminal`, `@git`, `@selection`, past
 * threads): what a client sends (`Mention`), what the engine suggests (`MentionSuggestion`), what
 * a resolved mention looks like as a chip (`ContextChip`, with its size in tokens and its
 * warning), and the one format in which resolved mentions travel inside the user message.
 *
 * The stored user message is the prompt, then a context block: a marker line carrying the chips
 * as JSON, then one `<context …>` element per mention with its text. So the model sees exactly
 * what the user attached (also when the thread is replayed later), and every client can show the
 * prompt and the chips apart (`splitContext`) without a second store. The engine writes the block
 * (`formatContext`); nothing else does.
 */
import { arrayOf, int, literal, nullable, object, optional, str, type Infer } from './wire/validators';

export const MENTION_KINDS = ['file', 'folder', 'problems', 'terminal', 'git', 'selection', 'thread', 'mcp'] as const;
export const mentionKind = literal(...MENTION_KINDS);
export type MentionKind = Infer<typeof mentionKind>;

/** Most mentions one prompt may carry. */
export const MAX_MENTIONS = 20;

/**
 * A mention as a client sends it: `target` is the path (file, folder), a commit (git; none: the
 * working tree), a thread id, or for `mcp` an MCP server's resource as `<server>/<uri>` (server
 * names hold no `/`), e.g. `github/repo://vox/README.md`.
 */
export const mention = object({ kind: mentionKind, target: optional(str) });
export type Mention = Infer<typeof mention>;

/** The `target` of an `mcp` mention: `<server>/<uri>`. */
export function mcpMentionTarget(server: string, uri: string): string {
  return `${server}/${uri}`;
}

/** Splits an `mcp` mention's target; null when it has no server part. */
export function parseMcpMentionTarget(target: string): { server: string; uri: string } | null {
  const i = target.indexOf('/');
  if (i <= 0 || i === target.length - 1) return null;
  return { server: target.slice(0, i), uri: target.slice(i + 1) };
}

/** What the popup may offer: a mention kind, or `rule` (a manual rule, inserted as `@name`; SPEC 6.1). */
export const suggestionKind = literal(...MENTION_KINDS, 'rule');
export type SuggestionKind = Infer<typeof suggestionKind>;

export const mentionSuggestion = object({
  kind: suggestionKind,
  target: nullable(str),
  /** What the popup shows (`src/app.ts`, `@problems`). */
  label: str,
  /** A second line (`folder`, `workspace diagnostics`, the thread's date). */
  detail: str,
});
export type MentionSuggestion = Infer<typeof mentionSuggestion>;

/** One resolved mention: `warning` says what could not be attached (missing file, binary, nothing selected), `truncated` that it was cut to its limit. */
export const contextChip = object({
  kind: mentionKind,
  target: nullable(str),
  label: str,
  tokens: int,
  status: literal('ok', 'truncated', 'warning'),
  warning: nullable(str),
});
export type ContextChip = Infer<typeof contextChip>;

/** The first line of the context block; the chips' JSON follows it on the same line. */
export const CONTEXT_MARKER = '<!-- vox-context ';
const MARKER_END = ' -->';

export interface ResolvedMention { chip: ContextChip; text: string }

function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The prompt followed by its context block (the prompt alone when nothing is attached). */
export function formatContext(prompt: string, resolved: readonly ResolvedMention[]): string {
  if (resolved.length === 0) return prompt;
  const chips = resolved.map((r) => r.chip);
  const blocks = resolved.map(({ chip, text }) => {
    const head = `<context kind="${chip.kind}" label="${attr(chip.label)}"${chip.warning ? ` warning="${attr(chip.warning)}"` : ''}>`;
    return chip.status === 'warning' ? `${head}\n[not attached: ${chip.warning}]\n</context>` : `${head}\n${text}\n</context>`;
  });
  return `${prompt}\n\n${CONTEXT_MARKER}${JSON.stringify({ v: 1, chips })}${MARKER_END}\n${blocks.join('\n')}`;
}

const chipList = object({ v: int, chips: arrayOf(contextChip) });

/** Splits a stored user message into the prompt and its chips (none: no block, or a block this build cannot read). */
export function splitContext(content: string): { prompt: string; chips: ContextChip[] } {
  const at = content.indexOf(`\n\n${CONTEXT_MARKER}`);
  if (at < 0) return { prompt: content, chips: [] };
  const lineStart = at + 2 + CONTEXT_MARKER.length;
  const lineEnd = content.indexOf(`${MARKER_END}\n`, lineStart);
  if (lineEnd < 0) return { prompt: content, chips: [] };
  try {
    const parsed = chipList(JSON.parse(content.slice(lineStart, lineEnd)));
    return { prompt: content.slice(0, at), chips: parsed.chips };
  } catch {
    return { prompt: content, chips: [] };
  }
}
