/**
 * Names of MCP things as the chat shows them: a tool the model calls as
 * `mcp__<server>__<tool>` (its card gets the server as a badge), a prompt offered as the slash
 * command `/mcp.<server>.<prompt>`, a resource offered as an @-mention. Pure functions.
 */

/** The prefix of an MCP tool's qualified name (src/protocol/commands/mcp.ts `qualifiedName`). */
export const MCP_TOOL_PREFIX = 'mcp__';
/** The prefix of an MCP prompt's slash command. */
export const MCP_SLASH_PREFIX = 'mcp.';

/** `mcp__github__create_issue` → {server: 'github', tool: 'create_issue'}; null for a built-in tool. */
export function parseMcpToolName(name: string): { server: string; tool: string } | null {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return null;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const at = rest.indexOf('__');
  if (at <= 0 || at + 2 >= rest.length) return null;
  return { server: rest.slice(0, at), tool: rest.slice(at + 2) };
}

/** The slash command of a prompt, without its `/`. */
export function mcpSlashName(server: string, prompt: string): string {
  return `${MCP_SLASH_PREFIX}${server}.${prompt}`;
}
