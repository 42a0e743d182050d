/**
 * Where a prompt's thread gets its modes under a session's grant (./grant-modes.ts): a new thread
 * asked with modes (or by a session whose grant has modes) is created first with explicit
 * permission and work modes, in one transaction, so its first run already decides under them; a
 * prompt of a limited session to an existing thread is refused when that thread runs above the
 * grant's modes (its permission mode, its Plan / Act).
 */
import type { Grant } from '../../protocol/commands/grants';
import type { CommandOf } from '../../protocol/commands/index';
import { allocate } from '../ids/ids';
import { titleFromPrompt } from '../runs/registry';
import type { EngineServices } from '../services';
import { checkWithinGrant, GrantModeError, newThreadModes } from './grant-modes';

/** The thread the prompt goes to: the given one (checked), a new one created with its modes, or null (the run creates it). */
export function threadWithGrantModes(services: Pick<EngineServices, 'store' | 'permissions' | 'plans'>, grant: Grant, cmd: CommandOf<'sendPrompt'>): string | null {
  const { store } = services;
  if (cmd.threadId !== null) {
    if (cmd.newThread) throw new GrantModeError('newThread modes apply to a new thread only (threadId null); change an existing thread\'s modes with setPermissionMode / setWorkMode');
    if (grant.modes) {
      store.getThread(cmd.threadId); // typed store/notFound first
      checkWithinGrant(grant, { permissionMode: services.permissions.mode(cmd.threadId).mode, workMode: services.plans.workMode(cmd.threadId) }, `prompt thread ${cmd.threadId}`);
    }
    return cmd.threadId;
  }
  const modes = newThreadModes(grant, cmd.newThread);
  if (!modes) return null;
  const threadId = allocate('thread');
  store.append(
    { type: 'thread.created', threadId, title: titleFromPrompt(cmd.prompt) },
    { type: 'thread.permissionModeSet', threadId, mode: modes.permissionMode },
    { type: 'thread.workModeSet', threadId, mode: modes.workMode },
  );
  return threadId;
}

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
