/**
 * The engine's side of a grant's modes (../../protocol/commands/grants.ts GrantModes): the levels
 * of a thread's permission and work mode, the modes a new thread of a limited session gets, and
 * the refusals when a session asks for more than its grant allows. The MCP server checks the same
 * ceiling before it calls (src/mcp-server/access.ts); this is the second wall (defense in depth):
 * a session whose grant has modes cannot reach above them through any command.
 */
import type { Grant, GrantModes, InteractionLevel, RuntimeLevel } from '../../protocol/commands/grants';
import type { PermissionModeName, WorkMode } from '../../protocol/events';
import { VoxError } from '../../protocol/wire/vox-error';

/** A session asked for thread modes above its grant's. */
export class GrantModeError extends VoxError<'protocol'> {
  readonly domain = 'protocol' as const;
  constructor(message: string) {
    super('capabilityDenied', message);
  }
}

/**
 * A turn that would wait for an approval no one can give: the session's grant says no one answers
 * its approvals (`Grant.noApprover`, an MCP client of `vox mcp serve`) and the thread asks in Act.
 */
export class NoApproverError extends VoxError<'approval'> {
  readonly domain = 'approval' as const;
  constructor(message: string) {
    super('noApprover', message);
  }
}

/** How much a permission mode lets a thread do unasked: Ask every time 1; Auto-approve edits and Full auto 2 (they run writes without the user). */
export const PERMISSION_MODE_LEVEL: Record<PermissionModeName, RuntimeLevel> = { ask: 1, autoEdits: 2, fullAuto: 2 };

export const RUNTIME_LEVEL_NAMES = ['readOnly', 'default', 'fullAccess'] as const;
export const INTERACTION_LEVEL_NAMES = ['plan', 'default'] as const;

export interface ThreadModes { permissionMode: PermissionModeName; workMode: WorkMode }

/** The levels a thread in these modes runs at: Plan mode runs read tools only (runtime 0, interaction 0). */
export function levelsOf(m: ThreadModes): { runtime: RuntimeLevel; interaction: InteractionLevel } {
  return m.workMode === 'plan' ? { runtime: 0, interaction: 0 } : { runtime: PERMISSION_MODE_LEVEL[m.permissionMode], interaction: 1 };
}

function describe(m: ThreadModes): string {
  const l = levelsOf(m);
  return `runtime ${RUNTIME_LEVEL_NAMES[l.runtime]}, interaction ${INTERACTION_LEVEL_NAMES[l.interaction]} (permission mode ${m.permissionMode}, ${m.workMode === 'plan' ? 'Plan' : 'Act'})`;
}

function describeCeiling(c: GrantModes): string {
  return `runtime ${RUNTIME_LEVEL_NAMES[c.runtime]}, interaction ${INTERACTION_LEVEL_NAMES[c.interaction]}`;
}

/** Refuses modes above the grant's ceiling (a grant without modes allows any), and modes that would ask where no one answers (`noApprover`). */
export function checkWithinGrant(grant: Grant, m: ThreadModes, what: string): void {
  const c = grant.modes;
  const l = levelsOf(m);
  // A Plan thread still keeps a permission mode (it applies once someone switches it to Act): it may not exceed the ceiling either.
  const permissionTooHigh = c !== undefined && PERMISSION_MODE_LEVEL[m.permissionMode] > Math.max(c.runtime, 1);
  if (c && (l.runtime > c.runtime || l.interaction > c.interaction || permissionTooHigh)) {
    throw new GrantModeError(`${grant.holder} may not ${what} with ${describe(m)}: its grant allows at most ${describeCeiling(c)}`);
  }
  // Act in Ask every time / Auto-approve edits asks the user; Full auto and Plan (read tools only) never do.
  if (grant.noApprover && m.workMode !== 'plan' && m.permissionMode !== 'fullAuto') {
    throw new NoApproverError(
      `${grant.holder} may not ${what} with ${describe(m)}: its edits and commands would wait for approvals no one can give here ` +
      '(`vox mcp serve` runs the thread in its own process, which no VS Code window sees). Use runtimeMode readOnly (Plan), ' +
      'fullAccess with `--grant fullAccess`, or VS Code\'s MCP server (setting vox.mcpServer.enabled), where you approve in the sidebar.',
    );
  }
}

/**
 * The modes a new thread starts in, or null when nothing is asked and the grant has no modes (the
 * thread follows the workspace default). A limited session's thread always gets explicit modes:
 * an unset permission mode is Ask every time, an unset work mode Plan when the ceiling is 0.
 */
export function newThreadModes(grant: Grant, asked: { permissionMode?: PermissionModeName; workMode?: WorkMode } | undefined): ThreadModes | null {
  const c = grant.modes;
  if (!c && !asked) return null;
  const planOnly = c !== undefined && (c.runtime === 0 || c.interaction === 0);
  const m: ThreadModes = { permissionMode: asked?.permissionMode ?? 'ask', workMode: asked?.workMode ?? (planOnly ? 'plan' : 'act') };
  checkWithinGrant(grant, m, 'start a thread');
  return m;
}
