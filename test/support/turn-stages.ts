/**
 * A hook bus with the turn stages the engine installs for a bare AgentRunner in a test: the
 * conversation's history, the sanitiser, salvage, handoff, MCP App contexts and the tool catalog
 * (the modules' own installers, as src/engine/modules.ts lists them).
 */
import { HookBus } from '../../src/engine/agent/hooks';
import { installConversationStages } from '../../src/engine/conversation/stages';
import { installSanitizeStages } from '../../src/engine/sanitize/stages';
import { installSalvageStages } from '../../src/engine/salvage/stages';
import { installHandoffStages } from '../../src/engine/handoff/stages';
import { installMcpAppStages } from '../../src/engine/mcp-apps/stages';
import { installCatalogStages } from '../../src/engine/mcp-catalog/stages';
import type { VoxStore } from '../../src/engine/store/store';

export function turnBus(store: VoxStore, opts: { bus?: HookBus; catalogThreshold?: () => unknown } = {}): HookBus {
  const bus = opts.bus ?? new HookBus();
  installSanitizeStages(bus);
  installConversationStages(bus, store);
  installCatalogStages(bus, opts.catalogThreshold ?? (() => undefined));
  installSalvageStages(bus);
  installHandoffStages(bus, store);
  installMcpAppStages(bus, store);
  return bus;
}
