/**
 * The app a tool call returned (`ToolResult.app`, filled by the MCP client from a `ui://`
 * resource), as it is recorded on the call's `item.completed` and streamed in its `toolResult`
 * chunk: a `ui://` URI and an HTML document of at most MCP_APP_HTML_MAX_BYTES. Anything else is
 * not rendered, and the tool's text result says why (the call itself stands).
 */
import type { McpAppView } from '../../protocol/mcp-apps';
import { utf8ByteLength } from '../../protocol/mcp-apps';
import type { McpAppResource } from '../tools/types';

/** Largest app document kept with a tool result (it is stored in the event log and sent to the chat). */
export const MCP_APP_HTML_MAX_BYTES = 1024 * 1024;
/** Longest URI, server name or title kept. */
export const MCP_APP_NAME_MAX_CHARS = 2_000;

export type AppOutcome = { app: McpAppView } | { refused: string } | null;

export function appOfResult(app: McpAppResource | undefined): AppOutcome {
  if (!app) return null;
  if (typeof app.uri !== 'string' || !app.uri.startsWith('ui://') || app.uri.length > MCP_APP_NAME_MAX_CHARS) return { refused: 'its URI is not a ui:// resource' };
  if (typeof app.html !== 'string') return { refused: 'it has no HTML document' };
  const bytes = utf8ByteLength(app.html);
  if (bytes > MCP_APP_HTML_MAX_BYTES) return { refused: `its document is ${bytes} bytes (at most ${MCP_APP_HTML_MAX_BYTES})` };
  const title = typeof app.title === 'string' ? app.title.slice(0, MCP_APP_NAME_MAX_CHARS) : null;
  return { app: { uri: app.uri, html: app.html, server: String(app.server).slice(0, MCP_APP_NAME_MAX_CHARS), title } };
}
