/**
 * ToolRegistry: the tools the agent may call, by name, in the order they are offered to the
 * model. The built-ins register at engine start (./builtins.ts); later capabilities (MCP servers)
 * register theirs the same way and unregister them when they go away. Lookup of an unknown name
 * is a typed `tool/unknownTool` that lists what is available, fed back to the model.
 */
import type { ToolSpec } from '../providers/types';
import { cutText } from './text';
import { ARGS_PREVIEW_CHARS } from './schema';
import { ToolError, type AgentTool } from './types';

export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();

  /** Adds a tool; a second tool of the same name is refused. Returns its remover. */
  register(tool: AgentTool): () => void {
    const name = tool.spec.name;
    if (this.tools.has(name)) throw new ToolError('duplicateTool', `a tool named ${name} is already registered`);
    this.tools.set(name, tool);
    return () => {
      if (this.tools.get(name) === tool) this.tools.delete(name);
    };
  }

  /** The tool called `name`, or `ToolError('unknownTool')` listing what is available. */
  lookup(name: string): AgentTool {
    const tool = this.tools.get(name);
    if (tool) return tool;
    const available = [...this.tools.keys()].join(', ') || '(none)';
    throw new ToolError('unknownTool', `Unknown tool ${JSON.stringify(cutText(name, ARGS_PREVIEW_CHARS))}. Available tools: ${available}.`);
  }

  list(): AgentTool[] {
    return [...this.tools.values()];
  }

  /** `[name, tool]` pairs in registration order. */
  [Symbol.iterator](): IterableIterator<[string, AgentTool]> {
    return this.tools.entries();
  }

  /** The specs to send to the model, in registration order. */
  specs(): ToolSpec[] {
    return this.list().map((t) => t.spec);
  }
}
