/**
 * MCP Apps on the wire (SPEC 5.3): the UI resource a tool returned, as it travels with the tool
 * result (`toolResult` chunk, `item.completed` event) to the chat, and the limits of its saved
 * state. Shared by the engine (src/engine/mcp-apps/) and the webview (McpApp*.svelte).
 */
import { nullable, object, str, type Infer } from './wire/validators';

/** Most UTF-8 bytes of state one app may keep per turn item (the tool call's item). */
export const MCP_APP_STATE_MAX_BYTES = 16 * 1024;

/** The app a tool call returned: its `ui://` URI, the HTML document, the server and a title. */
export const mcpAppView = object({ uri: str, html: str, server: str, title: nullable(str) });
export type McpAppView = Infer<typeof mcpAppView>;

/** UTF-8 length of `s` (a lone surrogate counts as the 3 bytes of U+FFFD, as TextEncoder writes it). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
