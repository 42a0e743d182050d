/**
 * The only way a tool joins Vox's MCP server. `defineVoxTool({name, description, input, access,
 * handler})` checks the declaration (a snake_case name, a zod input shape, an McpToolAccess
 * declaration from ./access.ts); `VoxToolRegistry.add` registers it on the SDK McpServer with a
 * wrapper that checks the access against the caller's grant level, runs the handler, applies the
 * DOM snapshot rule and turns every failure into an MCP tool error ({isError, text,
 * structuredContent {domain, code}}). The registry seals the McpServer it owns: `tool` and
 * `registerTool` on it throw `mcpServer/rawRegistration`, and `connect` refuses to start when any
 * registered tool (or tool handler) did not come through `add` — a registration made around the
 * seal (the prototype's method, `experimental.tasks`, a handler swapped with `update`) is caught
 * at start. `tools/list` shows a caller only the tools its grant level can call (`mayCall`); a
 * call to an unlisted one still reaches the wrapper and gets the typed refusal (capabilityDenied).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import { ClientError, type EngineClient } from '../client/engine-client';
import { isVoxError } from '../protocol/wire/vox-error';
import { checkAccess, isAccessDeclaration, mayCall, type McpToolAccessDecl } from './access';
import { applyDomSnapshotRule } from './dom-snapshot';
import { McpServerError } from './errors';
import type { InteractionMode, McpGrantLevel, RuntimeMode } from './grants';

/** Tool names: snake_case, as MCP clients show them (`mcp__vox__list_threads`). */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

export interface VoxToolContext {
  /** The protocol client, connected with this caller's grant (the engine checks every command again). */
  readonly client: EngineClient;
  readonly level: McpGrantLevel;
  /** The modes a `startsThreads` tool's call asked for (checked against the caller's); null for other tools. */
  readonly modes: { runtime: RuntimeMode; interaction: InteractionMode } | null;
}

export interface VoxToolDefinition<S extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly input: S;
  readonly access: McpToolAccessDecl;
  readonly handler: (args: z.objectOutputType<S, z.ZodTypeAny>, ctx: VoxToolContext) => Promise<unknown>;
}

const DEFINED = new WeakSet<object>();

/** Declares a tool; refused (`rawRegistration`) without a valid name, input shape or access declaration. */
export function defineVoxTool<S extends z.ZodRawShape>(def: VoxToolDefinition<S>): VoxToolDefinition<S> {
  const name = (def as { name?: unknown }).name;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) throw new McpServerError('rawRegistration', `a Vox MCP tool needs a snake_case name, not ${JSON.stringify(name)}`);
  if (!isAccessDeclaration((def as { access?: unknown }).access)) {
    throw new McpServerError('rawRegistration', `tool ${name} declares no access: use McpToolAccess.reads, .writes, .writesWithCapability(cap) or .startsThreads(runtimeMode, interactionMode)`);
  }
  if (typeof def.handler !== 'function' || typeof def.description !== 'string' || typeof def.input !== 'object' || def.input === null) {
    throw new McpServerError('rawRegistration', `tool ${name} needs a description, an input shape and a handler`);
  }
  const frozen = Object.freeze({ ...def });
  DEFINED.add(frozen);
  return frozen;
}

/** An MCP tool error: the text a model reads and {domain, code} for programs. */
export function toolError(domain: string, code: string, message: string, details?: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${domain}/${code}: ${message}` }],
    structuredContent: { domain, code, message, ...(details !== undefined ? { details } : {}) },
  };
}

/** A tool's value as a result: JSON text for models, the object itself as structured content. */
export function toolValue(value: unknown): CallToolResult {
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return applyDomSnapshotRule({ content: [{ type: 'text', text: JSON.stringify(value, null, 1) }], structuredContent: structured });
}

/** The SDK's own errors (unknown tool, arguments that fail the schema) as typed tool errors. */
function sdkToolError(raw: string): CallToolResult {
  const message = raw.replace(/^MCP error -?\d+: /, '');
  if (/^Tool \S+ (not found|disabled)$/.test(message)) return toolError('mcpServer', 'unknownTool', message);
  if (/^Input validation error/.test(message)) return toolError('mcpServer', 'invalidArguments', message);
  return toolError('mcpServer', 'invalidRequest', message);
}

type ToolHandler = (args: Record<string, unknown>) => Promise<CallToolResult>;
type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;
type Registered = Record<string, { handler: unknown }>;

export class VoxToolRegistry {
  readonly server: McpServer;
  private readonly handlers = new WeakSet<object>();
  private readonly names = new Set<string>();
  /** The tools `tools/list` shows this caller: the ones its grant level can call. */
  private readonly listed = new Set<string>();

  constructor(info: Implementation, private readonly ctx: { client: EngineClient; level: McpGrantLevel; log: (e: unknown) => void }) {
    const server = new McpServer(info, { capabilities: { tools: {} } });
    this.server = server;
    const refuse = (how: string) => () => {
      throw new McpServerError('rawRegistration', `${how} is not a way to add a tool to Vox's MCP server: declare it with defineVoxTool and an McpToolAccess`);
    };
    Object.defineProperty(server, 'tool', { value: refuse('McpServer.tool'), writable: false, configurable: false });
    Object.defineProperty(server, 'registerTool', { value: refuse('McpServer.registerTool'), writable: false, configurable: false });
    // The SDK's own failures (unknown tool, bad arguments) come back typed, like ours.
    Object.defineProperty(server, 'createToolError', { value: sdkToolError, writable: false, configurable: false });
    const connect = server.connect.bind(server);
    Object.defineProperty(server, 'connect', {
      value: async (transport: Transport) => {
        this.verify();
        this.listOnlyCallable();
        return connect(transport);
      },
      writable: false, configurable: false,
    });
  }

  add<S extends z.ZodRawShape>(tool: VoxToolDefinition<S>): void {
    const def = tool as unknown as VoxToolDefinition;
    if (!DEFINED.has(def)) throw new McpServerError('rawRegistration', `tool ${String((def as { name?: unknown })?.name)} was not declared with defineVoxTool`);
    if (this.names.has(def.name)) throw new McpServerError('rawRegistration', `tool ${def.name} is registered twice`);
    const handler: ToolHandler = (args) => this.run(def, args);
    this.handlers.add(handler);
    this.names.add(def.name);
    if (mayCall(def.access, this.ctx.level)) this.listed.add(def.name);
    McpServer.prototype.registerTool.call(this.server, def.name, {
      ...(def.title ? { title: def.title } : {}), description: def.description, inputSchema: def.input,
      annotations: { readOnlyHint: def.access.kind === 'reads', openWorldHint: false },
    }, handler as never);
  }

  /** Every tool on the server came through `add`, with its wrapper as the handler; else `rawRegistration`. */
  verify(): void {
    const registered = (this.server as unknown as { _registeredTools: Registered })._registeredTools;
    for (const [name, tool] of Object.entries(registered)) {
      if (!this.names.has(name) || typeof tool.handler !== 'function' || !this.handlers.has(tool.handler)) {
        throw new McpServerError('rawRegistration', `tool ${name} was registered around Vox's tool registry (no McpToolAccess declaration); the server does not start`);
      }
    }
  }

  /** Wraps the SDK's `tools/list` handler (installed with the first tool) so it leaves out what this caller cannot call. */
  private listOnlyCallable(): void {
    const handlers = (this.server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
    const list = handlers?.get('tools/list');
    if (!handlers) throw new McpServerError('internal', 'the MCP SDK keeps its request handlers elsewhere: tools/list cannot be narrowed to the caller\'s grant; the server does not start');
    if (!list || (list as { voxFiltered?: boolean }).voxFiltered) return; // no tools yet, or narrowed already
    const filtered: RequestHandler = async (request, extra) => {
      const r = (await list(request, extra)) as { tools: { name: string }[] };
      return { ...r, tools: r.tools.filter((t) => this.listed.has(t.name)) };
    };
    (filtered as { voxFiltered?: boolean }).voxFiltered = true;
    handlers.set('tools/list', filtered);
  }

  private async run(def: VoxToolDefinition, args: Record<string, unknown>): Promise<CallToolResult> {
    try {
      const modes = checkAccess(def.name, def.access, this.ctx.level, args ?? {});
      const value = await def.handler(args ?? {}, { client: this.ctx.client, level: this.ctx.level, modes });
      return toolValue(value);
    } catch (e) {
      if (e instanceof ClientError) return toolError(e.domain, e.code, e.message, e.details);
      if (e instanceof McpServerError) return toolError(e.domain, e.code, e.message, e.details);
      if (isVoxError(e)) return toolError(e.domain, e.code, e.message);
      this.ctx.log(e);
      return toolError('mcpServer', 'internal', `${def.name} failed inside Vox (the error was logged)`);
    }
  }
}
