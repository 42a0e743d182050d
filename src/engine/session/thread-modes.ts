/**
 * The grant's mode ceiling (../permissions/grant-modes.ts) for commands other than sendPrompt that start runs,
 * checked before their handler. A prompt's thread (a new one created in explicit modes, an
 * existing one checked against the ceiling) is decided with its turn (../runs/turn-start.ts).
 */
import type { Grant } from '../../protocol/commands/grants';
import type { EngineServices } from '../services';
import { checkWithinGrant } from '../permissions/grant-modes';

/** Commands that start a run of an existing thread (in that thread's modes) other than sendPrompt, which checks itself. */
const RUNS_EXISTING_THREAD: ReadonlySet<string> = new Set(['regenerate', 'retry', 'editMessage']);

/**
 * The ceiling for the other commands that start runs, checked before their handler for a session
 * whose grant has modes: a regenerate / retry / edit runs the thread in its own modes; variants
 * run in Act with the workspace default permission mode.
 */
export function checkRunCommandModes(services: Pick<EngineServices, 'store' | 'permissions' | 'plans'>, grant: Grant, type: string, msg: { threadId?: unknown }): void {
  if (!grant.modes) return;
  if (RUNS_EXISTING_THREAD.has(type) && typeof msg.threadId === 'string') {
    services.store.getThread(msg.threadId);
    checkWithinGrant(grant, { permissionMode: services.permissions.mode(msg.threadId).mode, workMode: services.plans.workMode(msg.threadId) }, `${type} in thread ${msg.threadId}`);
  }
  if (type === 'startVariants') checkWithinGrant(grant, { permissionMode: services.permissions.mode().mode, workMode: 'act' }, 'start variants');
}
