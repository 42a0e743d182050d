/**
 * The grant levels a user gives an MCP client (SPEC 5.2: readOnly | default | fullAccess) and the
 * protocol grant each one is (../protocol/commands/grants.ts): the capabilities the engine checks
 * on every command, and the thread-mode ceiling it checks where a thread gets its modes.
 *
 *   readOnly    read                        runtime readOnly,  interaction plan
 *   default     read, write, startThreads   runtime default,   interaction default
 *   fullAccess  read, write, startThreads   runtime fullAccess, interaction default
 *
 * Never `owner`: an MCP client does not approve its own tool calls, restore files or change
 * settings. A read-only caller starts no thread at all, not even a Plan one: a thread is a change
 * (it joins the user's list and spends their model budget), and "refuses escalation above the
 * caller's modes" still applies first, so asking for more than readOnly/plan says `escalation`
 * and asking for exactly that says `capabilityDenied` (the grant lacks startThreads).
 */
import type { Capability, Grant, GrantModes, InteractionLevel, RuntimeLevel } from '../protocol/commands/grants';
import type { PermissionModeName, WorkMode } from '../protocol/events';

export const MCP_GRANT_LEVELS = ['readOnly', 'default', 'fullAccess'] as const;
export type McpGrantLevel = (typeof MCP_GRANT_LEVELS)[number];

/** Runtime modes of a thread an MCP client starts, lowest first (the index is the level). */
export const RUNTIME_MODES = ['readOnly', 'default', 'fullAccess'] as const;
export type RuntimeMode = (typeof RUNTIME_MODES)[number];
/** Interaction modes, lowest first. */
export const INTERACTION_MODES = ['plan', 'default'] as const;
export type InteractionMode = (typeof INTERACTION_MODES)[number];

export function isMcpGrantLevel(s: string): s is McpGrantLevel {
  return (MCP_GRANT_LEVELS as readonly string[]).includes(s);
}

export const runtimeLevel = (m: RuntimeMode): RuntimeLevel => RUNTIME_MODES.indexOf(m) as RuntimeLevel;
export const interactionLevel = (m: InteractionMode): InteractionLevel => INTERACTION_MODES.indexOf(m) as InteractionLevel;

const CAPABILITIES: Record<McpGrantLevel, readonly Capability[]> = {
  readOnly: ['read'],
  default: ['read', 'write', 'startThreads'],
  fullAccess: ['read', 'write', 'startThreads'],
};

/** The highest modes of each level, as names (for messages) and levels (for the protocol grant). */
export const MODE_CEILING: Record<McpGrantLevel, { runtime: RuntimeMode; interaction: InteractionMode }> = {
  readOnly: { runtime: 'readOnly', interaction: 'plan' },
  default: { runtime: 'default', interaction: 'default' },
  fullAccess: { runtime: 'fullAccess', interaction: 'default' },
};

export function grantModes(level: McpGrantLevel): GrantModes {
  const c = MODE_CEILING[level];
  return { runtime: runtimeLevel(c.runtime), interaction: interactionLevel(c.interaction) };
}

/** What else the user (or the transport) decided about an MCP client's grant. */
export interface McpGrantOptions {
  /** The user granted every workspace's threads (`vox mcp serve --all-workspaces`); else only the engine's workspace's. */
  allWorkspaces?: boolean;
  /** No one can answer its threads' approvals (stdio: the engine runs in `vox mcp serve`, no window sees them). */
  noApprover?: boolean;
}

/** The protocol grant of an MCP client at `level`: confined to its workspace's threads unless `allWorkspaces`. */
export function mcpGrant(level: McpGrantLevel, holder: string, opts: McpGrantOptions = {}): Grant {
  return {
    capabilities: CAPABILITIES[level], holder, modes: grantModes(level),
    ...(opts.allWorkspaces ? {} : { threads: 'workspace' as const }), ...(opts.noApprover ? { noApprover: true as const } : {}),
  };
}

/**
 * A thread's Vox modes for the MCP modes asked: runtime readOnly runs in Plan mode (only read tools
 * run), default asks the user for every write and command ('ask', approved in VS Code),
 * fullAccess runs everything ('fullAuto'); interaction plan is Plan mode, default is Act.
 */
export function voxModes(runtime: RuntimeMode, interaction: InteractionMode): { permissionMode: PermissionModeName; workMode: WorkMode } {
  return {
    permissionMode: runtime === 'fullAccess' ? 'fullAuto' : 'ask',
    workMode: runtime === 'readOnly' || interaction === 'plan' ? 'plan' : 'act',
  };
}
