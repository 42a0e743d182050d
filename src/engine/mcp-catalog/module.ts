/** The tool-catalog module (SPEC 3.3): above the MCP-tool threshold a turn offers three meta-tools (./stages.ts). */
import type { EngineModule } from '../module';
import { installCatalogStages } from './stages';

export const mcpCatalogModule: EngineModule = {
  name: 'mcp-catalog', deps: [],
  install: ({ hooks, host }) => void installCatalogStages(hooks, () => host.mcpSettings?.()?.toolCatalogThreshold),
};
