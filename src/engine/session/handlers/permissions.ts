/** Handlers of the permission and plan commands (../../../protocol/commands/permissions.ts). */
import type { PermissionsView, PlanView } from '../../../protocol/commands/permissions';
import type { EngineServices } from '../../services';
import type { PlanRow } from '../../store/plan-reads';
import { PermissionRulesError } from '../../permissions/rules';
import { removeThreadRule, removeWorkspaceRule } from '../../permissions/rule-writes';
import { runHandlers } from './runs';
import type { HandlerTable } from './types';
import { checkWithinGrant } from '../../permissions/grant-modes';
import { checkWithinCeiling } from '../../permissions/thread-ceiling';
import type { Grant } from '../../../protocol/commands/grants';

/**
 * No thread goes to Act above its ceiling (../../permissions/thread-ceiling.ts), and a session
 * whose grant has modes may not switch a thread to Act above them (../../permissions/grant-modes.ts).
 */
function checkActAllowed(services: EngineServices, grant: Grant, threadId: string): void {
  services.store.getThread(threadId);
  const modes = { permissionMode: services.permissions.mode(threadId).mode, workMode: 'act' as const };
  checkWithinCeiling(services.store, threadId, modes, `switch thread ${threadId} to Act`);
  if (grant.modes) checkWithinGrant(grant, modes, `switch thread ${threadId} to Act`);
}

type PermissionCommand = 'getPermissions' | 'setPermissionMode' | 'removePermissionRule' | 'setWorkMode' | 'getPlan' | 'updatePlan' | 'setPlanStep' | 'actOnPlan';

function permissionsView(services: EngineServices, threadId?: string): PermissionsView {
  if (threadId) services.store.getThread(threadId); // typed store/notFound
  return { ...services.permissions.effective(threadId), workMode: threadId ? services.plans.workMode(threadId) : null };
}

export function planView(p: PlanRow): PlanView {
  return { ...p, steps: p.steps.map((s) => ({ ...s })) };
}

export const permissionHandlers: HandlerTable<PermissionCommand> = {
  getPermissions({ services }, cmd) {
    return permissionsView(services, cmd.threadId);
  },
  async setPermissionMode({ services }, cmd) {
    if (cmd.scope === 'thread') {
      if (!cmd.threadId) throw new PermissionRulesError('invalidMode', 'setPermissionMode', '$.threadId', 'the thread scope needs a threadId');
      services.store.getThread(cmd.threadId);
      // A subagent's thread stays within its ceiling: no own mode means the workspace default, checked the same.
      const mode = cmd.mode ?? services.permissions.mode().mode;
      checkWithinCeiling(services.store, cmd.threadId, { permissionMode: mode, workMode: services.plans.workMode(cmd.threadId) }, `set thread ${cmd.threadId}'s permission mode to ${mode}`);
      services.store.append({ type: 'thread.permissionModeSet', threadId: cmd.threadId, mode: cmd.mode });
      return permissionsView(services, cmd.threadId);
    }
    if (cmd.mode === null) throw new PermissionRulesError('invalidMode', 'setPermissionMode', '$.mode', 'a default needs a mode');
    if (!services.host.setPermissionMode) throw new PermissionRulesError('invalidMode', 'setPermissionMode', '$.scope', 'this host cannot change the default');
    await services.host.setPermissionMode(cmd.mode, cmd.scope);
    return permissionsView(services, cmd.threadId);
  },
  removePermissionRule({ services }, cmd) {
    if (cmd.scope === 'workspace') removeWorkspaceRule(services.workspaceRoot, cmd.index, cmd.label);
    else {
      if (!cmd.threadId) throw new PermissionRulesError('invalidRules', 'removePermissionRule', '$.threadId', 'the thread scope needs a threadId');
      removeThreadRule(services.store, cmd.threadId, cmd.index, cmd.label);
    }
    return permissionsView(services, cmd.threadId);
  },
  setWorkMode({ services, session }, cmd) {
    const { plans } = services;
    if (cmd.mode === 'act') checkActAllowed(services, session.grant, cmd.threadId);
    plans.setWorkMode(cmd.threadId, cmd.mode);
    return { threadId: cmd.threadId, workMode: plans.workMode(cmd.threadId) };
  },
  getPlan({ services: { plans, store } }, cmd) {
    store.getThread(cmd.threadId);
    const p = plans.current(cmd.threadId);
    return { threadId: cmd.threadId, workMode: plans.workMode(cmd.threadId), plan: p ? planView(p) : null };
  },
  updatePlan({ services: { plans } }, cmd) {
    return planView(plans.edit(cmd.threadId, cmd.planId, cmd.title, cmd.steps.map((s) => ({ ...(s.id ? { id: s.id } : {}), text: s.text }))));
  },
  setPlanStep({ services: { plans } }, cmd) {
    return planView(plans.updateStep(cmd.threadId, null, cmd.planId, cmd.stepId, cmd.status, null));
  },
  async actOnPlan(ctx, cmd) {
    checkActAllowed(ctx.services, ctx.session.grant, cmd.threadId);
    const prompt = ctx.services.plans.actOn(cmd.threadId, cmd.planId, cmd.prompt);
    return runHandlers.sendPrompt(ctx, { type: 'sendPrompt', threadId: cmd.threadId, prompt, history: false, ...(cmd.model ? { model: cmd.model } : {}) });
  },
};
