/**
 * The open thread's Plan / Act mode, its own permission mode and its plan, as the webview shows
 * them (folded from `thread.workModeSet` and `plan.*` events by ./features/plans.ts, from
 * `thread.permissionModeSet` by ./features/permissions.ts). Pure and JSON-serialisable like the
 * rest of the thread state; fields are optional there, so a state an older build saved still loads.
 */
import type { PermissionModeName, PlanStepStatus, WorkMode } from '../../../src/protocol/events';

export interface PlanStepView { id: string; text: string; status: PlanStepStatus; note: string | null }
export interface PlanState { planId: string; title: string; steps: PlanStepView[]; status: 'proposed' | 'acting' }

/** What the plan events give the thread state. */
export interface PlanFields {
  workMode?: WorkMode;
  /** The thread's own permission mode (null: the workspace default). */
  permissionMode?: PermissionModeName | null;
  plan?: PlanState | null;
}

/** Steps done (or skipped) of all, for the card's header. */
export function planProgress(p: PlanState): { done: number; total: number } {
  return { done: p.steps.filter((x) => x.status === 'done' || x.status === 'skipped').length, total: p.steps.length };
}
