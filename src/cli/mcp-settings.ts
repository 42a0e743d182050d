/**
 * The CLI's MCP choices (`vox mcp enable|disable`): which servers and tools are off, per
 * workspace, kept in $VOX_HOME/mcp-settings.json (VS Code keeps them in the workspace settings
 * `vox.mcp.disabledServers` / `vox.mcp.disabledTools`; the CLI has no settings file of its own).
 * A missing or unreadable file means nothing is disabled.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpSettings } from '../engine/host';

type Stored = Record<string, Pick<McpSettings, 'disabledServers' | 'disabledTools'>>;

function read(file: string): Stored {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Stored) : {};
  } catch {
    return {};
  }
}

export function cliMcpSettings(voxHome: string, workspaceRoot: string): { get(): McpSettings; set(patch: Partial<McpSettings>): Promise<void> } {
  const file = path.join(voxHome, 'mcp-settings.json');
  return {
    get: () => {
      const mine = read(file)[workspaceRoot] ?? {};
      return { ...(Array.isArray(mine.disabledServers) ? { disabledServers: mine.disabledServers } : {}), ...(Array.isArray(mine.disabledTools) ? { disabledTools: mine.disabledTools } : {}) };
    },
    async set(patch) {
      const all = read(file);
      const mine = { ...all[workspaceRoot] };
      if (patch.disabledServers) mine.disabledServers = patch.disabledServers;
      if (patch.disabledTools) mine.disabledTools = patch.disabledTools;
      all[workspaceRoot] = mine;
      fs.mkdirSync(voxHome, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(all, null, 2));
      fs.renameSync(tmp, file);
    },
  };
}
