/**
 * MCP resources in the @-mention popup: the engine's `suggestMentions` offers
 * the connected servers' resources as mentions of kind `mcp` (target `<server>/<uri>`, label
 * `<server>:<name>`; src/protocol/mentions.ts). Here: recognising such a row (the popup shows its
 * server as a badge) and the text an accepted one leaves in the draft.
 */
import { parseMcpMentionTarget, type MentionSuggestion } from '../../../src/protocol/mentions';

export { mcpMentionTarget, parseMcpMentionTarget } from '../../../src/protocol/mentions';

export function isMcpSuggestion(s: Pick<MentionSuggestion, 'kind'>): boolean {
  return s.kind === 'mcp';
}

/** The server a resource row belongs to (null: not a resource row, or a malformed target). */
export function mcpSuggestionServer(s: Pick<MentionSuggestion, 'kind' | 'target'>): string | null {
  return isMcpSuggestion(s) && s.target ? (parseMcpMentionTarget(s.target)?.server ?? null) : null;
}

/** What the draft shows for an accepted resource mention: `@<server>:<name>`, spaces as dashes. */
export function mcpMentionText(s: Pick<MentionSuggestion, 'label' | 'target'>): string {
  const server = s.target ? parseMcpMentionTarget(s.target)?.server : undefined;
  const label = server && !s.label.startsWith(`${server}:`) ? `${server}:${s.label}` : s.label;
  return `@${label.replace(/\s+/g, '-')}`;
}
