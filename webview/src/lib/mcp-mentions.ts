/**
 * MCP resources in the @-mention popup (issue 16 item 1). The engine's `suggestMentions` offers
 * them as mentions of kind `mcp` once its MCP client does; until then (and for an engine that
 * does not) the popup adds the resources of the connected servers it knows from listMcpServers
 * (./mcp-state.ts), matched by name, URI or server. A resource mention's target is
 * `<server>:<uri>` (MCP_MENTION_KIND, mcpMentionTarget); the row shows the server as a badge.
 */
import type { MentionSuggestion } from '../../../src/protocol/mentions';
import type { McpServerView } from '../../../src/protocol/commands/mcp';

/** The mention kind of an MCP resource (src/protocol/mentions.ts, added with the MCP client). */
export const MCP_MENTION_KIND = 'mcp';

/** The mention target naming one resource of one server. */
export function mcpMentionTarget(server: string, uri: string): string {
  return `${server}:${uri}`;
}

/** The server and URI of a resource mention's target (null: not one). */
export function parseMcpMentionTarget(target: string | null | undefined): { server: string; uri: string } | null {
  if (!target) return null;
  const at = target.indexOf(':');
  return at > 0 && at < target.length - 1 ? { server: target.slice(0, at), uri: target.slice(at + 1) } : null;
}

export function isMcpSuggestion(s: { kind: string }): boolean {
  return s.kind === MCP_MENTION_KIND;
}

/** The resources of connected, enabled servers matching `query` (what follows the `@`), as popup rows. */
export function mcpResourceSuggestions(servers: readonly McpServerView[], query: string, limit: number): MentionSuggestion[] {
  const q = query.toLowerCase();
  const out: MentionSuggestion[] = [];
  if (limit <= 0) return out;
  for (const s of servers) {
    if (!s.enabled || s.status !== 'connected') continue;
    for (const r of s.resources) {
      if (q !== '' && ![r.name, r.uri, s.name].some((x) => x.toLowerCase().includes(q))) continue;
      // The kind is the engine's once its MCP client adds it to the protocol's mention kinds.
      out.push({ kind: MCP_MENTION_KIND as MentionSuggestion['kind'], target: mcpMentionTarget(s.name, r.uri), label: r.name, detail: r.description ?? r.uri });
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** The popup's rows: the engine's, plus the known MCP resources when the engine offered none itself. */
export function withMcpResources(items: readonly MentionSuggestion[], servers: readonly McpServerView[], query: string, limit: number): MentionSuggestion[] {
  if (items.some(isMcpSuggestion)) return [...items];
  const room = Math.max(0, limit - items.length);
  return [...items, ...mcpResourceSuggestions(servers, query, room)];
}

/** What the draft shows for an accepted resource mention: `@<server>:<name>` without spaces. */
export function mcpMentionText(s: Pick<MentionSuggestion, 'label' | 'target'>): string {
  const t = parseMcpMentionTarget(s.target);
  return `@${t ? `${t.server}:` : ''}${s.label.replace(/\s+/g, '-')}`;
}
