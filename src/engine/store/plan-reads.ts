/**
 * Reads of plan mode and permission mode: a thread's work mode (plan/act) and own permission
 * mode, and its plans (the latest is the one in force; earlier ones are superseded).
 */
import type { SqlDatabase } from './driver';
import type { PermissionModeName, WorkMode } from '../../protocol/events';
import type { StoredPlanStep } from './plan-projections';

export type { StoredPlanStep };
export type PlanStatus = 'proposed' | 'acting' | 'superseded';
export interface PlanRow { planId: string; threadId: string; runId: string | null; title: string; steps: StoredPlanStep[]; status: PlanStatus; createdAt: number; updatedAt: number }

const PLAN_COLUMNS = 'plan_id AS planId, thread_id AS threadId, run_id AS runId, title, steps, status, created_at AS createdAt, updated_at AS updatedAt';
const decode = (r: Omit<PlanRow, 'steps'> & { steps: string }): PlanRow => ({ ...r, steps: JSON.parse(r.steps) as StoredPlanStep[] });

/** The thread's modes; null when the thread does not exist. */
export function threadModes(db: SqlDatabase, threadId: string): { workMode: WorkMode; permissionMode: PermissionModeName | null } | null {
  const r = db.prepare('SELECT work_mode AS workMode, permission_mode AS permissionMode FROM threads WHERE id = ? AND deleted = 0').get(threadId) as
    { workMode: WorkMode; permissionMode: PermissionModeName | null } | undefined;
  return r ?? null;
}

export function planById(db: SqlDatabase, planId: string): PlanRow | undefined {
  const r = db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_id = ?`).get(planId) as (Omit<PlanRow, 'steps'> & { steps: string }) | undefined;
  return r && decode(r);
}

/** The plan in force in the thread (its latest, unless superseded), or undefined. */
export function currentPlan(db: SqlDatabase, threadId: string): PlanRow | undefined {
  const r = db.prepare(`SELECT ${PLAN_COLUMNS} FROM plans WHERE thread_id = ? AND status != 'superseded' ORDER BY created_at DESC, rowid DESC LIMIT 1`).get(threadId) as
    (Omit<PlanRow, 'steps'> & { steps: string }) | undefined;
  return r && decode(r);
}
