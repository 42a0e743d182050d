/**
 * The tool-catalog guard (SPEC 3.3): which tools a turn offers the model. With at most
 * `threshold` active MCP tools (AgentTool.origin.kind === 'mcp') every tool is offered directly;
 * with more, the built-ins plus the three meta-tools (./meta-tools.ts) are offered instead of the
 * MCP schemas, and the MCP tools stay callable through `mcp_call`, which `route` turns back into
 * the real call before the permission decision and the approval. Works only from tool origins
 * (it knows nothing of MCP connections).
 */
import type { ToolCall, ToolSpec } from '../providers/types';
import type { AgentTool } from '../tools/types';
import { MCP_CALL, metaTools, resolveMetaCall, type HiddenTools } from './meta-tools';

export { MCP_CALL, MCP_DESCRIBE, MCP_LIST_GROUPS, META_TOOL_NAMES } from './meta-tools';

/**
 * Most active MCP tools offered directly (SPEC 3.3: "more than 12" switch to meta mode); the
 * setting `vox.mcp.toolCatalogThreshold` overrides it. 0 means meta mode as soon as one MCP tool
 * is active.
 */
export const DEFAULT_TOOL_CATALOG_THRESHOLD = 12;

/**
 * The threshold in force: a whole number ≥ 0 from the setting, else the default (unset, negative,
 * fractional or non-numbers fall back: a bad setting must not change what a turn offers or fail it;
 * the MCP settings' validation reports it to the user).
 */
export function catalogThreshold(setting: unknown): number {
  return typeof setting === 'number' && Number.isInteger(setting) && setting >= 0 ? setting : DEFAULT_TOOL_CATALOG_THRESHOLD;
}

export interface TurnToolCatalog {
  /** `direct`: every tool's schema; `meta`: the built-ins and the three meta-tools. */
  readonly mode: 'direct' | 'meta';
  /** What the turn offers the model (their specs are the request's `tools`). */
  readonly offered: AgentTool[];
  /** How many active MCP tools there are (offered directly or behind the meta-tools). */
  readonly mcpToolCount: number;
  /** The meta-tool of that name in meta mode (the registry knows none of them). */
  lookup(name: string): AgentTool | undefined;
  /**
   * The call to decide, approve and run: an `mcp_call` naming an active MCP tool becomes that
   * tool's call (same id, its arguments); every other call is returned as it is. An `mcp_call`
   * that cannot be routed is returned as it is too: looking it up gives mcp_call, whose argument
   * check is the typed error (unknown tool, bad arguments) fed back to the model.
   */
  route(call: ToolCall): ToolCall;
}

function isMcp(tool: AgentTool): boolean {
  return tool.origin?.kind === 'mcp';
}

function hiddenTools(list: AgentTool[]): HiddenTools {
  const byName = new Map<string, AgentTool>();
  for (const t of list) byName.set(t.spec.name, t);
  // `server/tool` (the server's own name for it) is accepted too; a registered name wins a clash.
  for (const t of list) {
    if (t.origin?.kind !== 'mcp') continue;
    const alias = `${t.origin.server}/${t.origin.tool}`;
    if (!byName.has(alias)) byName.set(alias, t);
  }
  return { list, find: (name) => byName.get(name) };
}

/** The catalog of one turn over the tools the turn may offer (../plans/offer.ts `offeredTools`). */
export function turnToolCatalog(tools: AgentTool[], threshold: number): TurnToolCatalog {
  const mcp = tools.filter(isMcp);
  if (mcp.length <= threshold) {
    return { mode: 'direct', offered: tools, mcpToolCount: mcp.length, lookup: () => undefined, route: (call) => call };
  }
  const hidden = hiddenTools(mcp);
  const meta = metaTools(hidden);
  const metaByName = new Map(meta.map((t) => [t.spec.name, t]));
  return {
    mode: 'meta',
    offered: [...tools.filter((t) => !isMcp(t)), ...meta],
    mcpToolCount: mcp.length,
    lookup: (name) => metaByName.get(name),
    route(call) {
      if (call.name !== MCP_CALL) return call;
      try {
        return resolveMetaCall(hidden, call);
      } catch {
        return call;
      }
    },
  };
}

/** The request's `tools` of a turn: the catalog's offer, or none for a model without native tool calling. */
export function catalogSpecs(catalog: TurnToolCatalog, toolsEnabled: boolean): ToolSpec[] {
  return toolsEnabled ? catalog.offered.map((t) => t.spec) : [];
}
