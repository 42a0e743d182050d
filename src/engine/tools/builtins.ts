/** The built-in tools (read, list, search, write, edit, run; subagents and background jobs), registered at engine start. */
import { applyEditTool } from './apply-edit';
import { commandKillTool, commandStatusTool, spawnSubagentTool } from './background-tools';
import { listFilesTool } from './list-files';
import { readFileTool } from './read-file';
import { ToolRegistry } from './registry';
import { runCommandTool } from './run-command';
import { toAgentTool, type ToolDefinition } from './schema';
import { searchTextTool } from './search-text';
import type { AgentTool } from './types';
import { writeFileTool } from './write-file';

/** In the order they are offered to the model. */
const BUILTIN_TOOLS = [
  readFileTool, listFilesTool, searchTextTool, writeFileTool, applyEditTool, runCommandTool, spawnSubagentTool, commandStatusTool, commandKillTool,
] as Array<ToolDefinition<never>>;

export function registerBuiltinTools(registry: ToolRegistry): () => void {
  const removers = BUILTIN_TOOLS.map((def) => registry.register(toAgentTool(def) as AgentTool));
  return () => removers.forEach((r) => r());
}

/** A registry holding just the built-ins (tests, tools outside an engine). */
export function builtinToolRegistry(): ToolRegistry {
  const r = new ToolRegistry();
  registerBuiltinTools(r);
  return r;
}
