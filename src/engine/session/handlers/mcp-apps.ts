/** Handlers of the MCP Apps commands (../../../protocol/commands/mcp-apps.ts): an app's state per turn item (SPEC 5.3). */
import { saveAppState } from '../../mcp-apps/state';
import type { HandlerTable } from './types';

export const mcpAppHandlers: HandlerTable<'setMcpAppState'> = {
  setMcpAppState({ services: { store } }, cmd) {
    return saveAppState(store, cmd.threadId, cmd.itemId, cmd.state);
  },
};
