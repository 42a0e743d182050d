/**
 * The three meta-tools the model sees in place of many MCP schemas (SPEC 3.3): `mcp_list_groups`
 * (the servers, their tool counts and each tool in one line), `mcp_describe` (the full schemas of
 * named tools) and `mcp_call` (a call of one of them). `mcp_call` is never run by itself: the agent
 * loop routes it (./catalog.ts `route`) to the real tool before the permission decision and the
 * approval, so the user approves the real tool with its real arguments; only a call that cannot be
 * routed reaches this module, and its argument check is the typed error the model is told.
 */
import type { ToolCall } from '../providers/types';
import { quote } from '../../protocol/wire/quote';
import { ToolError, type AgentTool } from '../tools/types';

export const MCP_LIST_GROUPS = 'mcp_list_groups';
export const MCP_DESCRIBE = 'mcp_describe';
export const MCP_CALL = 'mcp_call';
export const META_TOOL_NAMES: readonly string[] = [MCP_LIST_GROUPS, MCP_DESCRIBE, MCP_CALL];

/** Characters of a tool's description kept in its one-line summary (mcp_list_groups). */
export const ONE_LINE_DESCRIPTION_CHARS = 120;
/** Most tools one mcp_describe call describes (a bigger request is refused: describe in batches). */
export const MAX_DESCRIBE_TOOLS = 20;
/** Characters of a bad tool name quoted back in an error. */
const NAME_PREVIEW_CHARS = 80;

/** The MCP tools a catalog hides, by the names the model may use: the registered name and `server/tool`. */
export interface HiddenTools {
  /** The MCP tools, in the order the registry offers them. */
  readonly list: readonly AgentTool[];
  find(name: string): AgentTool | undefined;
}

function origin(tool: AgentTool): { server: string; tool: string } {
  return tool.origin?.kind === 'mcp' ? tool.origin : { server: '(unknown)', tool: tool.spec.name };
}

function oneLine(description: string): string {
  const first = description.split(/\r?\n/).find((l) => l.trim().length > 0)?.trim() ?? '';
  return quote(first, ONE_LINE_DESCRIPTION_CHARS);
}

function quotedName(name: string): string {
  return JSON.stringify(quote(name, NAME_PREVIEW_CHARS));
}

function parseObject(tool: string, argumentsJson: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
  } catch {
    throw new ToolError('invalidArguments', `${tool}: the arguments are not valid JSON.`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ToolError('invalidArguments', `${tool}: the arguments must be a JSON object.`);
  return v as Record<string, unknown>;
}

function unknownTool(name: string): ToolError {
  return new ToolError('unknownTool', `${MCP_CALL}: no active MCP tool is named ${quotedName(name)}. Call ${MCP_LIST_GROUPS} for the names, then ${MCP_DESCRIBE} for a tool's arguments.`);
}

/**
 * The real call an `mcp_call` stands for: same id, the real tool's registered name, its
 * arguments as JSON. Throws the typed error the model is told for anything else: arguments that
 * are not an object, `tool` missing or unknown, `arguments` not an object.
 */
export function resolveMetaCall(hidden: HiddenTools, call: ToolCall): ToolCall {
  const args = parseObject(MCP_CALL, call.argumentsJson);
  for (const k of Object.keys(args)) {
    if (k !== 'tool' && k !== 'arguments') throw new ToolError('invalidArguments', `${MCP_CALL}: unknown property ${quotedName(k)} (expected "tool" and "arguments").`);
  }
  if (typeof args.tool !== 'string' || args.tool.length === 0) throw new ToolError('invalidArguments', `${MCP_CALL}: "tool" must be the name of an MCP tool (a non-empty string).`);
  const target = hidden.find(args.tool);
  if (!target) throw unknownTool(args.tool);
  const inner = args.arguments ?? {};
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw new ToolError('invalidArguments', `${MCP_CALL}: "arguments" must be a JSON object (the arguments of ${target.spec.name}).`);
  return { ...call, name: target.spec.name, argumentsJson: JSON.stringify(inner) };
}

/** mcp_list_groups: `{server?}` → each server (or the one named) with its tool count and its tools in one line each. */
function listGroups(hidden: HiddenTools): AgentTool<{ server: string | null }> {
  return {
    spec: {
      name: MCP_LIST_GROUPS,
      description: 'List the connected MCP servers, how many tools each has, and each tool\'s name with a one-line description. Then use mcp_describe for a tool\'s arguments and mcp_call to call it.',
      parameters: { type: 'object', properties: { server: { type: 'string', description: 'Only this server (optional).' } }, required: [], additionalProperties: false },
    },
    toolClass: 'read',
    mutating: false,
    parseArgs(json) {
      const a = parseObject(MCP_LIST_GROUPS, json);
      for (const k of Object.keys(a)) if (k !== 'server') throw new ToolError('invalidArguments', `${MCP_LIST_GROUPS}: unknown property ${quotedName(k)}.`);
      if (a.server !== undefined && typeof a.server !== 'string') throw new ToolError('invalidArguments', `${MCP_LIST_GROUPS}: "server" must be a string.`);
      return { server: (a.server as string | undefined) ?? null };
    },
    async run({ server }) {
      const groups = new Map<string, AgentTool[]>();
      for (const t of hidden.list) {
        const s = origin(t).server;
        if (server !== null && s !== server) continue;
        groups.set(s, [...(groups.get(s) ?? []), t]);
      }
      if (groups.size === 0) {
        const all = [...new Set(hidden.list.map((t) => origin(t).server))].join(', ') || '(none)';
        return { content: server === null ? 'No MCP tools are active.' : `No active MCP server is named ${quotedName(server)}. Servers: ${all}.`, isError: server !== null };
      }
      const lines: string[] = [];
      for (const [s, tools] of groups) {
        lines.push(`${s} (${tools.length} tool${tools.length === 1 ? '' : 's'})`);
        for (const t of tools) lines.push(`  ${t.spec.name} [${t.toolClass}]: ${oneLine(t.spec.description)}`);
      }
      return { content: lines.join('\n') };
    },
  };
}

/** mcp_describe: `{tools: string[]}` → each tool's name, server, class, full description and JSON schema. */
function describeTools(hidden: HiddenTools): AgentTool<{ tools: string[] }> {
  return {
    spec: {
      name: MCP_DESCRIBE,
      description: `Show the full description and argument JSON schema of MCP tools (at most ${MAX_DESCRIBE_TOOLS} per call), by the names mcp_list_groups gives.`,
      parameters: {
        type: 'object',
        properties: { tools: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_DESCRIBE_TOOLS, description: 'Tool names.' } },
        required: ['tools'], additionalProperties: false,
      },
    },
    toolClass: 'read',
    mutating: false,
    parseArgs(json) {
      const a = parseObject(MCP_DESCRIBE, json);
      for (const k of Object.keys(a)) if (k !== 'tools') throw new ToolError('invalidArguments', `${MCP_DESCRIBE}: unknown property ${quotedName(k)}.`);
      const tools = a.tools;
      if (!Array.isArray(tools) || tools.length === 0 || !tools.every((n) => typeof n === 'string')) throw new ToolError('invalidArguments', `${MCP_DESCRIBE}: "tools" must be a non-empty array of tool names.`);
      if (tools.length > MAX_DESCRIBE_TOOLS) throw new ToolError('invalidArguments', `${MCP_DESCRIBE}: at most ${MAX_DESCRIBE_TOOLS} tools per call (got ${tools.length}).`);
      return { tools: tools as string[] };
    },
    async run({ tools }) {
      const described = tools.map((name) => {
        const t = hidden.find(name);
        if (!t) return { name, error: `unknown tool; call ${MCP_LIST_GROUPS} for the names` };
        const o = origin(t);
        return { name: t.spec.name, server: o.server, serverTool: o.tool, class: t.toolClass, description: t.spec.description, inputSchema: t.spec.parameters };
      });
      const missing = described.filter((d) => 'error' in d).length;
      return { content: JSON.stringify(described, null, 2), isError: missing === described.length };
    },
  };
}

/** mcp_call's spec; reached only when routing failed, so its check throws the typed reason. */
function callTool(hidden: HiddenTools): AgentTool<never> {
  return {
    spec: {
      name: MCP_CALL,
      description: 'Call an MCP tool by name with its arguments (see mcp_describe for the schema). The call is approved and run exactly as a direct call of that tool.',
      parameters: {
        type: 'object',
        properties: {
          tool: { type: 'string', description: 'The tool name (from mcp_list_groups).' },
          arguments: { type: 'object', description: 'The tool\'s arguments, matching its schema.' },
        },
        required: ['tool'], additionalProperties: false,
      },
    },
    // Unroutable calls never run; the class of a routed call is the real tool's.
    toolClass: 'read',
    mutating: false,
    parseArgs(json) {
      resolveMetaCall(hidden, { id: '', name: MCP_CALL, argumentsJson: json });
      // A call that resolves is routed to its tool by the agent loop and never parsed here.
      throw new ToolError('notAvailable', `${MCP_CALL} can only run through the agent loop, which routes it to the tool it names.`);
    },
    async run() {
      throw new ToolError('notAvailable', `${MCP_CALL} can only run through the agent loop, which routes it to the tool it names.`);
    },
  };
}

/** The three meta-tools over `hidden`, in the order they are offered. */
export function metaTools(hidden: HiddenTools): AgentTool[] {
  return [listGroups(hidden) as AgentTool, describeTools(hidden) as AgentTool, callTool(hidden) as AgentTool];
}
