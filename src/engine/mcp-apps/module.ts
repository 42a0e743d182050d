/** The MCP Apps module (SPEC 5.3): `setMcpAppState`, the `mcp_apps` table and its projections, and the apps' part of a turn (./stages.ts). */
import type { EngineModule, ModuleHandlers } from '../module';
import type { VoxStore } from '../store/store';
import { MCP_APPS_SCHEMA } from './schema';
import { installMcpAppStages } from './stages';
import { saveAppState } from './state';

const handlers: ModuleHandlers<'setMcpAppState', { store: VoxStore }> = {
  setMcpAppState({ services: { store } }, cmd) {
    return saveAppState(store, cmd.threadId, cmd.itemId, cmd.state);
  },
};

export const mcpAppsModule: EngineModule = {
  name: 'mcp-apps', deps: [], schema: MCP_APPS_SCHEMA, handlers,
  install: ({ hooks, store }) => void installMcpAppStages(hooks, store),
};
