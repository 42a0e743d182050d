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

export { utf8ByteLength } from './wire/utf8';
