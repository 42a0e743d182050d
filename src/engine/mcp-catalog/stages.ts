/**
 * The tool-catalog guard in a turn (SPEC 3.3, ./catalog.ts): above the threshold of MCP tools
 * the turn offers the built-ins and the three meta-tools, finds the meta-tools by name and routes
 * an `mcp_call` to the real tool (decided, approved and recorded as that tool's call).
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import { catalogThreshold, turnToolCatalog } from './catalog';

/** After Plan mode's filter (the catalog covers what the mode offers). */
const CATALOG_ORDER = PREPARE_ORDER.tools + 10;

export function installCatalogStages(bus: HookBus, threshold: () => unknown): () => void {
  return bus.on('prepareRequest', (_c, out) => {
    const catalog = turnToolCatalog(out.tools.offered, catalogThreshold(threshold()));
    const before = out.tools;
    out.tools = {
      offered: catalog.offered,
      lookup: (name) => catalog.lookup(name) ?? before.lookup(name),
      route: (call) => catalog.route(before.route(call)),
    };
  }, { name: 'mcp-catalog: tool catalog', order: CATALOG_ORDER, failure: 'stopsTurn' });
}
