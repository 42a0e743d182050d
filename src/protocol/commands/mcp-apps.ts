/**
 * MCP Apps commands (SPEC 5.3): an app rendered in the chat saves its state for its turn item
 * (the tool call's item) — at most MCP_APP_STATE_MAX_BYTES of UTF-8 (../mcp-apps.ts), else
 * `mcpApp/stateTooLarge`. The state comes back to the app when the thread replays
 * (`mcpApp.stateSaved`), is cloned by `forkThread` and reaches later turns of the model as
 * `<mcp_app_context>`.
 */
import { int, object, str } from '../wire/validators';
import { name } from './common';
import { defineCommand } from './define';

export const mcpAppCommands = {
  setMcpAppState: defineCommand('setMcpAppState', {
    summary: 'Saves the state (≤ 16 KiB UTF-8) of the MCP App a tool call of the thread returned; it replaces the earlier state of that item.',
    requires: ['write'],
    params: { threadId: name, itemId: name, state: str },
    /** `bytes`: the state's UTF-8 size; `max`: the limit. */
    result: object({ bytes: int, max: int }),
  }),
};
