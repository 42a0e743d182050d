/**
 * MCP tools as agent tools: each tool of a connected server becomes an AgentTool named
 * `mcp__<server>__<tool>` (sanitised to [a-zA-Z0-9_-], at most 64 characters, unique), origin
 * `{kind:'mcp', server, tool}`, class `read` when its annotations say `readOnlyHint: true` and
 * `execute` otherwise — so the approval policy and permission rules treat it as any tool. Its
 * result is flattened to bounded text (text, images, audio, resources, links, structured
 * content); a `ui://` HTML resource — embedded, or named by the tool's `_meta.ui.resourceUri` —
 * fills `ToolResult.app` for the chat's MCP App frame (../mcp-apps/).
 */
import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { cutText, TOOL_OUTPUT_BUDGET_CHARS } from '../tools/text';
import { ToolError, type AgentTool, type McpAppResource, type ToolResult } from '../tools/types';
import type { McpServerConnection } from './connection';
import { isVoxError } from '../../protocol/wire/vox-error';

/** Longest tool name providers accept (OpenAI and Anthropic: 64). */
export const MAX_TOOL_NAME_CHARS = 64;
/** Text of one MCP result the model gets: the built-ins' budget, so the loop's own cut (32,000) never hides the note. */
export const MCP_RESULT_MAX_CHARS = TOOL_OUTPUT_BUDGET_CHARS;
/** Longest tool description sent to the model. */
export const MAX_TOOL_DESCRIPTION_CHARS = 2_000;
/** Largest MCP App document kept (an oversize one is dropped with a note). */
export const MAX_APP_HTML_CHARS = 1024 * 1024;
/** The prefix of every MCP tool's name. */
export const MCP_TOOL_PREFIX = 'mcp__';

function sanitize(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
}

/** `mcp__<server>__<tool>`, sanitised, ≤ 64 characters (long names end in a short hash), not in `taken`. */
export function qualifiedToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  let base = `${MCP_TOOL_PREFIX}${sanitize(server)}__${sanitize(tool)}`;
  if (base.length > MAX_TOOL_NAME_CHARS) {
    const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
    base = `${base.slice(0, MAX_TOOL_NAME_CHARS - 9)}_${hash}`;
  }
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const name = `${base.slice(0, MAX_TOOL_NAME_CHARS - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

export function isReadOnly(tool: Tool): boolean {
  return tool.annotations?.readOnlyHint === true;
}

function isAppMime(mime: string | undefined): boolean {
  return typeof mime === 'string' && /^text\/html(\s*;.*)?$/i.test(mime.trim());
}

/** The tool's declared UI resource (`_meta.ui.resourceUri`, or the older flat `_meta["ui/resourceUri"]`). */
export function declaredAppUri(tool: Tool): string | null {
  const meta = tool._meta as Record<string, unknown> | undefined;
  const ui = meta?.ui as Record<string, unknown> | undefined;
  const uri = (typeof ui?.resourceUri === 'string' ? ui.resourceUri : undefined) ?? (typeof meta?.['ui/resourceUri'] === 'string' ? meta['ui/resourceUri'] : undefined);
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : null;
}

/** A result's content as text for the model, and an embedded UI resource if it has one. */
export function flattenResult(r: CallToolResult): { text: string; embeddedApp: { uri: string; html: string } | null } {
  const parts: string[] = [];
  let embeddedApp: { uri: string; html: string } | null = null;
  for (const c of r.content ?? []) {
    if (c.type === 'text') parts.push(c.text);
    else if (c.type === 'image' || c.type === 'audio') parts.push(`[${c.type} ${c.mimeType}, ${Math.floor((c.data.length * 3) / 4)} bytes]`);
    else if (c.type === 'resource_link') parts.push(`[resource ${c.uri}${c.name ? ` (${c.name})` : ''}]`);
    else if (c.type === 'resource') {
      const res = c.resource;
      if ('text' in res && typeof res.text === 'string') {
        if (res.uri.startsWith('ui://') && isAppMime(res.mimeType)) {
          embeddedApp ??= { uri: res.uri, html: res.text };
          parts.push(`[interactive view ${res.uri} shown to the user]`);
        } else parts.push(`[resource ${res.uri}]\n${res.text}`);
      } else parts.push(`[resource ${res.uri}: ${res.mimeType ?? 'binary'}, ${Math.floor(((res as { blob?: string }).blob?.length ?? 0) * 3 / 4)} bytes]`);
    }
  }
  if (parts.length === 0 && r.structuredContent !== undefined) parts.push(JSON.stringify(r.structuredContent));
  return { text: parts.join('\n'), embeddedApp };
}

/** Cuts `text` to the result budget with a note of what was cut. */
export function boundResult(text: string, max = MCP_RESULT_MAX_CHARS): string {
  if (text.length <= max) return text;
  const note = `\n… [MCP result cut: ${text.length.toLocaleString('en-US')} characters, the first ${max.toLocaleString('en-US')} shown] …`;
  return cutText(text, max - note.length) + note;
}

function parseObjectArgs(argumentsJson: string): Record<string, unknown> {
  if (argumentsJson.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(argumentsJson);
  } catch {
    throw new ToolError('invalidArguments', 'The arguments are not valid JSON; send a JSON object.');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ToolError('invalidArguments', 'The arguments must be a JSON object.');
  return v as Record<string, unknown>;
}

/** The AgentTool of `tool` on `conn`, offered to the model as `qualifiedName`. */
export function mcpAgentTool(conn: McpServerConnection, tool: Tool, qualifiedName: string): AgentTool<Record<string, unknown>> {
  const server = conn.spec.name;
  const readOnly = isReadOnly(tool);
  const title = tool.title ?? tool.annotations?.title ?? tool.name;
  const description = cutText(`${tool.description ?? title} (MCP server ${server})`, MAX_TOOL_DESCRIPTION_CHARS);
  return {
    spec: { name: qualifiedName, description, parameters: (tool.inputSchema as Record<string, unknown>) ?? { type: 'object' } },
    toolClass: readOnly ? 'read' : 'execute',
    mutating: !readOnly,
    origin: { kind: 'mcp', server, tool: tool.name },
    parseArgs: parseObjectArgs,
    async run(args, ctx): Promise<ToolResult> {
      let r: CallToolResult;
      try {
        r = await conn.callTool(tool.name, args, ctx.signal);
      } catch (e) {
        // A timeout, a crash, a refusal: the model reads what happened, with Vox's code; a cancel stays a cancel.
        if (isVoxError(e) && e.domain === 'mcp') return { content: `Error (${e.code}): ${e.message}`, isError: true };
        throw e;
      }
      const { text, embeddedApp } = flattenResult(r);
      let app: McpAppResource | undefined;
      let note = '';
      const uri = embeddedApp?.uri ?? declaredAppUri(tool);
      if (uri) {
        const html = embeddedApp?.html ?? (await readAppHtml(conn, uri, ctx.signal).catch(() => null));
        if (html === null) note = `\n[the interactive view ${uri} could not be read]`;
        else if (html.length > MAX_APP_HTML_CHARS) note = `\n[the interactive view ${uri} is larger than ${MAX_APP_HTML_CHARS} characters and was not shown]`;
        else app = { uri, html, server, title };
      }
      return { content: boundResult(text + note), ...(r.isError ? { isError: true } : {}), ...(app ? { app } : {}) };
    },
  };
}

async function readAppHtml(conn: McpServerConnection, uri: string, signal: AbortSignal): Promise<string | null> {
  const r = await conn.readResource(uri, signal);
  for (const c of r.contents) if ('text' in c && typeof c.text === 'string' && (c.mimeType === undefined || isAppMime(c.mimeType))) return c.text;
  return null;
}
